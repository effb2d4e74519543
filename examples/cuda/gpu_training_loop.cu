// A small GPU "training loop" profiled with tfprof: host op spans around CUDA work on two streams,
// copies from and to pinned memory, a memset, a CUDA graph and a launch through the driver API.
// The trace shows each kernel on its stream's row, under the op and step that launched it.
//
// Usage: gpu_training_loop TRACE_PATH [MANIFEST_PATH [STEPS]]   (default 5 steps)
//   TRACE_PATH     where prof_stop() writes the trace (.json, .json.gz, .pb, ...)
//   MANIFEST_PATH  a JSON list of every launch (kind, kernel, stream, op, step, count), which the
//                  GPU tests compare with the trace
//   TFPROF_OPTIONS more prof_start() options (default "cuda=on")
// Exits 77 when there is no CUDA device, so test runners report a skip.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <tfprof/tfprof.h>

namespace {

constexpr int kElements = 1 << 20;
constexpr size_t kBytes = kElements * sizeof(float);
constexpr int kBlock = 256;
constexpr int kGrid = (kElements + kBlock - 1) / kBlock;
constexpr int kForwardLayers = 2;
constexpr int kSkipExitCode = 77;

void Check(cudaError_t status, const char *what) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "gpu_training_loop: %s: %s\n", what, cudaGetErrorString(status));
  std::exit(1);
}

void CheckDriver(CUresult status, const char *what) {
  if (status == CUDA_SUCCESS) return;
  const char *message = "unknown error";
  cuGetErrorString(status, &message);
  std::fprintf(stderr, "gpu_training_loop: %s: %s\n", what, message);
  std::exit(1);
}

}  // namespace

// extern "C": CUPTI reports these names unmangled, so the manifest and the trace name them alike.
extern "C" __global__ void scale(float *x, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}

extern "C" __global__ void relu(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = fmaxf(x[i], 0.0f);
}

extern "C" __global__ void axpy(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}

extern "C" __global__ void sgd_update(float *weights, const float *grads, float rate, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) weights[i] -= rate * grads[i];
}

