#include "runtime/formats/trace_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/formats/chrome/chrome_json_reader.h"
#include "runtime/formats/chrome/pytorch_trace_directory.h"
#include "runtime/formats/cut_file.h"
#include "runtime/formats/perfetto/perfetto_reader.h"
#include "runtime/formats/tensorflow/log_directory.h"
#include "runtime/formats/tensorflow/step_stats_reader.h"
#include "runtime/formats/tensorflow/step_stats_trace_reader.h"
#include "runtime/formats/tensorflow/tfrecord.h"
#include "runtime/formats/xplane/xplane_reader.h"

namespace tfprof {

namespace {

enum class Content { kEmpty, kJson, kGzip, kPerfetto, kXPlane, kOther };

// What the first bytes say: gzip's magic number, a TFRecord header (whose length's first byte
// may well be '{' or a space: the length CRC decides), an XSpace's first plane or a Perfetto
// trace's first packet (both start with '\n', and their length byte may be '{': they go before
// JSON), or JSON's '{' or '[' after whitespace (and a UTF-8 byte order mark); anything else may be
// one of TensorFlow's binary formats.
Content Sniff(int fd) {
  char head[4096];
  ssize_t got = 0;
  do {
    got = pread(fd, head, sizeof head, 0);
  } while (got < 0 && errno == EINTR);
  if (got <= 0) return got == 0 ? Content::kEmpty : Content::kOther;
  const auto size = static_cast<size_t>(got);
  if (size >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b) {
    return Content::kGzip;
  }
  if (StartsWithTfRecordHeader(std::string_view(head, size))) return Content::kOther;
  if (LooksLikeXSpace(std::string_view(head, size))) return Content::kXPlane;
  if (LooksLikePerfettoTrace(std::string_view(head, size))) return Content::kPerfetto;
  size_t at = size >= 3 && std::memcmp(head, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
  while (at < size && (head[at] == ' ' || head[at] == '\n' || head[at] == '\r' || head[at] == '\t')) {
    ++at;
  }
  if (at == size) return Content::kJson;  // only whitespace so far: the JSON reader says more
  return head[at] == '{' || head[at] == '[' ? Content::kJson : Content::kOther;
}

// Whether the event files of log directory `dir` (of its one run) hold a run's metadata: a
// trace, not only scalars and graphs.
bool EventFilesHoldRuns(const std::string &dir) {
  absl::StatusOr<std::unique_ptr<StepStatsReader>> reader = StepStatsReader::Open(dir);
  if (!reader.ok()) return false;
  StepStatsRun run;
  return (*reader)->Next(&run).ok();
}

absl::Status ReadFile(const std::string &path, const LoadOptions &options, Trace *trace) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR) {
      return absl::NotFoundError(absl::StrCat(path, ": no such file or directory"));
    }
    return absl::UnavailableError(absl::StrCat(path, ": cannot open: ", std::strerror(error)));
  }
  if (S_ISDIR(info.st_mode)) {
    // A profile directory (TensorFlow's or JAX's profiler), else a TensorBoard log directory.
    // A log directory whose event files hold a trace (tfprof's, TensorFlow 1's run metadata)
    // reads as those, even beside the XPlane profile tfprof writes there for TensorBoard's
    // Profile tab (which holds the same trace without tfprof's header: losses, GPU tracing);
    // Keras' TensorBoard callback's event files hold scalars only, and its profile is the trace.
    if (std::vector<std::string> profiles = XPlaneFilesIn(path);
        !profiles.empty() && !EventFilesHoldRuns(path)) {
      return ReadXPlaneFiles(profiles, options.progress, trace);
    }
    // torch.profiler.tensorboard_trace_handler's folder: its traces, and no event file.
    if (const absl::StatusOr<std::vector<std::string>> events = EventFilesOfOneRun(path);
        events.ok() && events->empty()) {
      if (const std::vector<std::string> traces = PytorchTracesIn(path); traces.size() == 1) {
        trace->path = traces.front();
        return ReadFile(traces.front(), options, trace);
      } else if (traces.size() > 1) {
        return absl::InvalidArgumentError(SeveralPytorchTracesMessage(path, traces));
      }
    }
    return ReadStepStatsTrace(options.progress, trace);
  }
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  absl::Status status;
  Content content = Sniff(fd);
  // Named as TensorFlow's profiler names its files: read as one, to say what is wrong with it.
  if (path.ends_with(".xplane.pb") && content == Content::kOther) content = Content::kXPlane;
  switch (content) {
    case Content::kEmpty:
      status = absl::InvalidArgumentError(absl::StrCat(path, ": not a trace: the file is empty"));
      break;
    case Content::kJson:
    case Content::kGzip:
      status = ReadChromeTrace(fd, content == Content::kGzip, static_cast<uint64_t>(info.st_size),
                               options.progress, trace);
      break;
    case Content::kPerfetto:
      status = ReadPerfettoTrace(fd, static_cast<uint64_t>(info.st_size), options.progress, trace);
      break;
    case Content::kXPlane:
      close(fd);
      return ReadXPlaneFiles({path}, options.progress, trace);
    case Content::kOther:
      status = ReadStepStatsTrace(options.progress, trace);
      break;
  }
  close(fd);
  return status;
}

}  // namespace

bool HoldsStepStatistics(const std::string &path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0 || S_ISDIR(info.st_mode)) return true;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  Content content = Sniff(fd);
  close(fd);
  if (path.ends_with(".xplane.pb") && content == Content::kOther) content = Content::kXPlane;
  return content == Content::kOther || content == Content::kEmpty;
}

absl::StatusOr<Trace> LoadTrace(const std::string &path, const LoadOptions &options) {
  Trace trace;
  trace.path = path;
  absl::Status status = ReadFile(path, options, &trace);
  if (options.progress != nullptr) options.progress->Finish();
  if (status.ok()) return trace;
  // A file that simply ends early (a writer killed mid-write) is no damage to refuse: what came
  // before the cut is the trace, less the steps the cut may have left partial.
  if (const std::optional<CutFacts> cut = FileEndsEarly(status)) {
    RecoverCutTrace(*cut, trace);
    return trace;
  }
  if (options.salvage && absl::IsDataLoss(status)) {
    trace.damage = std::string(status.message());
    return trace;
  }
  return status;
}

}  // namespace tfprof
