#include "runtime/collector/thread_registry.h"

#include "runtime/gpu/gpu_tracer.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <new>

#include "runtime/collector/recorder.h"

namespace tfprof {

ThreadRegistry &ThreadRegistry::Get() {
  static ThreadRegistry *registry = new ThreadRegistry();
  return *registry;
}

ThreadRegistry::ThreadRegistry() { pthread_key_create(&exit_key_, &ThreadRegistry::OnThreadExit); }

void ThreadRegistry::OnThreadExit(void *buffer) {
  // Runs on the exiting thread. After this the collector owns the buffer; its records are
  // drained on the next pass, so nothing the thread recorded is lost.
  ForgetCurrentThreadBuffer();
  static_cast<ThreadBuffer *>(buffer)->retired.store(true, std::memory_order_release);
}

ThreadBuffer *ThreadRegistry::AttachCurrentThread(uint64_t word, ThreadBuffer *previous) {
  // Hot-path callers may be C code, so no exception may escape: out of memory loses the event.
  ThreadBuffer *buffer = nullptr;
  try {
    buffer = new ThreadBuffer(ring_capacity_.load(std::memory_order_relaxed),
                              static_cast<int64_t>(syscall(SYS_gettid)), word);
    std::lock_guard<std::mutex> lock(mutex_);
    buffers_.push_back(buffer);
  } catch (const std::bad_alloc &) {
    delete buffer;
    return nullptr;
  }
  try {
    char os_name[64] = {};
    pthread_getname_np(pthread_self(), os_name, sizeof os_name);
    std::lock_guard<std::mutex> lock(buffer->name_mutex);
    buffer->os_name = os_name;
    if (previous != nullptr) {
      std::lock_guard<std::mutex> previous_lock(previous->name_mutex);
      buffer->explicit_name = previous->explicit_name;
    }
  } catch (const std::bad_alloc &) {
    // The row goes without its name (the collector reads the OS name again); the events stay.
  }
  if (g_gpu_correlation_enabled.load(std::memory_order_acquire)) {
    static std::atomic<uint32_t> next_gpu_thread_serial{0};
    buffer->gpu_thread_serial = next_gpu_thread_serial.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  if (previous != nullptr) previous->retired.store(true, std::memory_order_release);
  pthread_setspecific(exit_key_, buffer);
  return buffer;
}

}  // namespace tfprof
