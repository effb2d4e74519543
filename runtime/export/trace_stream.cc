#include "runtime/export/trace_stream.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/common/staged_file.h"
#include "runtime/common/string_view_bridge.h"

namespace tfprof {

// The open file and what is known about its content. Only the writer thread (or, without one,
// the collector) touches it after Open(); Finish() reads it once the writes are done.
struct TraceStream::File {
  std::string path;
  StagedFile staged;  // unnamed until it holds a whole record (JSON: a valid, empty trace)
  absl::Status status;  // the first failure; later writes are skipped
  uint64_t size = 0;     // bytes in the file that are meant to be there
  // Chrome JSON: where the tail starts, the tail on disk, and whether any event is written.
  uint64_t events_end = 0;
  std::string tail;
  bool has_events = false;
  // Records of pieces whose write failed for want of memory (the writer thread counts them; the
  // collector reads them into the trace's losses).
  std::atomic<uint64_t> records_lost{0};
  // What of the session's records the file holds or no longer needs: as of the latest piece
  // written whole (none are written after a failure).
  std::mutex written_mutex;
  LogPositions written;

  void Fail(const char *what, int error) {
    if (status.ok()) {
      status = absl::UnavailableError(absl::StrCat("cannot ", what, " '", path, "': ",
                                                   std::strerror(error)));
    }
  }

  // Writes all of `parts`, one after the other, at `offset` in one pwritev where the system
  // takes them whole; false (status set) when the system refused.
  // Allocates nothing: it runs where memory may have run out.
  bool WriteAt(std::initializer_list<std::string_view> parts, uint64_t offset) {
    constexpr size_t kMostParts = 3;
    iovec pending[kMostParts];
    size_t parts_used = 0;
    for (std::string_view part : parts) {
      if (!part.empty() && parts_used < kMostParts) {
        pending[parts_used++] = {const_cast<char *>(part.data()), part.size()};
      }
    }
    size_t first = 0;
    while (first < parts_used) {
      const int count = static_cast<int>(std::min<size_t>(parts_used - first, IOV_MAX));
      const ssize_t wrote =
          pwritev(staged.fd(), &pending[first], count, static_cast<off_t>(offset));
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) {
        Fail("write", wrote < 0 ? errno : EIO);
        return false;
      }
      offset += static_cast<uint64_t>(wrote);
      // Skip what was written: whole parts, then the front of a part written in part.
      for (size_t left = static_cast<size_t>(wrote); left > 0;) {
        iovec &part = pending[first];
        const size_t taken = std::min(left, part.iov_len);
        part.iov_base = static_cast<char *>(part.iov_base) + taken;
        part.iov_len -= taken;
        left -= taken;
        if (part.iov_len == 0) ++first;
      }
    }
    return true;
  }

  // Chrome JSON: `events` after the events on disk, then `new_tail` in place of the old tail.
  // The old tail is cut off first, then both go in one write: a write the process dies in (a
  // kill lands between pages) leaves the file cut short, which readers recover to its last whole
  // step, never new bytes followed by the rest of the old tail, which would be damage. Someone
  // reading the file while the session runs sees a whole trace whenever no write is under way.
  void WriteChrome(const std::string &events, const std::string &new_tail) {
    if (!status.ok()) return;
    // Pieces before this one may have been dropped: the first event written, and a tail after no
    // event, take no separating comma.
    std::string_view piece = events;
    if (!has_events && piece.starts_with(",\n")) piece.remove_prefix(2);
    const bool events_now = has_events || !piece.empty();
    std::string_view end = new_tail;
    if (!events_now && end.starts_with(",\n")) end.remove_prefix(2);
    const uint64_t new_size = events_end + piece.size() + end.size();
    // Everything that allocates comes before the write, so that running out of memory (an
    // exception out of here) leaves the file and what is known of it as they were.
    std::string new_tail_on_disk;
    new_tail_on_disk.reserve(end.size() + (size > new_size ? size - new_size : 0));
    new_tail_on_disk.assign(end);
    new_tail_on_disk.append(size > new_size ? size - new_size : 0, ' ');
    const std::string_view padding = std::string_view(new_tail_on_disk).substr(end.size());
    if (!WriteAt({piece, end, padding}, events_end)) {
      // Put the old tail back: the file is again what it was before this piece.
      const int saved = errno;
      if (pwrite(staged.fd(), tail.data(), tail.size(), static_cast<off_t>(events_end)) ==
          static_cast<ssize_t>(tail.size())) {
        static_cast<void>(ftruncate(staged.fd(), static_cast<off_t>(events_end + tail.size())));
      }
      errno = saved;
      return;
    }
    events_end += piece.size();
    has_events = events_now;
    tail.swap(new_tail_on_disk);
    size = events_end + tail.size();
  }

