#include "tools/tfprof/analysis/summary_json.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "runtime/common/json_text.h"

namespace tfprof::cli {
namespace {

// A JSON object written key by key.
class Object {
 public:
  explicit Object(std::string *out) : out_(out) { *out_ += '{'; }
  Object &Raw(const char *key, const std::string &json) {
    Key(key);
    *out_ += json;
    return *this;
  }
  Object &Int(const char *key, int64_t value) { return Raw(key, absl::StrCat(value)); }
  Object &Uint(const char *key, uint64_t value) { return Raw(key, absl::StrCat(value)); }
  Object &Number(const char *key, double value) {
    char text[40];
    std::snprintf(text, sizeof text, "%.6g", value);
    return Raw(key, text);
  }
  Object &String(const char *key, const std::string &value) { return Raw(key, QuotedJson(value)); }
  Object &Bool(const char *key, bool value) { return Raw(key, value ? "true" : "false"); }
  template <typename T>
  Object &Optional(const char *key, const std::optional<T> &value) {
    return value ? Int(key, *value) : Raw(key, "null");
  }
  void Close() { *out_ += '}'; }

 private:
  void Key(const char *key) {
    if (!first_) *out_ += ',';
    first_ = false;
    absl::StrAppend(out_, "\"", key, "\":");
  }
  std::string *out_;
  bool first_ = true;
};

template <typename T, typename F>
std::string Array(const std::vector<T> &items, F write) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    write(items[i], &out);
  }
  return out + "]";
}

std::string Strings(const std::vector<std::string> &items) {
  return Array(items, [](const std::string &s, std::string *out) { *out += QuotedJson(s); });
}

void WriteStep(const StepBreakdown &step, std::string *out) {
  Object(out)
      .Int("number", step.number)
      .String("process", step.process)
      .Optional("rank", step.rank)
      .Int("begin_ns", step.begin_ns)
      .Int("duration_ns", step.duration_ns)
      .Int("gpu_compute_ns", step.gpu_compute_ns)
      .Int("communication_ns", step.communication_ns)
      .Int("memcpy_ns", step.memcpy_ns)
      .Int("input_wait_ns", step.input_wait_ns)
      .Int("host_compute_ns", step.host_compute_ns)
      .Int("idle_ns", step.idle_ns)
      .Int("gpu_idle_ns", step.gpu_idle_ns)
      .Int("sync_ns", step.sync_ns)
      .Int("launch_ns", step.launch_ns)
      .Int("one_time_launch_ns", step.one_time_launch_ns)
      .Uint("kernels", step.kernels)
      .Uint("launches", step.launches)
      .Uint("one_time_launches", step.one_time_launches)
      .String("longest_input_op", step.longest_input_op)
      .Int("gpu_launched_ns", step.gpu_launched_ns)
      .String("top_gpu_op", step.top_gpu_op)
      .Close();
}

void WriteNamedTime(const std::pair<std::string, int64_t> &op, std::string *out) {
  Object(out).String("name", op.first).Int("self_ns", op.second).Close();
}

// "pytorch", "tensorflow", or "" when the framework is not known.
const char *FrameworkName(Producer framework) {
  switch (framework) {
    case Producer::kPytorch: return "pytorch";
    case Producer::kTensorFlow: return "tensorflow";
    default: return "";
  }
}

// null when the file does not say; else its state, reason and library.
std::string GpuTracingJson(const GpuTracingStatus &gpu) {
  if (!gpu.reported) return "null";
  std::string out;
  Object(&out)
      .String("state", gpu.state)
      .String("reason", gpu.reason)
      .String("library", gpu.library)
      .Close();
  return out;
}

// A row of GPU time by op or by layer.
void WriteOpGpuTime(const OpGpuTime &row, std::string *out) {
  Object(out)
      .String("name", row.name)
      .Uint("calls", row.calls)
      .Int("host_ns", row.host_ns)
      .Uint("launches", row.launches)
      .Uint("kernels", row.kernels)
      .Uint("copies", row.copies)
      .Int("copy_ns", row.copy_ns)
      .Int("gpu_self_ns", row.gpu_self_ns)
      .Int("gpu_total_ns", row.gpu_total_ns)
      .Number("share", row.share)
      .Raw("top_kernels", Array(row.top_kernels,
                                [](const OpGpuTime::Kernel &k, std::string *o) {
                                  Object(o)
                                      .String("name", k.name)
                                      .Uint("count", k.count)
                                      .Int("total_ns", k.total_ns)
                                      .Close();
                                }))
      .Close();
}

