#include "tools/tfprof/commands.h"

#include "tools/tfprof/conversion.h"

namespace tfprof::cli {
namespace {

constexpr const char *kUsage = R"(usage: tfprof convert [OPTIONS] IN -o OUT

Converts a trace between the formats tfprof reads and writes. The input's format is detected
from its content; the output's comes from its name, as for the runtime's output= option:

  OUT                      written as
  *.json                   Chrome trace JSON (Perfetto UI, chrome://tracing), tfprof's layout
  *.json.gz                the same, gzip-compressed
  *.pb                     one TensorFlow RunMetadata holding every step
  *.tfrecord               TFRecord file of one RunMetadata per step
  *.pftrace                Perfetto's protobuf trace (also *.perfetto-trace): Perfetto UI,
                           the smallest files, for traces too large for JSON
  *.xplane.pb              an XPlane profile (XSpace), what TensorBoard's Profile tab (XProf)
                           reads: trace viewer, overview page, op and kernel stats
  DIR/ or an existing DIR  a TensorBoard log directory: an event file
                           events.out.tfevents.<secs>.<host> in DIR, and beside it the XPlane
                           profile DIR/plugins/profile/<run>/<host>.xplane.pb

IN may be tfprof's Chrome trace, the PyTorch profiler's (or any other) Chrome trace JSON,
plain or .json.gz; a TensorFlow RunMetadata or StepStats (.pb); a TFRecord file of
RunMetadata; a TensorBoard event file or log directory; a Perfetto trace (tfprof's or another
producer's TrackEvents); TensorFlow's or JAX's profile (<host>.xplane.pb, or a profile or log
directory holding plugins/profile/<run>/*.xplane.pb: the newest run, one process per host).

Options:
  -o, --output OUT   where the converted trace goes (required); written under a temporary
                     name and renamed into place, so a failed run leaves nothing behind
      --format NAME  json, json.gz, pb, tfrecord, tensorboard, perfetto or xplane, whatever
                     OUT's name says
      --no-tensorboard-profile
                     a TensorBoard log directory OUT: the event file only, no XPlane profile
      --layout NAME  tfprof (default): tfprof's own layout, in any output format.
                     timeline: TensorFlow's timeline.py layout (a "<device> Compute" and
                     "<device> Tensors" process per device, op types as names, DataFlow
                     arrows), Chrome trace JSON only; an IN that is not step statistics is
                     first made into them as -o X.tfrecord would
      --rows NAME    layout timeline: threads (default; a row per thread, nanoseconds) or
                     lanes (timeline.py's rows and whole microseconds exactly)
      --show-memory  layout timeline: tensor lifetimes and allocator memory counters
      --no-dataflow  layout timeline: no arrows from a tensor's producer to its consumers
      --salvage      a damaged or truncated IN: convert what was read before the damage
                     (a warning names it) instead of failing
  -h, --help         print this help

The conversion is the library's own: prof_convert() in C and tfprof.convert() in Python give
the same bytes for the same input and options.

Progress is shown on stderr when it is a terminal (TFPROF_PROGRESS=0/1 forces it off/on).

Exit status: 0 converted; 1 IN is missing, unreadable, damaged or no trace; 2 usage error
(including an OUT name that names no format, or OUT being IN); 3 OUT cannot be written.

Examples:
  tfprof convert run.pb -o run.json            TensorFlow RunMetadata -> Perfetto
  tfprof convert trace.json -o logs/           tfprof trace -> TensorBoard
  tfprof convert pytorch_trace.json.gz -o steps.tfrecord
  tfprof convert big_trace.json -o big_trace.pftrace   Chrome JSON -> Perfetto's format
  tfprof convert pytorch_trace.json -o host.xplane.pb  PyTorch -> TensorBoard's Profile tab
  tfprof convert logs/plugins/profile/2026_11_26_10_00_00/host.xplane.pb -o tf.json
                                               TensorFlow's profile -> Chrome JSON
)";

}  // namespace

int ConvertCommand(std::span<const std::string> words) {
  return ConversionCommand(words, /*merging=*/false, kUsage);
}

}  // namespace tfprof::cli
