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
      v.share = static_cast<double>(slices) / kMigComputeSlices;
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
  return virtual_gpu(mode, g.value("name", std::string()));
}

PeakShare vgpu_peak_share(const std::vector<VirtualGpu>& ranks) {
  PeakShare p;
  std::set<std::string> profiles;
  std::set<double> shares;
  bool sliced = false, unknown = false, whole = false;
  for (const auto& r : ranks) {
    if (r.mode != "vgpu_guest") {
      whole = true;
      continue;
    }
    profiles.insert(r.profile.empty() ? "unknown" : r.profile);
    if (r.sharing == "time_sliced") sliced = true;
    else if (r.share) shares.insert(*r.share);
    else unknown = true;
  }
  if (profiles.empty()) return p;
  std::string list;
  for (const auto& s : profiles) list += (list.empty() ? "" : ", ") + s;
  p.flag = fmt::format("measured on a vGPU ({}): a share of a GPU, not a whole one", list);
  if (sliced || unknown) {
    p.withheld = true;
    p.why = fmt::format("withheld: the vGPU {} {} the GPU with other virtual machines in turns, a share the guest "
                        "cannot know",
                        list, profiles.size() > 1 ? "profiles share" : "shares");
    if (unknown && !sliced) p.why = fmt::format("withheld: the vGPU profile {} says no share of the GPU", list);
  } else if (whole || shares.size() > 1) {
    p.withheld = true;
    p.why = "withheld: the row's GPUs are of different shares (whole GPUs and vGPU slices)";
  } else {
    p.factor = *shares.begin();
  }
  return p;
}

ExpectedPeak shared_peak(ExpectedPeak peak, const PeakShare& share) {
  if (share.flag.empty() || !peak.value) return peak;
  if (share.withheld) return {std::nullopt, share.why};
  *peak.value *= share.factor;
  peak.source += fmt::format(" x {}, the vGPU profile's share of the GPU", figure_text(share.factor));
  return peak;
}

}  // namespace gpuscale::health
