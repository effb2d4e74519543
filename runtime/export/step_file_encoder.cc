#include "runtime/export/step_file_encoder.h"

#include "runtime/formats/tf_names.h"
#include "runtime/formats/tfrecord.h"
#include "tfprof/tensorflow/run_metadata.pb.h"

namespace tfprof {

namespace {

// The version string TensorBoard expects first in every event file.
constexpr char kEventFileVersion[] = "brain.Event:2";

double WallSeconds(const ExportContext &context, int64_t monotonic_ns) {
  return static_cast<double>(context.start_wall_ns + (monotonic_ns - context.start_monotonic_ns)) /
         1e9;
}

}  // namespace

std::string StepFileEncoder::Header(const ExportContext &context) const {
  std::string out;
  if (kind_ != Format::kTensorBoard) return out;
  tensorflow::Event event;
  event.set_wall_time(static_cast<double>(context.start_wall_ns) / 1e9);
  event.set_file_version(kEventFileVersion);
  AppendTfRecord(event.SerializeAsString(), &out);
  return out;
}

std::string StepFileEncoder::GraphRecordIfGrew(const SessionLog &model, double wall_time) {
  std::string out;
  if (!encoder_.TakeGraphGrew()) return out;
  tensorflow::Event event;
  event.set_wall_time(wall_time);
  event.set_graph_def(encoder_.GraphDefBytes(model));
  AppendTfRecord(event.SerializeAsString(), &out);
  return out;
}

std::string StepFileEncoder::Records(const std::vector<StepRecord> &records,
                                     const SessionLog &model, const ExportContext &context) {
  return Encode(records, model, context, nullptr);
}

std::string StepFileEncoder::FinalRecords(std::vector<StepRecord> records, const SessionLog &model,
                                          const ExportContext &context,
                                          const GpuLossCounters &gpu_losses) {
  if (records.empty() || records.back().has_step) {
    StepRecord rest;
    rest.has_step = false;
    records.push_back(std::move(rest));
  }
  return Encode(records, model, context, &gpu_losses);
}

std::string StepFileEncoder::Encode(const std::vector<StepRecord> &records,
                                    const SessionLog &model, const ExportContext &context,
                                    const GpuLossCounters *losses) {
  std::string out;
  std::string events;
  for (const StepRecord &record : records) {
    encoder_.Add(record, model, context);
    if (losses != nullptr && &record == &records.back()) encoder_.AddLosses(model, context, *losses);
    std::string run_metadata = encoder_.TakeRunMetadata(model);
    if (kind_ == Format::kTfRecord) {
      AppendTfRecord(run_metadata, &out);
      continue;
    }
    const int64_t end_ns = record.has_step ? record.step.end_ns
                           : record.ops.empty() ? context.end_ns
                                                : record.ops.back().end_ns;
    tensorflow::Event event;
    event.set_wall_time(WallSeconds(context, end_ns));
    if (record.has_step) event.set_step(record.step.step);
    tensorflow::TaggedRunMetadata *tagged = event.mutable_tagged_run_metadata();
    tagged->set_tag(record.has_step ? StepTag(record.step.step) : kOutsideStepsTag);
    tagged->set_run_metadata(std::move(run_metadata));
    AppendTfRecord(event.SerializeAsString(), &events);
  }
  if (kind_ == Format::kTensorBoard && !records.empty()) {
    // One GraphDef ahead of the batch when it brought new ops: TensorBoard keeps the newest
    // graph of a run, and warns for each extra one.
    out = GraphRecordIfGrew(model, WallSeconds(context, context.end_ns));
    out += events;
  }
  return out;
}

std::string StepFileEncoder::Trailer(const SessionLog &model, const ExportContext &context) {
  if (kind_ != Format::kTensorBoard) return {};
  return GraphRecordIfGrew(model, WallSeconds(context, context.end_ns));
}

}  // namespace tfprof
