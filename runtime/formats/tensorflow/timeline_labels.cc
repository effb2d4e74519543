#include "runtime/formats/tensorflow/timeline_labels.h"

namespace tfprof {

bool IsGpuTraceDevice(std::string_view device) {
  return device.find("/stream:") != std::string_view::npos ||
         device.find("/memcpy") != std::string_view::npos;
}

ParsedOpLabel ParseHostOpLabel(std::string_view label) {
  ParsedOpLabel parsed;
  // '.' matches anything but '\n', so the whole match lies on the first line.
  const std::string_view line = label.substr(0, label.find('\n'));
  // Group 3 ends at the last ')' of the line; group 2 at the last '(' before it; group 1 at the
  // last " = " that still leaves such a '(' after it. Greedy backtracking picks exactly these.
  const size_t close = line.rfind(')');
  if (close == std::string_view::npos) return parsed;
  const size_t open = line.rfind('(', close);
  if (open == std::string_view::npos) return parsed;
  if (open < 3) return parsed;
  const size_t equals = line.rfind(" = ", open - 3);
  if (equals == std::string_view::npos) return parsed;
  parsed.name = line.substr(0, equals);
  parsed.type = line.substr(equals + 3, open - equals - 3);
  parsed.inputs = line.substr(open + 1, close - open - 1);
  return parsed;
}

KernelOpName ParseKernelLabel(std::string_view label, std::string_view node_name) {
  const size_t start = label.find("@@");
  const size_t end = label.find('#');
  if (start != std::string_view::npos && end != std::string_view::npos && start + 2 < end) {
    node_name = label.substr(start + 2, end - start - 2);
  }
  const size_t colon = node_name.find(':');
  if (colon == std::string_view::npos) return {node_name, "unknown"};
  const std::string_view rest = node_name.substr(colon + 1);
  return {node_name.substr(0, colon), rest.substr(0, rest.find(':'))};
}

}  // namespace tfprof
