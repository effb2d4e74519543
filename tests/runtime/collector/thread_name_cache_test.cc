// ThreadNameCache: per-thread name interning (pointer cache in front of a content hash table).
#include "runtime/collector/thread_name_cache.h"

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

using tfprof::ThreadNameCache;

constexpr uint32_t kNotFound = ThreadNameCache::kNotFound;

std::unique_ptr<ThreadNameCache> NewCache() { return std::make_unique<ThreadNameCache>(); }

// A name of exactly `length` bytes, different for every (length, seed), without NULs.
std::string MakeName(size_t length, uint32_t seed) {
  std::string name(length, 'x');
  for (size_t i = 0; i < length; ++i) {
    name[i] = static_cast<char>('a' + (seed * 7 + i * 3) % 26);
  }
  const std::string tag = std::to_string(seed);
  if (length >= tag.size()) name.replace(0, tag.size(), tag);
  return name;
}

}  // namespace

TEST_CASE("thread name cache: ids are dense from 0 in first-seen order") {
  auto cache = NewCache();
  CHECK(cache->PublishedCount() == 0);
  CHECK(cache->LookupCString("forward") == 0);
  CHECK(cache->LookupCString("backward") == 1);
  CHECK(cache->LookupCString("optimizer") == 2);
  CHECK(cache->PublishedCount() == 3);
  CHECK(cache->NameAt(0) == "forward");
  CHECK(cache->NameAt(1) == "backward");
  CHECK(cache->NameAt(2) == "optimizer");
  // Seen again: same ids, nothing new published.
  CHECK(cache->LookupCString("backward") == 1);
  CHECK(cache->LookupCString("forward") == 0);
  CHECK(cache->PublishedCount() == 3);
}

TEST_CASE("thread name cache: same content at different pointers gets the same id") {
  auto cache = NewCache();
  char first[32] = "matmul";
  char second[32] = "matmul";
  std::string third = "matmul";
  REQUIRE(static_cast<const void *>(first) != static_cast<const void *>(second));
  const uint32_t id = cache->LookupCString(first);
  CHECK(id == 0);
  CHECK(cache->LookupCString(second) == id);
  CHECK(cache->LookupCString(third.c_str()) == id);
  CHECK(cache->Lookup("matmul", 6) == id);
  // Lookup() takes a length, so a longer buffer's prefix is the name.
  CHECK(cache->Lookup("matmul_grad", 6) == id);
  CHECK(cache->PublishedCount() == 1);
}

TEST_CASE("thread name cache: the same pointer with new content gets a new id") {
  auto cache = NewCache();
  char buffer[64];
  std::strcpy(buffer, "layer_1");
  const uint32_t first = cache->LookupCString(buffer);
  std::strcpy(buffer, "layer_2");
  const uint32_t second = cache->LookupCString(buffer);
  CHECK(first != second);
  CHECK(cache->NameAt(first) == "layer_1");
  CHECK(cache->NameAt(second) == "layer_2");

  // Longer and shorter texts at the same address, including a prefix and an extension.
  std::strcpy(buffer, "layer_22");
  const uint32_t longer = cache->LookupCString(buffer);
  std::strcpy(buffer, "layer_");
  const uint32_t shorter = cache->LookupCString(buffer);
  CHECK(cache->NameAt(longer) == "layer_22");
  CHECK(cache->NameAt(shorter) == "layer_");
  CHECK(longer != second);
  CHECK(shorter != first);

  // Back to an earlier text: its earlier id.
  std::strcpy(buffer, "layer_1");
  CHECK(cache->LookupCString(buffer) == first);
  std::strcpy(buffer, "layer_2");
  CHECK(cache->LookupCString(buffer) == second);
  CHECK(cache->PublishedCount() == 4);
}

TEST_CASE("thread name cache: a change in the last byte before the NUL is seen") {
  auto cache = NewCache();
  alignas(8) char buffer[72];
  for (size_t length : {size_t{1}, size_t{7}, size_t{8}, size_t{15}, size_t{16}, size_t{55},
                        size_t{56}, size_t{63}}) {
    CAPTURE(length);
    std::memset(buffer, 'q', length);
    buffer[length] = '\0';
    const uint32_t before = cache->LookupCString(buffer);
    buffer[length - 1] = 'Z';
    const uint32_t after = cache->LookupCString(buffer);
    REQUIRE(before != kNotFound);
    REQUIRE(after != kNotFound);
    CHECK(before != after);
    CHECK(cache->NameAt(after) == std::string(length - 1, 'q') + "Z");
    CHECK(cache->NameAt(before) == std::string(length, 'q'));
  }
}

