#include "tests/emulated_gpu/nccl/shm_layout.h"

#include <algorithm>

namespace emu_nccl {
namespace {
std::size_t round_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }
}  // namespace

Layout layout_for(int nranks) {
  // Staging stays bounded (about 16 MiB of point-to-point channels in all, 1 MiB of collective staging
  // per rank): large messages go through in chunks. tmpfs gives pages only where they are written.
  Layout l;
  l.nranks = nranks;
  const auto n = static_cast<std::size_t>(nranks);
  l.slot_data = std::size_t{1} << 20;
  l.channel_data = std::clamp<std::size_t>((std::size_t{16} << 20) / (n * n), 4096, std::size_t{256} << 10) / 64 * 64;
  l.slot_stride = round_up(sizeof(RankSlot) + l.slot_data, 4096);
  l.channel_stride = round_up(sizeof(Channel) + l.channel_data, 64);
  l.total = round_up(sizeof(Header), 4096) + n * l.slot_stride + n * n * l.channel_stride;
  return l;
}

Header* header(void* base) { return static_cast<Header*>(base); }

RankSlot* slot(void* base, const Layout& l, int rank) {
  auto* p = static_cast<std::byte*>(base) + round_up(sizeof(Header), 4096) + static_cast<std::size_t>(rank) * l.slot_stride;
  return reinterpret_cast<RankSlot*>(p);
}
std::byte* slot_data(void* base, const Layout& l, int rank) {
  return reinterpret_cast<std::byte*>(slot(base, l, rank)) + sizeof(RankSlot);
}

Channel* channel(void* base, const Layout& l, int from, int to) {
  const auto n = static_cast<std::size_t>(l.nranks);
  auto* p = static_cast<std::byte*>(base) + round_up(sizeof(Header), 4096) + n * l.slot_stride +
            (static_cast<std::size_t>(from) * n + static_cast<std::size_t>(to)) * l.channel_stride;
  return reinterpret_cast<Channel*>(p);
}
std::byte* channel_data(void* base, const Layout& l, int from, int to) {
  return reinterpret_cast<std::byte*>(channel(base, l, from, to)) + sizeof(Channel);
}

}  // namespace emu_nccl
