#include "runtime/storage/name_table.h"

#include "runtime/common/insert_or_reset.h"

namespace tfprof {

uint32_t NameTable::Intern(std::string_view name) {
  if (auto found = ids_.find(name); found != ids_.end()) return found->second;
  const uint32_t id = static_cast<uint32_t>(names_.size());
  names_.emplace_back(name);
  // Should the table be reset, names seen before get a second id: harmless, every id still
  // names its string.
  InsertOrReset(ids_, [&] { return ids_.emplace(std::string_view(names_.back()), id); });
  return id;
}

}  // namespace tfprof
