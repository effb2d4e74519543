#include "runtime/export/exporter.h"

#include <memory>
#include <new>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "runtime/export/chrome_trace_writer.h"
#include "runtime/export/output_sink.h"
#include "runtime/string_view_bridge.h"

namespace tfprof {

absl::Status FormatForPath(std::string_view path, ExportFormat *format) {
  if (absl::EndsWith(ToAbsl(path), ".json.gz")) {
    *format = ExportFormat::kChromeJsonGzip;
  } else if (absl::EndsWith(ToAbsl(path), ".json")) {
    *format = ExportFormat::kChromeJson;
  } else {
    const size_t slash = path.rfind('/');
    const std::string_view file = slash == std::string_view::npos ? path : path.substr(slash + 1);
    const size_t dot = file.find('.');
    const std::string_view extension = dot == std::string_view::npos ? "" : file.substr(dot);
    const std::string what =
        extension.empty() ? "no extension" : absl::StrCat("extension '", ToAbsl(extension), "'");
    return absl::InvalidArgumentError(
        absl::StrCat("'", ToAbsl(path), "': ", what,
                     " names no supported format (supported: .json, .json.gz)"));
  }
  return absl::OkStatus();
}

absl::Status ExportTrace(const TraceModel &model, const ExportContext &context,
                         const std::string &path) {
  ExportFormat format;
  if (absl::Status status = FormatForPath(path, &format); !status.ok()) return status;
  try {
    absl::StatusOr<std::unique_ptr<OutputSink>> sink =
        OutputSink::Open(path, format == ExportFormat::kChromeJsonGzip);
    if (!sink.ok()) return sink.status();
    if (absl::Status status = WriteChromeTrace(model, context, **sink); !status.ok()) return status;
    return (*sink)->Finish();
  } catch (const std::bad_alloc &) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory writing '", path, "'"));
  }
}

}  // namespace tfprof
