// A command that writes an output (convert, merge, report) and is ended by SIGINT, SIGTERM or
// SIGHUP leaves nothing it created: hidden staging files and the log directories made for the
// output are removed, then the signal ends the command as it would have.
#pragma once

namespace tfprof::cli {

// Installs the handlers; call once the output is about to be created.
void RemoveOutputsOnSignals();

}  // namespace tfprof::cli
