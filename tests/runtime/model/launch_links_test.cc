// LinkLaunches: launch calls joined to the GPU work they launched by correlation id, through the
// dense table (ids counted up from 1) and through the sorted calls (ids far apart), alike.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "runtime/model/launch_links.h"
#include "runtime/model/trace.h"
#include "support/model_builders.h"

namespace {

using tfprof::Activity;
using tfprof::ActivityKind;
using tfprof::GpuDetail;
using tfprof::Trace;
using tfprof::TrackKind;

// Two recordings (groups 0 and 1), each a thread and a stream; calls and kernels are added with
// their correlation ids.
struct Recording {
  Trace trace;
  Recording() {
    trace.processes = {tfprof_test::ProcessOf(1, "rank 0"), tfprof_test::ProcessOf(2, "rank 1")};
    trace.processes[1].group = 1;
    trace.tracks = {tfprof_test::TrackOf(0, 101, "main", TrackKind::kHostThread, -1, -1),
                    tfprof_test::TrackOf(0, 7, "stream 7", TrackKind::kGpuStream, 0, 7),
                    tfprof_test::TrackOf(1, 202, "main", TrackKind::kHostThread, -1, -1),
                    tfprof_test::TrackOf(1, 7, "stream 7", TrackKind::kGpuStream, 0, 7)};
  }
  size_t Add(ActivityKind kind, uint32_t track, uint32_t correlation, int64_t begin_ns) {
    GpuDetail detail;
    detail.correlation = correlation;
    detail.fields = tfprof::kGpuHasCorrelation;
    Activity activity;
    activity.kind = kind;
    activity.track = track;
    activity.begin_ns = begin_ns;
    activity.end_ns = begin_ns + 10;
    activity.detail = trace.gpu_details.Add(kind, detail);
    trace.activities.push_back(activity);
    return trace.activities.size() - 1;
  }
  GpuDetail Detail(size_t activity) const {
    return trace.gpu_details.Get(trace.activities[activity].detail);
  }
};

void CheckJoins(uint32_t base, uint32_t second_group = 1) {
  CAPTURE(base);
  CAPTURE(second_group);
  Recording r;
  r.trace.processes[1].group = second_group;
  const size_t call = r.Add(ActivityKind::kRuntimeApi, 0, base + 1, 1000);
  const size_t again = r.Add(ActivityKind::kRuntimeApi, 0, base + 1, 1500);  // a repeated id
  const size_t other_rank = r.Add(ActivityKind::kRuntimeApi, 2, base + 1, 2000);
  const size_t unused = r.Add(ActivityKind::kRuntimeApi, 0, base + 9, 2500);
  const size_t kernel = r.Add(ActivityKind::kKernel, 1, base + 1, 3000);
  const size_t their_kernel = r.Add(ActivityKind::kKernel, 3, base + 1, 3100);
  const size_t orphan = r.Add(ActivityKind::kKernel, 1, base + 5, 3200);
  const size_t said = r.Add(ActivityKind::kMemcpy, 1, base + 9, 3300);
  r.trace.gpu_details.Work(r.trace.activities[said].detail)->launch_ns = 42;  // the file said
  tfprof::LinkLaunches(r.trace);
  CHECK(r.Detail(kernel).launch_ns == 1000);  // the first call of the id in the file
  CHECK(r.Detail(kernel).thread_id == 101);
  CHECK(r.Detail(their_kernel).launch_ns == 2000);  // its own recording's call
  CHECK(r.Detail(their_kernel).thread_id == 202);
  CHECK(r.Detail(orphan).launch_ns == tfprof::kNoStep);
  CHECK(r.Detail(said).launch_ns == 42);
  CHECK(r.Detail(said).thread_id == 101);
  CHECK((r.Detail(call).fields & tfprof::kGpuLaunchesWork) != 0);
  CHECK((r.Detail(again).fields & tfprof::kGpuLaunchesWork) == 0);
  CHECK((r.Detail(other_rank).fields & tfprof::kGpuLaunchesWork) != 0);
  CHECK((r.Detail(unused).fields & tfprof::kGpuLaunchesWork) != 0);
}

TEST_CASE("launch links: ids counted up from 1 (the dense table)") { CheckJoins(0); }

TEST_CASE("launch links: ids far apart (the sorted calls)") { CheckJoins(4'000'000'000u); }

TEST_CASE("launch links: a group number from the file sizes nothing") {
  // A file's group number (tfprof_process_group) may be large: the table is sized by the groups
  // that occur (a table of 900M groups would take gigabytes).
  CheckJoins(0, 900'000'000u);
  CheckJoins(4'000'000'000u, 900'000'000u);
}

TEST_CASE("launch links: id 0 is no id") {
  Recording r;
  const size_t call = r.Add(ActivityKind::kRuntimeApi, 0, 0, 1000);
  const size_t kernel = r.Add(ActivityKind::kKernel, 1, 0, 3000);
  tfprof::LinkLaunches(r.trace);
  CHECK(r.Detail(kernel).launch_ns == tfprof::kNoStep);
  CHECK((r.Detail(call).fields & tfprof::kGpuLaunchesWork) == 0);
}

}  // namespace
