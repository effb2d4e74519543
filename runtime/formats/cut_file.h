// How a reader says that its file ends early (a writer killed mid-write): a DataLoss status, as
// for any damage, carrying the facts LoadTrace() needs to recover what was read before the cut
// (runtime/model/cut_recovery.h). Damage inside a file stays a plain DataLoss.
#pragma once

#include <optional>

#include "absl/status/status.h"
#include "runtime/model/cut_recovery.h"

namespace tfprof {

// `data_loss` (the reader's "PATH: byte N: PROBLEM") marked as a cut described by `facts`.
absl::Status MarkFileEndsEarly(absl::Status data_loss, const CutFacts &facts);

// The facts of a status MarkFileEndsEarly() made; nullopt for any other status.
std::optional<CutFacts> FileEndsEarly(const absl::Status &status);

}  // namespace tfprof
