// StagedFile: a file that takes its name only when published, unnamed (O_TMPFILE) or, where the
// file system cannot, under a hidden name that RemoveStagedFilesNow() removes.
#include "runtime/common/staged_file.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "runtime/common/string_view_bridge.h"
#include "support/test_files.h"

namespace {

using tfprof::StagedFile;
using tfprof_test::ReadFile;
using tfprof_test::TempDir;
using Staging = StagedFile::Staging;

StagedFile Create(const std::string &path, Staging staging) {
  absl::StatusOr<StagedFile> file = StagedFile::Create(path, staging);
  INFO("create failed: ", std::string(tfprof::ToStd(file.status().message())));
  REQUIRE(file.ok());
  return std::move(*file);
}

void WriteAll(const StagedFile &file, const std::string &bytes) {
  REQUIRE(write(file.fd(), bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
}

}  // namespace

TEST_CASE("staged_file: unnamed until published, then named in place of the old file") {
  TempDir dir;
  const std::string path = dir.File("trace.json");
  { std::ofstream(path) << "the previous run's trace"; }
  StagedFile file = Create(path, Staging::kUnnamedWherePossible);
  WriteAll(file, "new ");
  CHECK(dir.Entries() == std::set<std::string>{"trace.json"});
  CHECK(ReadFile(path) == "the previous run's trace");
  REQUIRE(file.Publish().ok());
  CHECK(file.published());
  WriteAll(file, "content");  // still open for writing after it has its name
  CHECK(file.Publish().ok());  // a second time does nothing
  REQUIRE(file.Close().ok());
  CHECK(ReadFile(path) == "new content");
  CHECK(dir.Entries() == std::set<std::string>{"trace.json"});
  struct stat info {};
  REQUIRE(stat(path.c_str(), &info) == 0);
  const mode_t umask_now = umask(0);
  umask(umask_now);
  CHECK((info.st_mode & 0777) == (0644 & ~umask_now));  // as an ordinary new file
}

TEST_CASE("staged_file: an unpublished file leaves nothing, named or not") {
  for (const Staging staging : {Staging::kUnnamedWherePossible, Staging::kHiddenName}) {
    TempDir dir;
    const std::string path = dir.File("run.tfrecord");
    {
      StagedFile file = Create(path, staging);
      WriteAll(file, "half a record");
      CHECK(dir.Entries().size() == (staging == Staging::kHiddenName ? 1u : 0u));
    }
    CHECK(dir.Entries().empty());
  }
}

TEST_CASE("staged_file: hidden names never carry the target's name and are removed on demand") {
  TempDir dir;
  const std::string path = dir.File("events.out.tfevents.1.host");
  StagedFile first = Create(path, Staging::kHiddenName);
  StagedFile second = Create(path, Staging::kHiddenName);
  const std::set<std::string> entries = dir.Entries();
  REQUIRE(entries.size() == 2);  // distinct names for the same target
  for (const std::string &name : entries) {
    CHECK(name.rfind(".tfprof-", 0) == 0);
    CHECK(name.find("tfevents") == std::string::npos);  // TensorBoard never picks it up
  }
  // What a signal handler ending the process does: the names go, the open files stay usable.
  tfprof::RemoveStagedFilesNow();
  CHECK(dir.Entries().empty());
  WriteAll(first, "x");
  CHECK(first.Close().ok());
}

TEST_CASE("staged_file: a hidden file publishes by rename") {
  TempDir dir;
  const std::string path = dir.File("trace.pb");
  StagedFile file = Create(path, Staging::kHiddenName);
  WriteAll(file, "bytes");
  REQUIRE(file.Publish().ok());
  tfprof::RemoveStagedFilesNow();  // a published file is not a staged one any more
  REQUIRE(file.Close().ok());
  CHECK(dir.Entries() == std::set<std::string>{"trace.pb"});
  CHECK(ReadFile(path) == "bytes");
}

TEST_CASE("staged_file: errors name the path and the reason") {
  for (const Staging staging : {Staging::kUnnamedWherePossible, Staging::kHiddenName}) {
    absl::StatusOr<StagedFile> file = StagedFile::Create("/nonexistent_dir_for_tfprof/x.json", staging);
    REQUIRE_FALSE(file.ok());
    const std::string message(tfprof::ToStd(file.status().message()));
    CHECK(message.find("'/nonexistent_dir_for_tfprof/x.json'") != std::string::npos);
    CHECK(message.find("No such file or directory") != std::string::npos);
  }
  // The directory vanishes before the file is named: the error says so, and nothing is left.
  TempDir dir;
  const std::filesystem::path sub = dir.path() / "gone";
  std::filesystem::create_directory(sub);
  StagedFile file = Create((sub / "trace.json").string(), Staging::kUnnamedWherePossible);
  std::filesystem::remove(sub);
  const absl::Status published = file.Publish();
  CHECK_FALSE(published.ok());
  CHECK(std::string(tfprof::ToStd(published.message())).find("gone/trace.json") != std::string::npos);
  CHECK(dir.Entries().empty());
}
