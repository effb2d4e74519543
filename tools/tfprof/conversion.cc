#include "tools/tfprof/conversion.h"

#include "absl/strings/str_cat.h"
#include "tools/tfprof/cli_status.h"
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

}  // namespace

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
  return std::nullopt;
}

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
  switch (result.stage) {
    case ConvertStage::kDone:
      for (const std::string &note : result.notes) PrintError(command, absl::StrCat("note: ", note));
      return kExitOk;
    case ConvertStage::kOptions:
    case ConvertStage::kOutput:
      return UsageError(command, std::string(result.status.message()));
    case ConvertStage::kReading:
      for (const std::string &note : result.notes) PrintError(command, absl::StrCat("note: ", note));
      PrintError(command, result.status);
      return ExitCodeFor(result.status, /*writing=*/false);
    case ConvertStage::kWriting:
      PrintError(command, result.status);
      return ExitCodeFor(result.status, /*writing=*/true);
  }
  return kExitInputError;
}

}  // namespace tfprof::cli
