// A fake NVML for tests without a GPU: a shared library exporting the entry points gpuscale declares
// (health/nvml/nvml_api.h; every definition is checked against that list), loaded through gpuscale's
// own dlopen path (--nvml-library or GPUSCALE_NVML_LIBRARY). It replays the scenario named by
// GPUSCALE_FAKE_NVML_SCENARIO (a JSON file, tests/fake_nvml/scenarios/): GPUs that start from a healthy
// H100-like default and change state as the scenario's phases say.
//
// The scenario's clock is the number of times a GPU's clock event reasons were read (each snapshot and
// each sample reads them once), so "from_read": 4 means "from the fourth reading on" whatever the
// machine's speed. Xid events are delivered once the GPU has been read "at_read" times.
//
// The default driver is 999.99.99 supporting "CUDA 99.9", newer than any CUDA runtime gpuscale is built
// with, so the GPU scenarios judge the GPUs and not the versions; old_driver.json sets a real, older one.
//
// Build variants leave symbols out (FAKE_NVML_OMIT_REMAPPED_ROWS, FAKE_NVML_OMIT_CLOCK_EVENTS) to test
// a library that lacks them: the definition is then hidden, so the compiler still checks its
// signature but the library does not export it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "health/nvml/nvml_api.h"

using namespace gpuscale::nvml;
using nlohmann::json;

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

#define FAKE_OMITTED extern "C" __attribute__((visibility("hidden")))  // compiled, not exported
#ifdef FAKE_NVML_OMIT_REMAPPED_ROWS
#define FAKE_REMAPPED_ROWS FAKE_OMITTED
#else
#define FAKE_REMAPPED_ROWS FAKE_EXPORT
#endif
#ifdef FAKE_NVML_OMIT_CLOCK_EVENTS
#define FAKE_CLOCK_EVENTS FAKE_OMITTED
#else
#define FAKE_CLOCK_EVENTS FAKE_EXPORT
#endif

namespace gpuscale::nvml {
struct nvmlDevice_st {};  // handles point at the fake's objects, derived from these
struct nvmlEventSet_st {};
}  // namespace gpuscale::nvml

namespace {

const char* kDefaultGpu = R"({
  "name": "NVIDIA H100 80GB HBM3", "serial": "1650923000001", "pci_device_id": 590352606,
  "cc": [9, 0], "memory_total": 85520809984, "sm_count": 132,
  "max_sm_clock": 1980, "max_mem_clock": 2619, "power_limit_mw": 700000, "default_power_limit_mw": 700000,
  "persistence": 1, "compute_mode": 0, "virtualization_mode": 0, "ecc": [1, 1], "pcie_max_gen": 5, "pcie_max_width": 16, "nvlink_links": 18,
  "mig": null, "unsupported": [], "no_permission": [], "errors": {}, "phases": [], "xid": [],
  "state": {
    "sm_clock": 1980, "mem_clock": 2619, "temperature": 45, "power_mw": 350000, "util_gpu": 100, "util_mem": 80,
    "clock_events": 0, "pcie_gen": 5, "pcie_width": 16, "pcie_replays": 0,
    "ecc": {"cv": 0, "uv": 0, "ca": 3, "ua": 0},
    "retired": {"sbe": 0, "dbe": 0, "pending": 0},
    "remap": {"corr": 0, "unc": 0, "pending": 0, "failed": 0},
    "nvlink_down": [], "nvlink_errors": 0, "processes": [], "lost": false, "memory_used": 1234567168,
    "energy_epoch": 0, "energy_start_mj": 5000000000
  }
})";

struct Gpu : nvmlDevice_st {
  json spec;
  int index = 0;
  int reads = 0;
  std::set<std::size_t> xids_delivered;
  // The total energy counter: power integrated over real time since the first read. A phase that sets
  // another "energy_epoch" restarts it at that phase's "energy_start_mj" (a driver reload).
  std::optional<int> energy_epoch;
  double energy_mj = 0;
  std::chrono::steady_clock::time_point energy_at;
  std::vector<std::unique_ptr<Gpu>> migs;  // MIG devices: spec holds the instance
  bool is_mig = false;

  json state() const {  // the base state with every phase reached so far applied
    json s = spec["state"];
    for (const auto& p : spec["phases"])
      if (reads >= p.value("from_read", 0)) s.merge_patch(p["state"]);
    return s;
  }
  bool listed(const char* list, const char* fn) const {
    for (const auto& f : spec[list])
      if (f == fn) return true;
    return false;
  }
};

