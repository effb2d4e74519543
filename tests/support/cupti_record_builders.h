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

// What every record of GPU work holds: where it ran (device 0, which the zeroed record already
// says, context 1, `stream`), when, and the correlation id of the call that launched it.
template <typename Record>
Record &PlaceWork(Record &record, uint32_t correlation, uint64_t start, uint64_t end,
                  uint32_t stream) {
  record.correlationId = correlation;
  record.start = start;
  record.end = end;
  record.contextId = 1;
  record.streamId = stream;
  return record;
}

// A kernel launched with grid (128, 2, 1) and block (256, 1, 1).
inline CUpti_ActivityKernel10 &AddKernel(RecordWriter &writer, const char *name,
                                         uint32_t correlation, uint64_t start, uint64_t end,
                                         uint32_t stream) {
  auto &kernel =
      PlaceWork(writer.Add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
                correlation, start, end, stream);
  kernel.name = name;
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

// A copy of `bytes` between memory of kinds `from` and `to`.
inline void AddCopy(RecordWriter &writer, CUpti_ActivityMemcpyKind kind,
                    CUpti_ActivityMemoryKind from, CUpti_ActivityMemoryKind to, uint64_t bytes,
                    uint32_t correlation, uint64_t start, uint64_t end, uint32_t stream) {
  auto &copy = PlaceWork(writer.Add<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY),
                         correlation, start, end, stream);
  copy.copyKind = static_cast<uint8_t>(kind);
  copy.srcKind = static_cast<uint8_t>(from);
  copy.dstKind = static_cast<uint8_t>(to);
  copy.bytes = bytes;
}

// A peer-to-peer copy that device `from_device` runs, to device `to_device`.
inline void AddPeerCopy(RecordWriter &writer, uint64_t bytes, uint32_t correlation,
                        uint64_t start, uint64_t end, uint32_t from_device, uint32_t to_device,
                        uint32_t stream) {
  auto &peer = PlaceWork(writer.Add<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2),
                         correlation, start, end, stream);
  peer.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  peer.bytes = bytes;
  peer.deviceId = from_device;
  peer.srcDeviceId = from_device;
  peer.dstDeviceId = to_device;
}

// A memset of `bytes` of device memory.
inline CUpti_ActivityMemset4 &AddMemset(RecordWriter &writer, uint64_t bytes, uint32_t correlation,
                                        uint64_t start, uint64_t end, uint32_t stream) {
  auto &memset = PlaceWork(writer.Add<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET),
                           correlation, start, end, stream);
  memset.bytes = bytes;
  memset.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  return memset;
}

// An allocation or release of `bytes` of `kind` memory at `address`.
inline void AddMemory(RecordWriter &writer, CUpti_ActivityMemoryOperationType operation,
                      CUpti_ActivityMemoryKind kind, uint64_t bytes, uint64_t address,
                      uint64_t timestamp) {
  auto &memory = writer.Add<CUpti_ActivityMemory4>(CUPTI_ACTIVITY_KIND_MEMORY2);
  memory.memoryOperationType = operation;
  memory.memoryKind = kind;
  memory.bytes = bytes;
  memory.address = address;
  memory.timestamp = timestamp;
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
