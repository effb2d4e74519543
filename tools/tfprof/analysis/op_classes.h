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
  // A kernel that communicates between GPUs: its name holds one of CommunicationKernelMarkers()
  // in any case (NCCL, RCCL, DeepEP, NVSHMEM, MSCCL, ...). HTA's rule (^nccl.*Kernel) is narrower
  // and misses RCCL's and DeepEP's kernels; every NCCL kernel it takes, this takes. Only for
  // kernels: PyTorch's host op "nccl:all_reduce" just queues one.
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

// The maintained list of what names a communication kernel, matched case-insensitively anywhere in
// a kernel's name: "nccl" (NCCL), "rccl" (RCCL), "deep_ep" (DeepEP's dispatch and combine),
// "nvshmem" (NVSHMEM), "msccl" (MSCCL, MSCCL++), "cross_device_reduce" (vLLM's custom
// all-reduce).
const std::vector<std::string_view> &CommunicationKernelMarkers();

// Whether a kernel's name holds one of CommunicationKernelMarkers() (kOpCollectiveKernel's rule).
bool NamesCollectiveKernel(std::string_view name);

// TensorFlow op types that take the next batch from the input pipeline: tf.data's iterator ops,
// the TF1 queues and readers, and the infeed.
const std::vector<std::string_view> &TensorFlowInputOpTypes();

// The op type of a TensorFlow op's name: "scope/name:OpType" (tfprof's and TensorFlow's
// timeline names) gives "OpType"; with `bare_types`, a plain "OpType" (TensorFlow's own Chrome
// timelines name events by type) gives itself. Empty when the name is no TensorFlow op's: C++
// names ("a::b"), names with spaces, a suffix that is not a type name.
std::string_view TensorFlowOpType(std::string_view name, bool bare_types);

// The framework a trace's program ran on: `producer` when it is PyTorch's or TensorFlow's, else
// the one its op names tell (PyTorch: "aten::" ops, "ProfilerStep#" steps, DataLoader; TensorFlow:
// tf.data's iterators, "__inference_" functions, Keras' train/test/predict_function), whichever
// names more ops; kOther when none does (a C program, a plain Python loop).
Producer FrameworkOfTrace(const NameInterner &names, Producer producer);

// Glob match (fnmatch without flags).
bool MatchesAny(std::string_view name, const std::vector<std::string> &patterns);

// OpClass bits for every name of `names`, indexed by name id. A TensorFlow op's name is an input
// op by its type only (TensorFlowInputOpTypes(): "Conv2DBackpropInput" and ".../input/0:Pack"
// are not input), unless `custom_input_patterns` (the user's --input-ops) say otherwise; other
// names by `input_patterns`. `producer`: whose trace it is (kTensorFlow: plain names are op types).
std::vector<uint8_t> ClassifyNames(const NameInterner &names,
                                   const std::vector<std::string> &input_patterns,
                                   bool custom_input_patterns = false,
                                   Producer producer = Producer::kOther);

}  // namespace tfprof::cli
