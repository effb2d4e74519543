// NVTX as seen by tfprof: the injection entry point NVTX calls at a program's first NVTX call
// (NVTX_INJECTION64_PATH names this library). It fills NVTX's function tables with the handlers
// below, which turn
//   push/pop ranges into spans of the calling thread (ranges matching TFPROF_STEP_MARKER also
//   open and close a step),
//   start/end ranges into prof_range_start/end (they may end on another thread),
//   marks into instants, and OS thread names into thread names.
// Non-default domains prefix their names ("NCCL: AllReduce"); named categories add "[name] ".
// No GPU is needed: NVTX is only a way for programs to say what they are doing.
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <cwchar>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "bindings/preload/marker_verdicts.h"
#include "bindings/preload/preload_session.h"
#include "bindings/preload/step_marker.h"
#include "tfprof/tfprof.h"

namespace tfprof::preload {
namespace {

constexpr uint32_t kCategories = 256;  // category ids above this keep their ranges unnamed

// What a domain handle points to. Never freed: NVTX may hand a handle back after destroying it.
struct Domain {
  std::string prefix;  // "name: ", empty for the default domain
  std::atomic<const char *> categories[kCategories] = {};
};
Domain &DefaultDomain() {  // on the heap: NVTX may call in before static initializers ran
  static Domain *domain = new Domain();
  return *domain;
}

// What a registered string handle points to. Its text never changes, so whether it marks a
// step is decided once, at its first push with a session (a step marker exists only then).
// Its name is registered with tfprof too, so that a push records the id without a lookup.
struct RegisteredString {
  std::string message;  // as registered: what step markers are matched against
  std::string name;     // with the domain's prefix: what is recorded
  prof_name_id_t name_id = 0;  // prof_register_name(name); 0 if that failed (the name is used)
  std::atomic<MarkerVerdicts::Verdict> verdict{MarkerVerdicts::kUnknown};
};

Domain &DomainOf(nvtxDomainHandle_t handle) {
  return handle == nullptr ? DefaultDomain() : *reinterpret_cast<Domain *>(handle);
}

// ---- per-thread state --------------------------------------------------------------------

constexpr int kTrackedDepth = 64;  // push levels whose "is a step" bit is kept

struct ThreadState {
  MarkerVerdicts *verdicts;   // allocated at the thread's first candidate name, freed at its
                              // exit (VerdictsOfThisThread)
  int depth;
  uint64_t step_levels;       // bit N: the range pushed at level N opened a step
  uint64_t step_range_id;     // the start/end range that opened this thread's step, if any
  uint32_t names_seen;        // g_pending_names_version when this thread last looked
  char text[512];             // a composed name, valid until the next call
  char message[512];          // a message converted from wide characters, likewise
};
__thread ThreadState t_state __attribute__((tls_model("initial-exec")));

// ---- thread names given for other threads (nvtxNameOsThread with another thread's id) --------

std::mutex g_pending_names_mutex;
// Guarded by the mutex; on the heap, like the default domain.
std::vector<std::pair<uint32_t, std::string>> &PendingNames() {
  static auto *names = new std::vector<std::pair<uint32_t, std::string>>();
  return *names;
}
std::atomic<uint32_t> g_pending_names_version{0};

__attribute__((noinline, cold)) void ApplyPendingName(uint32_t version) {
  t_state.names_seen = version;
  const uint32_t own_tid = static_cast<uint32_t>(syscall(SYS_gettid));
  std::lock_guard<std::mutex> lock(g_pending_names_mutex);
  for (const auto &[tid, name] : PendingNames()) {
    if (tid == own_tid) prof_set_thread_name(name.c_str());
  }
}

// One relaxed load per NVTX call while no name waits for another thread.
inline void CheckPendingName() {
  const uint32_t version = g_pending_names_version.load(std::memory_order_acquire);
  if (__builtin_expect(version != t_state.names_seen, 0)) ApplyPendingName(version);
}

// ---- names ---------------------------------------------------------------------------------

void AppendUtf8(const wchar_t *text, std::string *out) {
  for (; text != nullptr && *text != L'\0'; ++text) {
    const uint32_t code = static_cast<uint32_t>(*text);
    if (code < 0x80) {
      out->push_back(static_cast<char>(code));
    } else if (code < 0x800) {
      out->push_back(static_cast<char>(0xc0 | (code >> 6)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3f)));
    } else if (code < 0x10000) {
      out->push_back(static_cast<char>(0xe0 | (code >> 12)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3f)));
    } else {
      out->push_back(static_cast<char>(0xf0 | ((code >> 18) & 0x07)));
      out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3f)));
    }
  }
}

