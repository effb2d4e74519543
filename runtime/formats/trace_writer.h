// Writes a trace model, whole or in pieces, through its format's writer (format_writer.h): the one
// driver of Begin, Append and Finish behind the session's export, `tfprof convert`/`merge`,
// prof_convert() and the timeline layout (to a file or to memory), and the stream of a running
// session (export/trace_stream.h), which takes each piece's bytes to write itself, keeping its
// file a whole trace between pieces.
//
// Files: Chrome trace JSON (.json, .json.gz), one RunMetadata (.pb), a TFRecord file of one
// RunMetadata per step (.tfrecord), a TensorBoard event file in a log directory (an existing
// directory or a path ending in '/'), or a Perfetto trace (.pftrace, .perfetto-trace). A file is
// written under a temporary name and renamed into place when complete, so a failure leaves
// nothing behind.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/common/output_sink.h"
#include "runtime/common/progress_listener.h"
#include "runtime/formats/format.h"
#include "runtime/formats/format_writer.h"
#include "runtime/model/trace.h"

namespace tfprof {

struct WrittenTrace {
  std::string path;                // the file written (the event file, for a log directory)
  std::vector<std::string> notes;  // what the user should know about the output (lost detail)
  std::string profile;             // a log directory's XPlane profile, when one was written
};

// Whether a TensorBoard log directory gets, beside its event file, the XPlane profile that
// TensorBoard's Profile tab reads (plugins/profile/<run>/<host>.xplane.pb, format.h's
// NewProfilePath), and the host it is named for (empty: this machine's name).
struct TensorBoardProfile {
  bool write = true;
  std::string host;
};

class TraceWriteDriver {
 public:
  // Creates the output file for `path` (a new event file named for `start_wall_ns`, the
  // recording's start on the wall clock, inside a TensorBoard log directory) and writes its first
  // bytes. `progress` may be null. Errors: InvalidArgument (`format` cannot be written there),
  // Unavailable naming the path and the system's reason.
  // A log directory also gets the XPlane profile `profile` asks for.
  static absl::StatusOr<std::unique_ptr<TraceWriteDriver>> ToFile(
      const std::string &path, Format format, int64_t start_wall_ns, ProgressListener *progress,
      const TensorBoardProfile &profile = {});
  // Hands the output's bytes to `consume` as they are encoded, in order (TFRecords whole: the
  // writer hands a large piece over record by record).
  using Consumer = std::function<void(std::string_view bytes)>;
  static std::unique_ptr<TraceWriteDriver> ToConsumer(Format format, int64_t start_wall_ns,
                                                      Consumer consume);
  // Hands each piece's bytes back (LiveStart, LivePiece) for a file that grows while the program
  // runs; writes nothing itself.
  static std::unique_ptr<TraceWriteDriver> ForLiveFile(Format format);

  ~TraceWriteDriver();
  TraceWriteDriver(const TraceWriteDriver &) = delete;
  TraceWriteDriver &operator=(const TraceWriteDriver &) = delete;

  // Writes the piece `trace` holds now (format_writer.h); `last`: no piece follows; `end_ns`: the
  // recording's end on the model's clock. May throw std::bad_alloc.
  void Append(const Trace &trace, bool last, int64_t end_ns);

  // Writes the end and, for a file, names it. Errors: Unavailable naming the path (nothing is
  // left there then).
  absl::StatusOr<WrittenTrace> Finish(const Trace &trace, int64_t end_ns);

  // ---- ForLiveFile: a file kept a whole trace after every piece ----

  // The file's first bytes (`begin`) and, when the format's file is whole before any piece, what
  // ends it for now (`tail`, see LivePiece; else empty: the file is whole from its first piece
  // on). `trace` holds what is known at the start (the header).
  void LiveStart(const Trace &trace, int64_t start_wall_ns, int64_t end_ns, std::string &begin,
                 std::string &tail);
  // The piece `trace` holds now: `body` goes after what the file holds (before its tail, when it
  // has one); `tail`, when not empty, replaces the file's tail (Chrome JSON's metadata and
  // header). `body` is appended to. May throw std::bad_alloc.
  void LivePiece(const Trace &trace, bool last, int64_t end_ns, std::string &body,
                 std::string &tail);
  // Whether the file ends with a tail that each piece replaces.
  bool has_tail() const { return writer_->ending() == FormatWriter::Ending::kRewritten; }
  // Whether LiveStart()'s bytes are a whole trace already (else the file is one from its first
  // piece on: TensorFlow's formats, whose records are the steps).
  bool whole_from_start() const { return writer_->ending() != FormatWriter::Ending::kOnce; }
  // The bytes since the last LivePiece() were dropped: the next piece must not depend on them.
  void Restart() { writer_->Restart(); }

 private:
  TraceWriteDriver(Format format, Consumer consume, ProgressListener *progress);
  void Write(std::string_view bytes);
  // What ends a live file after `body` (format_writer.h's Ending): into `tail`, or onto `body`.
  void LiveEnding(const Trace &trace, bool last, int64_t end_ns, std::string &body,
                  std::string &tail);

  std::unique_ptr<FormatWriter> writer_;
  std::string path_;
  // Declared before the file: removed (when still empty) after the unfinished file is gone.
  CreatedLogDirectory created_directory_;
  std::unique_ptr<OutputSink> file_;  // null when writing to a consumer (or for a live file)
  // A log directory's XPlane profile, written from the same pieces (after the directories, so
  // that an unfinished one is gone before they are removed).
  std::unique_ptr<TraceWriteDriver> profile_;
  Consumer consume_;
  ProgressListener *progress_;
  std::string progress_label_;
  uint64_t written_ = 0;
  std::string piece_;
  FormatWriter::Drain drain_;
};

// `trace` whole, as a file (a log directory with TensorBoard's profile unless
// `tensorboard_profile` is false). Errors: as ToFile() and Finish(); ResourceExhausted (out of
// memory).
absl::StatusOr<WrittenTrace> WriteTrace(const Trace &trace, const std::string &path,
                                        Format format, ProgressListener *progress = nullptr,
                                        bool tensorboard_profile = true);

// `trace` whole, as the file `format` names would hold it, handed to `consume` as it is encoded.
// May throw std::bad_alloc.
void EncodeTrace(const Trace &trace, Format format, const TraceWriteDriver::Consumer &consume);

}  // namespace tfprof