struct EventSet : nvmlEventSet_st {
  std::vector<Gpu*> devices;
};

struct Fake {
  std::mutex mu;
  json scenario;
  std::vector<std::unique_ptr<Gpu>> gpus;
  bool initialised = false;
};

Fake& fake() {
  static Fake f;
  return f;
}

json load_scenario() {
  const char* path = std::getenv("GPUSCALE_FAKE_NVML_SCENARIO");
  if (!path || !*path) return json::object();  // one healthy GPU
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "fake NVML: cannot read scenario %s\n", path);
    return {{"init", NVML_ERROR_UNKNOWN}};
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

Gpu* gpu(nvmlDevice_t d) { return static_cast<Gpu*>(d); }

// The result a GPU's scenario forces for `fn` (NOT_SUPPORTED, NO_PERMISSION, an error), else SUCCESS.
nvmlReturn_t forced(const Gpu* g, const char* fn) {
  if (g->spec["state"].value("lost", false) || g->state().value("lost", false)) return NVML_ERROR_GPU_IS_LOST;
  if (g->listed("unsupported", fn)) return NVML_ERROR_NOT_SUPPORTED;
  if (g->listed("no_permission", fn)) return NVML_ERROR_NO_PERMISSION;
  if (g->spec["errors"].contains(fn)) return g->spec["errors"][fn].get<int>();
  return NVML_SUCCESS;
}

#define FAKE_GUARD(dev, fn)                                    \
  std::lock_guard<std::mutex> lock(fake().mu);                 \
  if (!fake().initialised) return NVML_ERROR_UNINITIALIZED;    \
  Gpu* g = gpu(dev);                                           \
  if (!g) return NVML_ERROR_INVALID_ARGUMENT;                  \
  if (nvmlReturn_t rc = forced(g, fn); rc != NVML_SUCCESS) return rc

nvmlReturn_t copy_text(const std::string& s, char* buf, unsigned len) {
  if (!buf || s.size() + 1 > len) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buf, s.c_str(), s.size() + 1);
  return NVML_SUCCESS;
}

std::string default_uuid(int index) { return "GPU-00000000-0000-4000-8000-" + std::string(10, '0') + std::to_string(10 + index); }
std::string default_bus(int index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "00000000:%02X:00.0", 0x18 + 0x10 * index);
  return buf;
}

}  // namespace

