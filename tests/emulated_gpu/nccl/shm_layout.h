#pragma once
// The shared-memory segment one emulated NCCL communicator's ranks share (tests only). Ranks are
// processes on this machine; every byte they exchange is copied through this segment (never a
// pointer into another process). Counters are lock-free std::atomic, which are address-free, so they
// work across processes mapping the same pages.
//
// Layout: Header, then one RankSlot per rank (its collective staging area follows it), then one
// Channel per ordered pair (sender, receiver) for point-to-point messages.
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace emu_nccl {

inline constexpr std::uint64_t kMagic = 0x67707573656d7531ULL;  // "gpusemu1"
inline constexpr std::size_t kHostNameBytes = 64;

struct alignas(64) Header {
  std::atomic<std::uint64_t> magic;   // set by whoever maps it first; the layout's identity
  std::atomic<std::int32_t> joined;   // ranks that have attached
  std::atomic<std::int32_t> aborted;  // a rank called ncclCommAbort (peers then fail with ncclRemoteError)
  std::int32_t nranks;
};

// A rank's collective staging area: chunk `posted` is in `data`; every peer has read chunks up to its
// own `consumed`.
struct alignas(64) RankSlot {
  std::atomic<std::int32_t> present;     // attached to the communicator
  std::atomic<std::uint64_t> posted;     // sequence number of the chunk in `data`
  std::atomic<std::uint64_t> consumed;   // this rank has read every slot's chunks up to this sequence
  double start_us;                        // the rank's start of the operation the chunk belongs to
  std::int32_t device;                    // its CUDA ordinal (ncclCommCuDevice)
  std::int32_t split_color, split_key;    // ncclCommSplit's arguments, staged for the split
  char host[kHostNameBytes];              // GPUSCALE_TEST_HOSTS's name of its world rank ("" : this machine)
};

// One direction of a point-to-point pair: the sender writes a chunk when `acked == sent`.
struct alignas(64) Channel {
  std::atomic<std::uint64_t> sent;   // chunks written
  std::atomic<std::uint64_t> acked;  // chunks the receiver has copied out
  std::uint64_t bytes;               // bytes in the current chunk
  double sender_start_us;            // the sender's start of its group
  double receiver_start_us;          // written by the receiver with each acknowledgement
};

// Sizes, fixed by the rank count so every rank computes the same layout.
struct Layout {
  int nranks = 0;
  std::size_t slot_data = 0;     // collective staging bytes per rank
  std::size_t channel_data = 0;  // point-to-point bytes per pair
  std::size_t slot_stride = 0, channel_stride = 0, total = 0;
};
Layout layout_for(int nranks);

// Views into a mapped segment.
Header* header(void* base);
RankSlot* slot(void* base, const Layout& l, int rank);
std::byte* slot_data(void* base, const Layout& l, int rank);
Channel* channel(void* base, const Layout& l, int from, int to);
std::byte* channel_data(void* base, const Layout& l, int from, int to);

}  // namespace emu_nccl
