#include "backends/cuda/device_binding.h"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "core/error.h"

namespace gpuscale {
namespace {

std::string env_text(const std::optional<std::string>& v) {
  return v ? fmt::format("CUDA_VISIBLE_DEVICES={}", *v) : "CUDA_VISIBLE_DEVICES unset";
}

bool valid_entry(std::string_view e) {
  if (e.empty()) return false;
  if (e.rfind("GPU-", 0) == 0 || e.rfind("MIG-", 0) == 0) return e.size() > 4;
  return std::all_of(e.begin(), e.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

}  // namespace

std::vector<std::string> parse_visible_devices(std::string_view value) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= value.size()) {
    auto next = value.find(',', pos);
    if (next == std::string_view::npos) next = value.size();
    std::string_view e = value.substr(pos, next - pos);
    while (!e.empty() && std::isspace(static_cast<unsigned char>(e.front()))) e.remove_prefix(1);
    while (!e.empty() && std::isspace(static_cast<unsigned char>(e.back()))) e.remove_suffix(1);
    if (!valid_entry(e)) break;  // the driver ignores this entry and everything after it
    out.emplace_back(e);
    pos = next + 1;
  }
  return out;
}

std::string no_device_reason(std::string_view cuda_reason, const std::optional<std::string>& visible_devices) {
  std::string out(cuda_reason);
  if (visible_devices && parse_visible_devices(*visible_devices).empty())
    out += fmt::format(" (CUDA_VISIBLE_DEVICES='{}' hides every GPU)", *visible_devices);
  return out;
}

std::optional<std::string> ranks_without_gpus(const std::vector<RankGpuCount>& ranks) {
  const RankGpuCount* first = nullptr;
  bool all_alike = true;
  for (const auto& r : ranks) {
    if (r.gpus > 0) {
      all_alike = false;
      continue;
    }
    if (!first)
      first = &r;
    else if (r.why_none != first->why_none)
      all_alike = false;
  }
  if (!first) return std::nullopt;
  if (all_alike) return first->why_none;
  return fmt::format("rank {} ({}): {}", first->rank, first->host, first->why_none);
}

std::vector<GpuAssignment> assign_gpus(const std::vector<RankGpus>& ranks) {
  // Ranks of a host that see the same GPUs, in local-rank order.
  std::map<std::pair<std::string, std::vector<std::string>>, std::vector<std::size_t>> sharing;
  for (std::size_t i = 0; i < ranks.size(); ++i) sharing[{ranks[i].host, ranks[i].uuids}].push_back(i);
  std::vector<GpuAssignment> out(ranks.size());
  for (auto& [key, members] : sharing) {
    std::sort(members.begin(), members.end(),
              [&](std::size_t a, std::size_t b) { return ranks[a].local_rank < ranks[b].local_rank; });
    const auto& [host, uuids] = key;
    const auto& first = ranks[members.front()];
    if (uuids.empty())
      throw Error(fmt::format("no CUDA device on rank {} ({}): it sees no GPU ({})", first.rank, host,
                              env_text(first.visible_devices)),
                  kExitNoDevice);
    if (members.size() > uuids.size())
      throw Error(fmt::format("host {}: {} ranks share the {} GPU(s) they can see ({}): launch at most {} rank(s) "
                              "per node, or give each rank its own GPU (srun --gpus-per-task=1)",
                              host, members.size(), uuids.size(), env_text(first.visible_devices), uuids.size()),
                  kExitNoDevice);
    for (std::size_t p = 0; p < members.size(); ++p) {
      const auto& r = ranks[members[p]];
      auto& a = out[members[p]];
      a.ordinal = static_cast<int>(p);
      a.rule = members.size() == 1 && uuids.size() == 1
                   ? fmt::format("its only visible GPU ({})", env_text(r.visible_devices))
                   : fmt::format("GPU {} of the {} its {} rank(s) on {} share ({})", p, uuids.size(), members.size(),
                                 host, env_text(r.visible_devices));
    }
  }
  // Overlapping but different visible sets could still put two ranks on one GPU.
  std::map<std::pair<std::string, std::string>, std::size_t> owner;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const auto& uuid = ranks[i].uuids[static_cast<std::size_t>(out[i].ordinal)];
    auto [it, fresh] = owner.emplace(std::make_pair(ranks[i].host, uuid), i);
    if (!fresh) {
      const auto& other = ranks[it->second];
      throw Error(fmt::format("host {}: ranks {} and {} would both use GPU {} (their visible GPUs overlap: {}; {})",
                              ranks[i].host, other.rank, ranks[i].rank, uuid, env_text(other.visible_devices),
                              env_text(ranks[i].visible_devices)),
                  kExitNoDevice);
    }
  }
  return out;
}

std::optional<MigBinding> mig_slice_binding(const std::optional<std::string>& cuda_visible_devices,
                                            const std::optional<std::string>& nvidia_visible_devices,
                                            int local_rank, int local_size,
                                            const std::optional<std::string>& container_visible_devices) {
  const bool from_cuda = cuda_visible_devices.has_value();
  const bool from_container = !from_cuda && !nvidia_visible_devices && container_visible_devices;
  const auto& list = from_cuda ? cuda_visible_devices : from_container ? container_visible_devices : nvidia_visible_devices;
  if (!list) return std::nullopt;
  std::vector<std::string> slices;
  for (const auto& e : parse_visible_devices(*list))
    if (e.rfind("MIG-", 0) == 0) slices.push_back(e);
  if (slices.size() < 2) return std::nullopt;
  const char* var = from_cuda        ? "CUDA_VISIBLE_DEVICES"
                    : from_container ? "the container's NVIDIA_VISIBLE_DEVICES (/proc/1/environ: this rank's own "
                                       "environment has neither variable, as under sshd)"
                                     : "NVIDIA_VISIBLE_DEVICES";
  if (local_size > static_cast<int>(slices.size()))
    throw Error(fmt::format("{} ranks on this node but {} lists {} MIG slices: one rank per slice", local_size, var,
                            slices.size()),
                kExitNoDevice);
  const auto& mine = slices[static_cast<std::size_t>(local_rank)];
  return MigBinding{mine, fmt::format("MIG slice {} of {} in {} (local rank {})", local_rank + 1, slices.size(), var,
                                      local_rank)};
}

std::optional<std::string> environ_value(std::string_view environ, std::string_view name) {
  while (!environ.empty()) {
    const auto end = std::min(environ.find('\0'), environ.size());
    const auto entry = environ.substr(0, end);
    if (entry.size() > name.size() && entry.substr(0, name.size()) == name && entry[name.size()] == '=')
      return std::string(entry.substr(name.size() + 1));
    environ.remove_prefix(std::min(end + 1, environ.size()));
  }
  return std::nullopt;
}

}  // namespace gpuscale
