// Symbolizer: names for -finstrument-functions addresses, from dladdr and from the modules' own
// symbol tables (static functions, stripped libraries, damaged files).
#include "bindings/preload/symbolizer.h"

#include <dlfcn.h>
#include <doctest/doctest.h>
#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "support/test_files.h"

using tfprof::preload::Symbolizer;

// Functions with internal linkage, C linkage and C++ linkage in a namespace; none is exported
// (the test binary is not linked with -rdynamic), so only .symtab knows them. Their bodies differ
// so that identical code folding cannot merge them.
static __attribute__((noinline)) int tfprof_test_static_square(int value) { return value * value + 1; }

extern "C" __attribute__((noinline)) int tfprof_test_c_function(int value) { return value * 3 - 7; }

namespace tfprof_test {

struct Widget {
  static __attribute__((noinline)) int Frobnicate(int value) { return value ^ 0x5a5a; }
};

__attribute__((noinline)) int Blend(int value, const char *text) {
  return value + static_cast<int>(std::strlen(text));
}

}  // namespace tfprof_test

namespace {

int g_data_object = 42;  // data, not a function: no function symbol covers it

template <typename Function>
const void *AddressOf(Function *function) {
  return reinterpret_cast<const void *>(function);
}

template <typename Function>
const void *InsideOf(Function *function) {
  return static_cast<const char *>(AddressOf(function)) + 1;
}

bool IsHex(const std::string &text) {
  return !text.empty() && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// `module+0xOFFSET` for `module`.
bool IsFallbackFor(const std::string &name, const std::string &module) {
  const std::string prefix = module + "+0x";
  return name.rfind(prefix, 0) == 0 && IsHex(name.substr(prefix.size()));
}

// `symbol` as the library `soname` (already loaded) defines it. Not `&symbol`: in a non-PIE
// program that is the program's own PLT entry for it.
const void *DefinitionIn(const char *soname, const char *symbol) {
  void *library = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
  REQUIRE_MESSAGE(library != nullptr, dlerror());
  const void *definition = dlsym(library, symbol);
  dlclose(library);
  REQUIRE(definition != nullptr);
  return definition;
}

std::string ModulePathOf(const void *address) {
  Dl_info info{};
  return dladdr(address, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "";
}

void WriteFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

// A private copy of libz loaded with dlopen, whose file is then replaced on disk (the mapping keeps
// the original inode), so that the symbolizer reads `damaged` bytes for a module that works.
class DamagedLibrary {
 public:
  DamagedLibrary(const tfprof_test::TempDir &dir, const std::string &name, const std::string &original,
                 const std::string &damaged)
      : path_(dir.File(name)) {
    WriteFile(path_, original);
    handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    REQUIRE_MESSAGE(handle_ != nullptr, dlerror());
    version_function_ = dlsym(handle_, "zlibVersion");
    REQUIRE(version_function_ != nullptr);
    std::filesystem::remove(path_);
    WriteFile(path_, damaged);
  }
  ~DamagedLibrary() { dlclose(handle_); }
  DamagedLibrary(const DamagedLibrary &) = delete;
  DamagedLibrary &operator=(const DamagedLibrary &) = delete;

  // An address inside zlibVersion, which dladdr alone does not name exactly.
  const void *InsideVersionFunction() const { return static_cast<const char *>(version_function_) + 1; }

 private:
  std::string path_;
  void *handle_ = nullptr;
  void *version_function_ = nullptr;
};

using ElfHeader = ElfW(Ehdr);
using SectionHeader = ElfW(Shdr);

ElfHeader HeaderOf(const std::string &elf) {
  ElfHeader header;
  REQUIRE(elf.size() >= sizeof header);
  std::memcpy(&header, elf.data(), sizeof header);
  return header;
}

// Applies `change` to every section header of `elf` in place.
void ForEachSection(std::string *elf, const std::function<void(SectionHeader *)> &change) {
  const ElfHeader header = HeaderOf(*elf);
  for (size_t i = 0; i < header.e_shnum; ++i) {
    const size_t offset = header.e_shoff + i * header.e_shentsize;
    REQUIRE(offset + sizeof(SectionHeader) <= elf->size());
    SectionHeader section;
    std::memcpy(&section, elf->data() + offset, sizeof section);
    change(&section);
    std::memcpy(elf->data() + offset, &section, sizeof section);
  }
}

}  // namespace

TEST_CASE("symbolizer: a static function of the program resolves through .symtab") {
  Symbolizer symbolizer;
  CHECK(tfprof_test_static_square(3) == 10);
  Dl_info info{};
  REQUIRE(dladdr(AddressOf(&tfprof_test_static_square), &info) != 0);
  CHECK_MESSAGE(info.dli_saddr != AddressOf(&tfprof_test_static_square), "dladdr alone names it");
  CHECK(symbolizer.NameOf(AddressOf(&tfprof_test_static_square)) == "tfprof_test_static_square(int)");
}

TEST_CASE("symbolizer: an extern \"C\" function keeps its plain name") {
  Symbolizer symbolizer;
  CHECK(tfprof_test_c_function(3) == 2);
  CHECK(symbolizer.NameOf(AddressOf(&tfprof_test_c_function)) == "tfprof_test_c_function");
}

TEST_CASE("symbolizer: C++ functions in a namespace come back demangled with their parameters") {
  Symbolizer symbolizer;
  CHECK(tfprof_test::Widget::Frobnicate(0) == 0x5a5a);
  CHECK(tfprof_test::Blend(1, "ab") == 3);
  CHECK(symbolizer.NameOf(AddressOf(&tfprof_test::Widget::Frobnicate)) == "tfprof_test::Widget::Frobnicate(int)");
  CHECK(symbolizer.NameOf(AddressOf(&tfprof_test::Blend)) == "tfprof_test::Blend(int, char const*)");
}

TEST_CASE("symbolizer: a libc function resolves through dladdr, and inside it through .dynsym") {
  // lsearch: one name at its address, not an IFUNC, and not intercepted by the sanitizers (whose
  // interceptors, qsort's for one, carry two names at one address).
  Symbolizer symbolizer;
  const void *lsearch_in_libc = DefinitionIn("libc.so.6", "lsearch");
  CHECK(symbolizer.NameOf(lsearch_in_libc) == "lsearch");
  CHECK(symbolizer.NameOf(static_cast<const char *>(lsearch_in_libc) + 1) == "lsearch");
}

TEST_CASE("symbolizer: an address inside a function names the function") {
  Symbolizer symbolizer;
  CHECK(symbolizer.NameOf(InsideOf(&tfprof_test_static_square)) == "tfprof_test_static_square(int)");
  CHECK(symbolizer.NameOf(InsideOf(&tfprof_test::Widget::Frobnicate)) == "tfprof_test::Widget::Frobnicate(int)");
}

TEST_CASE("symbolizer: addresses no function covers get module+offset or the bare address") {
  Symbolizer symbolizer;
  // Data in the program: its module is known, no function symbol covers it.
  const std::string data_name = symbolizer.NameOf(&g_data_object);
  const std::string program_name = std::filesystem::read_symlink("/proc/self/exe").filename().string();
  CHECK_MESSAGE(IsFallbackFor(data_name, program_name), data_name);
  Dl_info info{};
  link_map *program = nullptr;
  REQUIRE(dladdr1(&g_data_object, &info, reinterpret_cast<void **>(&program), RTLD_DL_LINKMAP) != 0);
  const uintptr_t offset = reinterpret_cast<uintptr_t>(&g_data_object) - program->l_addr;
  CHECK(std::strtoull(data_name.substr(data_name.find("+0x") + 3).c_str(), nullptr, 16) == offset);

  // Outside every module: near-null, the heap.
  CHECK(symbolizer.NameOf(reinterpret_cast<const void *>(uintptr_t{0x10})) == "0x10");
  CHECK(symbolizer.NameOf(nullptr) == "0x0");
  const auto heap = std::make_unique<int>(7);
  const std::string heap_name = symbolizer.NameOf(heap.get());
  CHECK(heap_name.rfind("0x", 0) == 0);
  CHECK(IsHex(heap_name.substr(2)));
}

TEST_CASE("symbolizer: one instance serves many threads") {
  Symbolizer symbolizer;
  const std::vector<std::pair<const void *, std::string>> expected = {
      {AddressOf(&tfprof_test_static_square), "tfprof_test_static_square(int)"},
      {AddressOf(&tfprof_test_c_function), "tfprof_test_c_function"},
      {AddressOf(&tfprof_test::Blend), "tfprof_test::Blend(int, char const*)"},
      {DefinitionIn("libc.so.6", "lsearch"), "lsearch"}};
  std::vector<std::vector<std::string>> results(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < expected.size(); ++i) {
        results[t].push_back(symbolizer.NameOf(expected[(i + t) % expected.size()].first));
      }
    });
  }
  for (std::thread &thread : threads) thread.join();
  for (size_t t = 0; t < results.size(); ++t) {
    for (size_t i = 0; i < expected.size(); ++i) {
      CHECK(results[t][i] == expected[(i + t) % expected.size()].second);
    }
  }
}

