#include "harness/benchmarks/collective_plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "core/units.h"

namespace gpuscale {

std::vector<std::uint64_t> collective_sizes(const RunOptions& o, const std::string& backend) {
  const bool cpu = backend == "cpu";
  const std::uint64_t lo = o.min_bytes.value_or(o.quick ? 1024 : (cpu ? 1024 : 8));
  const std::uint64_t hi = o.max_bytes.value_or(o.quick ? (1ULL << 20) : (cpu ? (64ULL << 20) : (8ULL << 30)));
  const std::uint64_t factor = o.step_bytes ? 0 : o.step_factor.value_or(o.quick ? 32 : 2);
  return size_sweep(lo, hi, factor, o.step_bytes.value_or(0));
}

RunOptions with_one_size(const RunOptions& o, std::uint64_t size_bytes) {
  RunOptions one = o;
  one.min_bytes = one.max_bytes = size_bytes;
  one.step_bytes.reset();
  one.step_factor = 2;
  return one;
}

std::vector<std::string> collective_transports(const RunOptions& o, const std::string& backend,
                                               const std::vector<std::string>& offered) {
  if (offered.empty()) {
    for (const auto& t : o.transports)
      if (t != "mpi")
        throw Error(fmt::format("--transports {}: the {} backend's collectives run over MPI only", t, backend));
    return {};
  }
  if (o.transports.empty()) return offered;
  return o.transports;
}

std::optional<std::string> collective_memory_refusal(std::uint64_t max_bytes, const DeviceInfo& device) {
  if (max_bytes <= device.usable_memory_bytes() / 2) return std::nullopt;
  const std::uint64_t need = max_bytes > UINT64_MAX / 2 ? UINT64_MAX : 2 * max_bytes;
  return fmt::format("collective message size {} ({} bytes) does not fit: a send and a receive buffer need {} "
                     "bytes per rank, but {} (lower -e/--maxbytes)",
                     format_size(max_bytes), max_bytes, need, device.usable_memory_text());
}

ExpectedPeak collective_link_peak(const std::string& topology, const LinkPeaks& links, std::uint64_t size_bytes) {
  if (topology == "single") return {std::nullopt, "one rank: no link is crossed"};
  if (topology == "inter-node") return links.inter_node;
  if (links.intra_node_at) return links.intra_node_at(size_bytes);
  return links.intra_node;
}

}  // namespace gpuscale
