// The emulated node's devices (emu_core.h): built once from the fake NVML's scenario, the model
// GPUSCALE_EMU_GPU names, the planted faults and CUDA_VISIBLE_DEVICES.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "tests/emulated_gpu/core/faults.h"
#include "tests/emulated_gpu/core/node_state.h"

namespace gpuscale_emu {
namespace {

using nlohmann::json;

// The fake NVML's default UUID and PCI bus id of GPU `index` (tests/fake_nvml/fake_nvml.cpp,
// default_uuid and default_bus), so both report the same GPUs.
std::string default_uuid(int index) { return "GPU-00000000-0000-4000-8000-" + std::string(10, '0') + std::to_string(10 + index); }
std::string default_bus(int index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "00000000:%02X:00.0", 0x18 + 0x10 * index);
  return buf;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : fallback;
}

json load_scenario() {
  const std::string path = env_or("GPUSCALE_FAKE_NVML_SCENARIO", "");
  if (path.empty()) return json::object();  // the fake NVML's one default GPU
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read GPUSCALE_FAKE_NVML_SCENARIO " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

// A MIG slice of `parent`: its SMs and memory; compute scales with SMs, bandwidth with memory (a MIG
// instance owns its share of the memory controllers: NVIDIA MIG User Guide, "Partitioning").
Device mig_device(const Device& parent, const json& inst) {
  Device d = parent;
  d.is_mig = true;
  d.uuid = inst.value("uuid", parent.uuid);
  const int sms = inst.value("sm_count", parent.model.sm_count);
  const unsigned long long mib = inst.value("memory_mib", 0ULL);
  d.memory_total = mib << 20;
  const double sm_share = static_cast<double>(sms) / parent.model.sm_count;
  const double mem_share = static_cast<double>(d.memory_total) / static_cast<double>(parent.memory_total);
  d.model.sm_count = sms;
  d.model.memory_bytes = d.memory_total;
  d.model.hbm_gbps *= mem_share;
  for (auto& [k, v] : d.model.tflops) v *= sm_share;
  d.model.nvlink_gbps = 0;  // MIG User Guide: "GPU to GPU P2P (both PCIe and NVLink) is not supported"
  // CUDA names a MIG device "<GPU name> MIG <g>g.<GB>gb" after its profile.
  d.name = inst.value("name", parent.name + " MIG " + std::to_string(inst.value("gi_slices", 1)) + "g." +
                                  std::to_string(std::lround(static_cast<double>(mib) / 1000.0)) + "gb");
  return d;
}

// Every device of the node before CUDA_VISIBLE_DEVICES, in the order CUDA enumerates them.
std::vector<Device> node_devices(const json& scenario, const GpuModel& model) {
  std::vector<Device> out;
  const json gpus = scenario.value("gpus", json::array({json::object()}));
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const int index = static_cast<int>(i);
    json spec = {{"name", model.name}, {"memory_total", model.memory_bytes}, {"sm_count", model.sm_count},
                 {"uuid", default_uuid(index)}, {"pci_bus_id", default_bus(index)}, {"mig", nullptr}};
    spec.merge_patch(gpus[i]);
    Device d;
    d.model = model;
    d.name = spec["name"].get<std::string>();
    d.uuid = spec["uuid"].get<std::string>();
    d.pci_bus_id = spec["pci_bus_id"].get<std::string>();
    d.memory_total = spec["memory_total"].get<std::uint64_t>();
    d.model.memory_bytes = d.memory_total;
    d.model.sm_count = spec["sm_count"].get<int>();
    const json& mig = spec["mig"];
    const json instances = mig.is_object() ? mig.value("instances", json::array()) : json::array();
    if (instances.empty()) out.push_back(d);
    for (const auto& inst : instances) out.push_back(mig_device(d, inst));
  }
  return out;
}

void plant_faults(std::vector<Device>& devices) {
  const auto faults = planted_faults();
  const NoiseSpec noise = noise_from_env();
  for (std::size_t i = 0; i < devices.size(); ++i) {
    Device& d = devices[i];
    for (const auto& f : faults) {
      if (!fault_targets(f, static_cast<int>(i), d.uuid)) continue;
      if (f.kind == "slow-gpu") d.slow_factor *= f.factor;
      if (f.kind == "slow-hbm") d.hbm_slow_factor *= f.factor;
      if (f.kind == "sticky") d.sticky_after_launches = f.count;
    }
    d.noise_factor = noise_factor(noise.gpu, noise_key(noise.seed, "gpu/" + d.uuid));
  }
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (!std::isdigit(c)) return false;
  return true;
}

// CUDA C Programming Guide, "CUDA Environment Variables", CUDA_VISIBLE_DEVICES: "A comma-separated
// sequence of GPU identifiers" (indices or UUIDs, "abbreviated forms are allowed; simply specify enough
// digits from the beginning of the GPU UUID to uniquely identify that GPU"); "Only the devices whose
// index is present in the sequence are visible to CUDA applications and they are enumerated in the
// order of the sequence. If one of the indices is invalid, only the devices whose index precedes the
// invalid index are visible". A device named twice is taken as invalid (an assumption: one device
// cannot be two ordinals).
std::vector<Device> visible(const std::vector<Device>& all) {
  const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!env) return all;
  std::vector<Device> out;
  std::set<std::size_t> taken;
  std::stringstream in(env);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto b = item.find_first_not_of(' ');
    item = b == std::string::npos ? "" : item.substr(b, item.find_last_not_of(' ') - b + 1);
    std::size_t found = all.size();
    if (all_digits(item)) {
      found = std::stoul(item) < all.size() ? std::stoul(item) : all.size();
    } else if (!item.empty()) {
      int matches = 0;
      for (std::size_t i = 0; i < all.size(); ++i)
        if (all[i].uuid.rfind(item, 0) == 0) found = (++matches == 1) ? i : all.size();
    }
    if (found >= all.size() || !taken.insert(found).second) break;
    out.push_back(all[found]);
  }
  return out;
}

