#include "bindings/preload/symbolizer.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <tuple>

namespace tfprof::preload {
namespace {

using ElfHeader = ElfW(Ehdr);
using SectionHeader = ElfW(Shdr);
using ElfSymbol = ElfW(Sym);  // ELF64_ST_TYPE/BIND read st_info the same way in both classes

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr unsigned char kNativeData = ELFDATA2LSB;
#else
constexpr unsigned char kNativeData = ELFDATA2MSB;
#endif
constexpr unsigned char kNativeClass = sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32;

// Reads byte ranges of a regular file; every read is checked against the file's size, so no
// offset taken from the file can reach past it.
class FileReader {
 public:
  explicit FileReader(const std::string &path) {
    // O_NONBLOCK: a path that names a FIFO must not hang the caller before the S_ISREG check.
    fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat info {};
    if (fd_ >= 0 && fstat(fd_, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
      size_ = static_cast<uint64_t>(info.st_size);
    }
  }
  ~FileReader() {
    if (fd_ >= 0) close(fd_);
  }
  FileReader(const FileReader &) = delete;
  FileReader &operator=(const FileReader &) = delete;

  uint64_t size() const { return size_; }

  bool Contains(uint64_t offset, uint64_t length) const {
    return offset <= size_ && length <= size_ - offset;
  }

  bool Read(uint64_t offset, void *out, uint64_t length) const {
    if (!Contains(offset, length)) return false;
    auto *bytes = static_cast<char *>(out);
    while (length > 0) {
      const ssize_t got = pread(fd_, bytes, length, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;  // an error, or the file shrank since fstat
      bytes += got;
      offset += static_cast<uint64_t>(got);
      length -= static_cast<uint64_t>(got);
    }
    return true;
  }

  bool ReadInto(uint64_t offset, uint64_t length, std::string *out) const {
    if (!Contains(offset, length)) return false;
    out->resize(length);
    return Read(offset, out->data(), length);
  }

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

// A function symbol as read, with what picks one name among aliases at the same address.
struct SymbolCandidate {
  uintptr_t start;
  uintptr_t size;
  int binding_rank;  // global, then weak, then local
  size_t leading_underscores;
  std::string_view name;  // into the section's string table
};

int BindingRank(unsigned char binding) {
  switch (binding) {
    case STB_GLOBAL: return 0;
    case STB_WEAK: return 1;
    default: return 2;
  }
}

// The section headers of a native-class, native-endian ELF file; empty for anything else.
std::vector<SectionHeader> ReadSectionHeaders(const FileReader &file) {
  ElfHeader header;
  if (!file.Read(0, &header, sizeof header)) return {};
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != kNativeClass ||
      header.e_ident[EI_DATA] != kNativeData || header.e_shentsize < sizeof(SectionHeader) ||
      header.e_shoff == 0) {
    return {};
  }
  uint64_t count = header.e_shnum;
  if (count == 0) {  // 65280 sections or more: the count is in section 0's sh_size
    SectionHeader first;
    if (!file.Read(header.e_shoff, &first, sizeof first)) return {};
    count = first.sh_size;
  }
  const uint64_t stride = header.e_shentsize;
  if (header.e_shoff > file.size() || count > (file.size() - header.e_shoff) / stride) return {};
  std::vector<SectionHeader> sections(count);
  for (uint64_t i = 0; i < count; ++i) {
    if (!file.Read(header.e_shoff + i * stride, &sections[i], sizeof(SectionHeader))) return {};
  }
  return sections;
}

// The function symbols of the first section of `type` (SHT_SYMTAB or SHT_DYNSYM), their names
// pointing into `strings`, which receives the section's string table.
std::vector<SymbolCandidate> ReadFunctionSymbols(const FileReader &file,
                                                 const std::vector<SectionHeader> &sections,
                                                 uint32_t type, std::string *strings) {
  const auto symbols = std::find_if(sections.begin(), sections.end(),
                                    [type](const SectionHeader &s) { return s.sh_type == type; });
  if (symbols == sections.end() || symbols->sh_link >= sections.size()) return {};
  const SectionHeader &string_section = sections[symbols->sh_link];
  const uint64_t entry_size = symbols->sh_entsize != 0 ? symbols->sh_entsize : sizeof(ElfSymbol);
  std::string symbol_bytes;
  if (string_section.sh_type != SHT_STRTAB || entry_size < sizeof(ElfSymbol) ||
      !file.ReadInto(symbols->sh_offset, symbols->sh_size, &symbol_bytes) ||
      !file.ReadInto(string_section.sh_offset, string_section.sh_size, strings)) {
    return {};
  }
  std::vector<SymbolCandidate> functions;
  const uint64_t count = symbol_bytes.size() / entry_size;
  for (uint64_t i = 0; i < count; ++i) {
    ElfSymbol symbol;
    std::memcpy(&symbol, symbol_bytes.data() + i * entry_size, sizeof symbol);
    if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_shndx == SHN_UNDEF ||
        symbol.st_name == 0 || symbol.st_name >= strings->size()) {
      continue;
    }
    const char *name = strings->data() + symbol.st_name;
    const void *end = std::memchr(name, '\0', strings->size() - symbol.st_name);
    if (end == nullptr) continue;  // unterminated: a damaged table
    const std::string_view view(name, static_cast<size_t>(static_cast<const char *>(end) - name));
    functions.push_back({static_cast<uintptr_t>(symbol.st_value), static_cast<uintptr_t>(symbol.st_size),
                         BindingRank(ELF64_ST_BIND(symbol.st_info)), view.find_first_not_of('_'), view});
  }
  return functions;
}

std::string Demangle(const char *name) {
  if (std::strncmp(name, "_Z", 2) != 0) return name;
  int status = 0;
  char *demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;
  std::string result(demangled);
  std::free(demangled);
  return result;
}

std::string Hex(uintptr_t value) {
  char text[2 + 2 * sizeof value + 1];
  std::snprintf(text, sizeof text, "0x%" PRIxPTR, value);
  return text;
}

std::string_view Basename(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string MainProgramPath() {
  char path[4096];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  return length > 0 ? std::string(path, static_cast<size_t>(length)) : std::string();
}

}  // namespace

std::string Symbolizer::NameOf(const void *function_address) {
  const auto address = reinterpret_cast<uintptr_t>(function_address);
  std::lock_guard<std::mutex> lock(mutex_);
  Dl_info info{};
  link_map *module = nullptr;
  if (dladdr1(function_address, &info, reinterpret_cast<void **>(&module), RTLD_DL_LINKMAP) == 0 ||
      module == nullptr) {
    return Hex(address);
  }
  if (info.dli_sname != nullptr && info.dli_saddr == function_address) return Demangle(info.dli_sname);

  // The main program's link map has an empty name (dladdr reports argv[0] or ""); its file is
  // /proc/self/exe. A name without a slash (the vDSO) is no file to open.
  const bool main_program = module->l_name == nullptr || module->l_name[0] == '\0';
  const std::string path = main_program ? std::string("/proc/self/exe") : std::string(module->l_name);
  const uintptr_t load_bias = module->l_addr;  // 0 for a non-PIE executable
  const uintptr_t link_address = address - load_bias;
  if (path.find('/') != std::string::npos) {
    if (const FunctionSymbol *symbol = Find(FunctionsOf(load_bias, path), link_address)) {
      return Demangle(symbol->name.c_str());
    }
  }
  std::string module_name;
  if (!main_program) {
    module_name = Basename(path);
  } else if (info.dli_fname != nullptr && info.dli_fname[0] != '\0') {
    module_name = Basename(info.dli_fname);
  } else {
    module_name = Basename(MainProgramPath());
  }
  if (module_name.empty()) module_name = "??";
  return module_name + "+" + Hex(link_address);
}

const Symbolizer::FunctionTable &Symbolizer::FunctionsOf(uintptr_t load_bias, const std::string &path) {
  const auto key = std::make_pair(load_bias, path);
  auto found = modules_.find(key);
  if (found == modules_.end()) found = modules_.emplace(key, ReadFunctionTable(path)).first;
  return found->second;
}

Symbolizer::FunctionTable Symbolizer::ReadFunctionTable(const std::string &path) {
  const FileReader file(path);
  const std::vector<SectionHeader> sections = ReadSectionHeaders(file);
  std::string strings;
  std::vector<SymbolCandidate> candidates = ReadFunctionSymbols(file, sections, SHT_SYMTAB, &strings);
  if (candidates.empty()) candidates = ReadFunctionSymbols(file, sections, SHT_DYNSYM, &strings);

  // Among symbols at one address the first after sorting names it: one with a size (so that
  // addresses inside the function find it), global before weak before local, fewer leading
  // underscores (`qsort` before `__qsort`), then by name so that the choice is stable.
  std::sort(candidates.begin(), candidates.end(), [](const SymbolCandidate &a, const SymbolCandidate &b) {
    return std::make_tuple(a.start, a.size == 0, a.binding_rank, a.leading_underscores, a.name) <
           std::make_tuple(b.start, b.size == 0, b.binding_rank, b.leading_underscores, b.name);
  });
  FunctionTable table;
  for (const SymbolCandidate &candidate : candidates) {
    if (!table.empty() && table.back().start == candidate.start) continue;
    table.push_back({candidate.start, candidate.size, std::string(candidate.name)});
  }
  return table;
}

const Symbolizer::FunctionSymbol *Symbolizer::Find(const FunctionTable &table, uintptr_t link_address) {
  auto after = std::upper_bound(table.begin(), table.end(), link_address,
                                [](uintptr_t address, const FunctionSymbol &s) { return address < s.start; });
  if (after == table.begin()) return nullptr;
  auto candidate = std::prev(after);
  if (candidate->start == link_address) return &*candidate;
  // An address inside a function: skip the few size-less markers (assembly labels) that may lie
  // between the function's start and the address.
  constexpr int kMaxMarkersSkipped = 16;
  for (int skipped = 0; candidate->size == 0 && skipped < kMaxMarkersSkipped && candidate != table.begin();
       ++skipped) {
    --candidate;
  }
  if (candidate->size != 0 && link_address - candidate->start < candidate->size) return &*candidate;
  return nullptr;
}

}  // namespace tfprof::preload
