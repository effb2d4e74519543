#include "runtime/gpu/cupti/api_selection.h"

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

namespace tfprof {

bool IsStateQuery(std::string_view function) {
  for (std::string_view marker : {"Get", "Peek", "IsCapturing", "Occupancy", "TotalMem",
                                  "CanAccessPeer", "ComputeCapability"}) {
    if (function.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

namespace {

// Every callback id of `domain` below `end` whose name is a state query is turned off.
int SkipQueriesIn(const CuptiApi &api, CUpti_CallbackDomain domain, uint32_t end,
                  CUptiResult (*enable)(CUpti_CallbackId, uint8_t)) {
  int skipped = 0;
  for (uint32_t id = 1; id < end; ++id) {
    const char *name = nullptr;
    if (api.GetCallbackName(domain, id, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    if (IsStateQuery(name) && enable(id, 0) == CUPTI_SUCCESS) ++skipped;
  }
  return skipped;
}

}  // namespace

int SkipStateQueries(const CuptiApi &api) {
  if (api.ActivityEnableRuntimeApi == nullptr || api.ActivityEnableDriverApi == nullptr) return 0;
  return SkipQueriesIn(api, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE,
                       api.ActivityEnableRuntimeApi) +
         SkipQueriesIn(api, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE,
                       api.ActivityEnableDriverApi);
}

}  // namespace tfprof
