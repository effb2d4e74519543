#include "tools/tfprof/commands.h"

#include "tools/tfprof/conversion.h"

namespace tfprof::cli {
namespace {

constexpr const char *kUsage = R"(usage: tfprof merge [OPTIONS] -o OUT FILE...

Puts several traces on one timeline in one file (Chrome trace JSON, or any format 'tfprof
convert' writes, by OUT's name): the processes of a distributed job (one file per rank or host), runs, or steps recorded separately. Each FILE may
be in any format tfprof reads (tfprof or PyTorch profiler Chrome traces, .json.gz, TensorFlow
RunMetadata/StepStats .pb, TFRecord, TensorBoard event files or log directories, Perfetto
traces, TensorFlow's or JAX's .xplane.pb profiles and profile directories).

Each input becomes its own process group, named "rank R · HOST · pid P" with what the file
records (else its file name; the processes of a group beyond its own, such as GPUs, are
"LABEL · GPU 0"). Its pids are kept where they do not collide with an earlier input's, else
renumbered; its steps stay on its own "Steps" row.

Timestamps are moved to wall-clock time using each file's record of when it started
(start_time_unix_ns for tfprof, baseTimeNanoseconds for PyTorch; TensorFlow's are wall-clock
already), so files recorded by processes with different clocks line up. The output's time 0 is
the earliest input's first event; its "tfprof" header says which Unix time that is.

Options:
  -o, --output OUT   the merged trace (required): OUT.json, OUT.json.gz, OUT.pb,
                     OUT.tfrecord, OUT.pftrace, OUT.xplane.pb or a TensorBoard log directory,
                     as for 'tfprof convert'
      --format NAME  json, json.gz, pb, tfrecord, tensorboard, perfetto or xplane, whatever
                     OUT's name says
      --no-tensorboard-profile
                     a TensorBoard log directory OUT: the event file only, no XPlane profile
      --align MODE   wall (default): by wall-clock time. A FILE that recorded no wall-clock
                     time is said so on stderr and its first event is put at the first event
                     of the earliest input.
                     start: every FILE's first event at time 0, to compare runs recorded at
                     different times side by side.
      --fold         the FILEs after the first are more of the first one's process: their
                     host threads join its process (the same thread id is the same row),
                     their GPUs its group, and their steps count only if the first marked
                     none. For TensorFlow's profile taken beside a tfprof session:
                     tfprof merge --fold trace.json logs/ -o combined.json
      --salvage      a damaged or truncated FILE: merge what was read before the damage
                     (a warning names it) instead of failing
      --layout NAME  tfprof (default), or timeline: TensorFlow's timeline.py layout, each
                     FILE's processes prefixed with its file name (see 'tfprof convert
                     --help' for it and its --rows, --show-memory and --no-dataflow)
  -h, --help         print this help

The merge is the library's own: prof_merge() in C and tfprof.merge() in Python give the same
bytes for the same inputs and options.

Progress is shown on stderr when it is a terminal (TFPROF_PROGRESS=0/1 forces it off/on).

Exit status: 0 merged; 1 a FILE is missing, unreadable, damaged or no trace; 2 usage error
(including OUT being one of the FILEs); 3 OUT cannot be written.

Example:
  tfprof merge -o job.json rank0.json rank1.json rank2.json
)";

}  // namespace

int MergeCommand(std::span<const std::string> words) {
  return ConversionCommand(words, /*merging=*/true, kUsage);
}

}  // namespace tfprof::cli
