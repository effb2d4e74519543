#include "runtime/collector/registered_names.h"

#include <new>

namespace tfprof {

RegisteredNames &RegisteredNames::Get() {
  static RegisteredNames *names = new RegisteredNames();  // never destroyed: ids outlive main()
  return *names;
}

uint32_t RegisteredNames::Register(std::string_view name) {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto found = ids_.find(name); found != ids_.end()) return found->second;
    if (count_ >= kMaxNames) return 0;
    auto text = std::make_unique<std::string>(name);
    const uint32_t id = count_ + 1;
    ids_.emplace(std::string_view(*text), id);
    texts_[id - 1].store(text.release(), std::memory_order_release);
    count_ = id;
    return id;
  } catch (const std::bad_alloc &) {
    return 0;
  }
}

}  // namespace tfprof
