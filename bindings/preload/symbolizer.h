// Function names for the addresses that -finstrument-functions hands the preload library.
//
// dladdr() finds the module; an exported symbol that starts exactly at the address names it.
// Otherwise the module's ELF file is read once (its .symtab, or its .dynsym when stripped) and
// its function symbols are searched, so static functions of programs built without -rdynamic
// resolve too. C++ names come back demangled.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tfprof::preload {

class Symbolizer {
 public:
  // The demangled name of the function at (or containing) `function_address`; when no symbol
  // covers it, `module_basename+0xOFFSET` (the offset as addr2line takes it), or `0xADDRESS`
  // outside every loaded module. Never fails; a missing or malformed file only means fewer
  // names. Any thread; calls are serialised, so callers cache the result per address.
  std::string NameOf(const void *function_address);

 private:
  // One function symbol of a module, at its link-time address.
  struct FunctionSymbol {
    uintptr_t start = 0;
    uintptr_t size = 0;
    std::string name;  // as in the file (mangled)
  };
  // Sorted by start; one entry per start address.
  using FunctionTable = std::vector<FunctionSymbol>;

  // The module's table, read from `path` on first use.
  const FunctionTable &FunctionsOf(uintptr_t load_bias, const std::string &path);
  static FunctionTable ReadFunctionTable(const std::string &path);
  static const FunctionSymbol *Find(const FunctionTable &table, uintptr_t link_address);

  std::mutex mutex_;
  // Keyed by load bias and path: a module unloaded and another loaded at the same place differ
  // in one or the other.
  std::map<std::pair<uintptr_t, std::string>, FunctionTable> modules_;
};

}  // namespace tfprof::preload