void WriteOp(const OpStat &op, std::string *out) {
  Object(out)
      .String("name", op.name)
      .String("kind", ActivityKindName(op.kind))
      .Uint("count", op.count)
      .Int("total_ns", op.total_ns)
      .Int("self_ns", op.self_ns)
      .Int("max_ns", op.max_ns)
      .Close();
}

// "cut": what a file that ends early kept and dropped (null for a file read to its end).
std::string CutJson(const TraceSummary &s) {
  if (!s.cut) return "null";
  const CutRecovery &cut = *s.cut;
  std::string out;
  Object(&out)
      .String("file", cut.file)
      .Uint("file_bytes", cut.file_bytes)
      .String("problem", cut.problem)
      .Uint("events_kept", cut.events_kept)
      .Optional("last_whole_step", cut.last_whole_step)
      .Uint("steps_dropped", cut.steps_dropped)
      .Optional("first_dropped_step", cut.first_dropped_step)
      .Optional("last_dropped_step", cut.last_dropped_step)
      .Uint("events_dropped", cut.events_dropped)
      .String("warning", s.cut_warning)
      .Close();
  return out;
}

// "memory": per device and source, the peak, each step's peak, the top-level ops holding the
// most at the peak and the bytes in use over time in buckets (memory_usage.h).
std::string MemoryJson(const TraceSummary &s) {
  std::string out;
  Object(&out)
      .Raw("devices",
           Array(s.memory,
                 [](const DeviceMemory &d, std::string *o) {
                   Object(o)
                       .Uint("process", d.process)
                       .String("process_name", d.process_name)
                       .Int("device", d.device)
                       .String("label", d.label)
                       .String("source", d.source)
                       .Bool("relative", d.relative)
                       .Uint("events", d.events)
                       .Int("peak_bytes", d.peak_bytes)
                       .Int("peak_ns", d.peak_ns)
                       .Optional("peak_step", d.peak_step)
                       .Raw("steps", Array(d.steps,
                                           [](const MemoryStepPeak &st, std::string *a) {
                                             Object(a)
                                                 .Int("number", st.number)
                                                 .Int("peak_bytes", st.peak_bytes)
                                                 .Close();
                                           }))
                       .String("top_ops_basis", PeakOpsBasisName(d.top_ops_basis))
                       .Raw("top_ops_at_peak", Array(d.top_ops_at_peak,
                                                     [](const MemoryOpBytes &op, std::string *a) {
                                                       Object(a)
                                                           .String("name", op.name)
                                                           .Int("bytes", op.bytes)
                                                           .Close();
                                                     }))
                       .Raw("timeline", Array(d.timeline,
                                              [](const MemoryPoint &p, std::string *a) {
                                                Object(a)
                                                    .Int("ns", p.ns)
                                                    .Int("bytes", p.bytes)
                                                    .Close();
                                              }))
                       .Close();
                 }))
      .Close();
  return out;
}

