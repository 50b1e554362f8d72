#include "kernels/cpu/cpu_topology.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

namespace gpuscale {
namespace {

std::string read_first_line(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::string line;
  std::getline(f, line);
  return line;
}

// "32768K" / "480M" -> bytes
std::uint64_t parse_cache_size(const std::string& s) {
  if (s.empty()) return 0;
  std::uint64_t v = 0;
  std::size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) v = v * 10 + static_cast<std::uint64_t>(s[i++] - '0');
  if (i < s.size()) {
    switch (s[i]) {
      case 'K': v <<= 10; break;
      case 'M': v <<= 20; break;
      case 'G': v <<= 30; break;
      default: break;
    }
  }
  return v;
}

}  // namespace

std::optional<std::uint64_t> meminfo_field(std::istream& meminfo, const std::string& name) {
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    std::uint64_t kb = 0;
    if (fields >> key >> kb && key == name + ":") return kb * 1024;
  }
  return std::nullopt;
}

CpuTopology read_cpu_topology() {
  CpuTopology t;
  {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line)) {
      if (line.rfind("model name", 0) == 0) {
        auto colon = line.find(':');
        if (colon != std::string::npos) t.model = line.substr(line.find_first_not_of(" \t", colon + 1));
        break;
      }
    }
    if (t.model.empty()) t.model = "unknown CPU";
  }
  t.online_cores = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  cpu_set_t set;
  CPU_ZERO(&set);
  t.affinity_cores = sched_getaffinity(0, sizeof set, &set) == 0 ? std::max(1, CPU_COUNT(&set)) : t.online_cores;

  // The largest data/unified cache of cpu0 is the last level.
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/sys/devices/system/cpu/cpu0/cache", ec)) {
    if (entry.path().filename().string().rfind("index", 0) != 0) continue;
    if (read_first_line(entry.path() / "type") == "Instruction") continue;
    auto size = parse_cache_size(read_first_line(entry.path() / "size"));
    if (size > t.llc_bytes) {
      t.llc_bytes = size;
      t.llc_name = fmt::format("L{}", read_first_line(entry.path() / "level"));
    }
  }
  // A container or chroot without /proc: the memory is unknown, said so, never "0 bytes available".
  std::ifstream meminfo("/proc/meminfo");
  if (!meminfo) {
    t.memory_unread = fmt::format("/proc/meminfo cannot be read: {}", std::strerror(errno));
    return t;
  }
  const auto available = meminfo_field(meminfo, "MemAvailable");
  meminfo.clear();
  meminfo.seekg(0);
  t.memory_bytes = meminfo_field(meminfo, "MemTotal").value_or(0);
  if (available) t.available_bytes = *available;
  else t.memory_unread = "/proc/meminfo has no MemAvailable line";
  return t;
}

int default_threads_per_rank(const CpuTopology& topo, int ranks_on_node) {
  int share = std::max(1, topo.online_cores / std::max(1, ranks_on_node));
  return std::max(1, std::min(share, topo.affinity_cores));
}

std::uint64_t default_cpu_stream_array_bytes(const CpuTopology& topo, int ranks_on_node, bool* capped) {
  constexpr std::uint64_t kMin = 64ULL << 20;
  const std::uint64_t want = std::max(kMin, 4 * topo.llc_bytes);
  const std::uint64_t ranks = static_cast<std::uint64_t>(std::max(1, ranks_on_node));
  const std::uint64_t cap = topo.available_bytes / (2 * 3 * ranks);
  const bool cut = topo.available_bytes > 0 && cap < want;
  if (capped) *capped = cut;
  // Whole MiB keeps the size readable in results ("1843M").
  return ((cut ? std::max(cap, std::uint64_t{1} << 20) : want) >> 20) << 20;
}

}  // namespace gpuscale
