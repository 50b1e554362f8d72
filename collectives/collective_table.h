#pragma once
// One table entry per collective, as nccl-tests has: how a requested size becomes element counts,
// the bytes behind algbw, and the busbw factor. Users compare every figure with nccl-tests, so these
// follow its definitions exactly:
//   size  = max(send bytes, receive bytes) of the whole buffer
//   algbw = bytes / time (GB/s, 1e9), busbw = algbw x factor(n)
// all_gather, reduce_scatter and alltoall use a per-rank count rounded down to a multiple of 16 bytes.
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "collectives/collective_types.h"

namespace gpuscale {

std::string_view redop_name(RedOp op);
std::optional<RedOp> parse_redop(std::string_view name);

struct CollectiveSpec {
  Collective id;
  std::string_view name;        // gpuscale's key: "all_reduce"
  std::string_view nccl_tests;  // the nccl-tests binary users compare with: "all_reduce_perf"
  bool reduces;                 // takes a reduction op
  bool rooted;                  // has a root rank (broadcast, reduce)
  bool in_place;                // has an in-place variant that nccl-tests checks
  CollCounts (*counts)(std::uint64_t count, std::uint64_t element_size, int nranks);
  // Bytes in algbw's numerator for a given param count.
  double (*algbw_bytes)(std::uint64_t param_count, std::uint64_t element_size, int nranks);
  double (*bus_factor)(int nranks);
  std::string_view bus_factor_text;  // the same factor in words, for `gpuscale list`: "2(n-1)/n"
};

std::span<const CollectiveSpec> collective_table();
const CollectiveSpec& collective_spec(Collective c);
std::optional<Collective> parse_collective(std::string_view name);

// Counts for a requested size in bytes (the size is first turned into count = bytes / element size).
CollCounts collective_counts(const CollectiveSpec& spec, std::uint64_t size_bytes, std::uint64_t element_size,
                             int nranks);
// nccl-tests' "size" column: max(send, receive) bytes.
std::uint64_t collective_size_bytes(const CollCounts& c, std::uint64_t element_size);

struct Bandwidth {
  double algbw = 0;  // GB/s
  double busbw = 0;  // GB/s
};
Bandwidth collective_bandwidth(const CollectiveSpec& spec, const CollCounts& c, std::uint64_t element_size, int nranks,
                               double seconds);

}  // namespace gpuscale
