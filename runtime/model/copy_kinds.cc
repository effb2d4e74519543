#include "runtime/model/copy_kinds.h"

namespace tfprof {

CopyKind CopyKindFromName(std::string_view name) {
  struct Token {
    std::string_view text;
    CopyKind kind;
  };
  static constexpr Token kTokens[] = {
      {"HtoD", CopyKind::kHostToDevice},   {"DtoH", CopyKind::kDeviceToHost},
      {"DtoD", CopyKind::kDeviceToDevice}, {"PtoP", CopyKind::kDeviceToDevice},
      {"HtoA", CopyKind::kHostToDevice},   {"AtoH", CopyKind::kDeviceToHost},
      {"AtoD", CopyKind::kDeviceToDevice}, {"DtoA", CopyKind::kDeviceToDevice},
      {"AtoA", CopyKind::kDeviceToDevice}, {"HtoH", CopyKind::kOther},
      {"H2D", CopyKind::kHostToDevice},    {"D2H", CopyKind::kDeviceToHost},
      {"D2D", CopyKind::kDeviceToDevice},  {"P2P", CopyKind::kDeviceToDevice},
  };
  for (const Token &token : kTokens) {
    if (name.find(token.text) != std::string_view::npos) return token.kind;
  }
  return CopyKind::kNone;
}

CopyKind CopyKindFromCupti(int64_t kind) {
  switch (kind) {
    case 1:
    case 3:
      return CopyKind::kHostToDevice;
    case 2:
    case 4:
      return CopyKind::kDeviceToHost;
    case 5:
    case 6:
    case 7:
    case 8:
    case 10:
      return CopyKind::kDeviceToDevice;
    default:
      return CopyKind::kOther;
  }
}

uint8_t CopyDirectionFromText(std::string_view text) {
  // The order of CUpti_ActivityMemcpyKind, as runtime/gpu/gpu_trace.h GpuCopyKind has it.
  constexpr std::string_view kNames[] = {"",     "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                         "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
  for (uint8_t kind = 1; kind < std::size(kNames); ++kind) {
    if (text == kNames[kind]) return kind;
  }
  return 0;
}

}  // namespace tfprof
