#include "tools/tfprof/signal_cleanup.h"

#include <csignal>

#include "runtime/common/staged_file.h"
#include "runtime/formats/format.h"

namespace tfprof::cli {

namespace {

// Async-signal-safe: unlink and rmdir only, then the default action.
void RemoveOutputsAndDie(int signal_number) {
  RemoveStagedFilesNow();
  RemoveCreatedLogDirectoriesNow();  // emptied by the line above
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

}  // namespace

void RemoveOutputsOnSignals() {
  for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    std::signal(signal_number, RemoveOutputsAndDie);
  }
}

}  // namespace tfprof::cli
