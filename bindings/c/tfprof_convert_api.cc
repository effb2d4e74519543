// The extern "C" entry points of the convert engine (prof_convert, prof_merge): argument checks,
// status-to-code mapping and prof_last_error() text. They never touch the profiling session. No
// exception ever crosses this boundary.
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bindings/c/last_error.h"
#include "absl/strings/str_join.h"
#include "runtime/common/own_threads.h"
#include "runtime/convert/convert.h"
#include "runtime/common/string_view_bridge.h"
#include "tfprof/tfprof.h"

namespace {

// The PROF_E* code for where and why the engine stopped.
int CodeFor(const tfprof::ConvertResult &result) {
  const absl::Status &status = result.status;
  switch (status.code()) {
    case absl::StatusCode::kOk: return PROF_OK;
    case absl::StatusCode::kResourceExhausted: return PROF_ENOMEM;
    case absl::StatusCode::kFailedPrecondition: return PROF_EINVAL;  // the output is an input
    default: break;
  }
  switch (result.stage) {
    case tfprof::ConvertStage::kOptions: return PROF_EOPTION;
    case tfprof::ConvertStage::kOutput: return PROF_EFORMAT;
    case tfprof::ConvertStage::kReading:
      return absl::IsInvalidArgument(status) || absl::IsDataLoss(status) ? PROF_EDATA : PROF_EIO;
    case tfprof::ConvertStage::kWriting:
      return absl::IsInvalidArgument(status) ? PROF_EFORMAT : PROF_EIO;
    case tfprof::ConvertStage::kDone: break;
  }
  return PROF_EINTERNAL;
}

// Runs the engine for one input (`merging` false) or several; sets prof_last_error().
int Convert(const char *function, const std::vector<std::string> &inputs, const char *output_path,
            const char *options, bool merging) {
  const tfprof::OwnThreadsScope own_threads;  // the readers' threads are tfprof's
  absl::StatusOr<tfprof::ConvertOptions> parsed =
      tfprof::ParseConvertOptions(options == nullptr ? "" : options);
  if (!parsed.ok()) {
    tfprof_c::SetLastError(function, parsed.status());
    return PROF_EOPTION;
  }
  tfprof::ConvertResult result;
  try {
    result = merging ? tfprof::MergeTraces(inputs, output_path, *parsed, nullptr)
                     : tfprof::ConvertTrace(inputs.front(), output_path, *parsed, nullptr);
  } catch (const std::bad_alloc &) {
    result.status = absl::ResourceExhaustedError("out of memory");
  } catch (const std::exception &error) {
    result.status = absl::InternalError(error.what());
  }
  if (result.status.ok() && !result.damage.empty()) {
    // salvage=on: the output holds what was read before the damage; the caller hears of the loss.
    result.status = absl::DataLossError(absl::StrCat(
        absl::StrJoin(result.damage, "; "), " (salvaged: wrote what was read before the damage to '",
        result.output_path, "')"));
    result.stage = tfprof::ConvertStage::kReading;
  }
  if (result.status.ok() && !result.cut_inputs.empty()) {
    // An input that ends early was recovered to its last whole step: a success the caller hears
    // of, as prof_last_error()'s text.
    tfprof_c::SetLastError(function, absl::DataLossError(absl::StrCat(
                                         "warning: ", absl::StrJoin(result.cut_inputs, "; "))));
  } else if (result.status.ok()) {
    tfprof_c::ClearLastError();
  } else {
    tfprof_c::SetLastError(function, result.status);
  }
  return CodeFor(result);
}

int InvalidArgument(const char *function, std::string_view why) {
  tfprof_c::SetLastError(function, absl::InvalidArgumentError(tfprof::ToAbsl(why)));
  return PROF_EINVAL;
}

bool Empty(const char *text) { return text == nullptr || text[0] == '\0'; }

}  // namespace

extern "C" {

PROF_API int prof_convert(const char *input_path, const char *output_path, const char *options) {
  if (Empty(input_path)) return InvalidArgument("prof_convert", "input_path is NULL or empty");
  if (Empty(output_path)) return InvalidArgument("prof_convert", "output_path is NULL or empty");
  try {
    return Convert("prof_convert", {std::string(input_path)}, output_path, options, false);
  } catch (const std::bad_alloc &) {
    tfprof_c::SetLastErrorText("prof_convert", "out of memory");  // allocates nothing
    return PROF_ENOMEM;
  }
}

PROF_API int prof_merge(const char *const *input_paths, size_t count, const char *output_path,
                        const char *options) {
  if (input_paths == nullptr || count == 0) {
    return InvalidArgument("prof_merge", "input_paths is NULL or count is 0");
  }
  if (Empty(output_path)) return InvalidArgument("prof_merge", "output_path is NULL or empty");
  try {
    std::vector<std::string> inputs;
    inputs.reserve(count);
    for (size_t index = 0; index < count; ++index) {
      if (Empty(input_paths[index])) {
        return InvalidArgument("prof_merge",
                               absl::StrCat("input_paths[", index, "] is NULL or empty"));
      }
      inputs.emplace_back(input_paths[index]);
    }
    return Convert("prof_merge", inputs, output_path, options, true);
  } catch (const std::bad_alloc &) {
    tfprof_c::SetLastErrorText("prof_merge", "out of memory");  // allocates nothing
    return PROF_ENOMEM;
  }
}

}  // extern "C"
