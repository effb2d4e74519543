// The one interface of tfprof's writers, one per format (Chrome trace JSON, Perfetto, TensorFlow's
// step statistics), and the one place that picks the writer of a format. The file export, the
// stream that grows while the program runs, `tfprof convert`/`merge` and the timeline layout all
// write through it: Begin(), then Append() once per piece of the trace model, then Finish().
//
// A piece is what the model's vectors (steps, activities, counters) hold when Append() is called;
// a producer that writes in pieces clears them after each call and keeps the tables (names,
// processes, tracks, GPU details), which may only grow.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/formats/format.h"
#include "runtime/model/trace.h"

namespace tfprof {

class FormatWriter {
 public:
  // Takes `out`'s bytes (writes them out) and clears it; called while a piece is encoded, whenever
  // `out` has grown past about a megabyte, so a large piece need not be held whole.
  using Drain = std::function<void(std::string &)>;

  // How a file that grows while the program runs (TraceStream) stays a whole trace between pieces.
  enum class Ending {
    kRewritten,  // Finish()'s bytes after every piece, overwritten by the next (Chrome JSON)
    kRepeated,   // Finish()'s bytes after every piece, kept (Perfetto's trace info packet)
    kOnce,       // Finish()'s bytes after the last piece only (TensorFlow's formats)
  };

  // The writer of `format` (any Format; the TensorFlow formats share one writer).
  static std::unique_ptr<FormatWriter> For(Format format);

  virtual ~FormatWriter() = default;

  virtual Ending ending() const = 0;

  // The file's first bytes; `start_wall_ns`: when the recording started, on the wall clock.
  virtual std::string Begin(int64_t start_wall_ns) = 0;

  // Appends to `out` the piece `trace` holds now. `last`: no piece follows; `end_ns`: when the
  // recording ended, on the model's clock. `drain` may be empty (the piece is then held whole).
  virtual void Append(const Trace &trace, bool last, int64_t end_ns, std::string &out,
                      const Drain &drain) = 0;

  // The bytes after the pieces appended so far (ending() says when they are written).
  virtual std::string Finish(const Trace &trace, int64_t end_ns) = 0;

  // The bytes since the last Append() were lost (a streamed piece was dropped): the next piece
  // must not depend on them.
  virtual void Restart() {}

  // What the output leaves out of `trace` because its format cannot hold it, for the user.
  virtual std::vector<std::string> Notes(const Trace &trace) const {
    static_cast<void>(trace);
    return {};
  }
};

}  // namespace tfprof
