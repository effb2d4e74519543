// The trace file formats tfprof reads and writes, in one enum shared by the runtime's export, the
// readers, the convert engine and the `tfprof` command (runtime/formats/format.h maps paths and
// option values to them).
#pragma once

#include <cstdint>

namespace tfprof {

enum class Format : uint8_t {
  kChromeJson,      // Chrome trace JSON (.json)
  kChromeJsonGzip,  // the same, gzip-compressed (.json.gz)
  kRunMetadata,     // one TensorFlow RunMetadata (.pb)
  kStepStats,       // one bare TensorFlow StepStats (read only: tfprof writes RunMetadata)
  kTfRecord,        // a TFRecord file of one RunMetadata per step (.tfrecord)
  kTensorBoard,     // a TensorBoard event file in a log directory
  kPerfetto,        // Perfetto's protobuf trace (.pftrace, .perfetto-trace)
  kXPlane,          // TensorFlow's and JAX's profile data, an XSpace (.xplane.pb; read only)
};

// "Chrome trace JSON", "gzip-compressed Chrome trace JSON", "TensorFlow RunMetadata",
// "TensorFlow StepStats", "TFRecord of RunMetadata", "TensorBoard event file", "Perfetto trace",
// "XPlane profile (XSpace)".
const char *FormatName(Format format);

bool IsChromeJson(Format format);  // kChromeJson or kChromeJsonGzip
bool IsTensorFlow(Format format);  // RunMetadata, StepStats, TFRecord or TensorBoard

}  // namespace tfprof
