#include "bindings/c/last_error.h"

#include <cstdio>
#include <new>
#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/common/string_view_bridge.h"

namespace tfprof_c {

namespace {

// The text lives on the heap behind a trivially destructible pointer. A control call can come
// after the thread's thread_local objects were destroyed: the preload library stops its session
// from an atexit handler, which glibc runs after the main thread's thread_local destructors. A
// thread_local std::string was written after it had been freed then (a program whose own
// prof_start failed under the preload: glibc's "malloc(): unsorted double linked list corrupted"
// at exit). Now such a call finds no text and touches no freed memory.
thread_local std::string *t_text = nullptr;
thread_local bool t_text_destroyed = false;

struct TextOwner {
  ~TextOwner() {
    delete t_text;
    t_text = nullptr;
    t_text_destroyed = true;
  }
};

// The calling thread's text, made on first use; null once the thread is ending (or without
// memory).
std::string *Text() {
  if (t_text == nullptr && !t_text_destroyed) {
    thread_local TextOwner owner;  // registers the destructor
    t_text = new (std::nothrow) std::string();
  }
  return t_text;
}

// Where the text goes when there is no memory for it (the failure being reported is often just
// that): a fixed buffer, cut to its size. Trivially destructible, so usable at any time.
thread_local char t_fallback[256] = {};
thread_local bool t_use_fallback = false;

void SetFallback(std::string_view function, std::string_view message) {
  std::snprintf(t_fallback, sizeof t_fallback, "%.*s: %.*s", static_cast<int>(function.size()),
                function.data(), static_cast<int>(message.size()), message.data());
  t_use_fallback = true;
}

}  // namespace

void SetLastError(std::string_view function, const absl::Status &status) {
  t_use_fallback = false;
  std::string *text = Text();
  const std::string_view message(status.message().data(), status.message().size());
  if (text == nullptr) {
    SetFallback(function, message);
    return;
  }
  try {
    *text = absl::StrCat(tfprof::ToAbsl(function), ": ", status.message());
  } catch (const std::bad_alloc &) {
    text->clear();
    SetFallback(function, message);
  }
}

void SetLastErrorText(std::string_view function, std::string_view message) noexcept {
  if (t_text != nullptr) t_text->clear();
  SetFallback(function, message);
}

void ClearLastError() {
  t_use_fallback = false;
  if (t_text != nullptr) t_text->clear();
}

const char *LastError() {
  if (t_use_fallback) return t_fallback;
  return t_text != nullptr ? t_text->c_str() : "";
}

}  // namespace tfprof_c
