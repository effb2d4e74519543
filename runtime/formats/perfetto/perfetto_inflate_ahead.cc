#include "runtime/formats/perfetto/perfetto_inflate_ahead.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <utility>

#include "runtime/common/proto_wire.h"
#include "runtime/formats/perfetto/perfetto_compressed_packets.h"
#include "runtime/formats/perfetto/perfetto_fields.h"

namespace tfprof {

InflateAhead::InflateAhead(std::string_view data) : data_(data) {
  try {
    spare_.reserve(kSpareBuffers);  // giving a buffer back never allocates
    thread_ = std::thread([this] { Walk(); });
  } catch (const std::exception &) {  // no thread to be had: the reader inflates each batch
    walked_ = true;
  }
}

InflateAhead::~InflateAhead() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void InflateAhead::Walk() {
  try {
    WalkBatches();
  } catch (const std::exception &) {  // out of memory: the reader inflates the rest itself
  }
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    walked_ = true;
  }
  changed_.notify_all();
}

void InflateAhead::WalkBatches() {
  size_t at = 0;
  size_t waited_at = 0;  // where the walk last checked how far ahead of the reader it is
  WireField packet;
  // The walk ends at the first bytes that are no field: the reader reports them.
  while (at < data_.size() && NextWireField(data_, &at, &packet)) {
    if (at - waited_at >= kWalkCheckBytes) {
      // Not too far ahead of the reader (the file's pages it touches stay in memory), and
      // stopped when the reader is done.
      waited_at = at;
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || at <= reader_at_ + kWalkAheadBytes; });
      if (stop_) return;
    }
    if (packet.number != perfetto_fields::kTracePacket || packet.wire_type != 2) continue;
    size_t in = 0;
    WireField field;
    while (in < packet.payload.size() && NextWireField(packet.payload, &in, &field)) {
      if (field.number != perfetto_fields::packet::kCompressedPackets || field.wire_type != 2) {
        continue;
      }
      Batch batch;
      batch.payload = field.payload.data();
      {
        // A buffer the reader gave back: its capacity is reused (a fresh one of 128 KiB or
        // more is an mmap, its pages faulted in and unmapped again, batch after batch).
        const std::lock_guard<std::mutex> lock(mutex_);
        if (!spare_.empty()) {
          batch.packets.swap(spare_.back());
          spare_.pop_back();
        }
      }
      std::string problem;
      batch.inflated =
          InflatePackets(field.payload, kMaxInflatedBatchBytes, &batch.packets, &problem);
      if (!Push(std::move(batch))) return;
    }
  }
}

size_t InflateAhead::Cost(const Batch &batch) {
  return batch.packets.capacity() + kBatchOverheadBytes;
}

bool InflateAhead::Push(Batch batch) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // Room for one more: an empty queue takes any batch (up to kMaxInflatedBatchBytes).
    changed_.wait(lock, [&] { return stop_ || ready_.empty() || ready_cost_ < kAheadBytes; });
    if (stop_) return false;
    ready_cost_ += Cost(batch);
    ready_.push_back(std::move(batch));
  }
  changed_.notify_all();
  return true;
}

bool InflateAhead::Take(std::string_view payload, std::string *packets) {
  const std::less<const char *> before;
  Batch taken;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    const bool in_data = !before(payload.data(), data_.data()) &&
                         before(payload.data(), data_.data() + data_.size());
    if (in_data) {
      reader_at_ = std::max(reader_at_, static_cast<size_t>(payload.data() - data_.data()));
    }
    changed_.notify_all();  // the walk may be waiting for the reader to come this far
    while (true) {
      bool dropped = false;
      while (!ready_.empty() && before(ready_.front().payload, payload.data())) {
        ready_cost_ -= Cost(ready_.front());
        ready_.pop_front();
        dropped = true;
      }
      if (!ready_.empty() || walked_) break;
      if (dropped) changed_.notify_all();  // the thread may be waiting for that room
      changed_.wait(lock);
    }
    if (!ready_.empty() && ready_.front().payload == payload.data()) {
      taken = std::move(ready_.front());
      ready_cost_ -= Cost(taken);
      ready_.pop_front();
    }
  }
  changed_.notify_all();  // room freed: the thread may go on
  if (!taken.inflated) return false;  // not found, or damaged: the caller inflates it
  packets->swap(taken.packets);
  // The reader's previous buffer, for a later batch; not one grown by an outsized batch.
  if (taken.packets.capacity() <= kSpareBufferBytes) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (spare_.size() < kSpareBuffers) spare_.push_back(std::move(taken.packets));
  }
  return true;
}

}  // namespace tfprof
