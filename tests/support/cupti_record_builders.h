// Builds CUPTI activity records without a GPU: the real CUpti_Activity* structs of the CUDA
// headers, laid out one after another in a buffer the tracer lends, as CUPTI lays them out, so
// the tracer's buffer-completed path (and libcupti's cuptiActivityGetNextRecord) reads them.
// Used by the CUPTI unit tests and by synthetic_gpu_trace.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tfprof_test {

class RecordWriter {
 public:
  RecordWriter(uint8_t *buffer, size_t size) : buffer_(buffer), size_(size) {
    std::memset(buffer, 0, size);
  }

  // The next record, zeroed but for its kind. A buffer too small is a bug in the caller.
  template <typename Record>
  Record &Add(CUpti_ActivityKind kind) {
    if (used_ + sizeof(Record) > size_) {
      std::fprintf(stderr, "RecordWriter: %zu bytes of records do not fit the %zu-byte buffer\n",
                   used_ + sizeof(Record), size_);
      std::abort();
    }
    auto *record = reinterpret_cast<Record *>(buffer_ + used_);
    record->kind = kind;
    used_ += sizeof(Record);
    return *record;
  }

  size_t used() const { return used_; }

 private:
  uint8_t *buffer_;
  size_t size_;
  size_t used_ = 0;
};

// A kernel on device 0, context 1, launched with grid (128, 2, 1) and block (256, 1, 1).
inline CUpti_ActivityKernel10 &AddKernel(RecordWriter &writer, const char *name,
                                         uint32_t correlation, uint64_t start, uint64_t end,
                                         uint32_t stream) {
  auto &kernel = writer.Add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  kernel.name = name;
  kernel.correlationId = correlation;
  kernel.start = start;
  kernel.end = end;
  kernel.deviceId = 0;
  kernel.contextId = 1;
  kernel.streamId = stream;
  kernel.gridX = 128;
  kernel.gridY = 2;
  kernel.gridZ = 1;
  kernel.blockX = 256;
  kernel.blockY = 1;
  kernel.blockZ = 1;
  kernel.registersPerThread = 40;
  kernel.staticSharedMemory = 1024;
  kernel.dynamicSharedMemory = 2048;
  return kernel;
}

// A runtime (or, with `driver`, driver) API call by `thread` of process 1.
inline CUpti_ActivityAPI &AddApi(RecordWriter &writer, bool driver, uint32_t cbid,
                                 uint32_t correlation, uint64_t start, uint64_t end,
                                 uint32_t thread) {
  auto &call = writer.Add<CUpti_ActivityAPI>(driver ? CUPTI_ACTIVITY_KIND_DRIVER
                                                    : CUPTI_ACTIVITY_KIND_RUNTIME);
  call.cbid = cbid;
  call.correlationId = correlation;
  call.start = start;
  call.end = end;
  call.threadId = thread;
  call.processId = 1;
  return call;
}

// The record that ties CUPTI's correlation id to an external id (tfprof's span, NVTX, ...).
inline void AddExternal(RecordWriter &writer, CUpti_ExternalCorrelationKind kind,
                        uint32_t correlation, uint64_t external) {
  auto &link =
      writer.Add<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  link.externalKind = kind;
  link.correlationId = correlation;
  link.externalId = external;
}

}  // namespace tfprof_test
