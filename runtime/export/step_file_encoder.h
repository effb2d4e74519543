// The bytes of per-step files: a TFRecord file of RunMetadata records (.tfrecord), or a
// TensorBoard event file (file_version, GraphDef, then one tagged_run_metadata per step).
#pragma once

#include <string>
#include <vector>

#include "runtime/export/export_context.h"
#include "runtime/export/run_metadata_encoder.h"
#include "runtime/formats/format.h"
#include "runtime/export/step_partitioner.h"
#include "runtime/session_log.h"

namespace tfprof {

// The tag of the record holding the spans that fit in no step.
inline constexpr char kOutsideStepsTag[] = "outside_steps";

class StepFileEncoder {
 public:
  explicit StepFileEncoder(Format kind) : kind_(kind) {}

  // What the file starts with (an event file's file_version record; nothing for TFRecord).
  std::string Header(const ExportContext &context) const;
  // One framed record per step record; in an event file, preceded by the GraphDef when ops
  // appeared that the last GraphDef written did not have.
  std::string Records(const std::vector<StepRecord> &records, const SessionLog &model,
                      const ExportContext &context);
  // The file's last records: `records` (TakeAll()'s) ending with the record of what fits in no
  // step (tagged outside_steps in event files), written even when nothing else is outside steps
  // because it carries the session's losses node (kLossesNodeName).
  std::string FinalRecords(std::vector<StepRecord> records, const SessionLog &model,
                           const ExportContext &context, const GpuLossCounters &gpu_losses);
  // What the file ends with: a last GraphDef when ops appeared since the last one.
  std::string Trailer(const SessionLog &model, const ExportContext &context);

 private:
  std::string GraphRecordIfGrew(const SessionLog &model, double wall_time);
  // `losses`: add the losses node to the last record.
  std::string Encode(const std::vector<StepRecord> &records, const SessionLog &model,
                     const ExportContext &context, const GpuLossCounters *losses);

  Format kind_;
  RunMetadataEncoder encoder_;
};

}  // namespace tfprof
