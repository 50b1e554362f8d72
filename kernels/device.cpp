#include "kernels/device.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/units.h"

namespace gpuscale {

double Device::clock_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::uint64_t DeviceInfo::usable_memory_bytes() const {
  if (!memory_unread.empty()) return UINT64_MAX;
  const std::uint64_t unreserved = free_memory_bytes > reserved_memory_bytes ? free_memory_bytes - reserved_memory_bytes : 0;
  return unreserved / static_cast<std::uint64_t>(std::max(ranks_sharing_memory, 1));
}

std::string DeviceInfo::usable_memory_text() const {
  const std::string owner = memory_owner.empty() ? fmt::format("the {} device ({})", backend, name) : memory_owner;
  if (!memory_unread.empty()) return fmt::format("{}'s memory could not be read ({})", owner, memory_unread);
  const std::string kept = reserved_memory_bytes == 0 ? std::string()
                                                      : fmt::format(", {} of it kept for {}", format_bytes(reserved_memory_bytes),
                                                                    reserved_for.empty() ? "the runtime" : reserved_for);
  if (ranks_sharing_memory > 1)
    return fmt::format("each of the {} ranks on this node may use {} of {}'s {} available{}", ranks_sharing_memory,
                       format_bytes(usable_memory_bytes()), owner, format_bytes(free_memory_bytes), kept);
  return fmt::format("{} has {} available{}", owner, format_bytes(free_memory_bytes), kept);
}

}  // namespace gpuscale
