#pragma once
// alltoallv's uneven counts, as plain host decisions (unit-tested without MPI or NCCL). As nccl-tests'
// alltoallv_perf, the requested size is what each rank sends in all; a skew spreads it over the peers.
// gpuscale's skews are the same for every sender, the shape of an MoE router's dispatch:
//   uniform   every peer gets count / n (alltoall's layout, to the element);
//   zipf:S    peer d gets a share (d + 1)^-S / H_n,S of every sender's data (rank 0 the hottest expert);
//   weights:W0 W1 .. W(n-1)
//             peer d gets W_d / sum W (a measured expert load, from --skew file:PATH); only for groups
//             of exactly n ranks. nccl-tests' matrix files give each sender its own row; here every
//             sender splits alike, which keeps each receiver's blocks equal and its check two numbers.
// Each peer's count is rounded down to a multiple of 16 bytes, as every per-rank count of the table.
// So rank r receives n equal blocks of c(r) elements, and block r of every sender's buffer starts at
// the same offset, sum over d < r of c(d): a rank's check needs two numbers, whatever n is.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/collective_types.h"

namespace gpuscale {

// The skew's text, as --skew and the row's "skew" parameter write it: "uniform", "zipf:1.2",
// "weights:4 1 1 1".
std::string alltoallv_skew_text(const AlltoallvSkew& skew);
// Parses that text; nullopt with `why` set on anything else. S lies in (0, 10]; weights are 2 to
// kMaxSkewWeights finite numbers >= 0, at least one above 0.
std::optional<AlltoallvSkew> parse_alltoallv_skew(std::string_view text, std::string& why);
inline constexpr std::size_t kMaxSkewWeights = 65536;
// A skew file's text: one line of weights, one per receiving rank, separated by spaces or commas;
// '#' starts a comment, blank lines are ignored. Nullopt with `why` on anything else (a matrix of
// several rows among them).
std::optional<AlltoallvSkew> parse_alltoallv_skew_file(const std::string& text, std::string& why);
// Why the skew cannot spread data over a group of n ranks (weights for another count); nullopt when it can.
std::optional<std::string> alltoallv_skew_refusal(const AlltoallvSkew& skew, int n);

// Elements each rank sends to peer d (d = 0 .. n-1) out of `count` elements in all. Throws
// std::invalid_argument where alltoallv_skew_refusal refuses.
std::vector<std::uint64_t> alltoallv_peer_counts(std::uint64_t count, const AlltoallvSkew& skew,
                                                 std::uint64_t element_size, int n);

// The table's counts (collective_table.h, AlltoallvRow): param = the uniform per-peer count (count / n
// rounded down to 16 bytes, nccl-tests' paramcount), whose n-fold the skew spreads; send = what a rank
// sends in all (the same on every rank), recv = the busiest receiver's n max c(d); skew as given.
CollCounts alltoallv_counts(std::uint64_t count, const AlltoallvSkew& skew, std::uint64_t element_size, int n);

// What rank `rank` receives from each sender, and where it lies in the sender's buffer.
CollBlock alltoallv_block(const CollCounts& c, std::uint64_t element_size, int rank, int n);

// One rank's arguments to MPI_Alltoallv or grouped send/recv, in elements.
struct AlltoallvLayout {
  std::vector<std::uint64_t> send_counts, send_displs;  // per destination
  std::vector<std::uint64_t> recv_counts, recv_displs;  // per source
};
AlltoallvLayout alltoallv_layout(const CollCounts& c, std::uint64_t element_size, int rank, int n);

}  // namespace gpuscale
