#include "tools/tfprof/conversion.h"

#include <cstdio>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/convert/convert.h"
#include "tools/tfprof/cli_status.h"
#include "tools/tfprof/option_word.h"
#include "tools/tfprof/progress.h"
#include "tools/tfprof/signal_cleanup.h"

namespace tfprof::cli {

namespace {

// The engine's option for `option` with its value `value`; "" or the usage problem.
std::string Apply(const OptionWord &option, std::string_view key, std::string_view value,
                  ConvertOptions *options) {
  const absl::Status status = ApplyConvertOption(key, value, options);
  if (status.ok()) return "";
  return absl::StrCat(std::string(option.name), " ", std::string(status.message()));
}

// The engine's option for a flag (nullopt when `option` is none of them): "" or the usage
// problem ("--rows 'x' is not one of threads, lanes").
std::optional<std::string> TakeConversionOption(const OptionWord &option,
                                                const std::function<bool()> &take_value,
                                                bool merging, ConvertOptions *options) {
  const std::string_view name = option.name;
  const auto valued = [&](std::string_view key) -> std::string {
    if (!take_value() || option.value->empty()) {
      return absl::StrCat(std::string(name), " needs a value");
    }
    return Apply(option, key, *option.value, options);
  };
  const auto flag = [&](std::string_view key, std::string_view value) -> std::string {
    if (option.value) return absl::StrCat(std::string(name), " takes no value");
    return Apply(option, key, value, options);
  };
  if (name == "--format") return valued("format");
  if (name == "--layout") return valued("layout");
  if (name == "--rows") return valued("rows");
  if (name == "--align" && merging) return valued("align");
  if (name == "--fold" && merging) return flag("fold", "on");
  if (name == "--salvage") return flag("salvage", "on");
  if (name == "--show-memory") return flag("show_memory", "on");
  if (name == "--no-dataflow") return flag("show_dataflow", "off");
  if (name == "--no-tensorboard-profile") return flag("tensorboard_profile", "off");
  return std::nullopt;
}

// Runs the engine on `inputs` (merging: MergeTraces, else ConvertTrace) and reports the outcome.
int RunConversion(std::string_view command, const std::vector<std::string> &inputs,
                  const std::string &output, const ConvertOptions &options, bool merging) {
  Progress progress;
  RemoveOutputsOnSignals();  // an interrupted conversion leaves no file or directory it made
  const ConvertResult result = merging ? MergeTraces(inputs, output, options, &progress)
                                       : ConvertTrace(inputs.front(), output, options, &progress);
  progress.Finish();
  const std::string_view doing = merging ? "merging" : "converting";
  for (const std::string &cut : result.cut_inputs) PrintError(command, "warning: " + cut);
  for (const std::string &damage : result.damage) {
    PrintError(command, absl::StrCat("warning: ", damage, " (--salvage: ", std::string(doing),
                                     " what was read before it)"));
  }
  if (result.stage == ConvertStage::kOptions || result.stage == ConvertStage::kOutput) {
    return UsageError(command, std::string(result.status.message()));
  }
  // Notes (details the output cannot hold) are said unless the writing failed.
  if (result.stage != ConvertStage::kWriting) {
    for (const std::string &note : result.notes) PrintError(command, absl::StrCat("note: ", note));
  }
  if (result.stage == ConvertStage::kDone) return kExitOk;
  PrintError(command, result.status);
  return ExitCodeFor(result.status, /*writing=*/result.stage == ConvertStage::kWriting);
}

// What a command line that parsed still lacks (an input, a single input to convert, the output),
// or "".
std::string MissingWords(const std::vector<std::string> &inputs, bool has_output, bool merging) {
  if (inputs.empty()) {
    return merging ? "no input files given (tfprof merge -o OUT FILE...)"
                   : "no input file given (tfprof convert IN -o OUT)";
  }
  if (!merging && inputs.size() > 1) {
    return absl::StrCat("one input file is converted at a time (", inputs.size(),
                        " given; 'tfprof merge' puts several on one timeline)");
  }
  return has_output ? "" : "no output given: -o OUT (its name chooses the format)";
}

}  // namespace

int ConversionCommand(std::span<const std::string> words, bool merging, const char *usage) {
  const std::string_view command = merging ? "merge" : "convert";
  bool help = false;
  std::vector<std::string> inputs;
  std::optional<std::string> output;
  ConvertOptions options;
  std::string problem = ScanCommandWords(
      words, &inputs, &help, [&](OptionWord &option, const auto &take_value) {
        if (option.name == "-o" || option.name == "--output") {
          return TakePath(option, take_value, &output);
        }
        std::optional<std::string> taken =
            TakeConversionOption(option, take_value, merging, &options);
        return taken ? *taken : UnknownOption(option);
      });
  if (problem.empty() && !help) problem = MissingWords(inputs, output.has_value(), merging);
  if (!problem.empty()) return UsageError(command, problem);
  if (help) {
    std::fputs(usage, stdout);
    return kExitOk;
  }
  return RunConversion(command, inputs, *output, options, merging);
}

}  // namespace tfprof::cli
