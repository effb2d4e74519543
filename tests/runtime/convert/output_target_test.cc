// Where a conversion writes (runtime/convert/output_target.h): the format asked for, else the
// output name's, never over an input.
#include <doctest/doctest.h>

#include <fstream>
#include <optional>
#include <string>

#include "runtime/common/string_view_bridge.h"
#include "runtime/convert/output_target.h"
#include "support/test_files.h"

namespace tfprof {
namespace {

using tfprof_test::TempDir;

std::string StatusText(const absl::Status &status) { return std::string(ToStd(status.message())); }

TEST_CASE("output target: the output's format is the one asked for, else its name's - never an input") {
  TempDir dir;
  absl::StatusOr<OutputTarget> target = ResolveOutput(dir.File("a.json.gz"), std::nullopt, {});
  REQUIRE(target.ok());
  CHECK(target->format == Format::kChromeJsonGzip);
  target = ResolveOutput(dir.File("steps.tfrecord"), std::nullopt, {});
  CHECK(target->format == Format::kTfRecord);
  target = ResolveOutput(dir.path().string(), std::nullopt, {});  // an existing directory
  CHECK(target->format == Format::kTensorBoard);
  target = ResolveOutput(dir.File("x.trace"), Format::kRunMetadata, {});
  CHECK(target->format == Format::kRunMetadata);

  target = ResolveOutput(dir.File("x.trace"), std::nullopt, {});
  CHECK(absl::IsInvalidArgument(target.status()));
  CHECK(StatusText(target.status()).find("extension '.trace'") != std::string::npos);

  const std::string input = dir.File("in.json");
  { std::ofstream(input) << "{}"; }
  target = ResolveOutput(dir.path().string() + "/./in.json", std::nullopt, {input});
  CHECK(absl::IsFailedPrecondition(target.status()));
  CHECK(StatusText(target.status()).find("refusing to overwrite") != std::string::npos);
}

}  // namespace
}  // namespace tfprof