TEST_CASE("symbolizer: damaged module files give module+offset, never a crash") {
  const std::string libz_path = ModulePathOf(DefinitionIn("libz.so.1", "zlibVersion"));
  const std::string original = tfprof_test::ReadFile(libz_path);
  const ElfHeader header = HeaderOf(original);
  REQUIRE(header.e_shoff != 0);
  tfprof_test::TempDir dir;
  int copies = 0;
  // Loads a fresh copy (the symbolizer reads each module once), damaged as `damaged`.
  auto name_inside_copy = [&](const std::string &damaged) {
    const std::string name = "libz-copy" + std::to_string(copies++) + ".so";
    DamagedLibrary library(dir, name, original, damaged);
    Symbolizer symbolizer;
    return std::make_pair(symbolizer.NameOf(library.InsideVersionFunction()), name);
  };

  // The intact copy resolves through its .dynsym, at its own load address.
  CHECK(name_inside_copy(original).first == "zlibVersion");

  std::vector<std::pair<std::string, std::string>> damaged;
  damaged.emplace_back("empty file", "");
  damaged.emplace_back("ELF header only", original.substr(0, sizeof(ElfHeader)));
  damaged.emplace_back("cut in half", original.substr(0, original.size() / 2));
  {
    std::string elf = original;
    ElfHeader bad = header;
    bad.e_shoff = ~static_cast<decltype(bad.e_shoff)>(0) - 16;
    std::memcpy(elf.data(), &bad, sizeof bad);
    damaged.emplace_back("section table offset past the end", elf);
  }
  {
    std::string elf = original;
    ElfHeader bad = header;
    bad.e_shnum = 0xffff;
    bad.e_shentsize = 0xffff;
    std::memcpy(elf.data(), &bad, sizeof bad);
    damaged.emplace_back("section count and size too large", elf);
  }
  {
    std::string elf = original;
    ElfHeader bad = header;
    bad.e_shnum = 0;  // the count then comes from section 0's size
    std::memcpy(elf.data(), &bad, sizeof bad);
    SectionHeader first;
    std::memcpy(&first, elf.data() + header.e_shoff, sizeof first);
    first.sh_size = ~static_cast<decltype(first.sh_size)>(0);
    std::memcpy(elf.data() + header.e_shoff, &first, sizeof first);
    damaged.emplace_back("extended section count too large", elf);
  }
  {
    std::string elf = original;
    ForEachSection(&elf, [&](SectionHeader *section) {
      section->sh_offset = original.size() - 1;
      section->sh_size = 4096;
    });
    damaged.emplace_back("sections past the end", elf);
  }
  {
    std::string elf = original;
    ForEachSection(&elf, [](SectionHeader *section) { section->sh_link = 0xffffffffu; });
    damaged.emplace_back("string table links out of range", elf);
  }
  {
    std::string elf = original;
    ForEachSection(&elf, [](SectionHeader *section) {
      if (section->sh_type == SHT_DYNSYM || section->sh_type == SHT_SYMTAB) section->sh_entsize = 1;
    });
    damaged.emplace_back("symbol entries too small", elf);
  }
  {
    std::string elf = original;
    ForEachSection(&elf, [&](SectionHeader *section) {
      if (section->sh_type != SHT_STRTAB) return;
      REQUIRE(section->sh_offset + section->sh_size <= elf.size());
      std::memset(elf.data() + section->sh_offset, 'A', section->sh_size);
    });
    damaged.emplace_back("string tables without a terminating NUL", elf);
  }
  for (const auto &damage : damaged) {
    const std::string &what = damage.first;
    CAPTURE(what);
    const auto result = name_inside_copy(damage.second);
    CHECK_MESSAGE(IsFallbackFor(result.first, result.second), result.first);
  }

  // Random bytes over the section table and the symbol tables: any answer but a crash (the
  // sanitizer build checks every read).
  std::mt19937 random(20261122);
  for (int round = 0; round < 16; ++round) {
    std::string elf = original;
    std::vector<std::pair<size_t, size_t>> regions = {
        {header.e_shoff, static_cast<size_t>(header.e_shnum) * header.e_shentsize}};
    ForEachSection(&elf, [&](SectionHeader *section) {
      if (section->sh_type == SHT_DYNSYM || section->sh_type == SHT_SYMTAB || section->sh_type == SHT_STRTAB) {
        regions.emplace_back(section->sh_offset, section->sh_size);
      }
    });
    for (const auto &[start, length] : regions) {
      if (length == 0 || start + length > elf.size()) continue;
      for (int flip = 0; flip < 32; ++flip) {
        elf[start + random() % length] = static_cast<char>(random());
      }
    }
    CAPTURE(round);
    CHECK(!name_inside_copy(elf).first.empty());
  }
}
