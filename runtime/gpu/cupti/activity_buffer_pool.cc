#include "runtime/gpu/cupti/activity_buffer_pool.h"

namespace tfprof {

ActivityBufferPool::ActivityBufferPool(size_t buffer_count, size_t buffer_bytes)
    : buffer_bytes_((buffer_bytes + 7) / 8 * 8),
      buffer_count_(buffer_count),
      storage_(new uint64_t[buffer_count * ((buffer_bytes + 7) / 8)]) {
  free_.reserve(buffer_count);
  uint8_t *base = reinterpret_cast<uint8_t *>(storage_.get());
  // Last buffer first, so Take() hands them out in address order.
  for (size_t index = buffer_count; index-- > 0;) free_.push_back(base + index * buffer_bytes_);
}

uint8_t *ActivityBufferPool::Take() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_.empty()) {
    refusals_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  uint8_t *buffer = free_.back();
  free_.pop_back();
  return buffer;
}

void ActivityBufferPool::Give(uint8_t *buffer) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(buffer);  // capacity reserved up front: never allocates
}

bool ActivityBufferPool::Owns(const uint8_t *buffer) const {
  const uint8_t *base = reinterpret_cast<const uint8_t *>(storage_.get());
  return buffer >= base && buffer < base + buffer_count_ * buffer_bytes_ &&
         static_cast<size_t>(buffer - base) % buffer_bytes_ == 0;
}

size_t ActivityBufferPool::outstanding() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return buffer_count_ - free_.size();
}

}  // namespace tfprof
