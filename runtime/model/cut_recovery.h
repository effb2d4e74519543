// A trace read from a file that ends early, as a writer killed mid-write leaves it (a stream's
// process killed, a disk that filled): what the readers read before the cut is kept, less the
// steps the cut may have left partial, so that every step the trace holds is whole. LoadTrace()
// applies it; the commands print CutWarning().
//
// Which steps may be partial: those beginning at or after the step that holds the last activity
// read (file order; when that activity is in no step, those beginning after it, GPU work placed
// at its launch), in that activity's recording. tfprof's Chrome JSON writes each piece's steps
// and then their activities step after step, the PyTorch profiler's traces run in time order,
// so everything of the steps before that one came before the cut. A reader that knows better
// says so in CutFacts: steps read after the last activity (the Chrome reader: a piece's steps,
// or a step given before its events) are the first partial ones; TFRecord files hold one whole
// step a record; tfprof's Perfetto streams end each piece with a marker packet.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "runtime/model/trace.h"

namespace tfprof {

// What the reader knows of a cut.
struct CutFacts {
  std::string file;         // the file that is cut
  uint64_t file_bytes = 0;  // where it ends
  std::string problem;      // where the cut fell, in the reader's words
  // False where the file's unit is a whole step (a TFRecord's record): the cut lost the last
  // record, and no step that was read is partial.
  bool steps_may_be_partial = true;
  // Set by a reader that knows its writer's pieces: the steps beginning at or after this time
  // may be partial (unset: the rule above).
  std::optional<int64_t> partial_from_ns;
};

// Drops from `trace` (its steps already assigned, AssignSteps()) the steps the cut may have left
// partial and their activities, and sets trace.cut.
void RecoverCutTrace(const CutFacts &facts, Trace &trace);

// One line for people, naming the file, where it ends, what was kept and what was dropped:
// "FILE: the file ends at byte N (PROBLEM: cut while being written?); recovered to its last whole
// step: kept E events through step S; dropped steps A-B (D events), which the cut may have left
// partial".
std::string CutWarning(const CutRecovery &cut);

}  // namespace tfprof
