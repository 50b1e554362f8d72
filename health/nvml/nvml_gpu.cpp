#include "health/nvml/nvml_gpu.h"

#include "health/virtual_gpu.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace gpuscale::health {

using namespace nvml;

namespace {

// Where a reading records why a field has no value.
struct Sink {
  Reasons* unsupported = nullptr;
  Reasons* errors = nullptr;
  bool* lost = nullptr;
};

// Runs one NVML call for `field`. True on success; otherwise records why (a symbol the library lacks,
// NOT_SUPPORTED and NO_PERMISSION are "unsupported"; other codes are errors) and returns false.
// Records why `field` has no value after `symbol` returned `rc`.
void record(const Sink& sink, const char* field, const char* symbol, nvmlReturn_t rc) {
  if (rc == NVML_ERROR_GPU_IS_LOST && sink.lost) *sink.lost = true;
  Reasons* where = (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_NO_PERMISSION) ? sink.unsupported : sink.errors;
  if (where) (*where)[field] = fmt::format("{}: {}", symbol, nvml_error_name(rc));
}

template <typename Fn, typename... Args>
bool call(const Sink& sink, const char* field, const char* symbol, Fn fn, Args... args) {
  if (fn == nullptr) {
    if (sink.unsupported) (*sink.unsupported)[field] = fmt::format("{} is missing from the NVML library", symbol);
    return false;
  }
  const nvmlReturn_t rc = fn(args...);
  if (rc == NVML_SUCCESS) return true;
  record(sink, field, symbol, rc);
  return false;
}

#define NVML_CALL(sink, field, fn, ...) call(sink, field, #fn, api.fn, __VA_ARGS__)

std::string text(const char* buf) { return std::string(buf); }

const char* compute_mode_name(nvmlComputeMode_t m) {
  switch (m) {
    case NVML_COMPUTEMODE_DEFAULT: return "default";
    case NVML_COMPUTEMODE_EXCLUSIVE_THREAD: return "exclusive_thread";
    case NVML_COMPUTEMODE_PROHIBITED: return "prohibited";
    case NVML_COMPUTEMODE_EXCLUSIVE_PROCESS: return "exclusive_process";
  }
  return "unknown";
}

std::vector<MigInstance> mig_instances(const Api& api, nvmlDevice_t parent, const Sink& sink) {
  std::vector<MigInstance> out;
  unsigned max = 0;
  if (!NVML_CALL(sink, "mig_instances", nvmlDeviceGetMaxMigDeviceCount, parent, &max)) return out;
  for (unsigned i = 0; i < max; ++i) {
    nvmlDevice_t mig = nullptr;
    if (!api.nvmlDeviceGetMigDeviceHandleByIndex ||
        api.nvmlDeviceGetMigDeviceHandleByIndex(parent, i, &mig) != NVML_SUCCESS)
      continue;  // NVML_ERROR_NOT_FOUND: no MIG device at this index
    MigInstance m;
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if (NVML_CALL(sink, "mig_instances.uuid", nvmlDeviceGetUUID, mig, uuid, NVML_DEVICE_UUID_V2_BUFFER_SIZE))
      m.uuid = text(uuid);
    unsigned id = 0;
    if (NVML_CALL(sink, "mig_instances.gpu_instance_id", nvmlDeviceGetGpuInstanceId, mig, &id)) m.gpu_instance_id = id;
    if (NVML_CALL(sink, "mig_instances.compute_instance_id", nvmlDeviceGetComputeInstanceId, mig, &id))
      m.compute_instance_id = id;
    nvmlDeviceAttributes_t a{};
    if (NVML_CALL(sink, "mig_instances.attributes", nvmlDeviceGetAttributes_v2, mig, &a)) {
      m.sm_count = a.multiprocessorCount;
      m.gpu_instance_slices = a.gpuInstanceSliceCount;
      m.compute_instance_slices = a.computeInstanceSliceCount;
      m.memory_mib = a.memorySizeMB;
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

GpuIdentity NvmlGpu::identity() const {
  const Api& api = lib_->api();
  GpuIdentity g;
  bool lost = false;
  const Sink sink{&g.unsupported, &g.errors, &lost};
  g.index = index_;
  char buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
  if (NVML_CALL(sink, "name", nvmlDeviceGetName, handle_, buf, NVML_DEVICE_NAME_V2_BUFFER_SIZE)) g.name = text(buf);
  char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
  if (NVML_CALL(sink, "uuid", nvmlDeviceGetUUID, handle_, uuid, NVML_DEVICE_UUID_V2_BUFFER_SIZE)) g.uuid = text(uuid);
  char serial[NVML_DEVICE_SERIAL_BUFFER_SIZE] = {};
  if (NVML_CALL(sink, "serial", nvmlDeviceGetSerial, handle_, serial, NVML_DEVICE_SERIAL_BUFFER_SIZE))
    g.serial = text(serial);
  nvmlPciInfo_t pci{};
  if (NVML_CALL(sink, "pci_bus_id", nvmlDeviceGetPciInfo_v3, handle_, &pci)) {
    g.pci_bus_id = text(pci.busId);
    g.pci_device_id = fmt::format("0x{:04x}", pci.pciDeviceId >> 16);
  }
  int major = 0, minor = 0;
  if (NVML_CALL(sink, "compute_capability", nvmlDeviceGetCudaComputeCapability, handle_, &major, &minor))
    g.compute_capability = fmt::format("{}.{}", major, minor);
  nvmlMemory_t mem{};
  if (NVML_CALL(sink, "memory_bytes", nvmlDeviceGetMemoryInfo, handle_, &mem)) g.memory_bytes = mem.total;
  nvmlDeviceAttributes_t attr{};
  if (NVML_CALL(sink, "sm_count", nvmlDeviceGetAttributes_v2, handle_, &attr)) g.sm_count = attr.multiprocessorCount;
  unsigned v = 0;
  if (NVML_CALL(sink, "max_sm_clock_mhz", nvmlDeviceGetMaxClockInfo, handle_, NVML_CLOCK_SM, &v)) g.max_sm_clock_mhz = v;
  if (NVML_CALL(sink, "max_memory_clock_mhz", nvmlDeviceGetMaxClockInfo, handle_, NVML_CLOCK_MEM, &v))
    g.max_memory_clock_mhz = v;
  if (NVML_CALL(sink, "power_limit_w", nvmlDeviceGetEnforcedPowerLimit, handle_, &v)) g.power_limit_w = v / 1000.0;
  if (NVML_CALL(sink, "default_power_limit_w", nvmlDeviceGetPowerManagementDefaultLimit, handle_, &v))
    g.default_power_limit_w = v / 1000.0;
  nvmlEnableState_t on = 0, pending = 0;
  if (NVML_CALL(sink, "persistence_mode", nvmlDeviceGetPersistenceMode, handle_, &on))
    g.persistence_mode = on == NVML_FEATURE_ENABLED;
  if (NVML_CALL(sink, "ecc_enabled", nvmlDeviceGetEccMode, handle_, &on, &pending)) {
    g.ecc_enabled = on == NVML_FEATURE_ENABLED;
    g.ecc_pending = pending == NVML_FEATURE_ENABLED;
  }
  nvmlComputeMode_t mode = 0;
  if (NVML_CALL(sink, "compute_mode", nvmlDeviceGetComputeMode, handle_, &mode)) g.compute_mode = compute_mode_name(mode);
  nvmlGpuVirtualizationMode_t virt = 0;
  if (NVML_CALL(sink, "virtualization_mode", nvmlDeviceGetVirtualizationMode, handle_, &virt))
    g.virtualization_mode = virtualization_mode_name(virt);
  if (NVML_CALL(sink, "pcie_max_gen", nvmlDeviceGetMaxPcieLinkGeneration, handle_, &v)) g.pcie_max_gen = v;
  if (NVML_CALL(sink, "pcie_max_width", nvmlDeviceGetMaxPcieLinkWidth, handle_, &v)) g.pcie_max_width = v;
  unsigned mig = 0, mig_pending = 0;
  if (NVML_CALL(sink, "mig_enabled", nvmlDeviceGetMigMode, handle_, &mig, &mig_pending)) {
    g.mig_enabled = mig == 1;
    g.mig_pending = mig_pending == 1;
    if (mig == 1) g.mig_instances = mig_instances(api, handle_, sink);
  }
  // The sampled and counted fields once, so the identity says which of them this GPU lacks.
  sample(0, &g.unsupported, &g.errors);
  const auto c = counters();
  for (const auto& [k, why] : c.unsupported) g.unsupported[k] = why;
  for (const auto& [k, why] : c.errors) g.errors[k] = why;
  if (!c.nvlink_up.empty()) g.nvlink_links = static_cast<unsigned>(c.nvlink_up.size());
  if (lost || c.gpu_lost) g.errors["gpu"] = "NVML_ERROR_GPU_IS_LOST: the GPU has fallen off the bus or is otherwise inaccessible";
  return g;
}

GpuSample NvmlGpu::sample(double t, Reasons* unsupported, Reasons* errors) const {
  const Api& api = lib_->api();
  GpuSample s;
  s.t = t;
  const Sink sink{unsupported, errors, &s.gpu_lost};
  unsigned v = 0;
  if (NVML_CALL(sink, "sm_clock_mhz", nvmlDeviceGetClockInfo, handle_, NVML_CLOCK_SM, &v)) s.sm_clock_mhz = v;
  if (NVML_CALL(sink, "memory_clock_mhz", nvmlDeviceGetClockInfo, handle_, NVML_CLOCK_MEM, &v)) s.memory_clock_mhz = v;
  if (NVML_CALL(sink, "temperature_c", nvmlDeviceGetTemperature, handle_, NVML_TEMPERATURE_GPU, &v)) s.temperature_c = v;
  if (NVML_CALL(sink, "power_w", nvmlDeviceGetPowerUsage, handle_, &v)) s.power_w = v / 1000.0;
  nvmlMemory_t mem{};
  if (NVML_CALL(sink, "memory_used_bytes", nvmlDeviceGetMemoryInfo, handle_, &mem)) s.memory_used_bytes = mem.used;
  nvmlUtilization_t u{};
  if (NVML_CALL(sink, "utilization", nvmlDeviceGetUtilizationRates, handle_, &u)) {
    s.gpu_util_percent = u.gpu;
    s.memory_util_percent = u.memory;
  }
  unsigned long long reasons = 0;
  if (api.nvmlDeviceGetCurrentClocksEventReasons || !api.nvmlDeviceGetCurrentClocksThrottleReasons) {
    if (NVML_CALL(sink, "clock_events", nvmlDeviceGetCurrentClocksEventReasons, handle_, &reasons)) s.clock_events = reasons;
  } else if (NVML_CALL(sink, "clock_events", nvmlDeviceGetCurrentClocksThrottleReasons, handle_, &reasons)) {
    s.clock_events = reasons;  // drivers before R535 know only the older name
  }
  if (NVML_CALL(sink, "pcie_gen", nvmlDeviceGetCurrPcieLinkGeneration, handle_, &v)) s.pcie_gen = v;
  if (NVML_CALL(sink, "pcie_width", nvmlDeviceGetCurrPcieLinkWidth, handle_, &v)) s.pcie_width = v;
  return s;
}

std::optional<std::uint64_t> NvmlGpu::energy_mj(std::string* why) const {
  const Api& api = lib_->api();
  Reasons unsupported, errors;
  const Sink sink{&unsupported, &errors, nullptr};
  unsigned long long mj = 0;
  if (NVML_CALL(sink, "energy_mj", nvmlDeviceGetTotalEnergyConsumption, handle_, &mj)) return mj;
  if (why) *why = !unsupported.empty() ? unsupported.begin()->second : errors.empty() ? "" : errors.begin()->second;
  return std::nullopt;
}

GpuCounters NvmlGpu::counters() const {
  const Api& api = lib_->api();
  GpuCounters c;
  const Sink sink{&c.unsupported, &c.errors, &c.gpu_lost};
  unsigned long long n = 0;
  if (NVML_CALL(sink, "ecc_counts", nvmlDeviceGetTotalEccErrors, handle_, NVML_MEMORY_ERROR_TYPE_UNCORRECTED,
                NVML_VOLATILE_ECC, &n)) {
    c.ecc_uncorrected_volatile = n;
    if (api.nvmlDeviceGetTotalEccErrors(handle_, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &n) == NVML_SUCCESS)
      c.ecc_corrected_volatile = n;
    if (api.nvmlDeviceGetTotalEccErrors(handle_, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, &n) ==
        NVML_SUCCESS)
      c.ecc_uncorrected_aggregate = n;
    if (api.nvmlDeviceGetTotalEccErrors(handle_, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, &n) ==
        NVML_SUCCESS)
      c.ecc_corrected_aggregate = n;
  }
  // Retired pages (before Ampere; Ampere and later remap rows instead).
  auto pages = [&](nvmlPageRetirementCause_t cause) -> std::optional<unsigned> {
    if (!api.nvmlDeviceGetRetiredPages) return std::nullopt;
    unsigned count = 0;
    unsigned long long dummy = 0;
    const auto rc = api.nvmlDeviceGetRetiredPages(handle_, cause, &count, &dummy);
    if (rc == NVML_SUCCESS || rc == NVML_ERROR_INSUFFICIENT_SIZE) return count;
    return std::nullopt;
  };
  nvmlEnableState_t pending = 0;
  if (NVML_CALL(sink, "retired_pages", nvmlDeviceGetRetiredPagesPendingStatus, handle_, &pending)) {
    c.retired_pages_pending = pending == NVML_FEATURE_ENABLED;
    c.retired_pages_sbe = pages(NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS);
    c.retired_pages_dbe = pages(NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR);
  }
  unsigned corr = 0, unc = 0, is_pending = 0, failed = 0;
  if (NVML_CALL(sink, "row_remap", nvmlDeviceGetRemappedRows, handle_, &corr, &unc, &is_pending, &failed)) {
    c.remapped_rows_correctable = corr;
    c.remapped_rows_uncorrectable = unc;
    c.remap_pending = is_pending != 0;
    c.remap_failed = failed != 0;
  }
  unsigned replays = 0;
  if (NVML_CALL(sink, "pcie_replays", nvmlDeviceGetPcieReplayCounter, handle_, &replays)) c.pcie_replays = replays;
  unsigned long long mj = 0;
  if (NVML_CALL(sink, "energy_mj", nvmlDeviceGetTotalEnergyConsumption, handle_, &mj)) c.energy_mj = mj;
  // NVLink: links answer until the first index the GPU does not have.
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    nvmlEnableState_t active = 0;
    if (!api.nvmlDeviceGetNvLinkState) {
      (*sink.unsupported)["nvlink"] = "nvmlDeviceGetNvLinkState is missing from the NVML library";
      break;
    }
    const auto rc = api.nvmlDeviceGetNvLinkState(handle_, link, &active);
    if (rc == NVML_ERROR_INVALID_ARGUMENT) break;
    if (rc != NVML_SUCCESS) {
      if (link == 0 && (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_NO_PERMISSION))
        (*sink.unsupported)["nvlink"] = fmt::format("nvmlDeviceGetNvLinkState: {}", nvml_error_name(rc));
      else if (link == 0)
        (*sink.errors)["nvlink"] = fmt::format("nvmlDeviceGetNvLinkState: {}", nvml_error_name(rc));
      if (link == 0 || rc == NVML_ERROR_NOT_SUPPORTED) break;
      c.nvlink_up.emplace_back(std::nullopt);
      c.nvlink_errors.emplace_back();
      continue;
    }
    c.nvlink_up.emplace_back(active == NVML_FEATURE_ENABLED);
    NvlinkCounters counters;
    for (std::size_t i = 0; i < counters.size(); ++i) {
      const auto field = fmt::format("nvlink_errors.{}", kNvlinkCounterNames[i]);
      unsigned long long value = 0;
      if (NVML_CALL(sink, field.c_str(), nvmlDeviceGetNvLinkErrorCounter, handle_, link,
                    static_cast<nvmlNvLinkErrorCounter_t>(i), &value))
        counters[i] = value;
    }
    c.nvlink_errors.push_back(counters);
  }
  unsigned count = 0;
  if (api.nvmlDeviceGetComputeRunningProcesses_v3) {
    auto rc = api.nvmlDeviceGetComputeRunningProcesses_v3(handle_, &count, nullptr);
    std::vector<nvmlProcessInfo_t> infos;
    if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
      count += 4;  // processes may start between the two calls
      infos.resize(count);
      rc = api.nvmlDeviceGetComputeRunningProcesses_v3(handle_, &count, infos.data());
    }
    if (rc == NVML_SUCCESS) {
      std::vector<GpuProcess> procs;
      for (unsigned i = 0; i < count && i < infos.size(); ++i) procs.push_back({infos[i].pid, infos[i].usedGpuMemory});
      c.processes = std::move(procs);
    } else {
      record(sink, "processes", "nvmlDeviceGetComputeRunningProcesses_v3", rc);
    }
  } else {
    (*sink.unsupported)["processes"] = "nvmlDeviceGetComputeRunningProcesses_v3 is missing from the NVML library";
  }
  return c;
}

NvmlNode enumerate_gpus(const std::shared_ptr<const NvmlLibrary>& lib) {
  NvmlNode node;
  if (!lib->available()) {
    node.why_none = lib->why_unavailable();
    return node;
  }
  const Api& api = lib->api();
  const Sink sink{&node.system.unsupported, &node.system.errors, nullptr};
  char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  if (NVML_CALL(sink, "driver_version", nvmlSystemGetDriverVersion, buf, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE))
    node.system.driver_version = text(buf);
  char nv[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE] = {};
  if (NVML_CALL(sink, "nvml_version", nvmlSystemGetNVMLVersion, nv, NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE))
    node.system.nvml_version = text(nv);
  int cuda = 0;
  if (NVML_CALL(sink, "cuda_driver_version", nvmlSystemGetCudaDriverVersion_v2, &cuda)) node.system.cuda_driver_version = cuda;
  unsigned count = 0;
  if (!NVML_CALL(sink, "gpus", nvmlDeviceGetCount_v2, &count)) {
    node.why_none = "NVML cannot count the GPUs: " +
                    (node.system.errors.count("gpus") ? node.system.errors["gpus"] : node.system.unsupported["gpus"]);
    return node;
  }
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t h = nullptr;
    Reasons why;
    if (call(Sink{&why, &why, nullptr}, "gpu", "nvmlDeviceGetHandleByIndex_v2", api.nvmlDeviceGetHandleByIndex_v2, i, &h))
      node.gpus.emplace_back(lib, h, static_cast<int>(i));
    else
      node.system.errors[fmt::format("gpu {}", i)] = why["gpu"];
  }
  if (node.gpus.empty())
    node.why_none = count == 0 ? "NVML sees no GPU on this node" : "NVML cannot open any of the node's GPUs";
  return node;
}

XidWatcher::XidWatcher(std::shared_ptr<const NvmlLibrary> lib, const std::vector<nvmlDevice_t>& devices)
    : lib_(std::move(lib)) {
  const Api& api = lib_->api();
  if (!api.nvmlEventSetCreate || !api.nvmlDeviceRegisterEvents || !api.nvmlEventSetWait_v2 || !api.nvmlEventSetFree) {
    unsupported_ = "the NVML library lacks the event functions (nvmlEventSetCreate, nvmlDeviceRegisterEvents, "
                   "nvmlEventSetWait_v2, nvmlEventSetFree)";
    return;
  }
  if (const auto rc = api.nvmlEventSetCreate(&set_); rc != NVML_SUCCESS) {
    unsupported_ = fmt::format("nvmlEventSetCreate: {}", nvml_error_name(rc));
    set_ = nullptr;
    return;
  }
  std::vector<std::string> why;
  for (auto d : devices) {
    unsigned long long supported = nvmlEventTypeXidCriticalError;
    if (api.nvmlDeviceGetSupportedEventTypes && api.nvmlDeviceGetSupportedEventTypes(d, &supported) == NVML_SUCCESS &&
        !(supported & nvmlEventTypeXidCriticalError)) {
      why.push_back("the GPU does not report Xid events");
      continue;
    }
    if (const auto rc = api.nvmlDeviceRegisterEvents(d, nvmlEventTypeXidCriticalError, set_); rc != NVML_SUCCESS) {
      why.push_back(fmt::format("nvmlDeviceRegisterEvents: {}", nvml_error_name(rc)));
      continue;
    }
    watched_.push_back(d);
  }
  if (!why.empty()) unsupported_ = why.front();
}

XidWatcher::~XidWatcher() {
  if (set_) lib_->api().nvmlEventSetFree(set_);
}

bool XidWatcher::watching(nvmlDevice_t device) const {
  return std::find(watched_.begin(), watched_.end(), device) != watched_.end();
}

std::vector<std::pair<nvmlDevice_t, std::uint64_t>> XidWatcher::poll() {
  std::vector<std::pair<nvmlDevice_t, std::uint64_t>> out;
  if (!set_ || watched_.empty()) return out;
  for (int i = 0; i < 64; ++i) {  // bounded: a storm of events cannot hold the sampler
    nvmlEventData_t data{};
    if (lib_->api().nvmlEventSetWait_v2(set_, &data, 0) != NVML_SUCCESS) break;
    if (data.eventType & nvmlEventTypeXidCriticalError) out.emplace_back(data.device, data.eventData);
  }
  return out;
}

std::optional<std::uint64_t> pci_bus_key(const std::string& bus_id) {
  // domain:bus:device.function, hexadecimal digits only (sscanf's %x would also take "0x" prefixes)
  std::uint64_t part[4] = {0, 0, 0, 0};
  int field = 0, digits = 0;
  for (char ch : bus_id) {
    const char want = field < 2 ? ':' : '.';
    if (ch == want && field < 3 && digits > 0) {
      ++field;
      digits = 0;
    } else if (std::isxdigit(static_cast<unsigned char>(ch)) && digits < 8) {
      const int c = std::tolower(static_cast<unsigned char>(ch));
      part[field] = part[field] * 16 + static_cast<std::uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
      ++digits;
    } else {
      return std::nullopt;
    }
  }
  if (field != 3 || digits == 0) return std::nullopt;
  return (part[0] << 24) | ((part[1] & 0xff) << 16) | ((part[2] & 0xff) << 8) | (part[3] & 0xff);
}

std::string uuid_key(const std::string& uuid) {
  std::string s = uuid;
  for (const char* prefix : {"MIG-", "GPU-"})
    if (s.rfind(prefix, 0) == 0) s = s.substr(4);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return s;
}

}  // namespace gpuscale::health
