// What the chunked logs of one session share: how many bytes they hold in memory, the spill file
// they move chunks to when a memory limit is set, and the records they lost or discarded.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/storage/background_writer.h"
#include "runtime/storage/spill_file.h"

namespace tfprof {

struct ChunkStore {
  int64_t resident_bytes = 0;      // chunk memory held now, by every log of the session
  bool spill_enabled = false;      // the session has a memory limit: full chunks may be spilled
  std::string spill_directory;     // where the spill file goes (empty: $TMPDIR, else /tmp)
  std::unique_ptr<SpillFile> spill;
  std::string spill_error;         // why the spill file could not be created, once it failed
  // Where spill writes run; null: on the caller's thread. It must be gone (joined) before the
  // spill file is closed, so it is owned by the session, which destroys it first.
  BackgroundWriter *writer = nullptr;
  int64_t in_flight_bytes = 0;     // resident chunk memory whose spill writes are under way
  uint64_t writer_behind = 0;      // chunks dropped because the writer was too far behind
  uint64_t records_lost = 0;       // no memory for a chunk, or the spill file failed
  uint64_t records_discarded = 0;  // evicted on purpose: outside the keep= window
  uint64_t records_released = 0;   // evicted because the streamed output holds them (no loss)

  // The spill file, created on first use; null when spilling is off or the file cannot be made.
  SpillFile *SpillTarget() {
    if (!spill_enabled || !spill_error.empty()) return nullptr;
    if (spill == nullptr) {
      absl::StatusOr<std::unique_ptr<SpillFile>> created = SpillFile::Create(spill_directory);
      if (!created.ok()) {
        spill_error = std::string(created.status().message());
        return nullptr;
      }
      spill = std::move(*created);
    }
    return spill.get();
  }
};

}  // namespace tfprof
