// Where the XPlane reader puts a host's steps (xplane_steps.h): hand-built XSpaces shaped like
// the profiles TensorFlow 2.21 writes for a Keras fit, a loop of function runs and a marked
// loop, read back through LoadTrace.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/formats/trace_reader.h"
#include "runtime/model/trace.h"
#include "support/test_files.h"
#include "support/xplane_space_builder.h"

namespace {

namespace xp = tensorflow::profiler;
using tfprof::Trace;
using tfprof_test::PlaneBuilder;
using tfprof_test::TempDir;

Trace Load(const xp::XSpace &space) {
  TempDir dir;
  absl::StatusOr<Trace> trace =
      tfprof::LoadTrace(tfprof_test::WriteXSpace(dir, "host.xplane.pb", space), {});
  REQUIRE_MESSAGE(trace.ok(), trace.status().ToString());
  return std::move(*trace);
}

std::vector<std::pair<int64_t, int64_t>> StepTimes(const Trace &trace) {
  std::vector<std::pair<int64_t, int64_t>> times;
  for (const tfprof::Step &step : trace.steps) times.emplace_back(step.begin_ns, step.end_ns);
  return times;
}

std::vector<int64_t> StepNumbers(const Trace &trace) {
  std::vector<int64_t> numbers;
  for (const tfprof::Step &step : trace.steps) numbers.push_back(step.number);
  return numbers;
}

size_t Named(const Trace &trace, const std::string &name) {
  size_t count = 0;
  for (const tfprof::Activity &activity : trace.activities) {
    count += trace.names.Get(activity.name) == name;
  }
  return count;
}

// One tf.function call from Python: the call (tf_function_call set when it returned), the
// eager execution of `function` inside it and that execution's FunctionRun, producer `id`.
void Call(PlaneBuilder &host, xp::XLine &line, const std::string &function, int64_t at,
          int64_t length, int64_t id, bool returned = true) {
  xp::XEvent &call = host.Event(line, "multi_step_on_iterator", at, length);
  if (returned) host.Ref(call.mutable_stats(), "tf_function_call", "notTraced-nonXla");
  host.Event(line, "EagerLocalExecute: __inference_" + function, at + 10, length - 20);
  xp::XEvent &run = host.Event(line, "FunctionRun", at + 20, length - 40);
  host.Int(run.mutable_stats(), "_r", 1);
  host.Uint(run.mutable_stats(), "_p", static_cast<uint64_t>(id));
}

// The executor's work for producer `id` on a TensorFlow thread.
void Work(PlaneBuilder &host, xp::XLine &line, int64_t at, int64_t length, int64_t id) {
  xp::XEvent &work = host.Event(line, "ExecutorDoneCallback", at, length);
  host.Uint(work.mutable_stats(), "_c", static_cast<uint64_t>(id));
}

}  // namespace

TEST_CASE("xplane steps: a Keras fit's steps are its returned tf.function calls") {
  xp::XSpace space;
  PlaneBuilder host(space, "/host:CPU");
  xp::XLine &python = host.Line(1, "python", 0);
  xp::XLine &compute = host.Line(2, "tf_Compute/7", 0);
  // The first call traces the function (and, inside, the function it calls), then runs the
  // variable initialisation tf.function lifted out of it, then the batch.
  xp::XEvent &first = host.Event(python, "multi_step_on_iterator", 1'000, 600'000);
  host.Ref(first.mutable_stats(), "tf_function_call", "traced-nonXla");
  xp::XEvent &traced = host.Event(python, "one_step_on_data", 2'000, 300'000);
  host.Ref(traced.mutable_stats(), "tf_function_call", "traced-nonXla");
  host.Event(python, "tf.function-graph_building", 3'000, 290'000);
  host.Event(python, "EagerLocalExecute: __inference_initialize_variables_5", 400'000, 10'000);
  xp::XEvent &initializer = host.Event(python, "FunctionRun", 401'000, 1'000);
  host.Int(initializer.mutable_stats(), "_r", 1);
  host.Uint(initializer.mutable_stats(), "_p", 10);
  Work(host, compute, 401'500, 50'000, 10);  // the initialiser's callback runs on: no matter
  host.Event(python, "EagerLocalExecute: __inference_multi_step_on_iterator_9", 500'000, 90'000);
  xp::XEvent &batch = host.Event(python, "FunctionRun", 501'000, 88'000);
  host.Int(batch.mutable_stats(), "_r", 1);
  host.Uint(batch.mutable_stats(), "_p", 11);
  Work(host, compute, 590'000, 105'000, 11);  // past the call's return
  // The second batch; its executor's callback runs past the whole third call.
  Call(host, python, "multi_step_on_iterator_9", 700'000, 10'000, 12);
  Work(host, compute, 709'000, 100'000, 12);
  Call(host, python, "multi_step_on_iterator_9", 720'000, 5'000, 13);
  Work(host, compute, 721'000, 2'000, 13);
  // The call that finds the data exhausted raises: no tf_function_call, no step.
  Call(host, python, "multi_step_on_iterator_9", 900'000, 5'000, 14, /*returned=*/false);
  Work(host, compute, 901'000, 2'000, 14);

  const Trace trace = Load(space);
  // One step per batch: the first holds the tracing and the initialisation; each lasts until
  // its executor work ends, up to the next call.
  CHECK(StepNumbers(trace) == std::vector<int64_t>{0, 1, 2});
  CHECK(StepTimes(trace) == std::vector<std::pair<int64_t, int64_t>>{
                                {1'000, 695'000}, {700'000, 720'000}, {720'000, 725'000}});
  // The calls that became steps are no spans; what ran inside them stays, and so does the
  // call that raised.
  CHECK(Named(trace, "multi_step_on_iterator") == 1);
  CHECK(Named(trace, "one_step_on_data") == 1);
  CHECK(Named(trace, "FunctionRun") == 5);
  CHECK(Named(trace, "tf.function-graph_building") == 1);
}

