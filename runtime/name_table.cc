#include "runtime/name_table.h"

namespace tfprof {

uint32_t NameTable::Intern(std::string_view name) {
  if (auto found = ids_.find(name); found != ids_.end()) return found->second;
  const uint32_t id = static_cast<uint32_t>(names_.size());
  names_.emplace_back(name);
  ids_.emplace(std::string_view(names_.back()), id);
  return id;
}

}  // namespace tfprof
