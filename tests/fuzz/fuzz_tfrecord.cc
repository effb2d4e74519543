// libFuzzer target: the TFRecord framing reader never crashes, never reads outside its input, and
// stops for good at the first damage it reports.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/formats/tensorflow/tfrecord.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tfprof::TfRecordReader reader(std::string_view(reinterpret_cast<const char *>(data), size));
  std::string_view record;
  size_t records = 0;
  absl::Status status;
  while ((status = reader.Next(&record)).ok()) {
    // A record lies inside the input.
    if (record.data() < reinterpret_cast<const char *>(data) ||
        record.data() + record.size() > reinterpret_cast<const char *>(data) + size) {
      __builtin_trap();
    }
    if (++records > size) __builtin_trap();  // every record takes at least 16 bytes
  }
  return 0;
}
