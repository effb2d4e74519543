#include "runtime/formats/chrome/chrome_json_batch.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <system_error>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/status/statusor.h"
#include "runtime/common/byte_source.h"
#include "runtime/common/json_scanner.h"

namespace tfprof {

namespace {

constexpr size_t kArenaChunkBytes = size_t{64} << 10;
// How far past a guessed cut to look for an event boundary before giving the slice up.
constexpr ptrdiff_t kBoundarySearchBytes = ptrdiff_t{64} << 10;
// Slices a stretch is cut into per thread: more than one, so that the calling thread, which
// visits the events in order, rarely waits for the slice it needs next.
constexpr size_t kSlicesPerThread = 4;

// A slice's scanner reads the window in place: it never asks for more bytes.
class NoMoreBytes final : public ByteSource {
 public:
  absl::StatusOr<size_t> Read(char *, size_t) override { return size_t{0}; }
  uint64_t file_bytes_read() const override { return 0; }
};

bool IsJsonWhitespace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Moves into `arena` each view of `event` that points outside [begin, end) (the window): into
// the parser's scratch strings, which the next event overwrites. Every view ChromeJsonEvent and
// DecodedArgs hold is listed here.
void KeepOutsideWindow(const char *begin, const char *end, EventTextArena &arena,
                       ChromeJsonEvent *event) {
  const std::less<const char *> before;
  const auto keep = [&](std::string_view &view) {
    if (view.empty()) return;
    if (!before(view.data(), begin) && !before(end, view.data() + view.size())) return;
    view = arena.Keep(view);
  };
  keep(event->name);
  keep(event->category);
  keep(event->id);
  keep(event->args_name);
  keep(event->pid.text);
  keep(event->tid.text);
  keep(event->args_labels);
  keep(event->args.op);
  keep(event->args.kind_text);
  keep(event->args.file_args);
  for (size_t index = 0; index < event->number_count; ++index) keep(event->numbers[index].first);
}

}  // namespace

std::string_view EventTextArena::Keep(std::string_view text) {
  if (text.size() > room_) {
    const size_t size = std::max(kArenaChunkBytes, text.size());
    chunks_.emplace_back(new char[size]);
    next_ = chunks_.back().get();
    room_ = size;
  }
  std::memcpy(next_, text.data(), text.size());
  const std::string_view kept(next_, text.size());
  next_ += text.size();
  room_ -= text.size();
  return kept;
}

void EventTextArena::Clear() {
  chunks_.clear();
  next_ = nullptr;
  room_ = 0;
}

const char *ChromeJsonBatchParser::GuessBoundary(const char *guess, const char *end) {
  const char *const limit = end - guess > kBoundarySearchBytes ? guess + kBoundarySearchBytes : end;
  for (const char *p = guess; p < limit; ++p) {
    p = static_cast<const char *>(std::memchr(p, ',', static_cast<size_t>(limit - p)));
    if (p == nullptr) return nullptr;
    const char *before = p;
    while (before > guess && IsJsonWhitespace(before[-1])) --before;
    if (before == guess || before[-1] != '}') continue;
    const char *after = JsonScanner::SkipWhitespace(p + 1, end);
    if (after < end && *after == '{') return after;
  }
  return nullptr;
}

void ChromeJsonBatchParser::ParseSlice(const char *stop, const char *end, Slice *slice) {
  slice->events.clear();
  slice->text.Clear();
  slice->after_last = slice->start;
  slice->next_element = nullptr;
  static const std::string kNoPath = "(a slice of the event array)";
  NoMoreBytes no_bytes;
  JsonScanner scanner(no_bytes, kNoPath, false, 1);
  ChromeJsonEventParser parser(scanner);
  const char *p = slice->start;
  while (*p == '{') {
    ChromeJsonEvent &event = slice->events.emplace_back();
    const char *q = p;
    if (parser.Parse(q, end, &event) != Scan::kOk) {  // damage or the window's end: read again
      slice->events.pop_back();                     // one event at a time by the reader
      return;
    }
    event.text = std::string_view(p, static_cast<size_t>(q - p));
    KeepOutsideWindow(slice->start, end, slice->text, &event);
    slice->after_last = q;
    slice->next_element = nullptr;  // until a ',' says another element follows this event
    q = JsonScanner::SkipWhitespace(q, end);
    if (q == end || *q != ',') return;
    q = JsonScanner::SkipWhitespace(q + 1, end);
    if (q == end) return;
    slice->next_element = q;
    if (stop != nullptr && q >= stop) return;
    p = q;
  }
}

bool ChromeJsonBatchParser::ParseNextSlice(const char *end) {
  if (stop_.load(std::memory_order_relaxed)) return false;
  const size_t index = next_slice_.fetch_add(1, std::memory_order_relaxed);
  if (index >= count_) return false;
  Slice &slice = slices_[index];
  try {
    ParseSlice(StopOf(index), end, &slice);
  } catch (const std::exception &) {  // out of memory on a worker: no events, the reader goes
    slice.events.clear();            // on from here on its own thread, where it throws again
    slice.after_last = slice.start;
    slice.next_element = nullptr;
  }
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    done_[index] = 1;
  }
  parsed_.notify_all();
  return true;
}

