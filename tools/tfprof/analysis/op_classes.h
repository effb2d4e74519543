// Which host ops wait for input, synchronise with the GPU or launch work on it, and which kernels
// communicate, decided once per distinct name (a trace has millions of events but few names).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/model/trace.h"

namespace tfprof::cli {

enum OpClass : uint8_t {
  kOpInput = 1,   // the input pipeline: tf.data's IteratorGetNext, a DataLoader's __next__, ...
  kOpSync = 2,    // blocks the host until the GPU catches up: cudaStreamSynchronize, .item(), ...
  kOpLaunch = 4,  // hands work to the GPU: cudaLaunchKernel, cudaGraphLaunch, ...
  // A kernel of a collective (NCCL, RCCL): the name holds "nccl" or "rccl" in any case. HTA's
  // rule (^nccl.*Kernel) is narrower and misses RCCL's "rccl..." kernels; every NCCL kernel it
  // takes, this takes. Only for kernels: PyTorch's host op "nccl:all_reduce" just queues one.
  kOpCollectiveKernel = 8,
  // An asynchronous copy call (cudaMemcpyAsync, ...): blocking when it returns only after its
  // copy ended (pageable memory), which the summary then counts as synchronisation.
  kOpAsyncCopyCall = 16,
  // A host collective that blocks its thread while it communicates: Gloo's "gloo:all_reduce".
  kOpHostCollective = 32,
  // An input op a step waits on from any thread: tf.data's IteratorGetNextOp::DoCompute (and
  // ...AsOptionalOp::DoCompute), the kernel a TensorFlow step's function runs on an executor
  // thread to take its batch while the step's own thread waits in the function call. It returns
  // at once when a batch is ready, so its time is the step waiting. Only with kOpInput.
  kOpStepInput = 64,
};

// Glob match (fnmatch without flags).
bool MatchesAny(std::string_view name, const std::vector<std::string> &patterns);

// OpClass bits for every name of `names`, indexed by name id.
std::vector<uint8_t> ClassifyNames(const NameInterner &names,
                                   const std::vector<std::string> &input_patterns);

}  // namespace tfprof::cli
