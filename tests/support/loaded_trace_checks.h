// Checks on a trace the loader read (runtime/formats/trace_reader.h), shared by the readers' tests.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "doctest/doctest.h"
#include "runtime/formats/trace_reader.h"
#include "runtime/model/trace.h"

namespace tfprof_test {

inline tfprof::Trace MustLoad(const std::string &path, const tfprof::LoadOptions &options = {}) {
  absl::StatusOr<tfprof::Trace> trace = tfprof::LoadTrace(path, options);
  REQUIRE_MESSAGE(trace.ok(), trace.status().ToString());
  return std::move(*trace);
}

inline size_t CountKind(const tfprof::Trace &trace, tfprof::ActivityKind kind) {
  return static_cast<size_t>(
      std::count_if(trace.activities.begin(), trace.activities.end(),
                    [&](const tfprof::Activity &activity) { return activity.kind == kind; }));
}

// The one activity named `name`.
inline const tfprof::Activity &Named(const tfprof::Trace &trace, std::string_view name) {
  const tfprof::Activity *found = nullptr;
  int count = 0;
  for (const tfprof::Activity &activity : trace.activities) {
    if (trace.names.Get(activity.name) == name) {
      found = &activity;
      ++count;
    }
  }
  REQUIRE_MESSAGE(count == 1, count << " activities named " << name);
  return *found;
}

inline std::vector<int64_t> StepNumbers(const tfprof::Trace &trace) {
  std::vector<int64_t> numbers;
  for (const tfprof::Step &step : trace.steps) numbers.push_back(step.number);
  return numbers;
}

}  // namespace tfprof_test
