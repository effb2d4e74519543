#include "runtime/export/exporter.h"

#include <algorithm>
#include <memory>
#include <new>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "runtime/export/session_trace.h"
#include "runtime/formats/trace_writer.h"

namespace tfprof {

namespace {

// An export walks the session in time windows of about this many records, writing each window's
// piece of the trace model before reading the next, so its memory does not grow with the session.
constexpr uint64_t kRecordsPerWindow = 1 << 16;
constexpr uint64_t kMostWindows = 4096;

}  // namespace

std::string SlowStepDumpPath(const std::string &output, Format format, int64_t step) {
  const std::string label = absl::StrCat("slow-step-", step);
  if (format == Format::kTensorBoard) {
    return absl::StrCat(output, absl::EndsWith(output, "/") ? "" : "/", label, "/");
  }
  // Before the first dot of the file name (not of a directory, nor a leading one).
  const size_t name_start = output.rfind('/') == std::string::npos ? 0 : output.rfind('/') + 1;
  const size_t dot = output.find('.', name_start + 1);
  if (dot == std::string::npos) return absl::StrCat(output, ".", label);
  return absl::StrCat(output.substr(0, dot), ".", label, output.substr(dot));
}

absl::Status ExportTrace(const SessionLog &model, const ExportContext &context,
                         const std::string &path) {
  Format format;
  if (absl::Status status = FormatForPath(path, &format); !status.ok()) return status;
  return ExportTrace(model, context, path, format);
}

absl::Status ExportTrace(const SessionLog &model, const ExportContext &context,
                         const std::string &path, Format format) {
  try {
    absl::StatusOr<std::unique_ptr<TraceWriteDriver>> out =
        TraceWriteDriver::ToFile(path, format, context.start_wall_ns, /*progress=*/nullptr,
                                 TensorBoardProfile{context.tensorboard_profile, {}});
    if (!out.ok()) return out.status();
    SessionTrace session(context);
    session.UpdateInfo(model, context, model.gpu.losses);
    const uint64_t windows =
        std::clamp<uint64_t>(context.events_recorded / kRecordsPerWindow, 1, kMostWindows);
    const int64_t span_ns = std::max<int64_t>(context.end_ns - context.start_monotonic_ns, 0);
    for (uint64_t window = 1; window < windows; ++window) {
      const int64_t until_ns =
          context.start_monotonic_ns + static_cast<int64_t>(static_cast<double>(span_ns) *
                                                            static_cast<double>(window) /
                                                            static_cast<double>(windows));
      session.Advance(model, context, until_ns);
      if (session.TakeSettled(until_ns, until_ns)) {
        (*out)->Append(session.trace(), /*last=*/false, context.end_ns);
      }
    }
    session.Advance(model, context);
    session.TakeAll();
    (*out)->Append(session.trace(), /*last=*/true, context.end_ns);
    return (*out)->Finish(session.trace(), context.end_ns).status();
  } catch (const std::bad_alloc &) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory writing '", path, "'"));
  }
}

}  // namespace tfprof
