#include "runtime/model/format.h"

namespace tfprof {

const char *FormatName(Format format) {
  switch (format) {
    case Format::kChromeJson: return "Chrome trace JSON";
    case Format::kChromeJsonGzip: return "gzip-compressed Chrome trace JSON";
    case Format::kRunMetadata: return "TensorFlow RunMetadata";
    case Format::kStepStats: return "TensorFlow StepStats";
    case Format::kTfRecord: return "TFRecord of RunMetadata";
    case Format::kTensorBoard: return "TensorBoard event file";
    case Format::kPerfetto: return "Perfetto trace";
    case Format::kXPlane: return "XPlane profile (XSpace)";
  }
  return "unknown";
}

bool IsChromeJson(Format format) {
  return format == Format::kChromeJson || format == Format::kChromeJsonGzip;
}

bool IsTensorFlow(Format format) {
  return format == Format::kRunMetadata || format == Format::kStepStats ||
         format == Format::kTfRecord || format == Format::kTensorBoard;
}

}  // namespace tfprof
