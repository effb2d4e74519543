#include "runtime/convert/convert.h"

#include <memory>
#include <new>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/convert/output_target.h"
#include "runtime/common/json_text.h"
#include "runtime/common/output_sink.h"
#include "runtime/formats/trace_reader.h"
#include "runtime/formats/trace_writer.h"
#include "runtime/model/cut_recovery.h"
#include "runtime/common/option_string.h"
#include "runtime/common/string_view_bridge.h"

namespace tfprof {

namespace {

absl::Status ParseLayout(const RawOption &option, ConvertOptions::Layout *layout) {
  if (option.value == "tfprof") {
    *layout = ConvertOptions::Layout::kTfprof;
  } else if (option.value == "timeline") {
    *layout = ConvertOptions::Layout::kTimeline;
  } else {
    return OptionError(option, absl::StrCat("'", option.value, "' is not one of tfprof, timeline"));
  }
  return absl::OkStatus();
}

absl::Status ParseAlignment(const RawOption &option, MergeAlignment *align) {
  if (option.value == "wall") {
    *align = MergeAlignment::kWallClock;
  } else if (option.value == "start") {
    *align = MergeAlignment::kFirstEvent;
  } else {
    return OptionError(option, absl::StrCat("'", option.value, "' is not one of wall, start"));
  }
  return absl::OkStatus();
}

absl::Status ParseRows(const RawOption &option, TimelineOptions::Rows *rows) {
  if (option.value == "threads") {
    *rows = TimelineOptions::Rows::kThreads;
  } else if (option.value == "lanes") {
    *rows = TimelineOptions::Rows::kLanes;
  } else {
    return OptionError(option, absl::StrCat("'", option.value, "' is not one of threads, lanes"));
  }
  return absl::OkStatus();
}

ConvertResult Failed(ConvertResult result, ConvertStage stage, absl::Status status) {
  result.stage = stage;
  result.status = std::move(status);
  return result;
}

// The output: its path and format, checked before any input is read.
absl::StatusOr<OutputTarget> CheckOutput(const std::vector<std::string> &inputs,
                                         const std::string &output, const ConvertOptions &options) {
  absl::StatusOr<OutputTarget> target = ResolveOutput(output, options.format, inputs);
  if (!target.ok()) return target.status();
  if (options.layout == ConvertOptions::Layout::kTimeline && !IsChromeJson(target->format)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", output, "': layout=timeline writes Chrome trace JSON: name it .json or .json.gz"));
  }
  if (absl::Status writable = CheckWritable(output, target->format); !writable.ok()) {
    return writable;
  }
  return target;
}

absl::Status CheckOptions(const ConvertOptions &options, bool merging) {
  if (options.layout != ConvertOptions::Layout::kTimeline && options.timeline_options_given) {
    return absl::InvalidArgumentError(
        "show_dataflow, show_memory and rows draw timeline.py's layout: they need layout=timeline");
  }
  if (options.align != MergeAlignment::kWallClock &&
      (!merging || options.layout == ConvertOptions::Layout::kTimeline)) {
    return absl::InvalidArgumentError(
        "align=start applies to merging in tfprof's layout (timeline.py's is wall-clock time)");
  }
  if (options.fold && (!merging || options.layout != ConvertOptions::Layout::kTfprof ||
                       options.align != MergeAlignment::kWallClock)) {
    return absl::InvalidArgumentError(
        "fold=on applies to merging in tfprof's layout by wall-clock time (align=wall)");
  }
  return absl::OkStatus();
}

void NoteDamage(const Trace &trace, ConvertResult &result) {
  if (!trace.damage.empty()) result.damage.push_back(trace.damage);
  if (trace.cut) result.cut_inputs.push_back(CutWarning(*trace.cut));
}

ConvertResult WriteModel(Trace &trace, const OutputTarget &target, std::string sources_json,
                         const ConvertOptions &options, ProgressListener *progress,
                         ConvertResult result) {
  trace.sources_json = std::move(sources_json);
  absl::StatusOr<WrittenTrace> written =
      WriteTrace(trace, target.path, target.format, progress, options.tensorboard_profile);
  if (!written.ok()) return Failed(std::move(result), ConvertStage::kWriting, written.status());
  result.output_path = written->path;
  result.profile_path = written->profile;
  for (const std::string &note : written->notes) {
    result.notes.push_back(absl::StrCat(written->path, ": ", note));
  }
  result.stage = ConvertStage::kDone;
  return result;
}

ConvertResult RunTfprofLayout(const std::vector<std::string> &inputs, bool merging,
                              const OutputTarget &target, const ConvertOptions &options,
                              ProgressListener *progress, ConvertResult result) {
  LoadOptions load_options;
  load_options.salvage = options.salvage;
  load_options.progress = progress;
  if (!merging) {
    absl::StatusOr<Trace> trace = LoadTrace(inputs.front(), load_options);
    if (!trace.ok()) return Failed(std::move(result), ConvertStage::kReading, trace.status());
    NoteDamage(*trace, result);
    const std::string sources = absl::StrCat("[{\"path\":", QuotedJson(inputs.front()),
                                             ",\"format\":", QuotedJson(InputFormatName(*trace)), "}]");
    return WriteModel(*trace, target, sources, options, progress, std::move(result));
  }
  TraceMerger merger(options.align, options.fold);
  for (const std::string &input : inputs) {
    absl::StatusOr<Trace> trace = LoadTrace(input, load_options);
    if (!trace.ok()) return Failed(std::move(result), ConvertStage::kReading, trace.status());
    NoteDamage(*trace, result);
    if (std::optional<std::string> note = merger.Add(std::move(*trace))) {
      result.notes.push_back(std::move(*note));
    }
  }
  Trace merged = merger.Finish();
  if (std::optional<std::string> note = merger.FarApartNote()) {
    result.notes.push_back(std::move(*note));
  }
  return WriteModel(merged, target, merger.SourcesJson(), options, progress, std::move(result));
}

ConvertResult RunTimelineLayout(const std::vector<std::string> &inputs, const OutputTarget &target,
                                const ConvertOptions &options, ProgressListener *progress,
                                ConvertResult result) {
  // timeline.py draws step statistics: an input in another format is encoded as step
  // statistics first (exactly as converting it to .tfrecord would), in memory, and drawn record by
  // record as it is encoded.
  std::vector<TimelineInput> timeline_inputs;
  for (const std::string &input : inputs) {
    TimelineInput &entry = timeline_inputs.emplace_back();
    entry.path = input;
    if (HoldsStepStatistics(input)) continue;
    entry.encode = [&result, &options, progress, input](std::string *format_name,
                                                         const TimelineInput::Records &records) {
      LoadOptions load_options;
      load_options.salvage = options.salvage;
      load_options.progress = progress;
      absl::StatusOr<Trace> trace = LoadTrace(input, load_options);
      if (!trace.ok()) return trace.status();
      NoteDamage(*trace, result);
      if (trace->activities.empty() && trace->steps.empty()) {
        return absl::DataLossError(
            absl::StrCat(input, ": no step statistics to convert: the trace holds no events"));
      }
      *format_name = InputFormatName(*trace);
      EncodeTrace(*trace, Format::kTfRecord, records);
      return absl::OkStatus();
    };
  }
  absl::StatusOr<std::unique_ptr<OutputSink>> sink =
      OutputSink::Open(target.path, target.format == Format::kChromeJsonGzip);
  if (!sink.ok()) return Failed(std::move(result), ConvertStage::kWriting, sink.status());
  absl::Status status = WriteTimelineLayout(timeline_inputs, options.timeline, options.salvage,
                                            **sink, progress, &result.damage,
                                            &result.cut_inputs);
  // A reader's failure (the sink is dropped unfinished, leaving nothing) is about an input.
  if (!status.ok()) return Failed(std::move(result), ConvertStage::kReading, status);
  if (absl::Status finished = (*sink)->Finish(); !finished.ok()) {
    return Failed(std::move(result), ConvertStage::kWriting, finished);
  }
  result.output_path = target.path;
  result.stage = ConvertStage::kDone;
  return result;
}

ConvertResult Run(const std::vector<std::string> &inputs, const std::string &output, bool merging,
                  const ConvertOptions &options, ProgressListener *progress) {
  ConvertResult result;
  if (absl::Status status = CheckOptions(options, merging); !status.ok()) {
    return Failed(std::move(result), ConvertStage::kOptions, status);
  }
  absl::StatusOr<OutputTarget> target = CheckOutput(inputs, output, options);
  if (!target.ok()) return Failed(std::move(result), ConvertStage::kOutput, target.status());
  result.stage = ConvertStage::kReading;
  try {
    if (options.layout == ConvertOptions::Layout::kTimeline) {
      return RunTimelineLayout(inputs, *target, options, progress, std::move(result));
    }
    return RunTfprofLayout(inputs, merging, *target, options, progress, std::move(result));
  } catch (const std::bad_alloc &) {
    return Failed(ConvertResult(), ConvertStage::kReading,
                  absl::ResourceExhaustedError(absl::StrCat("out of memory converting to '", output, "'")));
  }
}

}  // namespace

absl::Status ApplyConvertOption(std::string_view key, std::string_view value,
                                ConvertOptions *options) {
  // The option parsers name the option; the caller adds where it came from.
  RawOption option{std::string(key), std::string(value), 0};
  absl::Status status;
  if (key == "layout") {
    status = ParseLayout(option, &options->layout);
  } else if (key == "format") {
    Format format;
    status = FormatForName(value, &format);
    if (status.ok()) options->format = format;
    return status;
  } else if (key == "align") {
    status = ParseAlignment(option, &options->align);
  } else if (key == "fold") {
    status = ParseOnOff(option, &options->fold);
  } else if (key == "salvage") {
    status = ParseOnOff(option, &options->salvage);
  } else if (key == "tensorboard_profile") {
    status = ParseOnOff(option, &options->tensorboard_profile);
  } else if (key == "show_dataflow") {
    status = ParseOnOff(option, &options->timeline.show_dataflow);
    options->timeline_options_given = true;
  } else if (key == "show_memory") {
    status = ParseOnOff(option, &options->timeline.show_memory);
    options->timeline_options_given = true;
  } else if (key == "rows") {
    status = ParseRows(option, &options->timeline.rows);
    options->timeline_options_given = true;
  } else {
    return absl::InvalidArgumentError(
        "unknown key (known: layout, format, align, fold, salvage, tensorboard_profile, "
        "show_dataflow, show_memory, rows)");
  }
  if (status.ok()) return status;
  // Drop OptionError's "option 'KEY' at offset 0: " prefix: only the reason is ours to give.
  const std::string_view message = ToStd(status.message());
  const size_t colon = message.find(": ");
  return absl::InvalidArgumentError(
      ToAbsl(colon == std::string_view::npos ? message : message.substr(colon + 2)));
}

absl::StatusOr<ConvertOptions> ParseConvertOptions(std::string_view text) {
  ConvertOptions options;
  absl::StatusOr<std::vector<RawOption>> raw = SplitOptionString(text);
  if (!raw.ok()) return raw.status();
  for (const RawOption &option : *raw) {
    if (absl::Status status = ApplyConvertOption(option.key, option.value, &options); !status.ok()) {
      return OptionError(option, ToStd(status.message()));
    }
  }
  return options;
}

ConvertResult ConvertTrace(const std::string &input, const std::string &output,
                           const ConvertOptions &options, ProgressListener *progress) {
  return Run({input}, output, /*merging=*/false, options, progress);
}

ConvertResult MergeTraces(const std::vector<std::string> &inputs, const std::string &output,
                          const ConvertOptions &options, ProgressListener *progress) {
  if (inputs.empty()) {
    ConvertResult result;
    result.status = absl::InvalidArgumentError("no input files to merge");
    return result;
  }
  return Run(inputs, output, /*merging=*/true, options, progress);
}

}  // namespace tfprof