NodeState* build_node() {
  auto* n = new NodeState;  // never freed: streams and allocations outlive static destruction order
  try {
    const GpuModel& model = gpu_model(env_or("GPUSCALE_EMU_GPU", "h100-sxm"));
    const json scenario = load_scenario();
    // The driver's CUDA version, as the fake NVML reports it from the same scenario
    // (nvmlSystemGetCudaDriverVersion; its default 99990, "CUDA 99.9"): one node, one driver.
    n->cuda_driver_version = scenario.value("cuda_driver_version", 99990);
    auto all = node_devices(scenario, model);
    plant_faults(all);
    n->devices = visible(all);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "emulated GPU node: %s\n", e.what());
    std::exit(2);
  }
  for (std::size_t i = 0; i < n->devices.size(); ++i) {
    n->devices[i].ordinal = static_cast<int>(i);
    auto s = std::make_unique<Stream>();
    s->device = static_cast<int>(i);
    n->streams.push_back(s.get());
    n->legacy.push_back(std::move(s));
  }
  return n;
}

thread_local int t_current_device = 0;

}  // namespace

NodeState& node() {
  static NodeState* n = build_node();
  return *n;
}

int device_count() { return static_cast<int>(node().devices.size()); }

int driver_cuda_version() { return node().cuda_driver_version; }

Device& device(int ordinal) { return node().devices.at(static_cast<std::size_t>(ordinal)); }

int current_device() { return t_current_device; }
void set_current_device(int ordinal) { t_current_device = ordinal; }

bool charge(int ordinal, std::uint64_t bytes) {
  NodeState& n = node();
  std::lock_guard<std::mutex> lock(n.mu);
  Device& d = n.devices.at(static_cast<std::size_t>(ordinal));
  if (bytes > d.memory_total - d.memory_held) return false;
  d.memory_held += bytes;
  return true;
}

void release(int ordinal, std::uint64_t bytes) {
  NodeState& n = node();
  std::lock_guard<std::mutex> lock(n.mu);
  Device& d = n.devices.at(static_cast<std::size_t>(ordinal));
  d.memory_held -= bytes < d.memory_held ? bytes : d.memory_held;
}

}  // namespace gpuscale_emu