TEST_CASE("thread name cache: names up to and beyond the 56-byte pointer-cache limit") {
  auto cache = NewCache();
  for (size_t length : {size_t{1}, size_t{55}, size_t{56}, size_t{57}, size_t{63}, size_t{64},
                        size_t{65}, size_t{200}, size_t{4000}}) {
    CAPTURE(length);
    std::string name = MakeName(length, static_cast<uint32_t>(length));
    const uint32_t id = cache->LookupCString(name.c_str());
    REQUIRE(id != kNotFound);
    CHECK(cache->NameAt(id) == name);
    CHECK(cache->LookupCString(name.c_str()) == id);  // same pointer again
    const std::string copy = name;
    CHECK(cache->LookupCString(copy.c_str()) == id);  // another pointer
    // The same pointer with the last byte changed.
    name.back() = name.back() == '!' ? '?' : '!';
    const uint32_t changed = cache->LookupCString(name.c_str());
    REQUIRE(changed != kNotFound);
    CHECK(changed != id);
    CHECK(cache->NameAt(changed) == name);
    CHECK(cache->NameAt(id) == copy);
    // And the first byte.
    name.front() = '#';
    const uint32_t changed_front = cache->LookupCString(name.c_str());
    CHECK(changed_front != changed);
    CHECK(cache->NameAt(changed_front) == name);
  }
}

TEST_CASE("thread name cache: the empty string is recorded as (unnamed)") {
  auto cache = NewCache();
  CHECK(std::string_view(tfprof::kUnnamed) == "(unnamed)");
  const uint32_t id = cache->LookupCString("");
  REQUIRE(id != kNotFound);
  CHECK(cache->NameAt(id) == "(unnamed)");
  char empty[8] = {};
  CHECK(cache->LookupCString(empty) == id);
  CHECK(cache->LookupCString("(unnamed)") == id);
  CHECK(cache->LookupCString(tfprof::kUnnamed) == id);
  CHECK(cache->Lookup(tfprof::kUnnamed, 9) == id);
  CHECK(cache->PublishedCount() == 1);
  // An empty buffer that later holds text is not stuck on (unnamed).
  std::strcpy(empty, "later");
  const uint32_t later = cache->LookupCString(empty);
  CHECK(later != id);
  CHECK(cache->NameAt(later) == "later");
}

TEST_CASE("thread name cache: names may hold any bytes but NUL") {
  auto cache = NewCache();
  const char *odd = "tab\there \"quoted\" \xff\xfe \xE2\x82\xAC";
  const uint32_t id = cache->LookupCString(odd);
  CHECK(cache->NameAt(id) == odd);
  CHECK(cache->Lookup(odd, static_cast<uint32_t>(std::strlen(odd))) == id);
}

TEST_CASE("thread name cache: misaligned names are cached and compared correctly") {
  auto cache = NewCache();
  alignas(8) char buffer[96];
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t length : {size_t{1}, size_t{5}, size_t{8}, size_t{20}, size_t{48}, size_t{56}}) {
      CAPTURE(offset);
      CAPTURE(length);
      std::memset(buffer, 'A', sizeof buffer);  // neighbours of the text are not NUL
      char *name = buffer + offset;
      const std::string text = MakeName(length, static_cast<uint32_t>(offset * 100 + length));
      std::memcpy(name, text.data(), length);
      name[length] = '\0';

      const uint32_t new_id = cache->PublishedCount();
      const uint32_t id = cache->LookupCString(name);
      REQUIRE(id != kNotFound);
      CHECK(id == new_id);  // every base text is distinct
      CHECK(cache->NameAt(id) == text);
      CHECK(cache->LookupCString(name) == id);

      // Bytes around the text change: still the same name.
      if (offset > 0) buffer[offset - 1] = 'B';
      name[length + 1] = 'C';
      CHECK(cache->LookupCString(name) == id);

      // A byte inside the text changes: a different name.
      name[length / 2] = static_cast<char>(name[length / 2] == '~' ? '^' : '~');
      const uint32_t changed = cache->LookupCString(name);
      REQUIRE(changed != kNotFound);
      CHECK(changed != id);
      CHECK(cache->NameAt(changed) == std::string(name, length));

      // The NUL moves one byte later: a different, longer name.
      name[length] = 'D';
      name[length + 1] = '\0';
      const uint32_t extended = cache->LookupCString(name);
      REQUIRE(extended != kNotFound);
      CHECK(extended != changed);
      CHECK(cache->NameAt(extended) == std::string(name, length + 1));
    }
  }
}

