// The extern "C" entry points that convert TensorFlow step statistics (prof_convert, prof_merge):
// argument checks, status-to-code mapping and prof_last_error() text. They never touch the
// profiling session. No exception ever crosses this boundary.
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "bindings/c/last_error.h"
#include "runtime/export/timeline_converter.h"
#include "runtime/string_view_bridge.h"
#include "tfprof/tfprof.h"

namespace {

// `options_ok`: InvalidArgument is then about the output path's extension.
int CodeFor(const absl::Status &status, bool options_ok) {
  switch (status.code()) {
    case absl::StatusCode::kOk: return PROF_OK;
    case absl::StatusCode::kInvalidArgument: return options_ok ? PROF_EFORMAT : PROF_EOPTION;
    case absl::StatusCode::kUnavailable: return PROF_EIO;
    case absl::StatusCode::kDataLoss: return PROF_EDATA;
    case absl::StatusCode::kResourceExhausted: return PROF_ENOMEM;
    default: return PROF_EINTERNAL;
  }
}

int Convert(const char *function, std::vector<std::string> inputs, const char *output_path,
            const char *options) {
  absl::Status status;
  bool options_ok = false;
  try {
    absl::StatusOr<tfprof::ConvertOptions> parsed = tfprof::ParseConvertOptions(options);
    options_ok = parsed.ok();
    status = options_ok ? tfprof::ConvertStepStatsToChromeTrace(inputs, output_path, *parsed)
                        : parsed.status();
  } catch (const std::bad_alloc &) {
    status = absl::ResourceExhaustedError("out of memory");
  } catch (const std::exception &error) {
    status = absl::InternalError(error.what());
  }
  if (status.ok()) {
    tfprof_c::ClearLastError();
  } else {
    tfprof_c::SetLastError(function, status);
  }
  return CodeFor(status, options_ok);
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
    return Convert("prof_convert", {std::string(input_path)}, output_path, options);
  } catch (const std::bad_alloc &) {
    tfprof_c::SetLastError("prof_convert", absl::ResourceExhaustedError("out of memory"));
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
    return Convert("prof_merge", std::move(inputs), output_path, options);
  } catch (const std::bad_alloc &) {
    tfprof_c::SetLastError("prof_merge", absl::ResourceExhaustedError("out of memory"));
    return PROF_ENOMEM;
  }
}

}  // extern "C"
