#include "collectives/collective_table.h"

#include <algorithm>
#include <array>

namespace gpuscale {
namespace {

constexpr std::array<std::string_view, 5> kOps{"sum", "prod", "min", "max", "avg"};

}  // namespace

std::string_view redop_name(RedOp op) { return kOps[static_cast<std::size_t>(op)]; }

std::optional<RedOp> parse_redop(std::string_view name) {
  for (std::size_t i = 0; i < kOps.size(); ++i)
    if (kOps[i] == name) return static_cast<RedOp>(i);
  return std::nullopt;
}

const CollectiveSpec& collective_spec(Collective c) {
  for (const auto& s : kCollectiveTable)
    if (s.id == c) return s;
  return kCollectiveTable[0];  // unreachable: every collective is in the table
}

std::optional<Collective> parse_collective(std::string_view name) {
  for (const auto& s : kCollectiveTable)
    if (s.name == name) return s.id;
  return std::nullopt;
}

CollCounts collective_counts(const CollectiveSpec& spec, std::uint64_t size_bytes, std::uint64_t element_size,
                             int nranks, const AlltoallvSkew& skew) {
  return spec.counts(size_bytes / element_size, element_size, nranks, skew);
}

std::uint64_t collective_size_bytes(const CollCounts& c, std::uint64_t element_size) {
  return std::max(c.send, c.recv) * element_size;
}

Bandwidth collective_bandwidth(const CollectiveSpec& spec, const CollCounts& c, std::uint64_t element_size, int nranks,
                               double seconds) {
  if (!(seconds > 0)) return {};
  const double algbw = spec.algbw_bytes(c, element_size, nranks) / 1.0e9 / seconds;
  return {algbw, algbw * spec.bus_factor(nranks)};
}

}  // namespace gpuscale