TEST_CASE("thread name cache: names ending exactly at a word boundary") {
  auto cache = NewCache();
  alignas(8) char buffer[80];
  // (offset, length) pairs where the text ends at a multiple of 8, so the NUL starts the next
  // word, and where the NUL itself is the last byte of a word.
  const std::pair<size_t, size_t> cases[] = {{0, 8},  {0, 16}, {3, 5},  {3, 13}, {7, 1},
                                             {7, 57}, {0, 7},  {0, 63}, {1, 6},  {7, 56}};
  for (const auto &[offset, length] : cases) {
    CAPTURE(offset);
    CAPTURE(length);
    std::memset(buffer, 'Z', sizeof buffer);
    char *name = buffer + offset;
    const std::string text = MakeName(length, static_cast<uint32_t>(offset * 1000 + length));
    std::memcpy(name, text.data(), length);
    name[length] = '\0';
    const uint32_t id = cache->LookupCString(name);
    REQUIRE(id != kNotFound);
    CHECK(cache->NameAt(id) == text);
    CHECK(cache->LookupCString(name) == id);
    // Replace the NUL by a character and end one byte later: must not match the cached copy.
    name[length] = 'Y';
    name[length + 1] = '\0';
    const uint32_t longer = cache->LookupCString(name);
    CHECK(longer != id);
    CHECK(cache->NameAt(longer) == text + "Y");
    // Shorten by one: also a new name.
    name[length - 1] = '\0';
    const uint32_t shorter = cache->LookupCString(name);
    CHECK(shorter != id);
    CHECK(cache->NameAt(shorter) == (length == 1 ? "(unnamed)" : text.substr(0, length - 1)));
  }
}

TEST_CASE("thread name cache: pointers that share a pointer-cache slot do not mix") {
  auto cache = NewCache();
  // Slots are picked by (address >> 3) % 256: addresses 2048 bytes apart share one.
  std::vector<char> buffer(4096 + 64, '\0');
  char *first = buffer.data();
  char *second = buffer.data() + 2048;
  std::strcpy(first, "first_name");
  std::strcpy(second, "second_name");
  const uint32_t first_id = cache->LookupCString(first);
  const uint32_t second_id = cache->LookupCString(second);
  CHECK(first_id != second_id);
  for (int round = 0; round < 4; ++round) {
    CHECK(cache->LookupCString(first) == first_id);
    CHECK(cache->LookupCString(second) == second_id);
  }
  CHECK(cache->NameAt(first_id) == "first_name");
  CHECK(cache->NameAt(second_id) == "second_name");
  CHECK(cache->PublishedCount() == 2);
}

