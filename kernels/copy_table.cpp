#include "kernels/copy_table.h"

namespace gpuscale {

const CopyCaseSpec& copy_spec(CopyKind kind) {
  for (const auto& c : kCopyCases)
    if (c.kind == kind) return c;
  return kCopyCases[0];  // unreachable: every kind is in the table
}

std::uint64_t copy_bytes_counted(CopyKind kind, std::uint64_t size) {
  return static_cast<std::uint64_t>(copy_spec(kind).bytes_factor) * size;
}

std::uint64_t copy_bytes_once(CopyKind kind, std::uint64_t size) {
  return kind == CopyKind::d2d ? size : copy_bytes_counted(kind, size);
}

std::string_view copy_counting_name(CopyKind kind) {
  return copy_bytes_once(kind, 1) == copy_bytes_counted(kind, 1) ? "once" : "read+write";
}

std::uint64_t copy_size_rounded(std::uint64_t requested) {
  const std::uint64_t r = requested / 16 * 16;
  return r == 0 ? 16 : r;
}

std::string_view peer_direction_name(PeerDirection d) { return d == PeerDirection::write ? "write" : "read"; }

std::optional<PeerDirection> parse_peer_direction(std::string_view name) {
  if (name == "write") return PeerDirection::write;
  if (name == "read") return PeerDirection::read;
  return std::nullopt;
}

int peer_ordinal(int own, int offset, int visible) {
  if (visible <= 0) return own;
  return ((own + offset) % visible + visible) % visible;
}

std::string_view peer_mode_name(PeerMode m) { return m == PeerMode::all_pairs ? "all-pairs" : "one-pair"; }

std::optional<PeerMode> parse_peer_mode(std::string_view name) {
  if (name == "all-pairs") return PeerMode::all_pairs;
  if (name == "one-pair") return PeerMode::one_pair;
  return std::nullopt;
}

std::vector<std::vector<int>> peer_copy_turns(PeerMode mode, int ranks) {
  std::vector<std::vector<int>> turns;
  if (ranks <= 0) return turns;
  if (mode == PeerMode::all_pairs) {
    turns.emplace_back();
    for (int r = 0; r < ranks; ++r) turns.back().push_back(r);
    return turns;
  }
  for (int r = 0; r < ranks; ++r) turns.push_back({r});
  return turns;
}

}  // namespace gpuscale
