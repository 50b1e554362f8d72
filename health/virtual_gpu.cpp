#include "health/virtual_gpu.h"
#include "text/number_text.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

namespace gpuscale::health {
namespace {

// MIG-capable GPUs cut their compute into 7 slices (A100, H100, H200, B200 alike).
constexpr int kMigComputeSlices = 7;

bool digits(const std::string& s) {
  return !s.empty() && s.size() <= 4 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

const char* virtualization_mode_name(int mode) {
  switch (mode) {
    case 0: return "none";
    case 1: return "passthrough";
    case 2: return "vgpu_guest";
    case 3: return "host_vgpu";
    case 4: return "host_vsga";
  }
  return "unknown";
}

VirtualGpu virtual_gpu(const std::string& mode, const std::string& name) {
  VirtualGpu v;
  v.mode = mode;
  if (mode != "vgpu_guest") return v;
  // The vGPU type is the name's last word: "<board>-<slices>-<GB><series>" (MIG-backed) or
  // "<board>-<GB><series>" (time-sliced); the series letter is C (compute), Q, B or A.
  const auto space = name.rfind(' ');
  v.profile = space == std::string::npos ? name : name.substr(space + 1);
  std::vector<std::string> parts;
  std::size_t at = 0;
  for (std::size_t dash; (dash = v.profile.find('-', at)) != std::string::npos; at = dash + 1)
    parts.push_back(v.profile.substr(at, dash - at));
  parts.push_back(v.profile.substr(at));
  if (parts.size() < 2 || parts.back().empty()) return v;
  auto last = parts.back();
  if (std::string("CQBA").find(last.back()) == std::string::npos) return v;
  last.pop_back();
  if (!digits(last)) return v;
  if (parts.size() >= 3 && digits(parts[parts.size() - 2])) {
    const int slices = std::stoi(parts[parts.size() - 2]);
    if (slices >= 1 && slices <= kMigComputeSlices) {
      v.sharing = "mig";
      v.slices = slices;
    }
    return v;
  }
  v.sharing = "time_sliced";
  return v;
}

VirtualGpu virtual_gpu_of(const nlohmann::json& rank) {
  if (!rank.is_object() || !rank.contains("telemetry") || !rank["telemetry"].is_object()) return {};
  const auto& t = rank["telemetry"];
  if (!t.contains("gpu") || !t["gpu"].is_object()) return {};
  const auto& g = t["gpu"];
  const auto mode = g.contains("virtualization_mode") && g["virtualization_mode"].is_string()
                        ? g["virtualization_mode"].get<std::string>()
                        : std::string();
  auto v = virtual_gpu(mode, g.value("name", std::string()));
  if (g.contains("sm_count") && g["sm_count"].is_number_integer()) v.sm_count = g["sm_count"].get<int>();
  if (g.contains("memory_bytes") && g["memory_bytes"].is_number_unsigned())
    v.memory_bytes = g["memory_bytes"].get<std::uint64_t>();
  return v;
}

PeakShare vgpu_peak_share(const std::vector<VirtualGpu>& ranks) {
  PeakShare p;
  std::set<std::string> profiles, instances;
  bool sliced = false, unknown = false, whole = false;
  for (const auto& r : ranks) {
    if (r.mode != "vgpu_guest") {
      whole = true;
      continue;
    }
    profiles.insert(r.profile.empty() ? "unknown" : r.profile);
    if (r.sharing == "time_sliced") sliced = true;
    else if (r.sharing != "mig") unknown = true;
    std::string size;
    if (r.sm_count) size = fmt::format("{} SMs", *r.sm_count);
    if (r.memory_bytes) size += fmt::format("{}{} GiB", size.empty() ? "" : ", ", figure_text(static_cast<double>(*r.memory_bytes) / (1ULL << 30)));
    instances.insert(size);
  }
  if (profiles.empty()) return p;
  std::string list;
  for (const auto& s : profiles) list += (list.empty() ? "" : ", ") + s;
  // The instance's size, where every vGPU of the row is MIG-backed of one profile and says the same one.
  if (profiles.size() == 1 && !sliced && !unknown && instances.size() == 1) p.instance = *instances.begin();
  p.flag = fmt::format("measured on a vGPU ({}{}): a share of a GPU, not a whole one", list,
                       p.instance.empty() ? "" : ": " + p.instance);
  if (sliced || unknown) {
    p.withheld = true;
    p.why = fmt::format("withheld: the vGPU {} {} the GPU with other virtual machines in turns, a share the guest "
                        "cannot know",
                        list, profiles.size() > 1 ? "profiles share" : "shares");
    if (unknown && !sliced) p.why = fmt::format("withheld: the vGPU profile {} says no share of the GPU", list);
  } else if (whole || profiles.size() > 1) {
    p.withheld = true;
    p.why = "withheld: the row's GPUs are of different shares (whole GPUs and vGPU slices)";
  }
  return p;
}

ExpectedPeak shared_peak(ExpectedPeak peak, const PeakShare& share) {
  if (share.flag.empty()) return peak;
  if (share.withheld) return peak.value ? ExpectedPeak{std::nullopt, share.why} : peak;
  if (peak.value) return peak;  // found by the vGPU type's own name: the instance's peak, not a whole GPU's
  peak.source += fmt::format("; a MIG-backed vGPU: no share of a whole GPU's peak is taken (MIG slices are not "
                             "equal shares){}",
                             share.instance.empty() ? "" : fmt::format("; the instance has {}", share.instance));
  return peak;
}

}  // namespace gpuscale::health
