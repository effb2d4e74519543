// Capture on demand inside one process: prof_listen(), then this test as the command (a raw
// client of the endpoint, capture_protocol.h's lines) while threads of its own record. Run under
// ThreadSanitizer too: a capture starts and stops the session on the program's threads.
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "integration/trace_reader.h"
#include "tfprof/tfprof.h"

using tfprof_test::Json;

namespace {

// Connects to this process's endpoint, sends `request`, and returns every line until the last
// (event=done or event=error). `on_line` sees each as it comes.
template <typename OnLine>
std::vector<std::string> Converse(const std::string &request, OnLine &&on_line) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string name = "tfprof-capture/" + std::to_string(getpid());
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  REQUIRE(connect(fd, reinterpret_cast<sockaddr *>(&address), length) == 0);
  const std::string line = request + "\n";
  REQUIRE(send(fd, line.data(), line.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(line.size()));
  std::vector<std::string> lines;
  std::string pending;
  char buffer[4096];
  for (;;) {
    const ssize_t got = recv(fd, buffer, sizeof buffer, 0);
    if (got <= 0) break;
    pending.append(buffer, static_cast<size_t>(got));
    for (size_t newline; (newline = pending.find('\n')) != std::string::npos;) {
      lines.push_back(pending.substr(0, newline));
      pending.erase(0, newline + 1);
      on_line(lines.back());
    }
  }
  close(fd);
  return lines;
}

std::vector<std::string> Converse(const std::string &request) {
  return Converse(request, [](const std::string &) {});
}

std::string CaptureRequest(int steps, const std::string &output) {
  return "request=capture,steps=" + std::to_string(steps) +
         ",ms=0,step_wait_ms=20000,output=" + output;
}

// The step numbers of a trace's step events, in time order.
std::vector<int64_t> StepNumbers(const Json &trace) {
  std::vector<std::pair<int64_t, int64_t>> steps;
  for (const Json &event : tfprof_test::EventsWithPhase(trace, "X")) {
    const std::string name = event["name"];
    if (name.rfind("step ", 0) == 0) steps.emplace_back(tfprof_test::TsNs(event), std::stoll(name.substr(5)));
  }
  std::sort(steps.begin(), steps.end());
  std::vector<int64_t> numbers;
  for (const auto &step : steps) numbers.push_back(step.second);
  return numbers;
}

// A program's threads: one marks 2 ms steps with a span in each, two others record spans,
// instants and counters without pause.
class Workload {
 public:
  Workload() {
    threads_.emplace_back([this] {
      for (int64_t step = 0; !stop_.load(); ++step) {
        prof_begin_step(step);
        prof_span_begin("step_work");
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        prof_span_end();
        prof_end_step();
      }
    });
    for (int worker = 0; worker < 2; ++worker) {
      threads_.emplace_back([this] {
        while (!stop_.load()) {
          prof_span_begin("outer");
          prof_span_begin("inner");
          prof_instant("tick");
          prof_counter("depth", 2.0);
          prof_span_end();
          prof_span_end();
        }
      });
    }
  }
  ~Workload() {
    stop_.store(true);
    for (std::thread &thread : threads_) thread.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

bool Contains(const std::vector<std::string> &lines, const std::string &text) {
  for (const std::string &line : lines) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("capture: three captures while threads record, each of exactly its steps") {
  REQUIRE(prof_listen("cuda=off,flush_interval_ms=5") == PROF_OK);
  CHECK(prof_is_listening() == 1);
  CHECK(prof_session_active == 0);  // dormant: no session
  {
    Workload workload;
    int64_t last_step = -1;
    for (int capture = 0; capture < 3; ++capture) {
      const std::string output = tfprof_test::TempPath("capture" + std::to_string(capture) + ".json");
      const std::vector<std::string> lines = Converse(CaptureRequest(4 + capture, output));
      REQUIRE(!lines.empty());
      INFO(lines.back());
      REQUIRE(lines.back().rfind("event=done,", 0) == 0);
      CHECK(Contains(lines, "event=started,at=step"));
      const std::vector<int64_t> steps = StepNumbers(tfprof_test::ReadTrace(output));
      REQUIRE(steps.size() == static_cast<size_t>(4 + capture));
      for (size_t at = 1; at < steps.size(); ++at) CHECK(steps[at] == steps[at - 1] + 1);
      CHECK(steps.front() > last_step);
      last_step = steps.back();
      // Between captures the process holds no session.
      CHECK(prof_session_active == 0);
      CHECK(prof_is_running() == 0);
    }
  }
  CHECK(prof_unlisten() == PROF_OK);
  CHECK(prof_is_listening() == 0);
}

TEST_CASE("capture: the program's own control calls and a capture") {
  REQUIRE(prof_listen("cuda=off") == PROF_OK);
  CHECK(prof_listen(nullptr) == PROF_EALREADY);
  Workload workload;
  const std::string output = tfprof_test::TempPath("own.json");
  std::atomic<bool> started{false};
  std::thread command([&] {
    const std::vector<std::string> lines =
        Converse(CaptureRequest(1000000, output), [&](const std::string &line) {
          if (line.rfind("event=started", 0) == 0) started.store(true);
        });
    REQUIRE(!lines.empty());
    CHECK(lines.back().find("event=done,") == 0);
    CHECK(lines.back().find("ended_by=unlisten") != std::string::npos);
  });
  while (!started.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // While the capture records, the program's own start and stop are refused with reasons.
  CHECK(prof_start("cuda=off") == PROF_EALREADY);
  CHECK(std::string(prof_last_error()).find("tfprof capture") != std::string::npos);
  CHECK(prof_stop() == PROF_ENOTSTARTED);
  CHECK(std::string(prof_last_error()).find("tfprof capture") != std::string::npos);
  // prof_unlisten() ends the capture, which is written first.
  CHECK(prof_unlisten() == PROF_OK);
  command.join();
  CHECK(StepNumbers(tfprof_test::ReadTrace(output)).size() >= 1);
  CHECK(prof_session_active == 0);
  CHECK(prof_unlisten() == PROF_ENOTSTARTED);
}

TEST_CASE("capture: bad listen options and requests are refused") {
  CHECK(prof_listen("output=x.json") == PROF_EOPTION);
  CHECK(std::string(prof_last_error()).find("output") != std::string::npos);
  CHECK(prof_listen("bogus=1") == PROF_EOPTION);
  CHECK(prof_is_listening() == 0);
  REQUIRE(prof_listen(nullptr) == PROF_OK);
  CHECK(Contains(Converse("request=launch"), "event=error,code=bad_request"));
  CHECK(Contains(Converse("request=capture,steps=1,ms=0,output=relative.json"),
                 "not an absolute path"));
  CHECK(Contains(Converse("request=capture,steps=0,ms=0,output=/tmp/x.json"),
                 "ends after a number of steps or a time"));
  CHECK(Contains(Converse("request=dump,output=" + tfprof_test::TempPath("d.json")),
                 "event=error,code=no_session"));
  // A running session of the program's own can be dumped, not captured.
  REQUIRE(prof_start("cuda=off,keep=last:3") == PROF_OK);
  prof_begin_step(1);
  prof_span_begin("kept");
  prof_span_end();
  prof_end_step();
  CHECK(Contains(Converse(CaptureRequest(1, tfprof_test::TempPath("c.json"))),
                 "event=error,code=session_running"));
  const std::string dump = tfprof_test::TempPath("dump.json");
  CHECK(Contains(Converse("request=dump,output=" + dump), "event=done,"));
  CHECK(StepNumbers(tfprof_test::ReadTrace(dump)) == std::vector<int64_t>{1});
  CHECK(prof_is_running() == 1);  // the dump did not stop it
  CHECK(prof_stop() == PROF_OK);
  CHECK(prof_unlisten() == PROF_OK);
}

TEST_CASE("capture: an armed capture outlives the program's own session started meanwhile") {
  REQUIRE(prof_listen("cuda=off") == PROF_OK);
  const std::string output = tfprof_test::TempPath("after_own.json");
  std::atomic<bool> waiting{false};
  std::vector<std::string> lines;
  std::thread command([&] {
    lines = Converse(CaptureRequest(2, output), [&](const std::string &line) {
      if (line.rfind("event=waiting", 0) == 0) waiting.store(true);
    });
  });
  while (!waiting.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // The program runs a session of its own while the capture waits for a step...
  REQUIRE(prof_start("cuda=off,flush_interval_ms=0") == PROF_OK);
  prof_begin_step(100);
  prof_end_step();
  REQUIRE(prof_stop() == PROF_OK);
  // ...and the capture starts at its first step after that one.
  CHECK(prof_session_active == 0x7fffffff);
  for (int64_t step = 0; step < 3; ++step) {
    prof_begin_step(step);
    prof_span_begin("work");
    prof_span_end();
    prof_end_step();
  }
  command.join();
  REQUIRE(!lines.empty());
  CHECK(lines.back().rfind("event=done,", 0) == 0);
  CHECK(StepNumbers(tfprof_test::ReadTrace(output)) == std::vector<int64_t>{0, 1});
  CHECK(prof_unlisten() == PROF_OK);
}

TEST_CASE("capture: the program's prof_start right after a capture's last step is refused cleanly") {
  REQUIRE(prof_listen("cuda=off") == PROF_OK);
  for (int round = 0; round < 5; ++round) {
    std::atomic<bool> stop{false};
    std::atomic<int> own_starts{0};
    // The program starts a session of its own the moment the capture's recording ends, while the
    // capture's thread is still stopping it.
    std::thread program([&] {
      bool was_running = false;
      for (int64_t step = 0; !stop.load(); ++step) {
        prof_begin_step(step);
        prof_span_begin("work");
        prof_span_end();
        prof_end_step();
        const bool running = prof_is_running() != 0;
        if (was_running && !running) {
          const int status = prof_start("cuda=off,flush_interval_ms=0");
          CHECK((status == PROF_EALREADY || status == PROF_OK));
          if (status == PROF_OK) {
            own_starts.fetch_add(1);
            CHECK(prof_stop() == PROF_OK);
          }
        }
        was_running = running;
      }
    });
    const std::string output = tfprof_test::TempPath("race" + std::to_string(round) + ".json");
    const std::vector<std::string> lines = Converse(CaptureRequest(3, output));
    stop.store(true);
    program.join();
    REQUIRE(!lines.empty());
    CHECK(lines.back().rfind("event=done,", 0) == 0);
    CHECK(StepNumbers(tfprof_test::ReadTrace(output)).size() == 3);
  }
  CHECK(prof_unlisten() == PROF_OK);
}

TEST_CASE("capture: fork() after listening and after a capture returns in the child") {
  // The fork handlers must take no lock the forking thread holds (the child would hang in fork()).
  REQUIRE(prof_listen("cuda=off") == PROF_OK);
  prof_stats_t stats{};
  stats.struct_size = sizeof stats;
  prof_get_stats(&stats);  // the profiler exists now, whatever order its handlers came in
  auto fork_returns = [] {
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) _exit(prof_is_listening() == 0 && prof_session_active == 0 ? 0 : 3);
    for (int waited_ms = 0; waited_ms < 10000; waited_ms += 10) {
      int status = 0;
      if (waitpid(child, &status, WNOHANG) == child) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    return -2;  // hung
  };
  CHECK(fork_returns() == 0);
  {
    Workload workload;
    const std::string output = tfprof_test::TempPath("before_fork.json");
    REQUIRE(Converse(CaptureRequest(2, output)).back().rfind("event=done,", 0) == 0);
  }
  CHECK(fork_returns() == 0);
  CHECK(prof_unlisten() == PROF_OK);
}

TEST_CASE("capture: the program's own stopped session is still there after a capture") {
  REQUIRE(prof_start("cuda=off,flush_interval_ms=0") == PROF_OK);
  prof_span_begin("programs_own_span");
  prof_span_end();
  REQUIRE(prof_stop() == PROF_OK);
  REQUIRE(prof_listen("cuda=off") == PROF_OK);
  {
    Workload workload;
    const std::string output = tfprof_test::TempPath("between.json");
    REQUIRE(Converse(CaptureRequest(2, output)).back().rfind("event=done,", 0) == 0);
    CHECK(StepNumbers(tfprof_test::ReadTrace(output)).size() == 2);
  }
  // prof_start() promises the data until the program's next start: a capture is not that.
  const Json trace = tfprof_test::ExportedTrace("own_after_capture.json");
  const std::vector<std::string> names = tfprof_test::SpanNamesByStart(trace);
  CHECK(std::find(names.begin(), names.end(), "programs_own_span") != names.end());
  CHECK(std::find(names.begin(), names.end(), "step_work") == names.end());
  CHECK(prof_unlisten() == PROF_OK);
}