TEST_CASE("thread name cache: full table returns kNotFound and keeps existing names") {
  auto cache = NewCache();
  const uint32_t max_names = ThreadNameCache::kMaxNames;
  std::vector<std::string> names;
  names.reserve(max_names + 2);
  for (uint32_t n = 0; n < max_names + 2; ++n) names.push_back("op/" + std::to_string(n));

  for (uint32_t n = 0; n < max_names; ++n) {
    const uint32_t id = cache->LookupCString(names[n].c_str());
    if (id != n) {
      CAPTURE(n);
      REQUIRE(id == n);
    }
  }
  CHECK(cache->PublishedCount() == max_names);

  CHECK(cache->LookupCString(names[max_names].c_str()) == kNotFound);
  CHECK(cache->LookupCString(names[max_names + 1].c_str()) == kNotFound);
  CHECK(cache->Lookup("brand new", 9) == kNotFound);
  CHECK(cache->LookupCString("") == kNotFound);  // (unnamed) was never added
  CHECK(cache->PublishedCount() == max_names);

  // Every existing name is still found, through its own pointer and through a copy.
  uint32_t mismatches = 0;
  for (uint32_t n = 0; n < max_names; ++n) {
    const std::string copy = names[n];
    if (cache->LookupCString(names[n].c_str()) != n) ++mismatches;
    if (cache->LookupCString(copy.c_str()) != n) ++mismatches;
    if (cache->Lookup(copy.data(), static_cast<uint32_t>(copy.size())) != n) ++mismatches;
    if (cache->NameAt(n) != names[n]) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("thread name cache: arena exhaustion with long names returns kNotFound") {
  auto cache = NewCache();
  const size_t length = 1000;  // each takes 1001 arena bytes with its NUL
  const uint32_t fit = ThreadNameCache::kArenaBytes / (length + 1);
  REQUIRE(fit == 130);
  std::vector<std::string> names;
  for (uint32_t n = 0; n <= fit; ++n) names.push_back(MakeName(length, n));
  for (uint32_t n = 0; n < fit; ++n) {
    const uint32_t id = cache->LookupCString(names[n].c_str());
    if (id != n) {
      CAPTURE(n);
      REQUIRE(id == n);
    }
  }
  CHECK(cache->LookupCString(names[fit].c_str()) == kNotFound);
  CHECK(cache->PublishedCount() == fit);

  // What still fits in the arena's tail is accepted: 131072 - 130 * 1001 = 942 bytes left.
  const std::string last_fitting = MakeName(941, 7777);
  const uint32_t id = cache->LookupCString(last_fitting.c_str());
  CHECK(id == fit);
  CHECK(cache->NameAt(id) == last_fitting);
  CHECK(cache->LookupCString("x") == kNotFound);  // the arena is now exactly full

  for (uint32_t n = 0; n < fit; ++n) {
    if (cache->NameAt(n) != names[n]) {
      CAPTURE(n);
      CHECK(cache->NameAt(n) == names[n]);
    }
  }
  CHECK(cache->LookupCString(names[5].c_str()) == 5);
}

TEST_CASE("thread name cache: a name as long as the arena is refused") {
  auto cache = NewCache();
  const std::string huge(ThreadNameCache::kArenaBytes, 'h');
  CHECK(cache->LookupCString(huge.c_str()) == kNotFound);
  const std::string just_fits(ThreadNameCache::kArenaBytes - 1, 'j');
  const uint32_t id = cache->LookupCString(just_fits.c_str());
  CHECK(id == 0);
  CHECK(cache->NameAt(0) == just_fits);
  CHECK(cache->LookupCString("more") == kNotFound);
}

TEST_CASE("thread name cache: a shorter name at a cached address never reads past its own word") {
  // LookupCString compares the cached copy word by word and promises to read only memory that
  // is mapped. A 40-byte name spanning into the next page is cached at P; that page is unmapped
  // and P now holds the valid 2-byte name "ab". Looking it up must not touch the unmapped page.
  // Runs in a child process so that a crash fails this test only.
  const long page = sysconf(_SC_PAGESIZE);
  REQUIRE(page >= 64);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Die of the signal itself rather than through the test framework's crash handler.
    std::signal(SIGSEGV, SIG_DFL);
    std::signal(SIGBUS, SIG_DFL);
    void *mapped = mmap(nullptr, static_cast<size_t>(2 * page), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) _exit(2);
    char *region = static_cast<char *>(mapped);
    auto cache = NewCache();
    char *name = region + page - 16;
    std::memset(name, 'a', 40);
    name[40] = '\0';
    if (cache->LookupCString(name) != 0) _exit(3);
    if (munmap(region + page, static_cast<size_t>(page)) != 0) _exit(4);
    std::memcpy(name, "ab", 3);
    const uint32_t id = cache->LookupCString(name);
    _exit(id == 1 && cache->NameAt(1) == "ab" ? 0 : 5);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  const int signal_number = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  const int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  CHECK(signal_number == 0);  // SIGSEGV (11): it read the unmapped page
  CHECK(exit_code == 0);
}
