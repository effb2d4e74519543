// File helpers shared by the unit and integration tests: scratch directories and reading files
// back (gzip-aware).
#pragma once

#include <filesystem>
#include <set>
#include <string>

namespace tfprof_test {

// A fresh, empty directory under the system's temporary directory, removed with its content when
// the test ends.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::filesystem::path &path() const { return path_; }
  std::string File(const std::string &name) const { return (path_ / name).string(); }
  // Names of every entry in the directory.
  std::set<std::string> Entries() const;

 private:
  std::filesystem::path path_;
};

// The whole file as bytes. Fails the current test if it cannot be opened.
std::string ReadFile(const std::string &path);

// The decompressed content of a gzip file. Fails the current test if it is not one.
std::string Gunzip(const std::string &path);

}  // namespace tfprof_test
