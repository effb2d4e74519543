// A JSON event's text assembled on the stack and appended to a std::string in one call, for the
// writers that print Chrome trace JSON (chrome_json_writer.cc, timeline_py_writer.cc).
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>

#include "runtime/common/json_text.h"

namespace tfprof {

// One event's text, assembled on the stack and appended to the output in one call: it is a dozen
// short pieces, and each std::string append pays its own capacity check and copy call.
class EventText {
 public:
  explicit EventText(std::string &out) : out_(out) {}
  // The last flush may run out of memory: the exception goes to the writer's caller (the Chrome
  // writer's drops and counts the piece; a destructor's default noexcept would end the program
  // instead). While another exception unwinds through here, the event is being dropped already:
  // nothing to add.
  ~EventText() noexcept(false) {
    if (std::uncaught_exceptions() == 0) Flush();
  }
  EventText(const EventText &) = delete;
  EventText &operator=(const EventText &) = delete;

  void Add(std::string_view text) {
    if (text.size() > kRoom - used_) {
      Flush();
      if (text.size() > kRoom) {
        out_.append(text);
        return;
      }
    }
    if (text.empty()) return;  // an empty view's data may be null, which memcpy may not take
    std::memcpy(buffer_ + used_, text.data(), text.size());
    used_ += text.size();
  }
  // Add() for short texts (args' keys): copied inline, in at most two moves.
  void AddShort(std::string_view text) {
    const size_t size = text.size();
    if (size > 16 || size > kRoom - used_) {
      Add(text);
      return;
    }
    char *const to = buffer_ + used_;
    const char *const from = text.data();
    if (size >= 8) {  // two 8-byte moves that overlap in the middle
      std::memcpy(to, from, 8);
      std::memcpy(to + size - 8, from + size - 8, 8);
    } else if (size >= 4) {
      std::memcpy(to, from, 4);
      std::memcpy(to + size - 4, from + size - 4, 4);
    } else {
      for (size_t index = 0; index < size; ++index) to[index] = from[index];
    }
    used_ += size;
  }
  void Add(char c) {
    if (used_ == kRoom) Flush();
    buffer_[used_++] = c;
  }
  // A string literal: its size is known here, so the copy is a move or two, not a call.
  template <size_t N>
  void Literal(const char (&text)[N]) {
    static_assert(N > 1 && N <= 64, "a short literal");
    if (N - 1 > kRoom - used_) Flush();
    std::memcpy(buffer_ + used_, text, N - 1);
    used_ += N - 1;
  }
  // Integers: most args are small (a device, a stream, a launch's shape), which WriteWhole()
  // writes without std::to_chars' general loop.
  void Int(int64_t value) {
    if (kRoom - used_ < 25) Flush();  // a sign and WriteWhole()'s 24 bytes
    char *cursor = buffer_ + used_;
    uint64_t magnitude = static_cast<uint64_t>(value);
    if (value < 0) {
      *cursor++ = '-';
      magnitude = 0 - magnitude;
    }
    used_ = static_cast<size_t>(json_text_detail::WriteWhole(magnitude, cursor) - buffer_);
  }
  void Uint(uint64_t value) {
    if (kRoom - used_ < 24) Flush();
    used_ = static_cast<size_t>(json_text_detail::WriteWhole(value, buffer_ + used_) - buffer_);
  }
  void Micros(int64_t ns) {
    if (kRoom - used_ < 32) Flush();
    used_ += FormatMicros(ns, buffer_ + used_);
  }
  void Timestamp(int64_t ns, MicrosFormatter &formatter) {
    if (kRoom - used_ < 32) Flush();
    used_ += formatter.Format(ns, buffer_ + used_);
  }
  // A timestamp in whole microseconds (MicrosFormatter::FormatWhole).
  void WholeTimestamp(int64_t ns, MicrosFormatter &formatter) {
    if (kRoom - used_ < 32) Flush();
    used_ += formatter.FormatWhole(ns, buffer_ + used_);
  }
  // `text` as a quoted JSON string (AppendJsonString's escaping). Most names need none: those
  // are copied here in one move; the others go through AppendJsonString.
  void JsonString(std::string_view text) {
    if (text.size() + 2 <= kRoom && PlainJsonPrefix(text) == text.size()) {
      if (text.size() + 2 > kRoom - used_) Flush();
      buffer_[used_] = '"';
      if (!text.empty()) std::memcpy(buffer_ + used_ + 1, text.data(), text.size());
      buffer_[used_ + 1 + text.size()] = '"';
      used_ += text.size() + 2;
      return;
    }
    AppendJsonString(Flushed(), text);
  }
  // The output with everything added so far, for writers that append to a std::string.
  std::string &Flushed() {
    Flush();
    return out_;
  }

 private:
  void Flush() {
    out_.append(buffer_, used_);
    used_ = 0;
  }

  static constexpr size_t kRoom = 480;
  std::string &out_;
  size_t used_ = 0;
  char buffer_[kRoom];
};

}  // namespace tfprof
