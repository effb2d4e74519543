// GPU launch overhead of tfprof alone, without Python: a loop of empty kernel launches timed
// untraced and under prof_start("cuda=on") in the same process, alternating; the best of each is
// reported with the kernels the trace captured. The Python benchmark (bench_gpu_launch.py) compares
// with torch.profiler.
//
// Usage: bench_gpu_launch [LAUNCHES [ROUNDS [TRACE_PATH]]]   (defaults 50000, 5, a file in /tmp)
// Prints a SKIP line and exits 0 when there is no CUDA device.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <tfprof/tfprof.h>

__global__ void empty_kernel() {}

namespace {

void Check(cudaError_t status, const char *what) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "bench_gpu_launch: %s: %s\n", what, cudaGetErrorString(status));
  std::exit(1);
}

double TimedLoopSeconds(long launches, cudaStream_t stream) {
  Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  const auto begin = std::chrono::steady_clock::now();
  for (long i = 0; i < launches; ++i) empty_kernel<<<1, 1, 0, stream>>>();
  Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

// Kernel events in a Chrome trace as tfprof writes it (no spaces inside events).
long CountKernels(const std::string &path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  const std::string json = text.str();
  const std::string needle = "\"cat\":\"kernel\"";
  long count = 0;
  for (size_t at = json.find(needle); at != std::string::npos; at = json.find(needle, at + 1)) ++count;
  return count;
}

}  // namespace

int main(int argc, char **argv) {
  const long launches = argc > 1 ? std::atol(argv[1]) : 50000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::string trace_path = argc > 3 ? argv[3] : "/tmp/bench_gpu_launch.json";

  int devices = 0;
  const cudaError_t probe = cudaGetDeviceCount(&devices);
  if (probe != cudaSuccess || devices == 0) {
    std::printf("SKIP: bench_gpu_launch needs a CUDA device: %s\n",
                probe != cudaSuccess ? cudaGetErrorString(probe) : "cudaGetDeviceCount returned 0");
    return 0;
  }
  cudaStream_t stream;
  Check(cudaStreamCreate(&stream), "cudaStreamCreate");
  TimedLoopSeconds(2000, stream);  // warm up: context, module, launch path

  const std::string options = "cuda=on,output=" + trace_path;
  double untraced = 1e30, traced = 1e30;
  long kernels = 0;
  for (int round = 0; round < rounds; ++round) {
    untraced = std::min(untraced, TimedLoopSeconds(launches, stream));
    if (prof_start(options.c_str()) != 0) {
      std::fprintf(stderr, "bench_gpu_launch: prof_start: %s\n", prof_last_error());
      return 1;
    }
    traced = std::min(traced, TimedLoopSeconds(launches, stream));
    if (prof_stop() != 0) {
      std::fprintf(stderr, "bench_gpu_launch: prof_stop: %s\n", prof_last_error());
      return 1;
    }
    kernels = CountKernels(trace_path);
    if (kernels != launches) {
      std::fprintf(stderr, "bench_gpu_launch: round %d captured %ld kernels of %ld\n", round,
                   kernels, launches);
      return 1;
    }
  }
  const double per_launch = 1e6 / static_cast<double>(launches);
  std::printf("tfprof GPU launch overhead (C++): %ld empty-kernel launches, best of %d rounds\n",
              launches, rounds);
  std::printf("  untraced        %8.3f us/launch\n", untraced * per_launch);
  std::printf("  tfprof cuda=on  %8.3f us/launch  (adds %.3f us/launch; %ld kernels captured)\n",
              traced * per_launch, (traced - untraced) * per_launch, kernels);
  Check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return 0;
}
