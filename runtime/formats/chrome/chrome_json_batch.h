// Parses a stretch of a Chrome trace's event array on several threads at once. The reader hands
// it the whole events its window holds; they come back in file order, each as the single-threaded
// parser gives it, for the reader to interpret one by one on its own thread (the one builder stays
// on one thread) while the other threads parse the events after them.
//
// The stretch is cut into slices at guessed event boundaries: after a ',' that follows a '}' and
// precedes a '{'. A guess may be wrong (such bytes can sit inside a string or a nested array), so
// each slice counts only when the slice before it ended exactly where it starts: the first slice
// starts where the reader stands, a true boundary, and by induction every slice accepted is too.
// A slice that fails the check is parsed again from where the one before it ended (a slice runs
// on past its cut to the next true boundary). Parsing stops at the first slice that meets
// anything but a whole event (an error, the ']', the window's end): the reader goes on from there
// one event at a time, and says what the single-threaded reader would have said.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "runtime/formats/chrome/chrome_json_event.h"

namespace tfprof {

// Copies of decoded text (strings with escapes, rebuilt args) that events keep beyond the parser
// that made them; addresses stay put until Clear().
class EventTextArena {
 public:
  std::string_view Keep(std::string_view text);
  void Clear();

 private:
  std::vector<std::unique_ptr<char[]>> chunks_;
  char *next_ = nullptr;
  size_t room_ = 0;
};

class ChromeJsonBatchParser {
 public:
  // `threads` parse stretches of at least `min_bytes` (shorter ones are left to the reader's
  // single-threaded path: threads would not pay); 1 thread parses none.
  ChromeJsonBatchParser(unsigned threads, size_t min_bytes)
      : threads_(threads), min_bytes_(min_bytes) {}

  // Whether [begin, end) is worth parsing here.
  bool Worth(const char *begin, const char *end) const {
    return threads_ > 1 && end - begin >= static_cast<ptrdiff_t>(min_bytes_);
  }
  // How many slices the last ParseEach() took events from (0: none).
  size_t accepted_slices() const { return accepted_; }

  // Parses the whole events from `begin` (an element's '{' in the event array) on, before `end`
  // (the window's end), and calls `visit` for each on the calling thread, in file order; the
  // other threads parse the slices after the one being visited. An event's views point into
  // [begin, end) or into this parser's arenas, valid during its visit. Returns where the
  // single-threaded reader goes on: just after the last event visited, expecting ',' or ']'
  // (`begin` when none was).
  const char *ParseEach(const char *begin, const char *end,
                        absl::FunctionRef<void(const ChromeJsonEvent &)> visit);

 private:
  struct Slice {
    const char *start = nullptr;        // an element's '{' (a guess, but for the first slice)
    const char *after_last = nullptr;   // just after its last event parsed (start: none)
    const char *next_element = nullptr; // the element after the last event, when a ',' said so
    std::vector<ChromeJsonEvent> events;
    EventTextArena text;
  };

  // Events from `slice->start` until one starts at or after `stop` (null: the window's end).
  static void ParseSlice(const char *stop, const char *end, Slice *slice);
  // Where a slice near `guess` might start: a '{' after "}," (whitespace allowed), or null.
  static const char *GuessBoundary(const char *guess, const char *end);
  // Where slice `index` stops: the next slice's start (null for the last: the window's end).
  const char *StopOf(size_t index) const {
    return index + 1 < count_ ? slices_[index + 1].start : nullptr;
  }
  // Parses the next slice no thread has taken; false when none is left, or the visits stopped.
  bool ParseNextSlice(const char *end);
  // Returns once slice `index` is parsed, parsing others meanwhile while there are some to take.
  void AwaitSlice(size_t index, const char *end);

  unsigned threads_;
  size_t min_bytes_;
  std::vector<Slice> slices_;
  size_t count_ = 0;     // slices_[0, count_) are the current ParseEach()'s
  size_t accepted_ = 0;  // of those, how many were visited
  std::atomic<size_t> next_slice_{0};  // the next slice a thread takes
  std::atomic<bool> stop_{false};      // take no more: the visits stopped
  std::mutex mutex_;
  std::condition_variable parsed_;  // a slice was parsed
  std::vector<char> done_;          // per slice, whether it is parsed (under mutex_)
};

}  // namespace tfprof