TEST_CASE("xplane steps: without calls, TensorFlow's function runs are the steps") {
  xp::XSpace space;
  PlaneBuilder host(space, "/host:CPU");
  xp::XLine &python = host.Line(1, "python", 0);
  xp::XLine &compute = host.Line(2, "tf_Compute/7", 0);
  xp::XLine &input = host.Line(3, "tf_data_iterator_resource/4", 0);
  auto run = [&](xp::XLine &line, int64_t at, int64_t length, int64_t id) {
    xp::XEvent &event = host.Event(line, "FunctionRun", at, length);
    host.Int(event.mutable_stats(), "_r", 1);
    host.Uint(event.mutable_stats(), "_p", static_cast<uint64_t>(id));
  };
  // tf.function's variable initialisation, called eagerly: set-up, no step.
  host.Event(python, "EagerLocalExecute: __inference_initialize_variables_3", 0, 500);
  run(python, 100, 300, 1);
  // Three batches; the first one's executor callback runs past the whole second batch.
  run(python, 1'000, 1'000, 2);
  Work(host, compute, 1'500, 8'000, 2);
  run(python, 3'000, 500, 3);
  Work(host, compute, 3'100, 500, 3);
  run(python, 10'000, 1'000, 4);
  // tf.data's map function runs on its own thread: no step.
  host.Event(input, "InstantiatedCapturedFunction::RunAsync", 1'000, 600);
  run(input, 1'100, 400, 5);

  const Trace trace = Load(space);
  CHECK(StepNumbers(trace) == std::vector<int64_t>{0, 1, 2});
  CHECK(StepTimes(trace) == std::vector<std::pair<int64_t, int64_t>>{
                                {1'000, 3'000}, {3'000, 3'600}, {10'000, 11'000}});
  // The runs that became steps are no spans: the initialiser's and tf.data's stay.
  CHECK(Named(trace, "FunctionRun") == 2);
}

TEST_CASE("xplane steps: the program's markers come before tf.function calls") {
  xp::XSpace space;
  PlaneBuilder host(space, "/host:CPU");
  xp::XLine &python = host.Line(1, "python", 0);
  for (int64_t step = 0; step < 2; ++step) {
    xp::XEvent &marker = host.Event(python, "train", step * 1'000, 900);
    host.Int(marker.mutable_stats(), "_r", 1);
    host.Int(marker.mutable_stats(), "step_num", 7 + step);
    // Two functions called in each marked step: neither is a step of its own.
    Call(host, python, "train_step_1", step * 1'000 + 100, 300, 20 + step);
    Call(host, python, "metrics_2", step * 1'000 + 500, 300, 30 + step);
  }
  const Trace trace = Load(space);
  CHECK(StepNumbers(trace) == std::vector<int64_t>{7, 8});
  CHECK(StepTimes(trace) == std::vector<std::pair<int64_t, int64_t>>{{0, 900}, {1'000, 1'900}});
  CHECK(Named(trace, "train") == 0);
  CHECK(Named(trace, "multi_step_on_iterator") == 4);
}
