// A session output that grows while the program runs (output=PATH): Chrome trace JSON, a
// .tfrecord, a TensorBoard event file or a Perfetto trace, written piece by piece as steps settle, so a crash loses
// at most the steps still in progress and memory stays bounded by a piece.
//
// The collector encodes each piece (SessionTrace and the format's writer, under the session's
// lock); the bytes are written on the session's writer thread, so slow storage never stalls the
// collector. A writer that falls behind by more than its budget makes the stream hold the piece
// back and take no more steps until the writer has taken it: the steps wait in the session (under
// its memory limit), nothing is dropped, and the collector never blocks. Pieces are dropped and
// counted (dropped_records()) only when there is no memory to encode or queue them.
//
// Chrome JSON is complete after every piece: the file is the events so far plus the tail
// (metadata and header, chrome_json_writer.h); each piece overwrites the old tail with its events
// and a new tail in one write, and a failed write puts the old tail back, so the file stays what
// it was. The file is thus a whole trace whenever no write is under way (Python's json reads it);
// a process killed inside a write mostly leaves it cut short, which the readers recover to its
// last whole step. TensorFlow files grow by whole records; a failed write is cut back to the last
// whole
// record. A Perfetto trace grows by whole packets likewise, each piece ending with the trace info
// packet (the losses so far); after a dropped piece the writer starts its packet sequence's state
// afresh, since the dropped packets may have interned names or described tracks. Either way the
// first failure is reported by Finish() and later pieces are not written.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/storage/background_writer.h"
#include "runtime/export/export_context.h"
#include "runtime/export/session_trace.h"
#include "runtime/formats/format.h"
#include "runtime/formats/trace_writer.h"
#include "runtime/session/session_log.h"

namespace tfprof {

class TraceStream {
 public:
  // Creates the file: `path` for kChromeJson (a valid, empty trace at once) and kTfRecord (named
  // only with its first record: a process killed before leaves nothing); a new
  // events.out.tfevents.* inside the log directory `path` for kTensorBoard (named, likewise, only
  // with its first step's record after its header). `writer` may be null
  // (writes then happen on the calling thread). Errors: Unavailable naming the path.
  static absl::StatusOr<std::unique_ptr<TraceStream>> Open(Format format, const std::string &path,
                                                           const ExportContext &context,
                                                           BackgroundWriter *writer);
  ~TraceStream();
  TraceStream(const TraceStream &) = delete;
  TraceStream &operator=(const TraceStream &) = delete;

  // Writes the piece of the steps settled by `settled_ns` and `gpu_complete_through_ns`
  // (StepPartitioner::TakeSettled() says what both promise). Caller holds the session's lock.
  // A backlog is written in several pieces, with `between_pieces` called after each: the
  // collector drains the rings there, so a burst waits in the session rather than overflowing
  // them while it is encoded.
  void Append(const SessionLog &log, const ExportContext &context, int64_t settled_ns,
              int64_t gpu_complete_through_ns, absl::FunctionRef<void()> between_pieces = [] {});

  // Writes everything left and the file's end, waits for the writes and closes the file. Returns
  // the first write failure of the stream's life, naming the file; Unavailable too when the file
  // was deleted while the session wrote it (its data is then still the session's to export).
  absl::Status Finish(const SessionLog &log, const ExportContext &context);

  // GPU activities that arrived after their step had been written.
  uint64_t late_gpu_records() const { return trace_.late_gpu_records(); }
  // Records of pieces dropped: no memory to encode, queue or write them.
  uint64_t dropped_records() const;
  // Pieces encoded so far (written or dropped).
  uint64_t pieces() const { return pieces_; }

  const std::string &path() const;

  // What of the session's records, from the first of each list, the file holds or the stream no
  // longer needs: the session may let them go. Nothing until a piece has been written whole; it
  // stops growing at the first failed write.
  LogPositions Written() const;

 private:
  struct File;
  class Buffers;
  TraceStream(Format format, std::shared_ptr<File> file, const ExportContext &context,
              BackgroundWriter *writer);
  // Encodes the current piece and hands it to the writer; `last`: the end of the file too.
  void WritePiece(bool last, const ExportContext &context);
  void DropPiece(uint64_t records);
  // Hands the piece held back (the writer was behind) to the writer; false while it still cannot
  // take it (the stream then takes no more steps).
  bool SubmitHeldPiece();
  // SessionTrace::TakeSettled(), a piece that cannot be built for want of memory dropped and
  // counted.
  bool TakeSettled(int64_t settled_ns, int64_t gpu_complete_through_ns);

  std::shared_ptr<File> file_;  // shared with the writes queued on the writer thread
  BackgroundWriter *writer_;
  std::shared_ptr<Buffers> buffers_;  // likewise
  SessionTrace trace_;
  std::unique_ptr<TraceWriteDriver> encoder_;  // the format's writer, fed piece by piece
  uint64_t dropped_records_ = 0;
  uint64_t pieces_ = 0;
  // Backlogs are written in pieces of about this many records (at most so many per Append).
  static constexpr uint64_t kRecordsPerPiece = 1 << 14;
  static constexpr uint64_t kMostPiecesPerCall = 1024;
  uint64_t records_seen_ = 0;       // the session's records when Append last ran
  int64_t walked_until_ns_;         // the settled time Append last reached
  bool gpu_tracing_ = false;        // GPU work may still look up the spans that launched it
  // A piece encoded while the writer was too far behind, waiting for it: at most one.
  std::function<void()> held_write_;
  size_t held_bytes_ = 0;
  uint64_t held_records_ = 0;
};

}  // namespace tfprof
