// NameTable: the session's string table, one dense id per distinct name.
#include "runtime/storage/name_table.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

using tfprof::NameTable;

TEST_CASE("name table: ids are dense from 0 in first-interned order") {
  NameTable table;
  CHECK(table.size() == 0);
  CHECK(table.Intern("forward") == 0);
  CHECK(table.Intern("backward") == 1);
  CHECK(table.Intern("step") == 2);
  CHECK(table.size() == 3);
  CHECK(table.Get(0) == "forward");
  CHECK(table.Get(1) == "backward");
  CHECK(table.Get(2) == "step");
}

TEST_CASE("name table: Intern dedupes by content, not by pointer") {
  NameTable table;
  std::string first = "conv2d";
  const uint32_t id = table.Intern(first);
  const std::string second = "conv2d";
  CHECK(table.Intern(second) == id);
  CHECK(table.Intern(std::string_view("conv2d_grad").substr(0, 6)) == id);
  // The table keeps its own copy: changing the caller's string changes nothing.
  first[0] = 'X';
  CHECK(table.Get(id) == "conv2d");
  CHECK(table.Intern("conv2d") == id);
  CHECK(table.Intern(first) == 1);
  CHECK(table.size() == 2);
}

TEST_CASE("name table: the empty name is a name like any other") {
  NameTable table;
  CHECK(table.Intern("a") == 0);
  CHECK(table.Intern("") == 1);
  CHECK(table.Intern(std::string_view()) == 1);
  CHECK(table.Get(1).empty());
  CHECK(table.size() == 2);
}

TEST_CASE("name table: names are exact bytes, embedded NUL and invalid UTF-8 included") {
  NameTable table;
  const std::string with_nul("ab\0cd", 5);
  const std::string prefix("ab", 2);
  const std::string invalid = "\xff\xfe\x80 bad \xC0\xAF";
  const std::string trailing_nul("ab\0", 3);
  const uint32_t nul_id = table.Intern(with_nul);
  const uint32_t prefix_id = table.Intern(prefix);
  const uint32_t invalid_id = table.Intern(invalid);
  const uint32_t trailing_id = table.Intern(trailing_nul);
  CHECK(nul_id != prefix_id);
  CHECK(trailing_id != prefix_id);
  CHECK(trailing_id != nul_id);
  CHECK(table.size() == 4);
  CHECK(table.Get(nul_id).size() == 5);
  CHECK(table.Get(nul_id) == with_nul);
  CHECK(table.Get(prefix_id) == prefix);
  CHECK(table.Get(invalid_id) == invalid);
  CHECK(table.Get(trailing_id) == trailing_nul);
  CHECK(table.Intern(std::string("ab\0cd", 5)) == nul_id);
  CHECK(table.Intern(std::string("ab\0", 3)) == trailing_id);
}

TEST_CASE("name table: 100k names keep earlier views valid and ids stable") {
  NameTable table;
  const uint32_t count = 100000;
  std::vector<std::string_view> views;
  views.reserve(count);
  for (uint32_t n = 0; n < count; ++n) {
    const uint32_t id = table.Intern("name_" + std::to_string(n));
    if (id != n) {
      CAPTURE(n);
      REQUIRE(id == n);
    }
    views.push_back(table.Get(id));
  }
  CHECK(table.size() == count);
  // Views taken while the table was small still point at the right bytes.
  uint32_t mismatches = 0;
  for (uint32_t n = 0; n < count; ++n) {
    const std::string expected = "name_" + std::to_string(n);
    if (views[n] != expected) ++mismatches;
    if (views[n].data() != table.Get(n).data()) ++mismatches;  // never moved
    if (table.Intern(expected) != n) ++mismatches;
  }
  CHECK(mismatches == 0);
  CHECK(table.size() == count);
  CHECK(views[0] == "name_0");
  CHECK(views[99999] == "name_99999");
}
