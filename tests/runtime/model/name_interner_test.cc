// NameInterner: the trace model's names, each held once, indexed in place.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <utility>

#include "runtime/model/trace.h"

using tfprof::NameInterner;

TEST_CASE("name interner: a name seen again gets its index, long or short, after many more") {
  NameInterner names;
  const std::string long_name(1 << 16, 'n');
  CHECK(names.Intern("op") == 0);
  CHECK(names.Intern(long_name) == 1);
  for (int index = 0; index < 10'000; ++index) names.Intern("name " + std::to_string(index));
  CHECK(names.Intern("op") == 0);  // short strings live inside their std::string: they must not move
  CHECK(names.Intern(long_name) == 1);
  CHECK(names.Get(1) == long_name);
  CHECK(names.size() == 10'002);
}

TEST_CASE("name interner: a copy indexes its own strings, and outlives the original") {
  auto original = std::make_unique<NameInterner>();
  original->Intern("forward");
  original->Intern("backward");
  NameInterner copy(*original);
  NameInterner assigned;
  assigned.Intern("other");
  assigned = *original;
  original.reset();
  for (NameInterner *names : {&copy, &assigned}) {
    CHECK(names->Intern("backward") == 1);
    CHECK(names->Intern("forward") == 0);
    CHECK(names->Intern("step") == 2);
    CHECK(names->Get(2) == "step");
  }
  NameInterner moved(std::move(copy));
  CHECK(moved.Intern("backward") == 1);
}