FAKE_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  std::lock_guard<std::mutex> lock(fake().mu);
  Fake& f = fake();
  if (f.initialised) return NVML_SUCCESS;
  f.scenario = load_scenario();
  if (int rc = f.scenario.value("init", 0); rc != NVML_SUCCESS) return rc;
  json gpus = f.scenario.value("gpus", json::array({json::object()}));
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    auto g = std::make_unique<Gpu>();
    g->index = static_cast<int>(i);
    g->spec = json::parse(kDefaultGpu);
    g->spec["uuid"] = default_uuid(g->index);
    g->spec["pci_bus_id"] = default_bus(g->index);
    g->spec.merge_patch(gpus[i]);
    if (g->spec["mig"].is_object())
      for (const auto& inst : g->spec["mig"].value("instances", json::array())) {
        auto m = std::make_unique<Gpu>();
        m->is_mig = true;
        m->spec = g->spec;
        m->spec["instance"] = inst;
        g->migs.push_back(std::move(m));
      }
    f.gpus.push_back(std::move(g));
  }
  f.initialised = true;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlShutdown(void) {
  std::lock_guard<std::mutex> lock(fake().mu);
  fake().initialised = false;
  fake().gpus.clear();
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  std::lock_guard<std::mutex> lock(fake().mu);
  return copy_text(fake().scenario.value("driver_version", "999.99.99"), version, length);
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
  std::lock_guard<std::mutex> lock(fake().mu);
  return copy_text(fake().scenario.value("nvml_version", "99.999.99.99"), version, length);
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) {
  std::lock_guard<std::mutex> lock(fake().mu);
  *v = fake().scenario.value("cuda_driver_version", 99990);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  std::lock_guard<std::mutex> lock(fake().mu);
  if (!fake().initialised) return NVML_ERROR_UNINITIALIZED;
  *count = static_cast<unsigned>(fake().gpus.size());
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  std::lock_guard<std::mutex> lock(fake().mu);
  if (index >= fake().gpus.size()) return NVML_ERROR_INVALID_ARGUMENT;
  *device = fake().gpus[index].get();
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned int length) {
  FAKE_GUARD(d, "nvmlDeviceGetName");
  return copy_text(g->spec["name"], name, length);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned int length) {
  FAKE_GUARD(d, "nvmlDeviceGetUUID");
  return copy_text(g->is_mig ? g->spec["instance"]["uuid"] : g->spec["uuid"], uuid, length);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t d, char* serial, unsigned int length) {
  FAKE_GUARD(d, "nvmlDeviceGetSerial");
  return copy_text(g->spec["serial"], serial, length);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  FAKE_GUARD(d, "nvmlDeviceGetPciInfo_v3");
  *pci = nvmlPciInfo_t{};
  const std::string bus = g->spec["pci_bus_id"];
  std::snprintf(pci->busId, sizeof pci->busId, "%s", bus.c_str());
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%s", bus.substr(4).c_str());
  pci->pciDeviceId = g->spec["pci_device_id"];
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int* major, int* minor) {
  FAKE_GUARD(d, "nvmlDeviceGetCudaComputeCapability");
  *major = g->spec["cc"][0];
  *minor = g->spec["cc"][1];
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* mem) {
  FAKE_GUARD(d, "nvmlDeviceGetMemoryInfo");
  mem->total = g->spec["memory_total"];
  mem->used = g->state().value("memory_used", 0ULL);
  mem->free = mem->total - mem->used;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t type, unsigned int* clock) {
  FAKE_GUARD(d, "nvmlDeviceGetClockInfo");
  const auto s = g->state();
  if (type == NVML_CLOCK_SM) *clock = s["sm_clock"];
  else if (type == NVML_CLOCK_MEM) *clock = s["mem_clock"];
  else return NVML_ERROR_NOT_SUPPORTED;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, nvmlClockType_t type, unsigned int* clock) {
  FAKE_GUARD(d, "nvmlDeviceGetMaxClockInfo");
  if (type == NVML_CLOCK_SM) *clock = g->spec["max_sm_clock"];
  else if (type == NVML_CLOCK_MEM) *clock = g->spec["max_mem_clock"];
  else return NVML_ERROR_NOT_SUPPORTED;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, nvmlTemperatureSensors_t sensor, unsigned int* t) {
  FAKE_GUARD(d, "nvmlDeviceGetTemperature");
  if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  *t = g->state()["temperature"];
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int* mw) {
  FAKE_GUARD(d, "nvmlDeviceGetPowerUsage");
  *mw = g->state()["power_mw"];
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long* mj) {
  FAKE_GUARD(d, "nvmlDeviceGetTotalEnergyConsumption");
  const auto s = g->state();
  const auto now = std::chrono::steady_clock::now();
  if (!g->energy_epoch || *g->energy_epoch != s["energy_epoch"].get<int>()) {
    g->energy_epoch = s["energy_epoch"].get<int>();
    g->energy_mj = s["energy_start_mj"].get<double>();
  } else {  // mW x s = mJ
    g->energy_mj += s["power_mw"].get<double>() * std::chrono::duration<double>(now - g->energy_at).count();
  }
  g->energy_at = now;
  *mj = static_cast<unsigned long long>(g->energy_mj);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int* mw) {
  FAKE_GUARD(d, "nvmlDeviceGetEnforcedPowerLimit");
  *mw = g->spec["power_limit_mw"];
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d, unsigned int* mw) {
  FAKE_GUARD(d, "nvmlDeviceGetPowerManagementDefaultLimit");
  *mw = g->spec["default_power_limit_mw"];
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  FAKE_GUARD(d, "nvmlDeviceGetUtilizationRates");
  const auto s = g->state();
  u->gpu = s["util_gpu"];
  u->memory = s["util_mem"];
  return NVML_SUCCESS;
}

// Each reading advances the GPU's scenario clock.
static nvmlReturn_t clock_events(nvmlDevice_t d, unsigned long long* reasons, const char* fn) {
  FAKE_GUARD(d, fn);
  ++g->reads;
  *reasons = g->state()["clock_events"];
  return NVML_SUCCESS;
}