  // TensorFlow files: whole records appended; a failed write is cut back to the last one. The
  // file takes its name with its first record.
  void Append(const std::string &bytes, bool publish = true) {
    if (!status.ok() || bytes.empty()) return;
    if (!WriteAt({bytes}, size)) {
      static_cast<void>(ftruncate(staged.fd(), static_cast<off_t>(size)));
      return;
    }
    size += bytes.size();
    if (publish) Publish();
  }

  void Publish() {
    if (!status.ok() || staged.published()) return;
    if (absl::Status published = staged.Publish(); !published.ok()) status = std::move(published);
  }
};

// The text buffers of pieces, reused. A piece is built on the collector and freed on the writer
// thread; with a fresh string each time, malloc kept what that traffic freed (RSS grew about
// 200 MB in a minute at 2M events/s). At most kMostBuffers are kept, none over kMostBytes: kept
// buffers are memory the session holds (16 of up to 32 MiB once held ~130 MB at 2M spans/s).
class TraceStream::Buffers {
 public:
  Buffers() { free_.reserve(kMostBuffers); }  // Give() then never allocates
  std::string Take() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return {};
    std::string text = std::move(free_.back());
    free_.pop_back();
    text.clear();
    return text;
  }
  void Give(std::string text) {
    if (text.capacity() > kMostBytes) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.size() < kMostBuffers) free_.push_back(std::move(text));
  }

 private:
  static constexpr size_t kMostBuffers = 4;
  static constexpr size_t kMostBytes = size_t{4} << 20;
  std::mutex mutex_;
  std::vector<std::string> free_;
};

absl::StatusOr<std::unique_ptr<TraceStream>> TraceStream::Open(Format format,
                                                               const std::string &path,
                                                               const ExportContext &context,
                                                               BackgroundWriter *writer) {
  auto file = std::make_shared<File>();
  file->path = path;
  CreatedLogDirectory created_directory;
  if (format == Format::kTensorBoard) {
    absl::StatusOr<std::string> event_file =
        NewEventFilePath(path, context.start_wall_ns, &created_directory);
    if (!event_file.ok()) return event_file.status();
    file->path = *event_file;
  }
  absl::StatusOr<StagedFile> staged = StagedFile::Create(file->path);
  if (!staged.ok()) return staged.status();
  file->staged = std::move(*staged);
  std::unique_ptr<TraceStream> stream(new TraceStream(format, file, context, writer));
  // The header as known at the start: the file is a whole trace of no events from the start
  // (Chrome JSON: its beginning and tail; Perfetto: its first packet and the trace info packet
  // that ends every piece, by which a reader knows tfprof's stream, whose packets after the last
  // info packet are a piece that may be cut).
  stream->trace_.UpdateInfo(SessionLog(), context, GpuLossCounters());
  std::string begin;
  std::string tail;
  stream->encoder_->LiveStart(stream->trace_.trace(), context.start_wall_ns, context.end_ns, begin,
                              tail);
  if (stream->encoder_->has_tail()) {
    if (file->WriteAt({begin}, 0)) {
      file->events_end = begin.size();
      file->size = begin.size();
      file->WriteChrome({}, tail);
      file->Publish();
    }
  } else {
    // A .tfrecord has no header: it is named with its first step's record. So is a TensorBoard
    // event file, though its header (file_version) is written now: a file of that alone, left
    // by a process killed before its first step, would be no trace to read.
    file->Append(begin, /*publish=*/stream->encoder_->whole_from_start());
  }
  if (!file->status.ok()) return file->status;
  created_directory.Keep();  // the stream's file is in it (named with its first step)
  return stream;
}

