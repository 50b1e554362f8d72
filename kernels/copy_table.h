#pragma once
// The copy bandwidth cases (nvbandwidth's main test cases are the model) with how each counts its
// bytes. One table serves the harness (keys, descriptions, byte counts, docs) and the devices.
//
// Bytes counted per copy of `size` bytes:
//   h2d, d2h, p2p_ce, p2p_sm   size          one direction over one link
//   bidir                      2 x size      host-to-device and device-to-host at once, both directions added
//   d2d                        2 x size      read plus written in the same memory, as STREAM copy counts
// d2d also reports the once-counted figure (size per copy), nvbandwidth's device-to-device number,
// half the read-plus-write one.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/random.h"

namespace gpuscale {

enum class CopyKind { h2d, d2h, bidir, d2d, p2p_ce, p2p_sm };

struct CopyCaseSpec {
  CopyKind kind;
  std::string_view name;         // benchmark key suffix: "copy.<name>"
  std::string_view description;  // what is copied, by what
  std::string_view counted;      // which bytes the GB/s figure counts
  int bytes_factor;              // bytes counted = bytes_factor x size
  bool peer;                     // needs a second GPU
};

inline constexpr std::array<CopyCaseSpec, 6> kCopyCases{{
    {CopyKind::h2d, "h2d", "pinned host memory to this GPU, copy engine (cudaMemcpyAsync)",
     "bytes copied, one direction", 1, false},
    {CopyKind::d2h, "d2h", "this GPU to pinned host memory, copy engine (cudaMemcpyAsync)",
     "bytes copied, one direction", 1, false},
    {CopyKind::bidir, "bidir", "host to device and device to host at the same time on two streams, copy engines",
     "bytes copied in both directions added (2 x size)", 2, false},
    {CopyKind::d2d, "d2d", "one buffer to another in this GPU's memory, copy engine (cudaMemcpyAsync)",
     "bytes read plus bytes written (2 x size), as STREAM copy", 2, false},
    {CopyKind::p2p_ce, "p2p_ce", "between this GPU and a peer GPU of the node, copy engine (cudaMemcpyPeerAsync)",
     "bytes copied over the link, one direction", 1, true},
    {CopyKind::p2p_sm, "p2p_sm", "between this GPU and a peer GPU, a copy kernel on this GPU's SMs through peer access",
     "bytes copied over the link, one direction", 1, true},
}};

const CopyCaseSpec& copy_spec(CopyKind kind);
// Bytes the GB/s figure counts for one copy of `size` bytes.
std::uint64_t copy_bytes_counted(CopyKind kind, std::uint64_t size);
// Bytes each copied byte counted once (what nvbandwidth reports): size, or 2 x size for bidir, whose
// two directions move different bytes. Differs from copy_bytes_counted only for d2d.
std::uint64_t copy_bytes_once(CopyKind kind, std::uint64_t size);
// The counting the row value uses, for the row's label: "read+write" when each byte counts twice
// (d2d), else "once".
std::string_view copy_counting_name(CopyKind kind);
// Copy sizes are whole 16-byte vectors (the SM copy kernel moves 16 bytes per access): rounds down,
// never below 16.
std::uint64_t copy_size_rounded(std::uint64_t requested);

// Peer copies: "write" pushes from this GPU into the peer's memory, "read" pulls from the peer.
enum class PeerDirection { write, read };
std::string_view peer_direction_name(PeerDirection d);
std::optional<PeerDirection> parse_peer_direction(std::string_view name);
// The peer of GPU `own` at `offset` among `visible` GPUs: (own + offset) mod visible.
int peer_ordinal(int own, int offset, int visible);

// How the ranks' peer copies share the time: all-pairs runs every rank's pair at once (the links and
// switches loaded together); one-pair runs one pair at a time while the others wait, as nvbandwidth
// measures each pair.
enum class PeerMode { all_pairs, one_pair };
std::string_view peer_mode_name(PeerMode m);  // "all-pairs", "one-pair"
std::optional<PeerMode> parse_peer_mode(std::string_view name);
// The turns of a peer copy among `ranks` group ranks: each turn lists the ranks that copy in it, in
// order. all-pairs: one turn of every rank; one-pair: one turn per rank, rank 0 first. Every rank is
// in exactly one turn.
std::vector<std::vector<int>> peer_copy_turns(PeerMode mode, int ranks);

// Word i of the random data a copy moves (verification regenerates it from the seed).
enum CopyStream : std::uint64_t { kCopyData = 31 };
GPUSCALE_HD inline std::uint32_t copy_word(std::uint64_t seed, std::uint64_t i) {
  return static_cast<std::uint32_t>(random_bits(seed, kCopyData, i) >> 32);
}

}  // namespace gpuscale
