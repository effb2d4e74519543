// Building TensorFlow step statistics and the files that hold them, for the reader and converter
// tests.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

#include "runtime/formats/tensorflow/tfrecord.h"
#include "tfprof/tensorflow/run_metadata.pb.h"

namespace tfprof_test {

// Adds an op to `device`: `label` is its timeline_label ("name = Type(inputs)" on host devices).
inline tensorflow::NodeExecStats *AddOp(tensorflow::DeviceStepStats *device, const std::string &name,
                                        const std::string &label, int64_t start_micros,
                                        int64_t duration_micros, uint32_t thread_id = 0) {
  tensorflow::NodeExecStats *op = device->add_node_stats();
  op->set_node_name(name);
  op->set_timeline_label(label);
  op->set_all_start_micros(start_micros);
  op->set_op_end_rel_micros(duration_micros);
  op->set_all_end_rel_micros(duration_micros);
  op->set_thread_id(thread_id);
  return op;
}

// An output tensor of `op` allocated by `allocator`.
inline void AddOutput(tensorflow::NodeExecStats *op, const std::string &allocator, int64_t bytes) {
  tensorflow::NodeOutput *output = op->add_output();
  output->set_slot(op->output_size() - 1);
  tensorflow::TensorDescription *tensor = output->mutable_tensor_description();
  tensor->set_dtype(tensorflow::DT_FLOAT);
  tensor->mutable_shape()->add_dim()->set_size(bytes / 4);
  tensor->mutable_allocation_description()->set_requested_bytes(bytes);
  tensor->mutable_allocation_description()->set_allocator_name(allocator);
}

// A host device with a small graph: a -> b -> c on two threads, starting at `base` µs.
inline tensorflow::RunMetadata SmallRun(int64_t base, const std::string &device_name =
                                                          "/job:localhost/replica:0/task:0/device:CPU:0") {
  tensorflow::RunMetadata run;
  tensorflow::DeviceStepStats *device = run.mutable_step_stats()->add_dev_stats();
  device->set_device(device_name);
  (*device->mutable_thread_names())[11] = "worker_a";
  (*device->mutable_thread_names())[12] = "worker_b";
  AddOutput(AddOp(device, "a", "a = Const()", base, 10, 11), "cpu", 16);
  AddOutput(AddOp(device, "b", "b = Square(a)", base + 20, 10, 12), "cpu", 16);
  AddOp(device, "c", "c = Add(a, b)", base + 40, 10, 11);
  return run;
}

inline void WriteFile(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline std::string Framed(const std::string &payload) {
  std::string framed;
  tfprof::AppendTfRecord(payload, &framed);
  return framed;
}

inline std::string EventRecord(const tensorflow::Event &event) {
  return Framed(event.SerializeAsString());
}

inline std::string FileVersionRecord() {
  tensorflow::Event event;
  event.set_wall_time(1.0);
  event.set_file_version("brain.Event:2");
  return EventRecord(event);
}

inline std::string TaggedRecord(const tensorflow::RunMetadata &run, const std::string &tag,
                                int64_t step) {
  tensorflow::Event event;
  event.set_wall_time(2.0);
  event.set_step(step);
  event.mutable_tagged_run_metadata()->set_tag(tag);
  event.mutable_tagged_run_metadata()->set_run_metadata(run.SerializeAsString());
  return EventRecord(event);
}

}  // namespace tfprof_test