FAKE_CLOCK_EVENTS nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long* reasons) {
  return clock_events(d, reasons, "nvmlDeviceGetCurrentClocksEventReasons");
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long* reasons) {
  return clock_events(d, reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, nvmlEnableState_t* current, nvmlEnableState_t* pending) {
  FAKE_GUARD(d, "nvmlDeviceGetEccMode");
  *current = g->spec["ecc"][0];
  *pending = g->spec["ecc"][1];
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, nvmlMemoryErrorType_t type,
                                                     nvmlEccCounterType_t counter, unsigned long long* count) {
  FAKE_GUARD(d, "nvmlDeviceGetTotalEccErrors");
  if (g->spec["ecc"][0] != 1) return NVML_ERROR_NOT_SUPPORTED;
  const auto e = g->state()["ecc"];
  const bool unc = type == NVML_MEMORY_ERROR_TYPE_UNCORRECTED;
  *count = counter == NVML_VOLATILE_ECC ? e[unc ? "uv" : "cv"].get<unsigned long long>()
                                        : e[unc ? "ua" : "ca"].get<unsigned long long>();
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t d, nvmlPageRetirementCause_t cause, unsigned int* count,
                                                   unsigned long long* addresses) {
  FAKE_GUARD(d, "nvmlDeviceGetRetiredPages");
  const unsigned n = g->state()["retired"][cause == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR ? "dbe" : "sbe"];
  const bool fits = *count >= n;
  if (fits && addresses)
    for (unsigned i = 0; i < n; ++i) addresses[i] = 0x1000ULL * (i + 1);
  *count = n;
  return fits ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, nvmlEnableState_t* pending) {
  FAKE_GUARD(d, "nvmlDeviceGetRetiredPagesPendingStatus");
  *pending = g->state()["retired"]["pending"];
  return NVML_SUCCESS;
}

FAKE_REMAPPED_ROWS nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int* corr, unsigned int* unc,
                                                          unsigned int* pending, unsigned int* failed) {
  FAKE_GUARD(d, "nvmlDeviceGetRemappedRows");
  const auto r = g->state()["remap"];
  *corr = r["corr"];
  *unc = r["unc"];
  *pending = r["pending"];
  *failed = r["failed"];
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int* gen) {
  FAKE_GUARD(d, "nvmlDeviceGetCurrPcieLinkGeneration");
  *gen = g->state()["pcie_gen"];
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int* gen) {
  FAKE_GUARD(d, "nvmlDeviceGetMaxPcieLinkGeneration");
  *gen = g->spec["pcie_max_gen"];
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int* width) {
  FAKE_GUARD(d, "nvmlDeviceGetCurrPcieLinkWidth");
  *width = g->state()["pcie_width"];
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int* width) {
  FAKE_GUARD(d, "nvmlDeviceGetMaxPcieLinkWidth");
  *width = g->spec["pcie_max_width"];
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t d, unsigned int* value) {
  FAKE_GUARD(d, "nvmlDeviceGetPcieReplayCounter");
  *value = g->state()["pcie_replays"];
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, nvmlEnableState_t* active) {
  FAKE_GUARD(d, "nvmlDeviceGetNvLinkState");
  if (g->spec["nvlink_links"] == 0) return NVML_ERROR_NOT_SUPPORTED;
  if (link >= g->spec["nvlink_links"].get<unsigned>()) return NVML_ERROR_INVALID_ARGUMENT;
  *active = NVML_FEATURE_ENABLED;
  const auto state = g->state();
  for (const auto& l : state["nvlink_down"])
    if (l == link) *active = NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned int link,
                                                         nvmlNvLinkErrorCounter_t counter, unsigned long long* value) {
  FAKE_GUARD(d, "nvmlDeviceGetNvLinkErrorCounter");
  if (link >= g->spec["nvlink_links"].get<unsigned>()) return NVML_ERROR_INVALID_ARGUMENT;
  // "nvlink_counters_unsupported": the counters this GPU does not have (Hopper lacks some). The state's
  // "nvlink_errors" is link 0's first counter, supported or not (a rise NVML cannot show).
  const auto unsupported = [&](int c) {
    const auto& list = g->spec.value("nvlink_counters_unsupported", json::array());
    return std::find(list.begin(), list.end(), c) != list.end();
  };
  if (unsupported(counter)) return NVML_ERROR_NOT_SUPPORTED;
  int first = 0;  // the first counter this GPU supports
  while (unsupported(first)) ++first;
  *value = link == 0 && counter == first ? g->state()["nvlink_errors"].get<unsigned long long>() : 0;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, nvmlEnableState_t* mode) {
  FAKE_GUARD(d, "nvmlDeviceGetPersistenceMode");
  *mode = g->spec["persistence"];
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t d, nvmlComputeMode_t* mode) {
  FAKE_GUARD(d, "nvmlDeviceGetComputeMode");
  *mode = g->spec["compute_mode"];
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetVirtualizationMode(nvmlDevice_t d, nvmlGpuVirtualizationMode_t* mode) {
  FAKE_GUARD(d, "nvmlDeviceGetVirtualizationMode");
  *mode = g->spec["virtualization_mode"];
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int* count,
                                                                 nvmlProcessInfo_t* infos) {
  FAKE_GUARD(d, "nvmlDeviceGetComputeRunningProcesses_v3");
  const auto procs = g->state()["processes"];
  const unsigned n = static_cast<unsigned>(procs.size());
  if (*count < n) {
    *count = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned i = 0; i < n; ++i)
    infos[i] = nvmlProcessInfo_t{procs[i]["pid"].get<unsigned>(), procs[i].value("used", 1ULL << 30), 0xFFFFFFFFu,
                                 0xFFFFFFFFu};
  *count = n;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int* current, unsigned int* pending) {
  FAKE_GUARD(d, "nvmlDeviceGetMigMode");
  if (!g->spec["mig"].is_object()) return NVML_ERROR_NOT_SUPPORTED;
  *current = g->spec["mig"].value("current", 1u);
  *pending = g->spec["mig"].value("pending", 1u);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned int* count) {
  FAKE_GUARD(d, "nvmlDeviceGetMaxMigDeviceCount");
  *count = 7;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned int index, nvmlDevice_t* mig) {
  FAKE_GUARD(d, "nvmlDeviceGetMigDeviceHandleByIndex");
  if (index >= g->migs.size()) return NVML_ERROR_NOT_FOUND;
  *mig = g->migs[index].get();
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned int* id) {
  FAKE_GUARD(d, "nvmlDeviceGetGpuInstanceId");
  if (!g->is_mig) return NVML_ERROR_NOT_SUPPORTED;
  *id = g->spec["instance"].value("gi", 0u);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t d, unsigned int* id) {
  FAKE_GUARD(d, "nvmlDeviceGetComputeInstanceId");
  if (!g->is_mig) return NVML_ERROR_NOT_SUPPORTED;
  *id = g->spec["instance"].value("ci", 0u);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t d, nvmlDeviceAttributes_t* a) {
  FAKE_GUARD(d, "nvmlDeviceGetAttributes_v2");
  *a = nvmlDeviceAttributes_t{};
  const json& src = g->is_mig ? g->spec["instance"] : g->spec;
  a->multiprocessorCount = src.value("sm_count", 0u);
  a->gpuInstanceSliceCount = src.value("gi_slices", 7u);
  a->computeInstanceSliceCount = src.value("ci_slices", 7u);
  a->memorySizeMB = g->is_mig ? src.value("memory_mib", 0ULL) : g->spec["memory_total"].get<unsigned long long>() >> 20;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  *set = new EventSet();
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d, unsigned long long* types) {
  FAKE_GUARD(d, "nvmlDeviceGetSupportedEventTypes");
  *types = nvmlEventTypeXidCriticalError;
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set) {
  FAKE_GUARD(d, "nvmlDeviceRegisterEvents");
  if (types & nvmlEventTypeXidCriticalError) static_cast<EventSet*>(set)->devices.push_back(g);
  return NVML_SUCCESS;
}

FAKE_EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int timeoutms) {
  (void)timeoutms;  // events are due or not: the fake never sleeps
  std::lock_guard<std::mutex> lock(fake().mu);
  for (Gpu* g : static_cast<EventSet*>(set)->devices) {
    const auto& xids = g->spec["xid"];
    for (std::size_t i = 0; i < xids.size(); ++i)
      if (g->reads >= xids[i].value("at_read", 0) && !g->xids_delivered.count(i)) {
        g->xids_delivered.insert(i);
        *data = nvmlEventData_t{g, nvmlEventTypeXidCriticalError, xids[i]["code"].get<unsigned long long>(), 0xFFFFFFFFu,
                                0xFFFFFFFFu};
        return NVML_SUCCESS;
      }
  }
  return NVML_ERROR_TIMEOUT;
}

FAKE_EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  delete static_cast<EventSet*>(set);
  return NVML_SUCCESS;
}

// Every definition above has exactly the signature gpuscale declares (health/nvml/nvml_api.h).
#define FAKE_CHECK_SIGNATURE(name, params) \
  static_assert(std::is_same_v<decltype(&::name), decltype(gpuscale::nvml::Api::name)>, #name);
GPUSCALE_NVML_FUNCTIONS(FAKE_CHECK_SIGNATURE)
