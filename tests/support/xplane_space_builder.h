// Building XSpaces (TensorFlow's and JAX's profiles) with the generated tensorflow::profiler
// classes (the proto subset that is wire-compatible with TensorFlow's), for the XPlane reader's
// tests.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

#include "support/test_files.h"
#include "tfprof/tensorflow/xplane.pb.h"

namespace tfprof_test {

namespace xp = tensorflow::profiler;

// Builds one plane: metadata ids handed out by name, as TensorFlow's XPlaneBuilder does.
class PlaneBuilder {
 public:
  PlaneBuilder(xp::XSpace &space, const std::string &name, int64_t id = 0)
      : plane_(*space.add_planes()) {
    plane_.set_id(id);
    plane_.set_name(name);
  }

  xp::XLine &Line(int64_t id, const std::string &name, int64_t timestamp_ns) {
    xp::XLine &line = *plane_.add_lines();
    line.set_id(id);
    line.set_name(name);
    line.set_timestamp_ns(timestamp_ns);
    return line;
  }

  xp::XEvent &Event(xp::XLine &line, const std::string &name, int64_t offset_ns,
                    int64_t duration_ns) {
    xp::XEvent &event = *line.add_events();
    event.set_metadata_id(EventId(name));
    event.set_offset_ps(offset_ns * 1000);
    event.set_duration_ps(duration_ns * 1000);
    return event;
  }

  int64_t EventId(const std::string &name) {
    return MetadataId(plane_.mutable_event_metadata(), name);
  }
  int64_t StatId(const std::string &name) { return MetadataId(plane_.mutable_stat_metadata(), name); }

  void Int(google::protobuf::RepeatedPtrField<xp::XStat> *stats, const std::string &name,
           int64_t value) {
    xp::XStat &stat = *stats->Add();
    stat.set_metadata_id(StatId(name));
    stat.set_int64_value(value);
  }
  void Uint(google::protobuf::RepeatedPtrField<xp::XStat> *stats, const std::string &name,
            uint64_t value) {
    xp::XStat &stat = *stats->Add();
    stat.set_metadata_id(StatId(name));
    stat.set_uint64_value(value);
  }
  // A text stat as current TensorFlow writes most of them: a reference to a stat metadata name.
  void Ref(google::protobuf::RepeatedPtrField<xp::XStat> *stats, const std::string &name,
           const std::string &value) {
    const int64_t ref = StatId(value);
    xp::XStat &stat = *stats->Add();
    stat.set_metadata_id(StatId(name));
    stat.set_ref_value(static_cast<uint64_t>(ref));
  }
  void Str(google::protobuf::RepeatedPtrField<xp::XStat> *stats, const std::string &name,
           const std::string &value) {
    xp::XStat &stat = *stats->Add();
    stat.set_metadata_id(StatId(name));
    stat.set_str_value(value);
  }

  xp::XPlane &plane() { return plane_; }

 private:
  // The id of the event or stat metadata called `name` in `entries`, added when new.
  template <typename Entries>
  static int64_t MetadataId(Entries *entries, const std::string &name) {
    for (const auto &[id, metadata] : *entries) {
      if (metadata.name() == name) return id;
    }
    const auto id = static_cast<int64_t>(entries->size()) + 1;
    auto &metadata = (*entries)[id];
    metadata.set_id(id);
    metadata.set_name(name);
    return id;
  }

  xp::XPlane &plane_;
};

// Writes `space` to `dir`/`name`; returns the path.
inline std::string WriteXSpace(const TempDir &dir, const std::string &name,
                               const xp::XSpace &space) {
  const std::string path = dir.File(name);
  std::ofstream(path, std::ios::binary) << space.SerializeAsString();
  return path;
}

}  // namespace tfprof_test
