#pragma once
// Every collective gpuscale measures, one block each: its enum value, its nccl-tests row (how a
// requested size becomes element counts, the bytes behind algbw, the busbw factor) and the value each
// element of its result must hold. Adding a collective is one value in `Collective`, one block below,
// one entry in `AllCollectives`, and its call in each transport (mpi/, nccl/).
//
// Users compare every figure with nccl-tests, so the rows follow its definitions exactly:
//   size  = max(send bytes, receive bytes) of the whole buffer
//   algbw = bytes / time (GB/s, 1e9), busbw = algbw x factor(n)
// all_gather, reduce_scatter and alltoall use a per-rank count rounded down to a multiple of 16 bytes;
// alltoallv uses the busiest rank's max(sent, received) bytes, its peers' counts rounded so each.
//
// C++17, so the CUDA check kernel (collectives/nccl/collective_kernels.cu) includes it: the expected
// values are GPUSCALE_HD, the rest is host data.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "collectives/alltoallv_plan.h"
#include "collectives/collective_check.h"
#include "collectives/collective_types.h"

namespace gpuscale {

enum class Collective : int { all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv, alltoallv };

std::string_view redop_name(RedOp op);
std::optional<RedOp> parse_redop(std::string_view name);

struct CollectiveSpec {
  Collective id;
  std::string_view name;        // gpuscale's key: "all_reduce"
  std::string_view nccl_tests;  // the nccl-tests binary users compare with: "all_reduce_perf"
  bool reduces;                 // takes a reduction op
  bool rooted;                  // has a root rank (broadcast, reduce)
  bool in_place;                // has an in-place variant that nccl-tests checks
  // `skew`: alltoallv's (CollCounts::skew); the others ignore it.
  CollCounts (*counts)(std::uint64_t count, std::uint64_t element_size, int nranks, const AlltoallvSkew& skew);
  // Bytes in algbw's numerator.
  double (*algbw_bytes)(const CollCounts& c, std::uint64_t element_size, int nranks);
  double (*bus_factor)(int nranks);
  std::string_view bus_factor_text;  // the same factor in words, for `gpuscale list`: "2(n-1)/n"
  int (*latency_steps)(int nranks);  // sequential steps of its ring algorithm (analysis/projection.h)
  // Rank `rank`'s block (CollBlock): what its check reads from each sender.
  CollBlock (*block)(const CollCounts& c, std::uint64_t element_size, int rank, int nranks);
  // Elements of the send buffer a rank fills with check inputs, and of its result it checks.
  std::uint64_t (*input_count)(const CollCounts& c, bool is_root);
  std::uint64_t (*result_count)(const CollCounts& c, const CollBlock& b, bool is_root, int nranks);
};

// The pieces the blocks below are made of.
namespace coll_rows {

// Per-rank counts are rounded down to a multiple of 16 bytes, as nccl-tests does.
inline std::uint64_t per_rank(std::uint64_t count, std::uint64_t element_size, int n) {
  const std::uint64_t per = element_size >= 16 ? 1 : 16 / element_size;
  return count / static_cast<std::uint64_t>(n) / per * per;
}
inline double bytes_whole(const CollCounts& c, std::uint64_t es, int) { return static_cast<double>(c.param * es); }
inline double bytes_times_n(const CollCounts& c, std::uint64_t es, int n) {
  return static_cast<double>(c.param * es) * static_cast<double>(n);
}
inline double factor_n_minus_1(int n) { return static_cast<double>(n - 1) / n; }
inline double factor_one(int) { return 1.0; }

// What most collectives share; a block overrides what differs.
struct Usual {
  static CollCounts counts(std::uint64_t count, std::uint64_t, int, const AlltoallvSkew&) { return {count, count, count, 0, 0, {}}; }
  static int latency_steps(int n) { return n - 1; }
  static CollBlock block(const CollCounts& c, std::uint64_t, int, int) { return {c.param, 0}; }
  static std::uint64_t input_count(const CollCounts& c, bool) { return c.send; }  // every rank sends
  static std::uint64_t result_count(const CollCounts& c, const CollBlock&, bool, int) { return c.recv; }  // its receive buffer
};

}  // namespace coll_rows

// ---- The collectives, one block each (order: the enum's) ----

struct AllReduceRow : coll_rows::Usual {
  static constexpr Collective id = Collective::all_reduce;
  static constexpr std::string_view name = "all_reduce", nccl_tests = "all_reduce_perf";
  static constexpr bool reduces = true, rooted = false, in_place = true;
  static double algbw_bytes(const CollCounts& c, std::uint64_t es, int n) { return coll_rows::bytes_whole(c, es, n); }
  static double bus_factor(int n) { return 2.0 * (n - 1) / n; }
  static constexpr std::string_view bus_factor_text = "2(n-1)/n";
  static int latency_steps(int n) { return 2 * (n - 1); }
  GPUSCALE_HD static CollExpected expected(const CollCheckPlan& p, std::uint64_t i) { return coll_reduce(p, i); }
};

struct AllGatherRow : coll_rows::Usual {
  static constexpr Collective id = Collective::all_gather;
  static constexpr std::string_view name = "all_gather", nccl_tests = "all_gather_perf";
  static constexpr bool reduces = false, rooted = false, in_place = true;
  static CollCounts counts(std::uint64_t count, std::uint64_t es, int n, const AlltoallvSkew&) {
    const std::uint64_t per = coll_rows::per_rank(count, es, n);
    return {per, per * static_cast<std::uint64_t>(n), per, per, 0, {}};  // in place: rank r sends from recv + r*per
  }
  static double algbw_bytes(const CollCounts& c, std::uint64_t es, int n) { return coll_rows::bytes_times_n(c, es, n); }
  static double bus_factor(int n) { return coll_rows::factor_n_minus_1(n); }
  static constexpr std::string_view bus_factor_text = "(n-1)/n";
  GPUSCALE_HD static CollExpected expected(const CollCheckPlan& p, std::uint64_t i) {
    return coll_source(p, static_cast<int>(i / p.per), i % p.per);
  }
};

struct ReduceScatterRow : coll_rows::Usual {
  static constexpr Collective id = Collective::reduce_scatter;
  static constexpr std::string_view name = "reduce_scatter", nccl_tests = "reduce_scatter_perf";
  static constexpr bool reduces = true, rooted = false, in_place = true;
  static CollCounts counts(std::uint64_t count, std::uint64_t es, int n, const AlltoallvSkew&) {
    const std::uint64_t per = coll_rows::per_rank(count, es, n);
    return {per * static_cast<std::uint64_t>(n), per, per, 0, per, {}};  // in place: rank r receives at r*per
  }
  static double algbw_bytes(const CollCounts& c, std::uint64_t es, int n) { return coll_rows::bytes_times_n(c, es, n); }
  static double bus_factor(int n) { return coll_rows::factor_n_minus_1(n); }
  static constexpr std::string_view bus_factor_text = "(n-1)/n";
  static std::uint64_t result_count(const CollCounts& c, const CollBlock&, bool, int) { return c.param; }  // its own block
  GPUSCALE_HD static CollExpected expected(const CollCheckPlan& p, std::uint64_t i) {
    return coll_reduce(p, static_cast<std::uint64_t>(p.rank) * p.per + i);
  }
};

struct BroadcastRow : coll_rows::Usual {
  static constexpr Collective id = Collective::broadcast;
  static constexpr std::string_view name = "broadcast", nccl_tests = "broadcast_perf";
  static constexpr bool reduces = false, rooted = true, in_place = true;
  static double algbw_bytes(const CollCounts& c, std::uint64_t es, int n) { return coll_rows::bytes_whole(c, es, n); }
  static double bus_factor(int n) { return coll_rows::factor_one(n); }
  static constexpr std::string_view bus_factor_text = "1";
  static std::uint64_t input_count(const CollCounts& c, bool is_root) { return is_root ? c.send : 0; }
  GPUSCALE_HD static CollExpected expected(const CollCheckPlan& p, std::uint64_t i) { return coll_source(p, p.root, i); }
};

struct ReduceRow : coll_rows::Usual {
  static constexpr Collective id = Collective::reduce;
  static constexpr std::string_view name = "reduce", nccl_tests = "reduce_perf";
  static constexpr bool reduces = true, rooted = true, in_place = true;
  static double algbw_bytes(const CollCounts& c, std::uint64_t es, int n) { return coll_rows::bytes_whole(c, es, n); }
  static double bus_factor(int n) { return coll_rows::factor_one(n); }
  static constexpr std::string_view bus_factor_text = "1";
  static std::uint64_t result_count(const CollCounts& c, const CollBlock&, bool is_root, int) { return is_root ? c.recv : 0; }
  GPUSCALE_HD static CollExpected expected(const CollCheckPlan& p, std::uint64_t i) { return coll_reduce(p, i); }
};

// nccl-tests runs alltoall in place too but does not check it; gpuscale measures out of place only.
struct AlltoallRow : coll_rows::Usual {
  static constexpr Collective id = Collective::alltoall;
  static constexpr std::string_view name = "alltoall", nccl_tests = "alltoall_perf";
  static constexpr bool reduces = false, rooted = false, in_place = false;
  static CollCounts counts(std::uint64_t count, std::uint64_t es, int n, const AlltoallvSkew&) {
    const std::uint64_t per = coll_rows::per_rank(count, es, n);
    return {per * static_cast<std::uint64_t>(n), per * static_cast<std::uint64_t>(n), per, 0, 0, {}};
  }
  static double algbw_bytes(const CollCounts& c, std::uint64_t es, int n) { return coll_rows::bytes_times_n(c, es, n); }
  static double bus_factor(int n) { return coll_rows::factor_n_minus_1(n); }
  static constexpr std::string_view bus_factor_text = "(n-1)/n";
  // Block j of my receive buffer is block `rank` of rank j's send buffer.
  GPUSCALE_HD static CollExpected expected(const CollCheckPlan& p, std::uint64_t i) {
    return coll_source(p, static_cast<int>(i / p.per), static_cast<std::uint64_t>(p.rank) * p.per + i % p.per);
  }
};

// Rank r sends its buffer to rank r+1 and receives rank r-1's.
struct SendrecvRow : coll_rows::Usual {
  static constexpr Collective id = Collective::sendrecv;
  static constexpr std::string_view name = "sendrecv", nccl_tests = "sendrecv_perf";
  static constexpr bool reduces = false, rooted = false, in_place = true;
  static double algbw_bytes(const CollCounts& c, std::uint64_t es, int n) { return coll_rows::bytes_whole(c, es, n); }
  static double bus_factor(int n) { return coll_rows::factor_one(n); }
  static constexpr std::string_view bus_factor_text = "1";
  static int latency_steps(int) { return 1; }
  GPUSCALE_HD static CollExpected expected(const CollCheckPlan& p, std::uint64_t i) {
    return coll_source(p, (p.rank - 1 + p.nranks) % p.nranks, i);
  }
};

// nccl-tests' alltoallv_perf with a skew (collectives/alltoallv_plan.h): each rank sends c(d) elements
// to peer d, the same c for every sender, so rank r receives n blocks of c(r). algbw is the busiest
// rank's max(sent, received) bytes over the time, as nccl-tests 2.19 (the hottest receiver's n c(0) at a
// Zipf skew), busbw that x (n-1)/n; at uniform counts every figure equals alltoall's. Out of place, as
// nccl-tests checks it.
struct AlltoallvRow : coll_rows::Usual {
  static constexpr Collective id = Collective::alltoallv;
  static constexpr std::string_view name = "alltoallv", nccl_tests = "alltoallv_perf";
  static constexpr bool reduces = false, rooted = false, in_place = false;
  static CollCounts counts(std::uint64_t count, std::uint64_t es, int n, const AlltoallvSkew& skew) {
    return alltoallv_counts(count, skew, es, n);
  }
  static double algbw_bytes(const CollCounts& c, std::uint64_t es, int) {
    return static_cast<double>((c.send > c.recv ? c.send : c.recv) * es);
  }
  static double bus_factor(int n) { return coll_rows::factor_n_minus_1(n); }
  static constexpr std::string_view bus_factor_text = "(n-1)/n";
  static CollBlock block(const CollCounts& c, std::uint64_t es, int rank, int n) { return alltoallv_block(c, es, rank, n); }
  static std::uint64_t result_count(const CollCounts&, const CollBlock& b, bool, int n) {
    return b.per * static_cast<std::uint64_t>(n);
  }
  // Block j of my receive buffer is my block of rank j's send buffer.
  GPUSCALE_HD static CollExpected expected(const CollCheckPlan& p, std::uint64_t i) {
    return coll_source(p, static_cast<int>(i / p.per), p.offset + i % p.per);
  }
};

// ---- The table built from the blocks ----

template <class... Rows>
struct CollectiveRows {
  static constexpr std::array<CollectiveSpec, sizeof...(Rows)> specs() {
    return {{{Rows::id, Rows::name, Rows::nccl_tests, Rows::reduces, Rows::rooted, Rows::in_place, &Rows::counts,
              &Rows::algbw_bytes, &Rows::bus_factor, Rows::bus_factor_text, &Rows::latency_steps, &Rows::block,
              &Rows::input_count, &Rows::result_count}...}};
  }
  // The expected value of plan p's collective: the matching block's rule.
  GPUSCALE_HD static CollExpected expected(const CollCheckPlan& p, std::uint64_t i) {
    CollExpected e{0.0, 0.0};
    (void)((p.coll == Rows::id ? (e = Rows::expected(p, i), true) : false) || ...);
    return e;
  }
};

using AllCollectives =
    CollectiveRows<AllReduceRow, AllGatherRow, ReduceScatterRow, BroadcastRow, ReduceRow, AlltoallRow, SendrecvRow,
                   AlltoallvRow>;

inline constexpr auto kCollectiveTable = AllCollectives::specs();

// Every enum value has its block, in the enum's order (collective_spec indexes by it).
constexpr bool collective_table_in_enum_order() {
  for (std::size_t i = 0; i < kCollectiveTable.size(); ++i)
    if (kCollectiveTable[i].id != static_cast<Collective>(i)) return false;
  return true;
}
static_assert(collective_table_in_enum_order(), "AllCollectives must list one block per Collective, in enum order");
static_assert(kCollectiveTable.size() == static_cast<std::size_t>(Collective::alltoallv) + 1,
              "a new last Collective needs its block in AllCollectives and in this check");

// What rank p.rank must hold at element `index` of its result (the receive buffer, or for
// reduce_scatter the rank's own block).
GPUSCALE_HD inline CollExpected coll_expected(const CollCheckPlan& p, std::uint64_t index) {
  return AllCollectives::expected(p, index);
}

inline const std::array<CollectiveSpec, kCollectiveTable.size()>& collective_table() { return kCollectiveTable; }
const CollectiveSpec& collective_spec(Collective c);
std::optional<Collective> parse_collective(std::string_view name);

// Counts for a requested size in bytes (the size is first turned into count = bytes / element size).
CollCounts collective_counts(const CollectiveSpec& spec, std::uint64_t size_bytes, std::uint64_t element_size,
                             int nranks, const AlltoallvSkew& skew = {});
// nccl-tests' "size" column: max(send, receive) bytes.
std::uint64_t collective_size_bytes(const CollCounts& c, std::uint64_t element_size);

struct Bandwidth {
  double algbw = 0;  // GB/s
  double busbw = 0;  // GB/s
};
Bandwidth collective_bandwidth(const CollectiveSpec& spec, const CollCounts& c, std::uint64_t element_size, int nranks,
                               double seconds);

}  // namespace gpuscale
