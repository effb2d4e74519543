// The preload library's environment rules and step markers, without a process.
#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <string>

#include "bindings/preload/preload_config.h"
#include "bindings/preload/marker_verdicts.h"
#include "bindings/preload/step_marker.h"

namespace tfprof::preload {
namespace {

EnvironmentReader From(std::map<std::string, std::string> variables) {
  return [variables](const char *name) -> std::optional<std::string> {
    auto found = variables.find(name);
    if (found == variables.end()) return std::nullopt;
    return found->second;
  };
}

TEST_CASE("preload config: defaults") {
  PreloadConfig config;
  std::string error;
  REQUIRE(ParsePreloadConfig(From({}), &config, &error));
  CHECK(config.output_template == "tfprof-%p.json");
  CHECK(config.options.empty());
  CHECK(config.log_level == LogLevel::kInfo);
  CHECK(config.follow_children);
  CHECK(config.step_markers.size() == 4);
  CHECK(config.signal_deadline_ms == 10000);
  CHECK_FALSE(config.on_demand);
}

TEST_CASE("preload config: every variable parsed") {
  PreloadConfig config;
  std::string error;
  REQUIRE(ParsePreloadConfig(From({{"TFPROF_OUTPUT", "out/%r-%p.pb"},
                                   {"TFPROF_OPTIONS", "buffer_events=1024,cuda=off"},
                                   {"TFPROF_STEP_MARKER", "iter *,Step#[0-9]*"},
                                   {"TFPROF_LOG_LEVEL", "DEBUG"},
                                   {"TFPROF_FOLLOW_CHILDREN", "no"},
                                   {"TFPROF_SIGNAL_DEADLINE", "2.5"}}),
                             &config, &error));
  CHECK(config.output_template == "out/%r-%p.pb");
  CHECK(config.options == "buffer_events=1024,cuda=off");
  CHECK(config.step_markers == std::vector<std::string>{"iter *", "Step#[0-9]*"});
  CHECK(config.log_level == LogLevel::kDebug);
  CHECK_FALSE(config.follow_children);
  CHECK(config.signal_deadline_ms == 2500);
  REQUIRE(ParsePreloadConfig(From({{"TFPROF_SIGNAL_DEADLINE", "0"}}), &config, &error));
  CHECK(config.signal_deadline_ms == 0);
  REQUIRE(ParsePreloadConfig(From({{"TFPROF_STEP_MARKER", "None"}}), &config, &error));
  CHECK(config.step_markers.empty());
  REQUIRE(ParsePreloadConfig(From({{"TFPROF_ON_DEMAND", "On"}}), &config, &error));
  CHECK(config.on_demand);
  REQUIRE(ParsePreloadConfig(From({{"TFPROF_ON_DEMAND", "0"}}), &config, &error));
  CHECK_FALSE(config.on_demand);
}

TEST_CASE("preload config: on demand, TFPROF_OUTPUT is not read") {
  // Each capture names its output; one left in the environment must not stop the listening.
  PreloadConfig config;
  std::string error;
  REQUIRE(ParsePreloadConfig(From({{"TFPROF_ON_DEMAND", "1"}, {"TFPROF_OUTPUT", "a%xb.json"}}),
                             &config, &error));
  CHECK(config.on_demand);
  CHECK(config.output_template == "tfprof-%p.json");
  CHECK_FALSE(ParsePreloadConfig(From({{"TFPROF_ON_DEMAND", "1"}, {"TFPROF_OPTIONS", "output=x.json"}}),
                                 &config, &error));
  CHECK_MESSAGE(error.find("sets output") != std::string::npos, error);
}

TEST_CASE("preload config: bad values name the variable and what it accepts") {
  const std::pair<std::map<std::string, std::string>, std::string> cases[] = {
      {{{"TFPROF_LOG_LEVEL", "chatty"}}, "TFPROF_LOG_LEVEL='chatty': accepts off, error"},
      {{{"TFPROF_OUTPUT", ""}}, "TFPROF_OUTPUT is empty"},
      {{{"TFPROF_OUTPUT", "a%xb.json"}}, "'%x' at offset 1"},
      {{{"TFPROF_OUTPUT", "trailing%"}}, "'%' at offset 8"},
      {{{"TFPROF_OPTIONS", "cuda=off,output=x.json"}}, "sets output"},
      {{{"TFPROF_STEP_MARKER", "step,,x"}}, "an empty pattern"},
      {{{"TFPROF_STEP_MARKER", "step [0-9"}}, "'[' at offset 5 is never closed"},
      {{{"TFPROF_FOLLOW_CHILDREN", "2"}}, "TFPROF_FOLLOW_CHILDREN='2': accepts 1 or 0"},
      {{{"TFPROF_ON_DEMAND", "maybe"}}, "TFPROF_ON_DEMAND='maybe': accepts 1 or 0"},
      {{{"TFPROF_SIGNAL_DEADLINE", "-1"}}, "TFPROF_SIGNAL_DEADLINE='-1': accepts seconds"},
      {{{"TFPROF_SIGNAL_DEADLINE", "10s"}}, "TFPROF_SIGNAL_DEADLINE='10s': accepts seconds"},
      {{{"TFPROF_SIGNAL_DEADLINE", "nan"}}, "accepts seconds from 0 to 3600"},
      {{{"TFPROF_SIGNAL_DEADLINE", ""}}, "TFPROF_SIGNAL_DEADLINE='': accepts seconds"},
  };
  for (const auto &[variables, expected] : cases) {
    PreloadConfig config;
    std::string error;
    CHECK_FALSE(ParsePreloadConfig(From(variables), &config, &error));
    CHECK_MESSAGE(error.find(expected) != std::string::npos, error);
  }
}

TEST_CASE("preload config: output templates") {
  std::string path;
  std::string error;
  REQUIRE(ExpandOutputTemplate("run-%r/trace.%p.json", 4242, "3", &path, &error));
  CHECK(path == "run-3/trace.4242.json");
  REQUIRE(ExpandOutputTemplate("100%%.json", 1, "0", &path, &error));
  CHECK(path == "100%.json");
  CHECK(TemplateNamesPid("t.%p.json"));
  CHECK_FALSE(TemplateNamesPid("t.%%p.json"));
  CHECK_FALSE(TemplateNamesPid("t.json"));
  CHECK(RankFrom(From({{"SLURM_PROCID", "7"}})) == "7");
  CHECK(RankFrom(From({{"RANK", "2"}, {"SLURM_PROCID", "7"}})) == "2");
  CHECK(RankFrom(From({})) == "0");
}

TEST_CASE("preload config: descendants get their own file") {
  CHECK(PathForDescendant("trace.json", 12) == "trace.12.json");
  CHECK(PathForDescendant("out/run.v2/trace.json.gz", 12) == "out/run.v2/trace.12.json.gz");
  CHECK(PathForDescendant("steps.tfrecord", 12) == "steps.12.tfrecord");
  CHECK(PathForDescendant("logs/", 12) == "logs/pid12/");
  CHECK(PathForDescendant("dir.d/trace", 12) == "dir.d/trace.12");
  CHECK(EscapeOptionValue("a,b\\c") == "a\\,b\\\\c");
}

TEST_CASE("step marker: default patterns and step numbers") {
  PreloadConfig config;
  std::string error;
  REQUIRE(ParsePreloadConfig(From({}), &config, &error));
  StepMarker marker(config.step_markers);
  int64_t step = -1;
  CHECK(marker.Matches("step 12", &step));
  CHECK(step == 12);
  CHECK(marker.Matches("ProfilerStep#40", &step));
  CHECK(step == 40);
  CHECK(marker.Matches("train_step", &step));
  CHECK(step == 41);  // no digits: one more than the last
  CHECK(marker.Matches("step", &step));
  CHECK(step == 42);
  CHECK_FALSE(marker.Matches("forward", &step));
  CHECK_FALSE(marker.Matches("step forward", &step));
  CHECK_FALSE(marker.Matches("steps", &step));
  CHECK_FALSE(marker.Matches("", &step));
  CHECK_FALSE(marker.Matches(nullptr, &step));
}

TEST_CASE("step marker: wildcard first and none") {
  StepMarker any({"*iteration*"});
  int64_t step = -1;
  CHECK(any.Matches("the iteration", &step));
  CHECK(step == 0);
  StepMarker none({});
  CHECK_FALSE(none.Matches("step 1", &step));
}

TEST_CASE("step marker: literal prefixes filter before fnmatch, without changing the answers") {
  StepMarker marker({"ProfilerStep#*", "s?ep [0-9]*", "epoch\\*"});
  int64_t step = -1;
  CHECK(marker.Matches("slep 4", &step));  // the second pattern's prefix is "s"
  CHECK(step == 4);
  CHECK_FALSE(marker.Matches("stem 3", &step));
  CHECK_FALSE(marker.Matches("sgemm", &step));
  CHECK_FALSE(marker.Matches("ProfilerStep", &step));  // the prefix matches, fnmatch does not
  CHECK(marker.Matches("ProfilerStep#9", &step));
  CHECK(step == 9);
  CHECK(marker.Matches("epoch*", &step));  // an escaped wildcard ends the literal prefix
  CHECK(step == 10);
  CHECK_FALSE(marker.Matches("epochs", &step));
}

TEST_CASE("step marker: IsMarker answers without numbering a step; StepNumberOf numbers") {
  StepMarker marker({"step*"});
  CHECK(marker.IsMarker("step 7"));
  CHECK(marker.IsMarker("step"));
  CHECK_FALSE(marker.IsMarker("forward"));
  CHECK_FALSE(marker.IsMarker(nullptr));
  CHECK_FALSE(marker.MayMatch("forward"));
  CHECK(marker.MayMatch("sgemm"));  // the first byte starts a pattern: the rest decides
  CHECK(marker.StepNumberOf("step") == 0);  // nothing numbered before: counts from 0
  CHECK(marker.StepNumberOf("step 7") == 7);
  CHECK(marker.StepNumberOf("step") == 8);
}

TEST_CASE("marker verdicts: remembered per address and text, forgotten when the text changes") {
  MarkerVerdicts verdicts;
  alignas(8) char buffer[48] = "sgemm_kernel";
  CHECK(verdicts.Find(buffer) == MarkerVerdicts::kUnknown);
  verdicts.Remember(buffer, false);
  CHECK(verdicts.Find(buffer) == MarkerVerdicts::kNotMarker);
  std::strcpy(buffer, "step 4");  // rewritten in place: shorter
  CHECK(verdicts.Find(buffer) == MarkerVerdicts::kUnknown);
  verdicts.Remember(buffer, true);
  CHECK(verdicts.Find(buffer) == MarkerVerdicts::kMarker);
  std::strcpy(buffer, "step 40");  // longer by one byte
  CHECK(verdicts.Find(buffer) == MarkerVerdicts::kUnknown);
  std::strcpy(buffer, "step 4");
  CHECK(verdicts.Find(buffer) == MarkerVerdicts::kMarker);  // the same text again
  buffer[3] = 'P';
  CHECK(verdicts.Find(buffer) == MarkerVerdicts::kUnknown);  // a byte inside changed
  // The same text at another address is another entry; misaligned texts work the same.
  for (size_t offset = 1; offset < 8; ++offset) {
    std::strcpy(buffer + 16 + offset, "train_step");
    CHECK(verdicts.Find(buffer + 16 + offset) == MarkerVerdicts::kUnknown);
    verdicts.Remember(buffer + 16 + offset, offset % 2 == 0);
    CHECK(verdicts.Find(buffer + 16 + offset) ==
          (offset % 2 == 0 ? MarkerVerdicts::kMarker : MarkerVerdicts::kNotMarker));
  }
  // Too long to copy: never remembered, always matched again.
  const std::string long_name(40, 's');
  verdicts.Remember(long_name.c_str(), false);
  CHECK(verdicts.Find(long_name.c_str()) == MarkerVerdicts::kUnknown);
  CHECK(verdicts.Find(nullptr) == MarkerVerdicts::kUnknown);
}

}  // namespace
}  // namespace tfprof::preload
