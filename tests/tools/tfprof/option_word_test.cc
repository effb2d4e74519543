// ScanCommandWords and its option helpers: how every file command reads its words.
#include <string>
#include <vector>

#include "doctest/doctest.h"
#include "tools/tfprof/option_word.h"

namespace tfprof::cli {
namespace {

struct Scanned {
  std::vector<std::string> inputs;
  bool help = false;
  bool salvage = false;
  size_t top = 10;
  std::string output;
  std::vector<std::string> input_ops;
  std::string problem;
};

Scanned Scan(std::vector<std::string> words) {
  Scanned out;
  out.problem = ScanCommandWords(
      words, &out.inputs, &out.help, [&](OptionWord &option, const auto &take_value) {
        if (option.name == "--salvage") return TakeFlag(option, &out.salvage);
        if (option.name == "--top") return TakeCount(option, take_value, &out.top);
        if (option.name == "-o") return TakePath(option, take_value, &out.output);
        if (option.name == "--input-ops") return TakeInputOps(option, take_value, &out.input_ops);
        return UnknownOption(option);
      });
  return out;
}

TEST_CASE("option words: values inline or from the next word, inputs anywhere, '--' ends options") {
  const Scanned scanned =
      Scan({"a.json", "--top=3", "-oout.html", "-", "--input-ops", "Get*,,*Load*", "--salvage",
            "--", "--top", "-o"});
  CHECK(scanned.problem.empty());
  CHECK(scanned.inputs == std::vector<std::string>{"a.json", "-", "--top", "-o"});
  CHECK(scanned.top == 3);
  CHECK(scanned.output == "out.html");
  CHECK(scanned.input_ops == std::vector<std::string>{"Get*", "*Load*"});
  CHECK(scanned.salvage);
  CHECK_FALSE(scanned.help);

  const Scanned next_word = Scan({"--top", "7", "-o", "-", "b.pb"});
  CHECK(next_word.top == 7);
  CHECK(next_word.output == "-");
  CHECK(next_word.inputs == std::vector<std::string>{"b.pb"});
}

TEST_CASE("option words: help ends the scan before any later problem") {
  const Scanned scanned = Scan({"a.json", "--help", "--bogus"});
  CHECK(scanned.help);
  CHECK(scanned.problem.empty());
  CHECK(Scan({"-h"}).help);
}

TEST_CASE("option words: each problem names the option") {
  CHECK(Scan({"--bogus=1", "a"}).problem == "unknown option '--bogus'");
  CHECK(Scan({"-x"}).problem == "unknown option '-x'");
  CHECK(Scan({"--salvage=yes"}).problem == "--salvage takes no value");
  CHECK(Scan({"--top"}).problem == "--top needs a count (0 to 100000)");
  CHECK(Scan({"--top", "many"}).problem == "--top needs a count (0 to 100000)");
  CHECK(Scan({"--top=100001"}).problem == "--top needs a count (0 to 100000)");
  CHECK(Scan({"--top=-1"}).problem == "--top needs a count (0 to 100000)");
  CHECK(Scan({"a", "-o"}).problem == "-o needs a path");
  CHECK(Scan({"-o", ""}).problem == "-o needs a path");
  CHECK(Scan({"--input-ops="}).problem == "--input-ops needs comma-separated patterns");
  // The scan stops at the first problem: nothing after it is read.
  const Scanned stopped = Scan({"--bogus", "late.json"});
  CHECK(stopped.inputs.empty());
}

}  // namespace
}  // namespace tfprof::cli