// Copies `parts` into `buffer` (truncated to fit) and returns it. No part may point into it.
template <size_t kSize>
const char *ComposeInto(char (&buffer)[kSize], std::initializer_list<const char *> parts) {
  size_t used = 0;
  for (const char *part : parts) {
    if (part == nullptr) continue;
    const size_t length = std::min(std::strlen(part), kSize - 1 - used);
    std::memcpy(buffer + used, part, length);
    used += length;
  }
  buffer[used] = '\0';
  return buffer;
}

const char *Compose(std::initializer_list<const char *> parts) {
  return ComposeInto(t_state.text, parts);
}

// A wide-character message as UTF-8 in the thread's message buffer.
const char *ConvertMessage(const wchar_t *text) {
  std::string converted;
  AppendUtf8(text, &converted);
  return ComposeInto(t_state.message, {converted.c_str()});
}

// A range's or mark's message (what step markers match) and recorded name, and the registered
// string they come from, if any.
struct Label {
  const char *message;
  const char *name;
  RegisteredString *registered = nullptr;
  prof_name_id_t name_id = 0;  // `name` registered with tfprof, when it is
};

// A registered string pushed without a category, the hot case NVTX recommends (null for anything
// else): its name, with the domain's prefix, was composed and registered with tfprof at
// registration, so its label needs no work.
inline RegisteredString *PlainRegistered(const nvtxEventAttributes_t *attributes) {
  if (attributes == nullptr || attributes->messageType != NVTX_MESSAGE_TYPE_REGISTERED ||
      attributes->category != 0) {
    return nullptr;
  }
  return reinterpret_cast<RegisteredString *>(attributes->message.registered);
}

inline Label LabelOfRegistered(RegisteredString *registered) {
  return {registered->message.c_str(), registered->name.c_str(), registered, registered->name_id};
}

Label LabelOf(nvtxDomainHandle_t domain_handle, const nvtxEventAttributes_t *attributes) {
  if (attributes == nullptr) return {nullptr, nullptr};
  if (RegisteredString *registered = PlainRegistered(attributes)) {
    return LabelOfRegistered(registered);
  }
  Domain &domain = DomainOf(domain_handle);
  const char *message = nullptr;
  const char *name = nullptr;
  RegisteredString *registered = nullptr;
  switch (attributes->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      message = attributes->message.ascii;
      break;
    case NVTX_MESSAGE_TYPE_REGISTERED: {
      registered = reinterpret_cast<RegisteredString *>(attributes->message.registered);
      if (registered != nullptr) {
        message = registered->message.c_str();
        name = registered->name.c_str();
      }
      break;
    }
    case NVTX_MESSAGE_TYPE_UNICODE:
      message = ConvertMessage(attributes->message.unicode);
      break;
    default:
      break;
  }
  const char *category = attributes->category != 0 && attributes->category < kCategories
                             ? domain.categories[attributes->category].load(std::memory_order_acquire)
                             : nullptr;
  if (category != nullptr) {
    name = Compose({domain.prefix.c_str(), "[", category, "] ", message});
  } else if (name == nullptr) {
    // The common case, a plain ASCII message in the default domain, is recorded as given.
    name = domain.prefix.empty() ? message : Compose({domain.prefix.c_str(), message});
  }
  return {message, name, registered};
}

// ---- ranges and marks ------------------------------------------------------------------------

// The step the range `label` opens, or kNoStep (step numbers are never negative: trailing digits,
// or a count from 0). A registered string's answer is kept in it, so only its first push pays
// for the pattern match; a plain string whose first byte starts no pattern is answered inline,
// and one pushed before from the same address by the thread's memo (MarkerVerdicts). The rest
// is out of line, off the common path. (Fields, not the Label, as arguments, and the
// step as the result: nothing of the common path then goes through memory.)
constexpr int64_t kNoStep = -1;

// The thread's memo of step-marker verdicts (null if out of memory), made on first use and freed
// when the thread exits (a key destructor), so that threads coming and going leave nothing.
pthread_key_t g_verdicts_key;
pthread_once_t g_verdicts_key_once = PTHREAD_ONCE_INIT;

void FreeVerdicts(void *verdicts) {
  t_state.verdicts = nullptr;  // runs on the exiting thread
  delete static_cast<MarkerVerdicts *>(verdicts);
}

MarkerVerdicts *VerdictsOfThisThread() {
  if (t_state.verdicts != nullptr) return t_state.verdicts;
  pthread_once(&g_verdicts_key_once, [] { pthread_key_create(&g_verdicts_key, FreeVerdicts); });
  auto *verdicts = new (std::nothrow) MarkerVerdicts();
  if (verdicts != nullptr && pthread_setspecific(g_verdicts_key, verdicts) != 0) {
    delete verdicts;
    return nullptr;
  }
  return t_state.verdicts = verdicts;
}

