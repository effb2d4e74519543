// A soak of GPU tracing: tiny kernels launched at a steady high rate for minutes, one tfprof step
// per second, the trace streamed to a .tfrecord (one record per step). Every kernel adds one to a
// counter on the device, so how many ran is known without the trace. The GPU kit's soak stage
// compares the kernels in the trace, plus the records CUPTI reported dropped, with that count.
//
// Usage: gpu_soak SECONDS TRACE_PATH RESULT_PATH [KERNELS_PER_SECOND]   (default 50000/s)
//   TRACE_PATH   where the session streams its steps (.tfrecord)
//   RESULT_PATH  a JSON object: launched, executed (the device's count), steps, the achieved rate,
//                peak resident memory and prof_get_stats()'s counts
//   TFPROF_OPTIONS more prof_start() options (appended to "cuda=on,output=TRACE_PATH")
// Exits 77 when there is no CUDA device, so test runners report a skip.
#include <cuda_runtime.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <tfprof/tfprof.h>

namespace {

constexpr int kSkipExitCode = 77;
constexpr long kBurst = 256;  // launches between clock reads

void Check(cudaError_t status, const char *what) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "gpu_soak: %s: %s\n", what, cudaGetErrorString(status));
  std::exit(1);
}

}  // namespace

extern "C" __global__ void soak_tick(unsigned long long *executed) {
  if (threadIdx.x == 0) atomicAdd(executed, 1ULL);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s SECONDS TRACE_PATH RESULT_PATH [KERNELS_PER_SECOND]\n", argv[0]);
    return 2;
  }
  const long seconds = std::atol(argv[1]);
  const char *trace_path = argv[2];
  const char *result_path = argv[3];
  const long rate = argc > 4 ? std::atol(argv[4]) : 50000;
  if (seconds <= 0 || rate <= 0) {
    std::fprintf(stderr, "gpu_soak: SECONDS and KERNELS_PER_SECOND must be positive\n");
    return 2;
  }

  int devices = 0;
  const cudaError_t probe = cudaGetDeviceCount(&devices);
  if (probe != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device: %s\n",
                probe != cudaSuccess ? cudaGetErrorString(probe) : "cudaGetDeviceCount returned 0");
    return kSkipExitCode;
  }
  Check(cudaSetDevice(0), "cudaSetDevice");
  cudaStream_t stream;
  Check(cudaStreamCreate(&stream), "cudaStreamCreate");
  unsigned long long *executed_on_device;
  Check(cudaMalloc(&executed_on_device, sizeof(unsigned long long)), "cudaMalloc");
  Check(cudaMemset(executed_on_device, 0, sizeof(unsigned long long)), "cudaMemset");
  soak_tick<<<1, 32, 0, stream>>>(executed_on_device);  // module load and launch path, untraced
  Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  Check(cudaMemset(executed_on_device, 0, sizeof(unsigned long long)), "cudaMemset");
  Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

  std::string options = std::string("cuda=on,output=") + trace_path;
  if (const char *extra = std::getenv("TFPROF_OPTIONS"); extra != nullptr && *extra != '\0') {
    options += ",";
    options += extra;
  }
  if (prof_start(options.c_str()) != 0) {
    std::fprintf(stderr, "gpu_soak: prof_start(\"%s\"): %s\n", options.c_str(), prof_last_error());
    return 1;
  }
  prof_set_thread_name("soak");

  using Clock = std::chrono::steady_clock;
  const auto begin = Clock::now();
  long launched = 0;
  for (long step = 0; step < seconds; ++step) {
    const auto step_end = begin + std::chrono::seconds(step + 1);
    const long step_target = rate * (step + 1);
    prof_begin_step(step);
    prof_span_begin("soak/launch");
    // Up to this second's share of launches, then wait for the second to end: a steady rate, or
    // as fast as the host and GPU go when the rate is out of reach.
    while (launched < step_target && Clock::now() < step_end) {
      const long burst = std::min(kBurst, step_target - launched);
      for (long i = 0; i < burst; ++i) soak_tick<<<1, 32, 0, stream>>>(executed_on_device);
      Check(cudaGetLastError(), "soak_tick");
      launched += burst;
    }
    // The step's kernels run inside it, so the trace's per-step counts add up to the launches.
    Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    prof_span_end();
    prof_end_step();
    std::this_thread::sleep_until(step_end);
  }
  Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  const double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
  const int stopped = prof_stop();  // the last steps' records, then the file is complete
  if (stopped != 0) {
    std::fprintf(stderr, "gpu_soak: prof_stop: %s\n", prof_last_error());
    return 1;
  }
  prof_stats_t stats{};
  stats.struct_size = sizeof(stats);
  if (prof_get_stats(&stats) != 0) {
    std::fprintf(stderr, "gpu_soak: prof_get_stats: %s\n", prof_last_error());
    return 1;
  }
  unsigned long long executed = 0;
  Check(cudaMemcpy(&executed, executed_on_device, sizeof(executed), cudaMemcpyDeviceToHost),
        "cudaMemcpy");
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);

  FILE *result = std::fopen(result_path, "w");
  if (result == nullptr) {
    std::perror(result_path);
    return 1;
  }
  std::fprintf(result,
               "{\"seconds\": %.3f, \"steps\": %ld, \"target_rate\": %ld, \"launched\": %ld, "
               "\"executed\": %llu, \"achieved_rate\": %.1f, \"peak_rss_mib\": %.1f, "
               "\"gpu_state\": %d, \"gpu_records\": %llu, \"gpu_records_dropped\": %llu, "
               "\"gpu_buffers_refused\": %llu, \"events_recorded\": %llu, \"events_dropped\": %llu}\n",
               elapsed, seconds, rate, launched, executed, static_cast<double>(launched) / elapsed,
               static_cast<double>(usage.ru_maxrss) / 1024.0, stats.gpu_state,
               static_cast<unsigned long long>(stats.gpu_records),
               static_cast<unsigned long long>(stats.gpu_records_dropped),
               static_cast<unsigned long long>(stats.gpu_buffers_refused),
               static_cast<unsigned long long>(stats.events_recorded),
               static_cast<unsigned long long>(stats.events_dropped));
  if (std::fclose(result) != 0) {
    std::perror(result_path);
    return 1;
  }
  std::printf("gpu_soak: %ld kernels launched in %.1f s (%.0f/s), %llu ran; trace %s\n", launched,
              elapsed, static_cast<double>(launched) / elapsed, executed, trace_path);
  Check(cudaFree(executed_on_device), "cudaFree");
  Check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return 0;
}
