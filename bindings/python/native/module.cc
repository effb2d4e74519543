// tfprof._native: the Python extension. It calls only the public C ABI (include/tfprof/tfprof.h)
// of the libtfprof.so next to it. Control calls (start, stop, export, stats) are bound with
// pybind11 and release the GIL while the library works; per-event calls live in hot_path.cc.
#include <dlfcn.h>

#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "errors.h"
#include "hot_path.h"
#include "tfprof/tfprof.h"

namespace py = pybind11;

namespace tfprof_python {
namespace {

// Strings reach C as NUL-terminated: one with a NUL inside would be silently cut short.
void RejectNul(const std::string &text, const char *what) {
  if (text.find('\0') != std::string::npos) {
    throw py::value_error(std::string(what) + " contains a NUL character");
  }
}

// `options` and `path` are bytes (os.fsencode) or str.
int Start(const std::string &options) {
  RejectNul(options, "the option string");
  int code;
  {
    py::gil_scoped_release release;
    code = prof_start(options.c_str());
  }
  CheckCode(code);
  return prof_session_active;
}

void Stop(const std::string &output_path) {
  int code;
  {
    py::gil_scoped_release release;
    code = prof_stop();
  }
  CheckCode(code, output_path);
}

void Export(const std::string &path) {
  RejectNul(path, "the path");
  int code;
  {
    py::gil_scoped_release release;
    code = prof_export(path.c_str());
  }
  CheckCode(code, path);
}

py::dict Stats() {
  prof_stats_t stats{};
  stats.struct_size = sizeof(stats);
  int code;
  {
    py::gil_scoped_release release;
    code = prof_get_stats(&stats);
  }
  CheckCode(code);
  py::dict result;
  result["running"] = stats.running != 0;
  result["events_recorded"] = stats.events_recorded;
  result["events_dropped"] = stats.events_dropped;
  result["threads"] = stats.threads;
  result["unmatched_span_ends"] = stats.unmatched_span_ends;
  result["unmatched_step_ends"] = stats.unmatched_step_ends;
  result["names_interned"] = stats.names_interned;
  result["session_serial"] = stats.session_serial;
  static const char *const kGpuStates[] = {"off", "not built", "unavailable", "active"};
  result["gpu_state"] = stats.gpu_state >= 0 && stats.gpu_state <= PROF_GPU_ACTIVE
                            ? kGpuStates[stats.gpu_state]
                            : "unknown";
  result["gpu_records"] = stats.gpu_records;
  result["gpu_records_dropped"] = stats.gpu_records_dropped;
  result["gpu_buffers_refused"] = stats.gpu_buffers_refused;
  result["events_memory_dropped"] = stats.events_memory_dropped;
  result["events_discarded"] = stats.events_discarded;
  result["memory_bytes"] = stats.memory_bytes;
  result["spill_bytes"] = stats.spill_bytes;
  result["slow_step_dumps"] = stats.slow_step_dumps;
  return result;
}

// prof_listen(): the process waits, with no session, for `tfprof capture PID`. The GIL is
// released around both calls: unlisten() ends and writes a capture in progress first.
void Listen(const std::string &options) {
  RejectNul(options, "the option string");
  int code;
  {
    py::gil_scoped_release release;
    code = prof_listen(options.c_str());
  }
  CheckCode(code);
}

void Unlisten() {
  int code;
  {
    py::gil_scoped_release release;
    code = prof_unlisten();
  }
  CheckCode(code);
}

// prof_merge() over `inputs` (bytes or str paths), or with `merging` false prof_convert() of the
// one input. Returns "" on success. With `salvaging` (the option string holds salvage=on),
// damaged input is no exception: the output was written, and the message saying what was lost
// is returned for the caller to warn with; so is the warning for an input that ends early.
std::string Convert(const std::vector<std::string> &inputs, const std::string &output,
                    const std::string &options, bool merging, bool salvaging) {
  if (!merging && inputs.size() != 1) throw py::value_error("convert takes exactly one input");
  for (const std::string &input : inputs) RejectNul(input, "an input path");
  RejectNul(output, "the output path");
  RejectNul(options, "the option string");
  std::vector<const char *> paths;
  paths.reserve(inputs.size());
  for (const std::string &input : inputs) paths.push_back(input.c_str());
  int code;
  {
    py::gil_scoped_release release;
    code = merging ? prof_merge(paths.data(), paths.size(), output.c_str(), options.c_str())
                   : prof_convert(paths[0], output.c_str(), options.c_str());
  }
  // A success leaves a message only for an input that ends early (a writer killed mid-write),
  // recovered to its last whole step: the caller warns with it as with salvaged damage.
  if ((code == PROF_EDATA && salvaging) || (code == 0 && prof_last_error()[0] != '\0')) {
    std::string message = prof_last_error();
    const size_t colon = message.find(": ");
    if (message.rfind("prof_", 0) == 0 && colon != std::string::npos) message.erase(0, colon + 2);
    return message;
  }
  CheckCode(code);
  return std::string();
}

// The file this process loaded the C library from: the one to hand to ctypes or LD_PRELOAD so
// that they join this session rather than load a second copy.
std::string LibraryPath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void *>(&prof_start), &info) == 0 || info.dli_fname == nullptr) {
    throw std::runtime_error("tfprof: cannot locate the loaded libtfprof.so (dladdr failed)");
  }
  return info.dli_fname;
}

}  // namespace
}  // namespace tfprof_python

