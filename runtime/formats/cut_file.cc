#include "runtime/formats/cut_file.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "runtime/common/string_view_bridge.h"

namespace tfprof {

namespace {

constexpr std::string_view kPayloadUrl = "tfprof/file-ends-early";

}  // namespace

// The payload: "BYTES\nPARTIAL\nFROM_NS\nPROBLEM\nFILE" (FROM_NS empty when unset); the file's
// name comes last, so it may hold any bytes.
absl::Status MarkFileEndsEarly(absl::Status data_loss, const CutFacts &facts) {
  data_loss.SetPayload(
      ToAbsl(kPayloadUrl),
      absl::Cord(absl::StrCat(facts.file_bytes, "\n", facts.steps_may_be_partial ? 1 : 0, "\n",
                              facts.partial_from_ns ? absl::StrCat(*facts.partial_from_ns) : "",
                              "\n", ToAbsl(facts.problem), "\n", ToAbsl(facts.file))));
  return data_loss;
}

std::optional<CutFacts> FileEndsEarly(const absl::Status &status) {
  if (!absl::IsDataLoss(status)) return std::nullopt;
  // absl::optional, which is std::optional only where Abseil was built for C++17.
  const auto payload = status.GetPayload(ToAbsl(kPayloadUrl));
  if (!payload) return std::nullopt;
  const std::string text(*payload);
  std::vector<std::string> parts = absl::StrSplit(text, absl::MaxSplits('\n', 4));
  CutFacts facts;
  if (parts.size() != 5 || !absl::SimpleAtoi(parts[0], &facts.file_bytes)) return std::nullopt;
  facts.steps_may_be_partial = parts[1] == "1";
  int64_t from_ns = 0;
  if (!parts[2].empty() && absl::SimpleAtoi(parts[2], &from_ns)) facts.partial_from_ns = from_ns;
  facts.problem = std::move(parts[3]);
  facts.file = std::move(parts[4]);
  return facts;
}

}  // namespace tfprof
