#include "support/test_files.h"

#include <stdlib.h>
#include <zlib.h>

#include <fstream>
#include <iterator>

#include <doctest/doctest.h>

namespace tfprof_test {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "tfprof_test_XXXXXX").string();
  REQUIRE(mkdtemp(pattern.data()) != nullptr);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::set<std::string> TempDir::Entries() const {
  std::set<std::string> names;
  for (const std::filesystem::directory_entry &entry : std::filesystem::directory_iterator(path_)) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

std::string ReadFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string Gunzip(const std::string &path) {
  gzFile file = gzopen(path.c_str(), "rb");
  REQUIRE_MESSAGE(file != nullptr, "cannot open " << path);
  std::string out;
  char buffer[65536];
  int read = 0;
  while ((read = gzread(file, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<size_t>(read));
  CHECK(read == 0);
  gzclose(file);
  return out;
}

}  // namespace tfprof_test