PYBIND11_MODULE(_native, module) {
  using namespace tfprof_python;
  module.doc() = "tfprof's native layer over the C ABI of libtfprof.so; use the tfprof package.";
  module.def("start", &Start, py::arg("options"),
             "Starts a session (prof_start) with a `key=value,...` option string; returns the "
             "session's serial (prof_session_active).");
  module.def("stop", &Stop, py::arg("output_path") = std::string(),
             "Stops the session (prof_stop); `output_path` names the file in an OSError if the "
             "automatic export fails.");
  module.def("export", &Export, py::arg("path"),
             "Writes what was collected to `path` (prof_export); the format follows the extension.");
  module.def("is_running", [] { return prof_is_running() != 0; },
             "True while a session runs (started from Python or any other caller).");
  module.def("session_serial", [] { return prof_session_active; },
             "The running session's serial (prof_session_active), 0 when none runs "
             "(0x7fffffff, no session's, while a tfprof capture waits for its first step).");
  module.def("listen", &Listen, py::arg("options"),
             "Waits for `tfprof capture PID` with no session (prof_listen); `options` are the "
             "captures' session options, `key=value,...`.");
  module.def("unlisten", &Unlisten,
             "Stops waiting for captures (prof_unlisten); a capture in progress is ended and "
             "written first.");
  module.def("is_listening", [] { return prof_is_listening() != 0; },
             "True while the process waits for captures (prof_is_listening).");
  module.def("stats", &Stats, "The current or last session's statistics (prof_get_stats).");
  module.def("version", [] { return std::string(prof_version_string()); },
             "The loaded library's version, MAJOR.MINOR.PATCH.");
  module.def("version_number", [] { return prof_version(); },
             "The loaded library's TFPROF_VERSION_NUMBER.");
  module.def("convert", &Convert, py::arg("inputs"), py::arg("output"), py::arg("options"),
             py::arg("merging"), py::arg("salvaging"),
             "Runs the convert engine: prof_merge over `inputs` when `merging`, else prof_convert "
             "of its one input; returns the damage message when salvaging, else \"\".");
  module.def("library_path", &LibraryPath, "Path of the libtfprof.so this process loaded.");
  module.attr("HEADER_VERSION") = TFPROF_VERSION_NUMBER;
  if (AddHotPathToModule(module.ptr()) < 0) throw py::error_already_set();
}
