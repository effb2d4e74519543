#include "runtime/gpu/cupti/cupti_library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tfprof {

namespace {

constexpr const char *kLibraryNames[] = {"libcupti.so.13", "libcupti.so"};
// The pip wheel nvidia-cuda-cupti-cu12 installs nvidia/cuda_cupti/lib; the CUDA 13 wheels put
// every library under nvidia/cu13/lib.
constexpr const char *kPipSubdirs[] = {"nvidia/cu13/lib", "nvidia/cuda_cupti/lib"};

bool IsDirectory(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

std::string EnvOrEmpty(const char *name) {
  const char *value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

void AddLibrariesIn(const std::string &directory, std::vector<std::string> &out) {
  for (const char *name : kLibraryNames) out.push_back(absl::StrCat(directory, "/", name));
}

void AddToolkitRoot(const std::string &root, std::vector<std::string> &out) {
  if (root.empty()) return;
  for (const char *sub : {"lib64", "lib", "extras/CUPTI/lib64", "targets/x86_64-linux/lib",
                          "targets/sbsa-linux/lib"}) {
    AddLibrariesIn(absl::StrCat(root, "/", sub), out);
  }
}

// site-packages directories under a Python prefix (a venv or a conda environment).
void AddPipPackagesUnder(const std::string &prefix, std::vector<std::string> &out) {
  if (prefix.empty()) return;
  const std::string lib = prefix + "/lib";
  // python3.X: try the versions a CUDA 13 wheel exists for rather than listing the directory.
  for (int minor = 9; minor <= 14; ++minor) {
    const std::string site = absl::StrCat(lib, "/python3.", minor, "/site-packages");
    if (!IsDirectory(site)) continue;
    for (const char *sub : kPipSubdirs) AddLibrariesIn(absl::StrCat(site, "/", sub), out);
  }
}

template <typename Function>
bool Resolve(void *handle, const char *symbol, Function *&function, std::string *missing) {
  function = reinterpret_cast<Function *>(dlsym(handle, symbol));
  if (function == nullptr && missing->empty()) *missing = symbol;
  return function != nullptr;
}

// Resolves every entry point; returns the first missing symbol, or "" when all were found.
std::string ResolveCupti(CuptiApi &api) {
  std::string missing;
  void *h = api.handle;
  Resolve(h, "cuptiGetVersion", api.GetVersion, &missing);
  Resolve(h, "cuptiGetResultString", api.GetResultString, &missing);
  Resolve(h, "cuptiActivityEnable", api.ActivityEnable, &missing);
  Resolve(h, "cuptiActivityDisable", api.ActivityDisable, &missing);
  Resolve(h, "cuptiActivityRegisterCallbacks", api.ActivityRegisterCallbacks, &missing);
  Resolve(h, "cuptiActivityRegisterTimestampCallback", api.ActivityRegisterTimestampCallback,
          &missing);
  Resolve(h, "cuptiActivityGetNextRecord", api.ActivityGetNextRecord, &missing);
  Resolve(h, "cuptiActivityGetNumDroppedRecords", api.ActivityGetNumDroppedRecords, &missing);
  Resolve(h, "cuptiActivityFlushAll", api.ActivityFlushAll, &missing);
  Resolve(h, "cuptiActivityPushExternalCorrelationId", api.ActivityPushExternalCorrelationId,
          &missing);
  Resolve(h, "cuptiActivityPopExternalCorrelationId", api.ActivityPopExternalCorrelationId,
          &missing);
  Resolve(h, "cuptiSetThreadIdType", api.SetThreadIdType, &missing);
  Resolve(h, "cuptiGetCallbackName", api.GetCallbackName, &missing);
  Resolve(h, "cuptiSubscribe", api.Subscribe, &missing);
  Resolve(h, "cuptiUnsubscribe", api.Unsubscribe, &missing);
  std::string optional;  // absent from older CUPTIs: every API call is recorded there
  Resolve(h, "cuptiActivityEnableRuntimeApi", api.ActivityEnableRuntimeApi, &optional);
  Resolve(h, "cuptiActivityEnableDriverApi", api.ActivityEnableDriverApi, &optional);
  return missing;
}

}  // namespace

std::string CuptiApi::ErrorName(CUptiResult result) const {
  const char *text = nullptr;
  if (GetResultString == nullptr || GetResultString(result, &text) != CUPTI_SUCCESS ||
      text == nullptr) {
    text = "CUPTI error";
  }
  return absl::StrCat(text, " (", static_cast<int>(result), ")");
}

std::string CudaDriverApi::ErrorName(CUresult result) const {
  const char *text = nullptr;
  if (GetErrorName == nullptr || GetErrorName(result, &text) != CUDA_SUCCESS || text == nullptr) {
    text = "CUDA error";
  }
  return absl::StrCat(text, " (", static_cast<int>(result), ")");
}

std::vector<std::string> CuptiCandidates(const std::string &explicit_path,
                                         const std::vector<std::string> &extra_dirs) {
  std::vector<std::string> out;
  // A path the user named is the only candidate: loading another libcupti instead would hide
  // their mistake.
  const std::string given = explicit_path.empty() ? EnvOrEmpty("TFPROF_CUPTI_PATH") : explicit_path;
  if (!given.empty()) {
    if (IsDirectory(given)) {
      AddLibrariesIn(given, out);
    } else {
      out.push_back(given);
    }
    return out;
  }
  AddToolkitRoot(EnvOrEmpty("CUDA_HOME"), out);
  AddToolkitRoot(EnvOrEmpty("CUDA_PATH"), out);
  AddToolkitRoot("/usr/local/cuda", out);
  for (const char *version : {"13.3", "13.2", "13.1", "13.0"}) {
    AddToolkitRoot(absl::StrCat("/usr/local/cuda-", version), out);
  }
  // Bare names: the loader's own search (LD_LIBRARY_PATH, RUNPATH, ld.so.cache).
  for (const char *name : kLibraryNames) out.push_back(name);
  for (const std::string &directory : extra_dirs) {
    for (const char *sub : kPipSubdirs) AddLibrariesIn(absl::StrCat(directory, "/", sub), out);
  }
  AddPipPackagesUnder(EnvOrEmpty("VIRTUAL_ENV"), out);
  AddPipPackagesUnder(EnvOrEmpty("CONDA_PREFIX"), out);
  return out;
}

absl::StatusOr<const CuptiApi *> LoadCupti(const std::string &explicit_path,
                                           const std::vector<std::string> &extra_dirs) {
  // Loaded once per process and kept: unloading CUPTI while the driver holds its callbacks crashes.
  static std::mutex mutex;
  static CuptiApi *loaded = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  const std::vector<std::string> candidates = CuptiCandidates(explicit_path, extra_dirs);
  if (loaded != nullptr) {
    const bool named = !explicit_path.empty() || !EnvOrEmpty("TFPROF_CUPTI_PATH").empty();
    if (!named) return loaded;
    // A path the user named must be the library in use, and there can be only one per process.
    char *in_use = realpath(loaded->path.c_str(), nullptr);
    bool same = false;
    for (const std::string &candidate : candidates) {
      char *wanted = realpath(candidate.c_str(), nullptr);
      same = same || (wanted != nullptr && in_use != nullptr && std::strcmp(wanted, in_use) == 0);
      std::free(wanted);
    }
    std::free(in_use);
    if (same) return loaded;
    return absl::NotFoundError(absl::StrCat(
        "libcupti at ", absl::StrJoin(candidates, ", "), " cannot be used: ",
        loaded->path, " is already loaded in this process and CUPTI cannot be unloaded; "
        "set TFPROF_CUPTI_PATH (or the cupti_path option) before the first session"));
  }

  std::vector<std::string> tried;
  std::string last_error = "no candidate";
  std::vector<std::string> search = candidates;
  if (explicit_path.empty() && EnvOrEmpty("TFPROF_CUPTI_PATH").empty()) {
    // A libcupti the process already loaded (PyTorch's, say) comes first: two copies of CUPTI in
    // one process would fight over the driver's callbacks.
    for (const char *name : kLibraryNames) {
      if (void *handle = dlopen(name, RTLD_NOW | RTLD_NOLOAD)) {
        dlclose(handle);
        search.insert(search.begin(), name);
        break;
      }
    }
  }
  for (const std::string &candidate : search) {
    // A path with a '/' that does not exist is skipped quietly; dlopen would say the same.
    struct stat info;
    if (candidate.find('/') != std::string::npos && stat(candidate.c_str(), &info) != 0) {
      last_error = absl::StrCat(candidate, ": no such file");
      continue;
    }
    tried.push_back(candidate);
    void *handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char *error = dlerror();
      last_error = error == nullptr ? "dlopen failed" : error;
      continue;
    }
    auto api = std::make_unique<CuptiApi>();
    api->handle = handle;
    char resolved[4096];
    api->path = dlinfo(handle, RTLD_DI_ORIGIN, resolved) == 0
                    ? absl::StrCat(resolved, "/", candidate.substr(candidate.rfind('/') + 1))
                    : candidate;
    if (std::string missing = ResolveCupti(*api); !missing.empty()) {
      last_error = absl::StrCat(candidate, " lacks ", missing, " (a CUPTI older than CUDA 12?)");
      dlclose(handle);
      continue;
    }
    loaded = api.release();
    return loaded;
  }
  return absl::NotFoundError(absl::StrCat(
      "libcupti not found (tried ", tried.empty() ? "nothing that exists" : absl::StrJoin(tried, ", "),
      "; last error: ", last_error,
      "); install the CUDA toolkit or the nvidia-cuda-cupti pip package, or set "
      "TFPROF_CUPTI_PATH (or the cupti_path option) to libcupti.so"));
}

absl::StatusOr<const CudaDriverApi *> LoadCudaDriver() {
  static std::mutex mutex;
  static CudaDriverApi *loaded = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded != nullptr) return loaded;
  void *handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char *error = dlerror();
    return absl::NotFoundError(absl::StrCat(
        "no CUDA driver (", error == nullptr ? "libcuda.so.1 not loadable" : error,
        "); GPU tracing needs the NVIDIA driver"));
  }
  auto api = std::make_unique<CudaDriverApi>();
  std::string missing;
  Resolve(handle, "cuDriverGetVersion", api->DriverGetVersion, &missing);
  Resolve(handle, "cuDeviceGetCount", api->DeviceGetCount, &missing);
  Resolve(handle, "cuDeviceGet", api->DeviceGet, &missing);
  Resolve(handle, "cuDeviceGetName", api->DeviceGetName, &missing);
  Resolve(handle, "cuDeviceTotalMem_v2", api->DeviceTotalMem, &missing);
  Resolve(handle, "cuDeviceGetAttribute", api->DeviceGetAttribute, &missing);
  Resolve(handle, "cuGetErrorName", api->GetErrorName, &missing);
  if (!missing.empty()) {
    dlclose(handle);
    return absl::NotFoundError(
        absl::StrCat("the CUDA driver's libcuda.so.1 lacks ", missing, " (driver too old)"));
  }
  loaded = api.release();
  return loaded;
}

}  // namespace tfprof