void ChromeJsonBatchParser::AwaitSlice(size_t index, const char *end) {
  while (true) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (done_[index] != 0) return;
    }
    if (!ParseNextSlice(end)) break;  // all taken: `index` is being parsed elsewhere
  }
  std::unique_lock<std::mutex> lock(mutex_);
  parsed_.wait(lock, [&] { return done_[index] != 0; });
}

const char *ChromeJsonBatchParser::ParseEach(
    const char *begin, const char *end, absl::FunctionRef<void(const ChromeJsonEvent &)> visit) {
  accepted_ = 0;
  // Slices of a few hundred KiB: the calling thread parses the first while the others start,
  // then visits each as soon as it is parsed, while they parse the ones after it.
  const size_t wanted = std::max<size_t>(1, size_t{threads_} * kSlicesPerThread);
  if (slices_.size() < wanted) slices_.resize(wanted);
  // The cuts: slice k starts near k/wanted of the stretch, at a boundary after the last cut.
  count_ = 1;
  slices_[0].start = begin;
  const auto length = static_cast<size_t>(end - begin);
  for (size_t k = 1; k < wanted; ++k) {
    const char *const guess = begin + length / wanted * k;
    if (guess <= slices_[count_ - 1].start) continue;
    const char *const start = GuessBoundary(guess, end);
    if (start == nullptr) continue;
    slices_[count_++].start = start;
  }
  done_.assign(count_, 0);
  next_slice_.store(0, std::memory_order_relaxed);
  stop_.store(false, std::memory_order_relaxed);
  std::vector<std::thread> workers;
  // However the visits end (an exception from `visit` too), no worker outlives this call.
  absl::Cleanup join_workers = [&] {
    stop_.store(true, std::memory_order_relaxed);
    for (std::thread &worker : workers) worker.join();
  };
  for (unsigned k = 1; k < threads_ && k < count_; ++k) {
    try {
      workers.emplace_back([this, end] {
        while (ParseNextSlice(end)) {
        }
      });
    } catch (const std::system_error &) {  // no thread to be had: this one parses more
      break;
    }
  }
  for (size_t index = 0; index < count_; ++index) {
    AwaitSlice(index, end);
    Slice &slice = slices_[index];
    // Each slice counts when the one before it ran exactly up to its start (see the header).
    // When it did not, the cut was guessed inside an event (a nested array's "},{"), and the
    // one before ran on to the next true boundary: the slice is parsed again from there, here.
    if (index > 0 && slices_[index - 1].next_element != slice.start) {
      if (slices_[index - 1].next_element == nullptr) break;  // it met an end: so do we
      slice.start = slices_[index - 1].next_element;
      ParseSlice(StopOf(index), end, &slice);
    }
    if (slice.events.empty()) break;
    for (const ChromeJsonEvent &event : slice.events) visit(event);
    accepted_ = index + 1;
  }
  std::move(join_workers).Invoke();
  return accepted_ == 0 ? begin : slices_[accepted_ - 1].after_last;
}

}  // namespace tfprof
