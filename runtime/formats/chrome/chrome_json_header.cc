#include "runtime/formats/chrome/chrome_json_header.h"

#include <algorithm>
#include <utility>

#include "runtime/model/trace_info_fields.h"

namespace tfprof {

namespace {

using Key = std::string_view;

// A loss counter of `place` named `key`: read into the header, stating the losses.
Scan ReadLoss(JsonScanner &json, Key key, LossPlace place, const char *&p, const char *end,
              ChromeJsonHeader *header, bool *found) {
  for (const LossField &field : kLossFields) {
    if (field.chrome_place != place || field.key != key) continue;
    *found = true;
    RecordingInfo &recording = header->recording;
    return json.ReadUnsigned(p, end, &(recording.losses.*field.member), &recording.losses_stated);
  }
  *found = false;
  return Scan::kOk;
}

// A number, or a string holding one, into `*out` (when it is one).
Scan ReadInteger(JsonScanner &json, const char *&p, const char *end, std::optional<int64_t> *out) {
  int64_t value = 0;
  bool present = false;
  TFPROF_SCAN(json.ReadInteger(p, end, &value, &present));
  *out = present ? std::optional<int64_t>(value) : std::nullopt;
  return Scan::kOk;
}

// {"rank": N, ...}; the rank may be written as a number or a numeric string.
Scan DistributedInfo(JsonScanner &json, const char *&p, const char *end, ChromeJsonHeader *header) {
  if (*p != '{') return json.SkipValue(p, end, 0);
  return json.ForEachMember(p, end, 1, [&](Key key, const char *&q, const char *e) {
    if (key != info_key::kRank) return json.SkipValue(q, e, 2);
    int64_t rank = 0;
    if (*q == '"') {
      std::string_view text;
      std::string scratch;
      TFPROF_SCAN(json.String(q, e, &text, &scratch));
      if (DecimalToScaledInt(text, 0, &rank)) header->recording.rank = rank;
      return Scan::kOk;
    }
    bool present = false;
    TFPROF_SCAN(json.ReadInteger(q, e, &rank, &present));
    if (present) header->recording.rank = rank;
    return Scan::kOk;
  });
}

// Kineto's "deviceProperties": [{"id", "name", "totalGlobalMem", ...}]; items that are not
// objects are passed over.
Scan DeviceList(JsonScanner &json, const char *&p, const char *end, ChromeJsonHeader *header) {
  if (*p != '[') return json.SkipValue(p, end, 0);
  std::vector<DeviceProperties> devices;
  const auto device_item = [&](const char *&q, const char *e) {
    if (*q != '{') return json.SkipValue(q, e, 1);
    DeviceProperties device;
    TFPROF_SCAN(json.ForEachMember(q, e, 2, [&](Key key, const char *&r, const char *f) {
      bool present = false;
      if (key == kDeviceId) return json.ReadInteger(r, f, &device.id, &present);
      if (key == kDeviceName) return json.ReadOwnedText(r, f, &device.name);
      if (key == kDeviceGlobalMemory) {
        return json.ReadUnsigned(r, f, &device.global_memory_bytes, &present);
      }
      for (const DeviceIntegerField &field : kDeviceIntegerFields) {
        if (key == field.key) return json.ReadInteger(r, f, &(device.*field.member), &present);
      }
      return json.SkipValue(r, f, 3);
    }));
    devices.push_back(std::move(device));
    return Scan::kOk;
  };
  TFPROF_SCAN(json.ForEachItem(p, end, 1, device_item));
  header->recording.devices = std::move(devices);
  return Scan::kOk;
}

// tfprof's "gpu" object: the tracing state and the GPU tracer's losses.
Scan GpuHeader(JsonScanner &json, const char *&p, const char *end, ChromeJsonHeader *header) {
  if (*p != '{') return json.SkipValue(p, end, 1);
  header->recording.gpu.reported = true;
  return json.ForEachMember(p, end, 2, [&](Key key, const char *&q, const char *e) {
    for (const GpuStatusText &field : kGpuStatusTexts) {
      if (key == field.key) {
        return json.ReadOwnedText(q, e, &(header->recording.gpu.*field.member));
      }
    }
    for (const GpuLossField &field : kGpuLossFields) {
      // "records_dropped" repeats the top-level "gpu_records_dropped".
      if (key != field.key || field.repeats_top_level) continue;
      bool present = false;
      return json.ReadUnsigned(q, e, &(header->recording.losses.*field.member), &present);
    }
    return json.SkipValue(q, e, 3);
  });
}

// ["a", "b", ...] into `*out`, replacing what it held (an item that is no string: "").
Scan StringArray(JsonScanner &json, const char *&p, const char *end, std::vector<std::string> *out) {
  if (*p != '[') return json.SkipValue(p, end, 1);
  std::vector<std::string> items;
  const auto text_item = [&](const char *&q, const char *e) {
    std::string item;
    TFPROF_SCAN(json.ReadOwnedText(q, e, &item));
    items.push_back(std::move(item));
    return Scan::kOk;
  };
  TFPROF_SCAN(json.ForEachItem(p, end, 2, text_item));
  *out = std::move(items);
  return Scan::kOk;
}

// The "tfprof" object.
Scan TfprofHeader(JsonScanner &json, const char *&p, const char *end, ChromeJsonHeader *header) {
  if (*p != '{') return json.SkipValue(p, end, 0);
  return json.ForEachMember(p, end, 1, [&](Key key, const char *&q, const char *e) {
    bool found = false;
    TFPROF_SCAN(ReadLoss(json, key, LossPlace::kTfprof, q, e, header, &found));
    if (found) return Scan::kOk;
    if (key == info_key::kPid) return ReadInteger(json, q, e, &header->recording.pid);
    if (key == info_key::kStartUnixNs) {
      return ReadInteger(json, q, e, &header->recording.start_unix_ns);
    }
    if (key == info_key::kStartMonotonicNs) {
      return ReadInteger(json, q, e, &header->recording.start_monotonic_ns);
    }
    if (key == info_key::kEndMonotonicNs) {
      return ReadInteger(json, q, e, &header->recording.end_monotonic_ns);
    }
    if (key == info_key::kEventsRecorded) {
      uint64_t events = 0;
      bool present = false;
      TFPROF_SCAN(json.ReadUnsigned(q, e, &events, &present));
      header->recording.events_recorded = present ? std::optional<uint64_t>(events) : std::nullopt;
      return Scan::kOk;
    }
    if (key == info_key::kUnreportedInputs) {
      bool present = false;
      return json.ReadUnsigned(q, e, &header->unreported_inputs, &present);
    }
    if (key == info_key::kHostname) return json.ReadOwnedText(q, e, &header->recording.hostname);
    if (key == info_key::kClock) return json.ReadOwnedText(q, e, &header->recording.clock);
    if (key == info_key::kCommandLine) {
      return StringArray(json, q, e, &header->recording.command_line);
    }
    if (key == info_key::kDistributedInfo) return DistributedInfo(json, q, e, header);
    if (key == info_key::kGpu) return GpuHeader(json, q, e, header);
    if (key == kFlowsAsReadKey) {
      header->flows_as_read = e - q >= 4 && std::string_view(q, 4) == "true";
      return json.SkipValue(q, e, 1);
    }
    return json.SkipValue(q, e, 1);
  });
}

}  // namespace

Scan ReadChromeHeaderMember(JsonScanner &json, std::string_view key, const char *&p,
                            const char *end, ChromeJsonHeader *header) {
  if (key == info_key::kTfprof) {
    header->tfprof_seen = true;
    return TfprofHeader(json, p, end, header);
  }
  bool found = false;
  TFPROF_SCAN(ReadLoss(json, key, LossPlace::kTopLevel, p, end, header, &found));
  if (found) return Scan::kOk;
  if (key == info_key::kDistributedInfo) {
    header->pytorch_seen = true;
    return DistributedInfo(json, p, end, header);
  }
  if (key == info_key::kBaseTimeNs) {
    header->pytorch_seen = true;
    return ReadInteger(json, p, end, &header->base_time_ns);
  }
  if (key == info_key::kDeviceProperties) {
    if (!header->tfprof_seen) header->pytorch_seen = true;
    return DeviceList(json, p, end, header);
  }
  if (key == info_key::kSchemaVersion || key == info_key::kTraceName) header->pytorch_seen = true;
  return json.SkipValue(p, end, 0);
}

void ApplyChromeHeader(const ChromeJsonHeader &header, Trace *trace) {
  ApplyRecordingInfo(header.recording, trace);
  if (header.recording.losses_stated) {
    trace->losses.unreported_inputs =
        static_cast<uint32_t>(std::min<uint64_t>(header.unreported_inputs, UINT32_MAX));
  }
}

}  // namespace tfprof
