// How many threads a reader may use when the caller does not say.
#pragma once

namespace tfprof {

// TFPROF_READ_THREADS when set (1 reads on the caller's thread only), else the machine's cores,
// at most 8. Readers are the same with any number: threads only parse or inflate ahead.
unsigned DefaultReadThreads();

}  // namespace tfprof