TraceStream::TraceStream(Format format, std::shared_ptr<File> file, const ExportContext &context,
                         BackgroundWriter *writer)
    : file_(std::move(file)),
      writer_(writer),
      buffers_(std::make_shared<Buffers>()),
      trace_(context),
      encoder_(TraceWriteDriver::ForLiveFile(format)),
      walked_until_ns_(context.start_monotonic_ns) {}

// Queued writes hold the file themselves: they may run after the stream is gone.
TraceStream::~TraceStream() = default;

const std::string &TraceStream::path() const { return file_->path; }

LogPositions TraceStream::Written() const {
  std::lock_guard<std::mutex> lock(file_->written_mutex);
  return file_->written;
}

void TraceStream::WritePiece(bool last, const ExportContext &context) {
  ++pieces_;
  const Trace &trace = trace_.trace();
  const uint64_t records = trace_.piece_records();
  std::string events;
  std::string tail;
  try {
    events = buffers_->Take();
    encoder_->LivePiece(trace, last, context.end_ns, events, tail);
  } catch (const std::bad_alloc &) {
    // No memory to encode the piece: its records are counted, the stream goes on with the next.
    DropPiece(records);
    return;
  }
  const size_t bytes = events.size() + tail.size();
  std::shared_ptr<File> file = file_;
  const bool has_tail = encoder_->has_tail();
  LogPositions taken;
  try {
    taken = trace_.TakenIn(gpu_tracing_);
  } catch (const std::bad_alloc &) {
    // Without the positions the session keeps its records (it spills them): nothing is lost.
  }
  auto write = [file, has_tail, records, buffers = buffers_, events = std::move(events),
                tail = std::move(tail), taken = std::move(taken)]() mutable {
    // Runs on the writer thread, where an exception would end the program.
    try {
      if (has_tail) {
        file->WriteChrome(events, tail);
      } else {
        file->Append(events);
      }
    } catch (const std::bad_alloc &) {
      file->records_lost.fetch_add(records, std::memory_order_relaxed);
    }
    buffers->Give(std::move(events));
    if (file->status.ok()) {
      std::lock_guard<std::mutex> lock(file->written_mutex);
      std::swap(file->written, taken);
    }
  };
  if (writer_ == nullptr) {
    write();
    return;
  }
  if (last) {
    // The end of the file is never dropped: written here, once the writer has written the rest
    // (a piece held back first).
    writer_->WaitIdle();
    if (held_write_ != nullptr) std::exchange(held_write_, nullptr)();
    write();
    return;
  }
  bool submitted = false;
  try {
    // Allocates the job's storage before it moves the piece in: when that fails, `write` still
    // holds the piece.
    std::function<void()> job(std::move(write));
    if (!writer_->WouldAccept(bytes)) {
      // The writer is behind: the piece waits here and the stream takes no more steps until the
      // writer has taken it (Append()), so a burst waits in the session instead of being lost.
      held_write_ = std::move(job);
      held_bytes_ = bytes;
      held_records_ = records;
      return;
    }
    submitted = writer_->TrySubmit(bytes, std::move(job));
  } catch (const std::bad_alloc &) {
    submitted = false;
  }
  if (!submitted) DropPiece(records);
}

bool TraceStream::SubmitHeldPiece() {
  if (held_write_ == nullptr) return true;
  if (!writer_->WouldAccept(held_bytes_)) return false;
  if (!writer_->TrySubmit(held_bytes_, std::move(held_write_))) DropPiece(held_records_);
  held_write_ = nullptr;
  return true;
}

void TraceStream::DropPiece(uint64_t records) {
  dropped_records_ += records;
  // The dropped piece may have interned names or described tracks that later ones use.
  encoder_->Restart();
}

uint64_t TraceStream::dropped_records() const {
  return dropped_records_ + trace_.lost_records() +
         file_->records_lost.load(std::memory_order_relaxed);
}

