// The session's string table: every distinct name once, addressed by a dense id.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"

namespace tfprof {

// Not thread-safe: used by the collector under the drain lock and by exporters after it.
class NameTable {
 public:
  // Returns the id of `name`, adding a copy if new.
  uint32_t Intern(std::string_view name);

  std::string_view Get(uint32_t id) const { return names_[id]; }
  uint32_t size() const { return static_cast<uint32_t>(names_.size()); }

 private:
  std::deque<std::string> names_;  // a deque never moves its strings, so the keys stay valid
  absl::flat_hash_map<std::string_view, uint32_t> ids_;
};

}  // namespace tfprof