void WriteTrace(const TraceSummary &s, std::string *out) {
  Object trace(out);
  trace.String("path", s.path)
      .String("format", s.format)
      .Raw("damage", s.damage.empty() ? "null" : QuotedJson(s.damage))
      .Raw("cut", CutJson(s))
      .Optional("wall_offset_ns", s.wall_offset_ns)
      .Optional("pid", s.pid)
      .Optional("rank", s.rank)
      .String("hostname", s.hostname)
      .Uint("events", s.events)
      .Uint("activities", s.activities)
      .Int("begin_ns", s.begin_ns)
      .Int("end_ns", s.end_ns)
      .Bool("has_gpu", s.has_gpu)
      .Bool("has_steps", s.has_steps)
      .Int("before_first_step_ns", s.before_first_step_ns)
      .Int("after_last_step_ns", s.after_last_step_ns)
      .String("step_thread", s.step_thread)
      .Raw("outside_steps", Array(s.outside_steps,
                                  [](const OutsideSteps &part, std::string *o) {
                                    std::string breakdown;
                                    WriteStep(part.breakdown, &breakdown);
                                    Object(o)
                                        .String("where", part.where)
                                        .Uint("stretches", part.stretches)
                                        .Raw("breakdown", breakdown)
                                        .Raw("top_ops", Array(part.top_ops, WriteNamedTime))
                                        .Close();
                                  }))
      .String("framework", FrameworkName(s.framework))
      .Raw("gpu_tracing", GpuTracingJson(s.gpu_tracing))
      .Uint("launch_calls", s.launch_calls)
      .Uint("launches_without_gpu_work", s.launches_without_gpu_work)
      .Uint("gpu_annotations", s.gpu_annotations)
      .Raw("one_time_launches", Array(s.one_time_launches,
                                      [](const OneTimeLaunch &l, std::string *o) {
                                        Object(o)
                                            .String("call", l.call)
                                            .String("kernel", l.kernel)
                                            .Int("begin_ns", l.begin_ns)
                                            .Int("duration_ns", l.duration_ns)
                                            .Close();
                                      }))
      .Uint("memory_events", s.memory_events)
      .Uint("counter_samples", s.counter_samples)
      .Raw("unknown_categories",
           Array(s.unknown_categories,
                 [](const std::pair<std::string, uint64_t> &c, std::string *o) {
                   Object(o).String("category", c.first).Uint("events", c.second).Close();
                 }))
      .Raw("steps", Array(s.steps, WriteStep));
  std::string total;
  WriteStep(s.step_total, &total);
  trace.Raw("step_total", total)
      .Raw("top_ops_by_self", Array(s.top_ops_by_self, WriteOp))
      .Raw("top_ops_by_total", Array(s.top_ops_by_total, WriteOp))
      .Raw("top_kernels", Array(s.top_kernels,
                                [](const KernelStat &k, std::string *o) {
                                  Object(o)
                                      .String("name", k.name)
                                      .Uint("count", k.count)
                                      .Int("total_ns", k.total_ns)
                                      .Int("min_ns", k.min_ns)
                                      .Int("max_ns", k.max_ns)
                                      .Number("share", k.share)
                                      .Bool("communication", k.communication)
                                      .String("op", k.op)
                                      .Close();
                                }))
      .Raw("gpu_time_by_op", Array(s.gpu_time_by_op, WriteOpGpuTime))
      .Raw("gpu_time_by_layer", Array(s.gpu_time_by_layer, WriteOpGpuTime))
      .Int("gpu_work_ns", s.gpu_work_ns)
      .Uint("kernel_count", s.kernel_count)
      .Int("kernel_total_ns", s.kernel_total_ns)
      .Int("kernel_median_ns", s.kernel_median_ns)
      .Uint("communication_kernel_count", s.communication_kernel_count)
      .Int("communication_kernel_ns", s.communication_kernel_ns)
      .Raw("devices", Array(s.devices,
                            [](const DeviceUtilization &d, std::string *o) {
                              Object(o)
                                  .String("process", d.process)
                                  .Int("device", d.device)
                                  .Int("busy_ns", d.busy_ns)
                                  .Int("kernel_ns", d.kernel_ns)
                                  .Int("communication_ns", d.communication_ns)
                                  .Int("window_ns", d.window_ns)
                                  .Number("utilization", d.utilization)
                                  .Int("timeline_begin_ns", d.timeline_begin_ns)
                                  .Int("bucket_ns", d.bucket_ns)
                                  .Raw("timeline", Array(d.timeline,
                                                         [](double v, std::string *a) {
                                                           char text[16];
                                                           std::snprintf(text, sizeof text, "%.4g", v);
                                                           *a += text;
                                                         }))
                                  .Close();
                            }))
      .Raw("streams", Array(s.streams,
                            [](const StreamUtilization &st, std::string *o) {
                              Object(o)
                                  .String("process", st.process)
                                  .Int("device", st.device)
                                  .Int("stream", st.stream)
                                  .Uint("kernels", st.kernels)
                                  .Uint("copies", st.copies)
                                  .Int("busy_ns", st.busy_ns)
                                  .Number("utilization", st.utilization)
                                  .Close();
                            }))
      .Raw("idle_gaps", Array(s.idle_gaps,
                              [](const IdleGap &g, std::string *o) {
                                Object(o)
                                    .String("process", g.process)
                                    .Int("device", g.device)
                                    .Int("begin_ns", g.begin_ns)
                                    .Int("duration_ns", g.duration_ns)
                                    .Optional("step", g.step)
                                    .String("host_activity", g.host_activity)
                                    .Close();
                              }))
      .Uint("idle_gap_count", s.idle_gap_count)
      .Int("idle_gap_median_ns", s.idle_gap_median_ns)
      .Raw("copies", Array(s.copies,
                           [](const CopyStat &c, std::string *o) {
                             Object(o)
                                 .String("kind", c.label)
                                 .Uint("count", c.count)
                                 .Uint("bytes", c.bytes)
                                 .Int("total_ns", c.total_ns)
                                 .Number("gigabytes_per_second", c.gigabytes_per_second)
                                 .Close();
                           }))
      .Raw("memory", MemoryJson(s))
      .Raw("counters", Array(s.counters, [](const CounterSeries &c, std::string *o) {
        Object(o)
            .String("name", c.name)
            .String("series", c.series)
            .String("process_name", c.process)
            .Uint("process", c.process_index)
            .Uint("samples", c.samples)
            .Number("min", c.min)
            .Number("max", c.max)
            .Number("last", c.last)
            .Int("first_ns", c.first_ns)
            .Int("last_ns", c.last_ns)
            .Raw("timeline", Array(c.timeline, [](const CounterPoint &p, std::string *a) {
              Object(a).Int("ns", p.ns).Number("value", p.value).Number("min", p.min).Close();
            }))
            .Close();
      }));
  // A Perfetto trace's TraceStats (null for other formats).
  const TraceLosses::PerfettoStats &pf = s.losses.perfetto;
  std::string perfetto = "null";
  if (pf.reported) {
    perfetto.clear();
    Object(&perfetto)
        .Uint("chunks_overwritten", pf.chunks_overwritten)
        .Uint("chunks_discarded", pf.chunks_discarded)
        .Uint("trace_writer_packet_loss", pf.trace_writer_packet_loss)
        .Uint("abi_violations", pf.abi_violations)
        .Uint("patches_failed", pf.patches_failed)
        .Uint("invalid_packets", pf.invalid_packets)
        .Uint("flushes_failed", pf.flushes_failed)
        .Uint("service_chunks_discarded", pf.service_chunks_discarded)
        .Uint("service_patches_discarded", pf.service_patches_discarded)
        .Bool("final_flush_failed", pf.final_flush_failed)
        .Raw("slow_flush_sources", Array(pf.slow_flush_sources,
                                         [](const std::string &name, std::string *o) {
                                           *o += QuotedJson(name);
                                         }))
        .Close();
  }
  std::string losses;
  Object(&losses)
      .Bool("reported", s.losses.reported)
      .Uint("dropped_events", s.losses.dropped_events)
      .Uint("gpu_records_dropped", s.losses.gpu_records_dropped)
      .Uint("unmatched_span_ends", s.losses.unmatched_span_ends)
      .Uint("unmatched_step_ends", s.losses.unmatched_step_ends)
      .Uint("memory_dropped_events", s.losses.memory_dropped_events)
      .Uint("discarded_events", s.losses.discarded_events)
      .Uint("unreported_inputs", s.losses.unreported_inputs)
      .Raw("perfetto", perfetto)
      .Close();
  trace.Raw("losses", losses)
      .Raw("findings", Array(s.findings,
                             [](const Finding &f, std::string *o) {
                               Object(o)
                                   .String("kind", f.kind)
                                   .String("title", f.title)
                                   .String("evidence", f.evidence)
                                   .Raw("recommendations", Strings(f.recommendations))
                                   .Raw("steps", Array(f.steps,
                                                       [](int64_t n, std::string *a) {
                                                         absl::StrAppend(a, n);
                                                       }))
                                   .Close();
                             }))
      .Close();
}

}  // namespace

std::string SummariesToJson(const std::vector<TraceSummary> &summaries,
                            const std::vector<UnreadTrace> &unread) {
  return absl::StrCat("{\"tfprof_summary_version\":1,\"traces\":", Array(summaries, WriteTrace),
                      ",\"errors\":", Array(unread, [](const UnreadTrace &entry, std::string *out) {
                        Object(out).String("path", entry.path).String("error", entry.error).Close();
                      }),
                      "}\n");
}

}  // namespace tfprof::cli