namespace {

// What the program launched, for the GPU tests to find in the trace.
struct Launch {
  const char *kind;  // kernel, memcpy, memset, graph (a kernel node of a CUDA graph)
  const char *name;  // the kernel; the copy direction for memcpy; "memset"
  const char *api;   // the call that launched it
  unsigned long long stream;  // as CUPTI reports it: cudaStreamGetId()
  const char *op;    // the host span open at the launch
  long step;
  int count;         // launches of this kind, in this op and step
  size_t bytes;      // copies and memsets
};

std::vector<Launch> g_launches;

unsigned long long StreamId(cudaStream_t stream) {
  unsigned long long id = 0;
  Check(cudaStreamGetId(stream, &id), "cudaStreamGetId");
  return id;
}

// Every name written is a literal of this file, so no JSON escaping is needed.
void WriteManifest(const char *path, int device, long steps) {
  FILE *file = std::fopen(path, "w");
  if (file == nullptr) {
    std::perror(path);
    std::exit(1);
  }
  std::fprintf(file, "{\"device\": %d, \"steps\": %ld, \"launches\": [", device, steps);
  for (size_t i = 0; i < g_launches.size(); ++i) {
    const Launch &l = g_launches[i];
    std::fprintf(file,
                 "%s\n  {\"kind\": \"%s\", \"name\": \"%s\", \"api\": \"%s\", \"stream\": %llu, "
                 "\"op\": \"%s\", \"step\": %ld, \"count\": %d, \"bytes\": %zu}",
                 i == 0 ? "" : ",", l.kind, l.name, l.api, l.stream, l.op, l.step, l.count, l.bytes);
  }
  std::fprintf(file, "\n]}\n");
  if (std::fclose(file) != 0) {
    std::perror(path);
    std::exit(1);
  }
}

// prof_start() options: output=PATH (commas and backslashes escaped) plus TFPROF_OPTIONS.
std::string StartOptions(const char *trace_path) {
  std::string options = "output=";
  for (const char *c = trace_path; *c != '\0'; ++c) {
    if (*c == ',' || *c == '\\') options += '\\';
    options += *c;
  }
  const char *extra = std::getenv("TFPROF_OPTIONS");
  options += ",";
  options += extra != nullptr && *extra != '\0' ? extra : "cuda=on";
  return options;
}

// The backward pass as a CUDA graph: captured once from `stream`, launched every step.
cudaGraphExec_t CaptureBackward(cudaStream_t stream, float *grads, const float *activations) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  Check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  scale<<<kGrid, kBlock, 0, stream>>>(grads, 0.5f, kElements);
  relu<<<kGrid, kBlock, 0, stream>>>(grads, kElements);
  axpy<<<kGrid, kBlock, 0, stream>>>(grads, activations, 0.1f, kElements);
  Check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  Check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  Check(cudaGraphDestroy(graph), "cudaGraphDestroy");
  return exec;
}
const char *const kGraphKernels[] = {"scale", "relu", "axpy"};

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TRACE_PATH [MANIFEST_PATH [STEPS]]\n", argv[0]);
    return 2;
  }
  const char *manifest_path = argc > 2 ? argv[2] : nullptr;
  const long steps = argc > 3 ? std::atol(argv[3]) : 5;

  int devices = 0;
  const cudaError_t probe = cudaGetDeviceCount(&devices);
  if (probe != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device: %s\n",
                probe != cudaSuccess ? cudaGetErrorString(probe) : "cudaGetDeviceCount returned 0");
    return kSkipExitCode;
  }
  const int device = 0;
  Check(cudaSetDevice(device), "cudaSetDevice");

  // Two streams: copies and input preparation on one, the model on the other.
  cudaStream_t copy_stream, compute_stream;
  Check(cudaStreamCreate(&copy_stream), "cudaStreamCreate");
  Check(cudaStreamCreate(&compute_stream), "cudaStreamCreate");
  cudaEvent_t input_ready, output_ready;
  Check(cudaEventCreateWithFlags(&input_ready, cudaEventDisableTiming), "cudaEventCreate");
  Check(cudaEventCreateWithFlags(&output_ready, cudaEventDisableTiming), "cudaEventCreate");

  float *host_batch, *host_result;  // pinned, so copies are truly asynchronous
  Check(cudaMallocHost(&host_batch, kBytes), "cudaMallocHost");
  Check(cudaMallocHost(&host_result, kBytes), "cudaMallocHost");
  for (int i = 0; i < kElements; ++i) host_batch[i] = static_cast<float>(i % 7) - 3.0f;
  float *batch, *weights, *grads;
  Check(cudaMalloc(&batch, kBytes), "cudaMalloc");
  Check(cudaMalloc(&weights, kBytes), "cudaMalloc");
  Check(cudaMalloc(&grads, kBytes), "cudaMalloc");
  Check(cudaMemset(weights, 0, kBytes), "cudaMemset");

  const cudaGraphExec_t backward = CaptureBackward(compute_stream, grads, batch);
  // Uploaded now, so the traced launches are the graph's kernels and nothing else.
  Check(cudaGraphUpload(backward, compute_stream), "cudaGraphUpload");
  // The optimizer goes through the driver API (cuLaunchKernel), as frameworks' JIT kernels do.
  cudaFunction_t update_function;
  Check(cudaGetFuncBySymbol(&update_function, reinterpret_cast<const void *>(sgd_update)),
        "cudaGetFuncBySymbol");
  const unsigned long long copy_id = StreamId(copy_stream), compute_id = StreamId(compute_stream);

  const std::string options = StartOptions(argv[1]);
  // Under the preload library (LD_PRELOAD=libtfprof_preload.so) a session already runs: record
  // into it, and let the preload write its TFPROF_OUTPUT at exit.
  const int started = prof_start(options.c_str());
  if (started == PROF_EALREADY) {
    std::printf("gpu_training_loop: a session is already running (the preload library's)\n");
  } else if (started != 0) {
    std::fprintf(stderr, "gpu_training_loop: prof_start(\"%s\"): %s\n", options.c_str(),
                 prof_last_error());
    return 1;
  }
  prof_set_thread_name("trainer");
  for (long step = 0; step < steps; ++step) {
    prof_begin_step(step);

    prof_span_begin("input/copy:MemcpyHtoD");
    Check(cudaMemcpyAsync(batch, host_batch, kBytes, cudaMemcpyHostToDevice, copy_stream), "copy in");
    g_launches.push_back({"memcpy", "HtoD", "cudaMemcpyAsync", copy_id, "input/copy:MemcpyHtoD",
                          step, 1, kBytes});
    prof_span_end();

    prof_span_begin("input/normalize:Mul");
    scale<<<kGrid, kBlock, 0, copy_stream>>>(batch, 0.25f, kElements);
    Check(cudaGetLastError(), "scale");
    g_launches.push_back({"kernel", "scale", "cudaLaunchKernel", copy_id, "input/normalize:Mul",
                          step, 1, 0});
    prof_span_end();
    Check(cudaEventRecord(input_ready, copy_stream), "cudaEventRecord");
    Check(cudaStreamWaitEvent(compute_stream, input_ready, 0), "cudaStreamWaitEvent");

    prof_span_begin("forward/dense:AddV2");
    for (int layer = 0; layer < kForwardLayers; ++layer) {
      axpy<<<kGrid, kBlock, 0, compute_stream>>>(weights, batch, 0.01f, kElements);
      Check(cudaGetLastError(), "axpy");
    }
    g_launches.push_back({"kernel", "axpy", "cudaLaunchKernel", compute_id, "forward/dense:AddV2",
                          step, kForwardLayers, 0});
    prof_span_end();

    prof_span_begin("backward/zero_grads:Fill");
    Check(cudaMemsetAsync(grads, 0, kBytes, compute_stream), "cudaMemsetAsync");
    g_launches.push_back({"memset", "memset", "cudaMemsetAsync", compute_id,
                          "backward/zero_grads:Fill", step, 1, kBytes});
    prof_span_end();

    prof_span_begin("backward/gradients:GraphLaunch");
    Check(cudaGraphLaunch(backward, compute_stream), "cudaGraphLaunch");
    for (const char *kernel : kGraphKernels) {
      g_launches.push_back({"graph", kernel, "cudaGraphLaunch", compute_id,
                            "backward/gradients:GraphLaunch", step, 1, 0});
    }
    prof_span_end();

    prof_span_begin("optimizer/apply:ApplyGradientDescent");
    float rate = 0.001f;
    int n = kElements;
    void *args[] = {&weights, &grads, &rate, &n};
    CheckDriver(cuLaunchKernel(reinterpret_cast<CUfunction>(update_function), kGrid, 1, 1, kBlock,
                               1, 1, 0, compute_stream, args, nullptr),
                "cuLaunchKernel");
    g_launches.push_back({"kernel", "sgd_update", "cuLaunchKernel", compute_id,
                          "optimizer/apply:ApplyGradientDescent", step, 1, 0});
    prof_span_end();
    Check(cudaEventRecord(output_ready, compute_stream), "cudaEventRecord");
    Check(cudaStreamWaitEvent(copy_stream, output_ready, 0), "cudaStreamWaitEvent");

    prof_span_begin("output/copy:MemcpyDtoH");
    Check(cudaMemcpyAsync(host_result, weights, kBytes, cudaMemcpyDeviceToHost, copy_stream),
          "copy out");
    g_launches.push_back({"memcpy", "DtoH", "cudaMemcpyAsync", copy_id, "output/copy:MemcpyDtoH",
                          step, 1, kBytes});
    prof_span_end();
    Check(cudaStreamSynchronize(copy_stream), "cudaStreamSynchronize");

    prof_end_step();
  }
  Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const int stopped = started == PROF_EALREADY ? 0 : prof_stop();
  if (stopped != 0) {
    std::fprintf(stderr, "gpu_training_loop: prof_stop: %s\n", prof_last_error());
    return 1;
  }
  std::printf("gpu_training_loop: %ld steps, trace written to %s (weights[1] = %g)\n", steps,
              argv[1], static_cast<double>(host_result[1]));
  if (manifest_path != nullptr) WriteManifest(manifest_path, device, steps);

  Check(cudaGraphExecDestroy(backward), "cudaGraphExecDestroy");
  Check(cudaFree(grads), "cudaFree");
  Check(cudaFree(weights), "cudaFree");
  Check(cudaFree(batch), "cudaFree");
  Check(cudaFreeHost(host_result), "cudaFreeHost");
  Check(cudaFreeHost(host_batch), "cudaFreeHost");
  Check(cudaEventDestroy(output_ready), "cudaEventDestroy");
  Check(cudaEventDestroy(input_ready), "cudaEventDestroy");
  Check(cudaStreamDestroy(compute_stream), "cudaStreamDestroy");
  Check(cudaStreamDestroy(copy_stream), "cudaStreamDestroy");
  return 0;
}
