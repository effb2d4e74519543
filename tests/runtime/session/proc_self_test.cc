// What /proc says about this process (runtime/session/proc_self.h): the command line the trace
// header records and the thread names rows are called by.
#include <doctest/doctest.h>

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/session/proc_self.h"
#include "support/test_files.h"

namespace tfprof {

TEST_CASE("proc self: the command line starts with this test program") {
  const std::vector<std::string> arguments = ReadCommandLine();
  REQUIRE_FALSE(arguments.empty());
  CHECK(arguments[0].find("tfprof_unit_tests") != std::string::npos);
}

TEST_CASE("proc self: a thread's name as the system has it") {
  std::string seen;
  std::thread worker([&] {
    pthread_setname_np(pthread_self(), "tfprof-reader");
    seen = ThreadOsName(static_cast<int64_t>(syscall(SYS_gettid)));
  });
  worker.join();
  CHECK(seen == "tfprof-reader");
  CHECK(ThreadOsName(-1).empty());  // no such thread: no name, no error
}

TEST_CASE("proc self: the first line without its line end; empty when unreadable") {
  tfprof_test::TempDir dir;
  std::ofstream(dir.File("comm")) << "python3\r\nsecond line\n";
  CHECK(ReadFirstLine(dir.File("comm")) == "python3");
  CHECK(ReadFirstLine(dir.File("missing")).empty());
}

}  // namespace tfprof