// A plain string's verdict, from the thread's memo when it was pushed before at this address.
bool IsMarkerRemembered(StepMarker *marker, const char *message) {
  MarkerVerdicts *verdicts = VerdictsOfThisThread();
  if (verdicts == nullptr) return marker->IsMarker(message);
  const MarkerVerdicts::Verdict known = verdicts->Find(message);
  if (known != MarkerVerdicts::kUnknown) return known == MarkerVerdicts::kMarker;
  const bool is_marker = marker->IsMarker(message);
  verdicts->Remember(message, is_marker);
  return is_marker;
}

__attribute__((noinline)) int64_t StepOpenedSlow(StepMarker *marker, const char *message,
                                                 RegisteredString *registered) {
  if (registered == nullptr) {
    return IsMarkerRemembered(marker, message) ? marker->StepNumberOf(message) : kNoStep;
  }
  MarkerVerdicts::Verdict verdict = registered->verdict.load(std::memory_order_relaxed);
  if (verdict == MarkerVerdicts::kUnknown) {
    verdict = marker->IsMarker(message) ? MarkerVerdicts::kMarker : MarkerVerdicts::kNotMarker;
    registered->verdict.store(verdict, std::memory_order_relaxed);
  }
  return verdict == MarkerVerdicts::kNotMarker ? kNoStep : marker->StepNumberOf(message);
}

inline int64_t StepOpenedBy(const Label &label) {
  StepMarker *marker = GetStepMarker();
  if (marker == nullptr) return kNoStep;
  if (label.registered != nullptr) {
    if (label.registered->verdict.load(std::memory_order_relaxed) == MarkerVerdicts::kNotMarker) {
      return kNoStep;
    }
  } else if (!marker->MayMatch(label.message)) {
    return kNoStep;
  }
  return StepOpenedSlow(marker, label.message, label.registered);
}

// Opens the step the range pushed at `level` marks, if it marks one.
inline void MaybeOpenStep(const Label &label, int level) {
  const int64_t step = StepOpenedBy(label);
  if (__builtin_expect(step == kNoStep, 1)) return;
  prof_begin_step(step);
  if (level < kTrackedDepth) t_state.step_levels |= uint64_t{1} << level;
}

// Ends the step that the range popped at `level` opened, if it opened one.
__attribute__((noinline)) void MaybeEndStep(int level) {
  if (level >= kTrackedDepth) return;
  const uint64_t bit = uint64_t{1} << level;
  if ((t_state.step_levels & bit) == 0) return;
  t_state.step_levels &= ~bit;
  prof_end_step();
}

// A level's bit in step_levels is set only while the range pushed there has a step open: a pop
// clears it, so a push that opens no step writes nothing, and a pop checks one word while no step
// range is open. The span calls skip the header's inline session check: with no session, the
// library's own check is as cheap, and the preload's session runs almost always.
inline int PushRange(const Label &label) {
  CheckPendingName();
  const int level = t_state.depth++;
  MaybeOpenStep(label, level);
  if (label.name_id != 0) {
    (prof_span_begin_id)(label.name_id);
  } else {
    (prof_span_begin)(label.name);
  }
  return level;
}

int PopRange() {
  if (t_state.depth == 0) {
    (prof_span_end)();  // counted as unmatched
    return -1;
  }
  const int level = --t_state.depth;
  (prof_span_end)();
  if (__builtin_expect(t_state.step_levels != 0, 0)) MaybeEndStep(level);
  return level;
}

nvtxRangeId_t StartRange(Label label) {
  CheckPendingName();
  if (prof_session_active == 0) return 0;
  const int64_t step = StepOpenedBy(label);
  const bool opens_step = step != kNoStep;
  if (opens_step) prof_begin_step(step);
  const uint64_t range_id = prof_range_start(label.name);
  if (opens_step) t_state.step_range_id = range_id;
  return range_id;
}

void EndRange(nvtxRangeId_t range_id) {
  prof_range_end(range_id);
  if (range_id != 0 && range_id == t_state.step_range_id) {
    t_state.step_range_id = 0;
    prof_end_step();
  }
}

void Mark(Label label) {
  CheckPendingName();
  prof_instant(label.name);
}

void NameCategory(nvtxDomainHandle_t domain, uint32_t category, const char *name) {
  if (category == 0 || category >= kCategories || name == nullptr) return;
  DomainOf(domain).categories[category].store(strdup(name), std::memory_order_release);
}

