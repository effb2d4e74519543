// The time of a recording outside its steps: where it lies (before the first step, between steps,
// after the last) and which host ops ran there, so that a trace's start-up, warm-up runs and the
// loop's own work between steps are reported rather than left out of every figure.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/model/trace.h"
#include "tools/tfprof/analysis/intervals.h"

namespace tfprof::cli {

enum class OutsideWhere : uint8_t { kBeforeFirstStep, kBetweenSteps, kAfterLastStep };
inline constexpr size_t kOutsideWheres = 3;

const char *OutsideWhereName(OutsideWhere where);  // "before_first_step", ...

// Time outside the steps shorter than this gets no row of its own in the text or the report.
inline constexpr int64_t kOutsideRowMinNs = 1'000'000;  // 1 ms

// A row's label for OutsideSteps::where: "before steps", "between steps", "after steps".
inline const char *OutsideRowLabel(std::string_view where) {
  if (where == "before_first_step") return "before steps";
  return where == "between_steps" ? "between steps" : "after steps";
}

struct OutsideStretch {
  Interval interval;
  OutsideWhere where = OutsideWhere::kBeforeFirstStep;
};

// The stretches of [extent) that no step of `steps` (indices into trace.steps, in begin order)
// covers, in time order: before the first, the gaps between, after the last.
std::vector<OutsideStretch> OutsideStretches(const Trace &trace, const std::vector<size_t> &steps,
                                             Interval extent);

// The host ops (not Python frames) with the most self time inside each group's stretches
// (`stretches_by_group`, indexed by Process::group; each list in time order), per OutsideWhere:
// name and nanoseconds, most first, at most `top` of each.
std::array<std::vector<std::pair<std::string, int64_t>>, kOutsideWheres> OpsOutsideSteps(
    const Trace &trace, const std::vector<uint32_t> &group_of_track,
    const std::vector<std::vector<OutsideStretch>> &stretches_by_group, size_t top);

}  // namespace tfprof::cli
