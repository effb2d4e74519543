#include "runtime/storage/background_writer.h"

#include <new>
#include <system_error>
#include <utility>

#include "runtime/common/own_threads.h"

namespace tfprof {

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool BackgroundWriter::WouldAccept(size_t bytes) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queued_bytes_ == 0 || queued_bytes_ + bytes <= max_queued_bytes_;
}

bool BackgroundWriter::TrySubmit(size_t bytes, std::function<void()> write) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (queued_bytes_ + bytes > max_queued_bytes_ && queued_bytes_ > 0) return false;
  try {
    if (!thread_.joinable()) {
      thread_ = StartOwnThread([this] { Run(); });
    }
    jobs_.push_back(Job{bytes, std::move(write)});
  } catch (const std::bad_alloc &) {
    return false;
  } catch (const std::system_error &) {
    return false;
  }
  queued_bytes_ += bytes;
  lock.unlock();
  wake_.notify_one();
  return true;
}

void BackgroundWriter::WaitIdle() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return jobs_.empty() && !running_job_; });
}

size_t BackgroundWriter::queued_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queued_bytes_;
}

void BackgroundWriter::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stop, with everything written
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    running_job_ = true;
    lock.unlock();
    try {
      job.write();  // jobs count their own failures; this is the last guard of the program
    } catch (...) {
      failed_jobs_.fetch_add(1, std::memory_order_relaxed);
    }
    job.write = nullptr;  // what it captured goes now, outside the lock
    lock.lock();
    running_job_ = false;
    queued_bytes_ -= job.bytes;
    idle_.notify_all();
  }
}

}  // namespace tfprof
