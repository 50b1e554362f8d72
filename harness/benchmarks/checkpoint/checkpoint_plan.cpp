#include "harness/benchmarks/checkpoint/checkpoint_plan.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/term_text.h"
#include "core/units.h"

namespace gpuscale {

std::string_view ckpt_layout_name(CkptLayout l) {
  return l == CkptLayout::file_per_rank ? "file_per_rank" : "shared_file";
}

std::string_view ckpt_io_name(CkptIo io) { return io == CkptIo::buffered ? "buffered" : "direct"; }

CkptShard ckpt_shard(std::uint64_t total, int ranks, int index, CkptLayout layout) {
  const auto n = static_cast<std::uint64_t>(ranks < 1 ? 1 : ranks);
  const auto i = static_cast<std::uint64_t>(index < 0 ? 0 : index);
  const std::uint64_t units = total / kCkptAlignment;
  const std::uint64_t each = units / n * kCkptAlignment;
  const std::uint64_t bytes = i + 1 == n ? total - each * (n - 1) : each;
  return {layout == CkptLayout::shared_file ? each * i : 0, bytes};
}

std::optional<std::string> ckpt_size_problem(std::uint64_t total, int max_ranks) {
  const auto n = static_cast<std::uint64_t>(max_ranks < 1 ? 1 : max_ranks);
  if (total == 0) return "a checkpoint of 0 bytes";
  if (total % kCkptAlignment != 0)
    return fmt::format("{} bytes is not a whole number of {}-byte blocks (O_DIRECT's alignment): give a multiple of 4K",
                       total, kCkptAlignment);
  if (total / kCkptAlignment < n)
    return fmt::format("{} cannot give each of {} ranks one {}-byte block", format_size(total), n, kCkptAlignment);
  return std::nullopt;
}

std::uint64_t ckpt_space_needed(std::uint64_t total) { return total + total / 20; }

namespace {
std::string gib(std::uint64_t bytes) { return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1ULL << 30)); }
}  // namespace

std::optional<std::string> ckpt_space_problem(const std::string& dir, std::uint64_t free_bytes, std::uint64_t total) {
  const auto need = ckpt_space_needed(total);
  if (free_bytes >= need) return std::nullopt;
  return fmt::format("{} has {} free, a checkpoint of {} needs {} (5% for the file system): nothing was written", dir,
                     gib(free_bytes), gib(total), gib(need));
}

std::string ckpt_file_name(std::string_view run_id, CkptLayout layout, int rank) {
  if (layout == CkptLayout::shared_file) return fmt::format("gpuscale-ckpt-{}-g{}.bin", run_id, rank);
  return fmt::format("gpuscale-ckpt-{}-r{}.bin", run_id, rank);
}

bool ckpt_node_local_fs(std::string_view fs_type) {
  static constexpr std::array<std::string_view, 12> local = {"ext2", "ext3",  "ext4", "xfs",  "btrfs", "f2fs",
                                                             "zfs",  "tmpfs", "ramfs", "overlay", "vfat", "bcachefs"};
  return std::find(local.begin(), local.end(), fs_type) != local.end();
}

double ckpt_fs_key(std::string_view fs_type, std::string_view source) {
  std::uint64_t h = 14695981039346656037ULL;  // FNV-1a over type, a NUL, then source
  auto add = [&](std::string_view s) {
    for (const unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  };
  add(fs_type);
  add(std::string_view("\0", 1));
  add(source);
  return static_cast<double>(h >> 11);  // 53 bits: exact in a double
}

CkptSharedVerdict ckpt_shared_verdict(const std::vector<CkptPlace>& ranks, std::string_view fs_type) {
  CkptSharedVerdict v;
  if (ranks.empty()) return v;
  const auto& first = ranks.front();
  for (const auto& r : ranks)
    if (r.host != first.host && ckpt_node_local_fs(fs_type)) {
      v.kind = CkptSharedVerdict::Kind::skip;
      v.why = fmt::format("a shared file cannot span hosts {} and {}: --ckpt-dir is on {}, local to each node",
                          terminal_safe(first.host), terminal_safe(r.host), terminal_safe(fs_type));
      return v;
    }
  for (const auto& r : ranks)
    if (r.fs_key != first.fs_key) {
      v.kind = CkptSharedVerdict::Kind::refuse;
      v.why = fmt::format("--ckpt-dir: world ranks {} and {} see it on different file systems: a shared file needs one",
                          first.world_rank, r.world_rank);
      return v;
    }
  return v;
}

std::optional<std::string> ckpt_direct_skip(CkptIo io, const std::vector<std::string>& problems) {
  if (io != CkptIo::direct) return std::nullopt;
  for (const auto& why : problems)
    if (!why.empty()) return fmt::format("direct I/O not measured: {}; the buffered points measure this directory", why);
  return std::nullopt;
}

}  // namespace gpuscale