void TraceStream::Append(const SessionLog &log, const ExportContext &context, int64_t settled_ns,
                         int64_t gpu_complete_through_ns,
                         absl::FunctionRef<void()> between_pieces) {
  gpu_tracing_ = log.gpu.state == GpuTracingState::kActive;
  GpuLossCounters gpu_losses = log.gpu.losses;
  gpu_losses.late_records = trace_.late_gpu_records();
  ExportContext counted = context;  // the caller's counts, without the stream's own drops
  counted.losses.memory_dropped += dropped_records();
  trace_.UpdateInfo(log, counted, gpu_losses);
  // A writer still behind: the settled steps wait in the session for a later call.
  if (!SubmitHeldPiece()) return;
  // A backlog (a collector that fell behind) is walked in time windows of about
  // kRecordsPerPiece records, each written as its own piece: a piece's model and text, and the
  // memory they leave behind, stay small whatever the backlog (a step is never split).
  const uint64_t arrived = context.events_recorded - std::min(context.events_recorded, records_seen_);
  records_seen_ = context.events_recorded;
  const int64_t from_ns = std::min(walked_until_ns_, settled_ns);
  const uint64_t windows = std::clamp<uint64_t>(arrived / kRecordsPerPiece, 1, kMostPiecesPerCall);
  for (uint64_t window = 1; window < windows; ++window) {
    const int64_t until_ns =
        from_ns + static_cast<int64_t>(static_cast<double>(settled_ns - from_ns) *
                                       static_cast<double>(window) / static_cast<double>(windows));
    trace_.Advance(log, context, until_ns);
    if (TakeSettled(std::min(until_ns, settled_ns), std::min(until_ns, gpu_complete_through_ns))) {
      WritePiece(false, context);
    }
    between_pieces();
    if (held_write_ != nullptr) {  // the writer fell behind: the rest waits for a later call
      walked_until_ns_ = std::max(walked_until_ns_, until_ns);
      return;
    }
  }
  walked_until_ns_ = std::max(walked_until_ns_, settled_ns);
  // No further than the settled time: events drained since (between the pieces above) wait for
  // the next call, so that spans not placed yet stay few and each piece's placement stays cheap.
  trace_.Advance(log, context, settled_ns);
  if (!TakeSettled(settled_ns, gpu_complete_through_ns)) return;
  WritePiece(false, context);
}

bool TraceStream::TakeSettled(int64_t settled_ns, int64_t gpu_complete_through_ns) {
  try {
    return trace_.TakeSettled(settled_ns, gpu_complete_through_ns);
  } catch (const std::bad_alloc &) {
    // The records taken for the piece are gone with it: counted; the next piece starts afresh.
    DropPiece(trace_.taken_records());
    return false;
  }
}

absl::Status TraceStream::Finish(const SessionLog &log, const ExportContext &context) {
  gpu_tracing_ = log.gpu.state == GpuTracingState::kActive;
  trace_.Advance(log, context);
  trace_.TakeAll();
  GpuLossCounters gpu_losses = log.gpu.losses;
  gpu_losses.late_records = trace_.late_gpu_records();
  ExportContext counted = context;  // the caller's counts, without the stream's own drops
  counted.losses.memory_dropped += dropped_records();
  trace_.UpdateInfo(log, counted, gpu_losses);
  WritePiece(true, context);
  if (writer_ != nullptr) writer_->WaitIdle();
  file_->Publish();  // a .tfrecord of no record yet is named now, empty
  absl::Status status = file_->status;
  // Writes to a file that was deleted (or whose directory was) succeed and reach nobody.
  struct stat info {};
  if (status.ok() && fstat(file_->staged.fd(), &info) == 0 && info.st_nlink == 0) {
    status = absl::UnavailableError(absl::StrCat(
        "cannot write '", file_->path, "': the file was deleted while the session wrote it"));
  }
  if (absl::Status closed = file_->staged.Close(); status.ok()) status = std::move(closed);
  return status;
}

}  // namespace tfprof
