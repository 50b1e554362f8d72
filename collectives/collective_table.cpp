#include "collectives/collective_table.h"

#include <algorithm>
#include <array>

namespace gpuscale {
namespace {

// Per-rank counts are rounded down to a multiple of 16 bytes, as nccl-tests does.
std::uint64_t align16(std::uint64_t count, std::uint64_t element_size) {
  const std::uint64_t per = element_size >= 16 ? 1 : 16 / element_size;
  return count / per * per;
}

CollCounts whole_buffer(std::uint64_t count, std::uint64_t, int) { return {count, count, count, 0, 0}; }

CollCounts all_gather_counts(std::uint64_t count, std::uint64_t es, int n) {
  const std::uint64_t per = align16(count / static_cast<std::uint64_t>(n), es);
  return {per, per * static_cast<std::uint64_t>(n), per, per, 0};  // in place: rank r sends from recv + r*per
}

CollCounts reduce_scatter_counts(std::uint64_t count, std::uint64_t es, int n) {
  const std::uint64_t per = align16(count / static_cast<std::uint64_t>(n), es);
  return {per * static_cast<std::uint64_t>(n), per, per, 0, per};  // in place: rank r receives at r*per
}

CollCounts alltoall_counts(std::uint64_t count, std::uint64_t es, int n) {
  const std::uint64_t per = align16(count / static_cast<std::uint64_t>(n), es);
  return {per * static_cast<std::uint64_t>(n), per * static_cast<std::uint64_t>(n), per, 0, 0};
}

double bytes_whole(std::uint64_t param, std::uint64_t es, int) { return static_cast<double>(param * es); }
double bytes_times_n(std::uint64_t param, std::uint64_t es, int n) {
  return static_cast<double>(param * es) * static_cast<double>(n);
}

double factor_all_reduce(int n) { return 2.0 * (n - 1) / n; }
double factor_n_minus_1(int n) { return static_cast<double>(n - 1) / n; }
double factor_one(int) { return 1.0; }

constexpr std::array<CollectiveSpec, 7> kTable{{
    {Collective::all_reduce, "all_reduce", "all_reduce_perf", true, false, true, whole_buffer, bytes_whole,
     factor_all_reduce, "2(n-1)/n"},
    {Collective::all_gather, "all_gather", "all_gather_perf", false, false, true, all_gather_counts, bytes_times_n,
     factor_n_minus_1, "(n-1)/n"},
    {Collective::reduce_scatter, "reduce_scatter", "reduce_scatter_perf", true, false, true, reduce_scatter_counts,
     bytes_times_n, factor_n_minus_1, "(n-1)/n"},
    {Collective::broadcast, "broadcast", "broadcast_perf", false, true, true, whole_buffer, bytes_whole, factor_one, "1"},
    {Collective::reduce, "reduce", "reduce_perf", true, true, true, whole_buffer, bytes_whole, factor_one, "1"},
    // nccl-tests runs alltoall in place too but does not check it; gpuscale measures out of place only.
    {Collective::alltoall, "alltoall", "alltoall_perf", false, false, false, alltoall_counts, bytes_times_n,
     factor_n_minus_1, "(n-1)/n"},
    {Collective::sendrecv, "sendrecv", "sendrecv_perf", false, false, true, whole_buffer, bytes_whole, factor_one, "1"},
}};

constexpr std::array<std::string_view, 5> kOps{"sum", "prod", "min", "max", "avg"};

}  // namespace

std::string_view redop_name(RedOp op) { return kOps[static_cast<std::size_t>(op)]; }

std::optional<RedOp> parse_redop(std::string_view name) {
  for (std::size_t i = 0; i < kOps.size(); ++i)
    if (kOps[i] == name) return static_cast<RedOp>(i);
  return std::nullopt;
}

std::span<const CollectiveSpec> collective_table() { return kTable; }

const CollectiveSpec& collective_spec(Collective c) {
  for (const auto& s : kTable)
    if (s.id == c) return s;
  return kTable[0];  // unreachable: every collective is in the table
}

std::optional<Collective> parse_collective(std::string_view name) {
  for (const auto& s : kTable)
    if (s.name == name) return s.id;
  return std::nullopt;
}

CollCounts collective_counts(const CollectiveSpec& spec, std::uint64_t size_bytes, std::uint64_t element_size,
                             int nranks) {
  return spec.counts(size_bytes / element_size, element_size, nranks);
}

std::uint64_t collective_size_bytes(const CollCounts& c, std::uint64_t element_size) {
  return std::max(c.send, c.recv) * element_size;
}

Bandwidth collective_bandwidth(const CollectiveSpec& spec, const CollCounts& c, std::uint64_t element_size, int nranks,
                               double seconds) {
  if (!(seconds > 0)) return {};
  const double algbw = spec.algbw_bytes(c.param, element_size, nranks) / 1.0e9 / seconds;
  return {algbw, algbw * spec.bus_factor(nranks)};
}

}  // namespace gpuscale