void NameOsThread(uint32_t thread_id, const char *name) {
  if (name == nullptr) return;
  if (thread_id == static_cast<uint32_t>(syscall(SYS_gettid))) {
    prof_set_thread_name(name);
    return;
  }
  std::lock_guard<std::mutex> lock(g_pending_names_mutex);
  PendingNames().emplace_back(thread_id, name);
  g_pending_names_version.fetch_add(1, std::memory_order_release);
}

std::string Utf8(const wchar_t *text) {
  std::string out;
  AppendUtf8(text, &out);
  return out;
}

Label Ascii(const char *message) { return {message, message}; }

// ---- the handlers NVTX calls (its C signatures) ------------------------------------------------

void MarkEx(const nvtxEventAttributes_t *attributes) { Mark(LabelOf(nullptr, attributes)); }
void MarkA(const char *message) { Mark(Ascii(message)); }
void MarkW(const wchar_t *message) { Mark(Ascii(ConvertMessage(message))); }
nvtxRangeId_t RangeStartEx(const nvtxEventAttributes_t *attributes) {
  return StartRange(LabelOf(nullptr, attributes));
}
nvtxRangeId_t RangeStartA(const char *message) { return StartRange(Ascii(message)); }
nvtxRangeId_t RangeStartW(const wchar_t *message) {
  return StartRange(Ascii(ConvertMessage(message)));
}
void RangeEnd(nvtxRangeId_t range_id) { EndRange(range_id); }
int RangePushEx(const nvtxEventAttributes_t *attributes) {
  return PushRange(LabelOf(nullptr, attributes));
}
int RangePushA(const char *message) { return PushRange(Ascii(message)); }
int RangePushW(const wchar_t *message) { return PushRange(Ascii(ConvertMessage(message))); }
int RangePop() { return PopRange(); }
void NameCategoryA(uint32_t category, const char *name) { NameCategory(nullptr, category, name); }
void NameCategoryW(uint32_t category, const wchar_t *name) {
  NameCategory(nullptr, category, Utf8(name).c_str());
}
void NameOsThreadA(uint32_t thread_id, const char *name) { NameOsThread(thread_id, name); }
void NameOsThreadW(uint32_t thread_id, const wchar_t *name) {
  NameOsThread(thread_id, Utf8(name).c_str());
}

void DomainMarkEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *attributes) {
  Mark(LabelOf(domain, attributes));
}
nvtxRangeId_t DomainRangeStartEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *attributes) {
  return StartRange(LabelOf(domain, attributes));
}
void DomainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t range_id) { EndRange(range_id); }
// Out of line, so that the hot case below keeps its Label in registers.
__attribute__((noinline)) int DomainRangePushExGeneral(nvtxDomainHandle_t domain,
                                                       const nvtxEventAttributes_t *attributes) {
  return PushRange(LabelOf(domain, attributes));
}
int DomainRangePushEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *attributes) {
  if (RegisteredString *registered = PlainRegistered(attributes)) {
    return PushRange(LabelOfRegistered(registered));
  }
  return DomainRangePushExGeneral(domain, attributes);
}
int DomainRangePop(nvtxDomainHandle_t) { return PopRange(); }
void DomainNameCategoryA(nvtxDomainHandle_t domain, uint32_t category, const char *name) {
  NameCategory(domain, category, name);
}
void DomainNameCategoryW(nvtxDomainHandle_t domain, uint32_t category, const wchar_t *name) {
  NameCategory(domain, category, Utf8(name).c_str());
}
nvtxStringHandle_t DomainRegisterString(nvtxDomainHandle_t domain, std::string message) {
  auto *registered = new RegisteredString{message, DomainOf(domain).prefix + message};
  registered->name_id = prof_register_name(registered->name.c_str());
  return reinterpret_cast<nvtxStringHandle_t>(registered);
}
nvtxStringHandle_t DomainRegisterStringA(nvtxDomainHandle_t domain, const char *message) {
  return DomainRegisterString(domain, message != nullptr ? message : "");
}
nvtxStringHandle_t DomainRegisterStringW(nvtxDomainHandle_t domain, const wchar_t *message) {
  return DomainRegisterString(domain, Utf8(message));
}
nvtxDomainHandle_t DomainCreate(const std::string &name) {
  auto *domain = new Domain();
  if (!name.empty()) domain->prefix = name + ": ";
  return reinterpret_cast<nvtxDomainHandle_t>(domain);
}
nvtxDomainHandle_t DomainCreateA(const char *name) { return DomainCreate(name != nullptr ? name : ""); }
nvtxDomainHandle_t DomainCreateW(const wchar_t *name) { return DomainCreate(Utf8(name)); }
void DomainDestroy(nvtxDomainHandle_t) {}
void Initialize(const void *) {}

