// MemoryInUse(): bytes in use per device from [memory] events (with and without the allocator's
// totals), attributed to the host ops open on their thread, and from memory counters.
#include "runtime/model/memory_series.h"

#include <vector>

#include "doctest/doctest.h"
#include "runtime/model/memory_test_trace.h"

namespace tfprof {
namespace {

using tfprof_test::MemoryTestTrace;
using tfprof_test::TrackOf;

std::string NameOf(const Trace &trace, uint32_t name) {
  return name == kNoName ? std::string("-") : trace.names.Get(name);
}

}  // namespace

TEST_CASE("model/memory: [memory] events become one series per device, ops attached") {
  MemoryTestTrace builder;
  builder.Op("forward", 0, 100'000).Op("aten::empty", 10'000, 20'000).Op("backward", 200'000,
                                                                          300'000);
  // GPU 0 with the allocator's totals and addresses; GPU 1; the CPU without totals.
  builder.Memory(15'000, 1, 0, 100, 1100, 0xA000)
      .Memory(50'000, 1, 0, 300, 1400, 0xB000)
      .Memory(150'000, 1, 0, -100, 1300, 0xA000)
      .Memory(250'000, 1, 0, 200, 1500, 0xC000)
      .Memory(30'000, 1, 1, 64, 64, 0xD000)
      .Memory(60'000, 0, -1, 8)
      .Memory(40'000, 0, -1, 16);
  const Trace &trace = builder.trace();
  const std::vector<MemorySeries> series = MemoryInUse(trace);
  REQUIRE(series.size() == 3);

  const MemorySeries &cpu = series[0];
  CHECK(cpu.device == -1);
  CHECK(cpu.label == "CPU");
  CHECK(cpu.source == "[memory] events");
  CHECK(cpu.relative);  // no "Total Allocated": counted from 0
  CHECK_FALSE(cpu.has_addresses);
  REQUIRE(cpu.samples.size() == 2);
  CHECK(cpu.samples[0].ns == 40'000);  // time order, not file order
  CHECK(cpu.samples[0].bytes == 16);
  CHECK(cpu.samples[1].bytes == 24);

  const MemorySeries &gpu0 = series[1];
  CHECK(gpu0.device == 0);
  CHECK(gpu0.label == "GPU 0");
  CHECK_FALSE(gpu0.relative);
  CHECK(gpu0.has_addresses);
  REQUIRE(gpu0.samples.size() == 4);
  const std::vector<int64_t> bytes = {1100, 1400, 1300, 1500};
  const std::vector<int64_t> deltas = {100, 300, -100, 200};
  const std::vector<std::string> ops = {"aten::empty", "forward", "-", "backward"};
  const std::vector<std::string> top_ops = {"forward", "forward", "-", "backward"};
  for (size_t index = 0; index < 4; ++index) {
    CAPTURE(index);
    CHECK(gpu0.samples[index].bytes == bytes[index]);
    CHECK(gpu0.samples[index].delta == deltas[index]);
    CHECK(NameOf(trace, gpu0.samples[index].op) == ops[index]);
    CHECK(NameOf(trace, gpu0.samples[index].top_op) == top_ops[index]);
    CHECK(gpu0.samples[index].track == 0);
  }
  CHECK(gpu0.samples[2].address == 0xA000);

  const MemorySeries &gpu1 = series[2];
  CHECK(gpu1.label == "GPU 1");
  REQUIRE(gpu1.samples.size() == 1);
  CHECK(gpu1.samples[0].bytes == 64);
  CHECK(NameOf(trace, gpu1.samples[0].top_op) == "forward");
}

TEST_CASE("model/memory: a thread written as text on ops and as a number on [memory] events") {
  // Kineto 1.9: "tid": "25738" on ops (a row of the reader's own id, named by the file) and
  // "tid": 25738 on [memory] events.
  MemoryTestTrace builder;
  const uint32_t text_row = builder.AddTrack(
      TrackOf(0, -4611686018427387904LL, "thread 25738 (python)", TrackKind::kHostThread, -1, -1));
  const uint32_t number_row =
      builder.AddTrack(TrackOf(0, 25738, "thread 25738", TrackKind::kHostThread, -1, -1));
  builder.Op("aten::conv2d", 0, 100, text_row).Memory(50, 1, 0, 512, 512, 0x10, number_row);
  const std::vector<MemorySeries> series = MemoryInUse(builder.trace());
  REQUIRE(series.size() == 1);
  REQUIRE(series[0].samples.size() == 1);
  CHECK(NameOf(builder.trace(), series[0].samples[0].op) == "aten::conv2d");
}

TEST_CASE("model/memory: CUPTI's GPU memory counter, allocator and memory counters") {
  MemoryTestTrace builder;
  Trace &trace = builder.trace();
  trace.processes.push_back(tfprof_test::ProcessOf(-1, "rank 1 · GPU 3 (NVIDIA H200)"));
  const uint32_t device_row = builder.AddTrack(TrackOf(1, 0, "", TrackKind::kCounters, -1, -1));
  builder.Counter(7, 20, "GPU memory", "bytes in use", device_row)
      .Counter(5, 10, "GPU memory", "bytes in use", device_row)
      .Counter(6, 30, "GPU memory", "bytes in use", device_row)
      .Counter(5, 0.5, "loss", "value", 0)
      .Counter(8, 4096, "GPU_1_bfc", "allocator bytes in use", 0)
      .Counter(9, 1000, "RSS", "bytes", 0);
  const std::vector<MemorySeries> series = MemoryInUse(trace);
  REQUIRE(series.size() == 3);  // "loss" is no memory counter

  CHECK(series[0].source == "counter RSS bytes");
  CHECK(series[0].device == -1);
  CHECK(series[0].label == "CPU");

  CHECK(series[1].source == "allocator statistics");
  CHECK(series[1].kind == MemorySource::kAllocatorStatistics);
  CHECK(series[1].label == "GPU_1_bfc");
  CHECK(series[1].device == 1);
  CHECK(series[1].samples.at(0).bytes == 4096);

  const MemorySeries &cupti = series[2];
  CHECK(cupti.source == "CUPTI allocations");
  CHECK(cupti.process == 1);
  CHECK(cupti.device == 3);  // from the process's name: the row itself has no device
  CHECK(cupti.label == "GPU 3");
  REQUIRE(cupti.samples.size() == 3);
  CHECK(cupti.samples[0].bytes == 10);
  CHECK(cupti.samples[1].bytes == 30);
  CHECK(cupti.samples[2].bytes == 20);
  CHECK(cupti.samples[2].delta == -10);
  CHECK(cupti.samples[2].op == kNoName);
}

TEST_CASE("model/memory: a trace with nothing about memory has no series") {
  MemoryTestTrace builder;
  builder.Op("forward", 0, 100).Counter(5, 1, "loss", "value", 0);
  CHECK(MemoryInUse(builder.trace()).empty());
}

}  // namespace tfprof
