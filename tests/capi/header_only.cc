// The public header compiled as C++ with every warning an error.
#include <tfprof/tfprof.h>

#include <cstddef>
#include <type_traits>

static_assert(std::is_same_v<decltype(&prof_start), int (*)(const char *)>);
static_assert(std::is_same_v<decltype(&prof_merge),
                             int (*)(const char *const *, size_t, const char *, const char *)>);
static_assert(std::is_standard_layout_v<prof_stats_t>);
// 0.1's 64 bytes stay where they were; 0.2 appended the GPU fields, 0.3 the memory fields.
static_assert(sizeof(prof_stats_t) == 136, "prof_stats_t's layout is part of the ABI");
static_assert(offsetof(prof_stats_t, session_serial) == 56, "fields are only ever appended");
static_assert(offsetof(prof_stats_t, gpu_state) == 64, "fields are only ever appended");
static_assert(offsetof(prof_stats_t, gpu_buffers_refused) == 88, "fields are only ever appended");
static_assert(offsetof(prof_stats_t, events_memory_dropped) == 96, "fields are only ever appended");
static_assert(offsetof(prof_stats_t, slow_step_dumps) == 128, "fields are only ever appended");

void TfprofHeaderCheckCalls() {
  prof_begin_step(1);
  prof_span_begin("op");
  prof_span_end();
  prof_end_step();
}