// ---- filling NVTX's tables ---------------------------------------------------------------------

struct Handler {
  unsigned int id;
  NvtxFunctionPointer function;
};

template <typename Function>
Handler Entry(unsigned int id, Function *function) {
  return Handler{id, reinterpret_cast<NvtxFunctionPointer>(function)};
}

bool Install(const NvtxExportTableCallbacks &callbacks, NvtxCallbackModule module,
             std::initializer_list<Handler> handlers) {
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (callbacks.GetModuleFunctionTable(module, &table, &size) == 0 || table == nullptr) return false;
  for (const Handler &handler : handlers) {
    // `size` counts the slots after the unused slot 0.
    if (handler.id == 0 || handler.id > size || table[handler.id] == nullptr) continue;
    *table[handler.id] = handler.function;
  }
  return true;
}

int InitializeNvtx(NvtxGetExportTableFunc_t get_export_table) {
  EnsureStarted();  // NVTX may be called before this library's constructor ran
  if (!HooksEnabled() || get_export_table == nullptr) return 0;  // 0: NVTX stays a no-op
  const auto *callbacks =
      static_cast<const NvtxExportTableCallbacks *>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks)) return 0;
  const bool core = Install(*callbacks, NVTX_CB_MODULE_CORE,
      {Entry(NVTX_CBID_CORE_MarkEx, &MarkEx), Entry(NVTX_CBID_CORE_MarkA, &MarkA),
       Entry(NVTX_CBID_CORE_MarkW, &MarkW), Entry(NVTX_CBID_CORE_RangeStartEx, &RangeStartEx),
       Entry(NVTX_CBID_CORE_RangeStartA, &RangeStartA),
       Entry(NVTX_CBID_CORE_RangeStartW, &RangeStartW), Entry(NVTX_CBID_CORE_RangeEnd, &RangeEnd),
       Entry(NVTX_CBID_CORE_RangePushEx, &RangePushEx),
       Entry(NVTX_CBID_CORE_RangePushA, &RangePushA), Entry(NVTX_CBID_CORE_RangePushW, &RangePushW),
       Entry(NVTX_CBID_CORE_RangePop, &RangePop),
       Entry(NVTX_CBID_CORE_NameCategoryA, &NameCategoryA),
       Entry(NVTX_CBID_CORE_NameCategoryW, &NameCategoryW),
       Entry(NVTX_CBID_CORE_NameOsThreadA, &NameOsThreadA),
       Entry(NVTX_CBID_CORE_NameOsThreadW, &NameOsThreadW)});
  const bool core2 = Install(*callbacks, NVTX_CB_MODULE_CORE2,
      {Entry(NVTX_CBID_CORE2_DomainMarkEx, &DomainMarkEx),
       Entry(NVTX_CBID_CORE2_DomainRangeStartEx, &DomainRangeStartEx),
       Entry(NVTX_CBID_CORE2_DomainRangeEnd, &DomainRangeEnd),
       Entry(NVTX_CBID_CORE2_DomainRangePushEx, &DomainRangePushEx),
       Entry(NVTX_CBID_CORE2_DomainRangePop, &DomainRangePop),
       Entry(NVTX_CBID_CORE2_DomainNameCategoryA, &DomainNameCategoryA),
       Entry(NVTX_CBID_CORE2_DomainNameCategoryW, &DomainNameCategoryW),
       Entry(NVTX_CBID_CORE2_DomainRegisterStringA, &DomainRegisterStringA),
       Entry(NVTX_CBID_CORE2_DomainRegisterStringW, &DomainRegisterStringW),
       Entry(NVTX_CBID_CORE2_DomainCreateA, &DomainCreateA),
       Entry(NVTX_CBID_CORE2_DomainCreateW, &DomainCreateW),
       Entry(NVTX_CBID_CORE2_DomainDestroy, &DomainDestroy),
       Entry(NVTX_CBID_CORE2_Initialize, &Initialize)});
  return core && core2 ? 1 : 0;
}

}  // namespace
}  // namespace tfprof::preload

// NVTX's entry points for tools: the first through NVTX_INJECTION64_PATH, the second found in
// the process when this library is already loaded (LD_PRELOAD) and NVTX supports that.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  return tfprof::preload::InitializeNvtx(get_export_table);
}
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2Preinject(
    NvtxGetExportTableFunc_t get_export_table) {
  return tfprof::preload::InitializeNvtx(get_export_table);
}
