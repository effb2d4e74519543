// The activity buffers CUPTI fills, all allocated before tracing starts: handing one to CUPTI
// (which happens inside a kernel launch when its current buffer is full) never allocates. When
// every buffer is out, CUPTI gets none, drops records and counts them; the pool counts refusals.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace tfprof {

class ActivityBufferPool {
 public:
  // CUPTI needs 8-byte aligned buffers; buffer_bytes is rounded up to a multiple of 8.
  ActivityBufferPool(size_t buffer_count, size_t buffer_bytes);

  size_t buffer_bytes() const { return buffer_bytes_; }

  // A free buffer, or null (counted as a refusal) when all are out.
  uint8_t *Take();
  // Returns a buffer taken from this pool.
  void Give(uint8_t *buffer);
  bool Owns(const uint8_t *buffer) const;

  // Buffers out with CUPTI (or being parsed) right now.
  size_t outstanding() const;
  uint64_t TakeRefusals() { return refusals_.exchange(0, std::memory_order_relaxed); }

 private:
  size_t buffer_bytes_;
  size_t buffer_count_;
  std::unique_ptr<uint64_t[]> storage_;  // uint64_t for the alignment
  mutable std::mutex mutex_;  // a leaf lock: nothing is called while it is held
  std::vector<uint8_t *> free_;
  std::atomic<uint64_t> refusals_{0};
};

}  // namespace tfprof
