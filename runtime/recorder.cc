#include "runtime/recorder.h"

#include "runtime/thread_registry.h"

namespace tfprof {

std::atomic<uint64_t> g_session_word{0};

__thread ThreadBuffer *t_buffer __attribute__((tls_model("initial-exec"))) = nullptr;

ThreadBuffer *AttachCurrentThread(uint64_t word) {
  ThreadBuffer *buffer = ThreadRegistry::Get().AttachCurrentThread(word, t_buffer);
  t_buffer = buffer;
  return buffer;
}

void ForgetCurrentThreadBuffer() { t_buffer = nullptr; }

void SetCurrentThreadName(uint64_t word, const char *name) {
  // Naming a thread before its first event still counts: attach it now.
  ThreadBuffer *buffer = BufferFor(word);
  if (buffer == nullptr) return;
  absl::MutexLock lock(&buffer->name_mutex);
  buffer->explicit_name = name == nullptr ? "" : name;
}

}  // namespace tfprof
