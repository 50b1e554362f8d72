#include "harness/checkpoint_plan.h"

#include <fmt/format.h>

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

}  // namespace gpuscale
