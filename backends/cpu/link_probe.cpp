#include "backends/cpu/link_probe.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/units.h"
#include "kernels/cpu/cpu_topology.h"

namespace gpuscale {
namespace {

namespace fs = std::filesystem;

std::string first_line(const fs::path& p) {
  std::ifstream f(p);
  std::string s;
  std::getline(f, s);
  return s;
}

}  // namespace

std::uint64_t link_probe_bytes(std::uint64_t llc_bytes, std::uint64_t available_bytes) {
  constexpr std::uint64_t kMin = 64ULL << 20, kMax = 1ULL << 30;
  std::uint64_t bytes = std::clamp<std::uint64_t>(4 * llc_bytes, kMin, kMax);
  // Two buffers of it: at most a quarter of what is available, never below 1 MiB.
  if (available_bytes > 0) bytes = std::min(bytes, std::max<std::uint64_t>(available_bytes / 8, 1ULL << 20));
  return bytes;
}

double memcpy_bandwidth(std::uint64_t bytes, int reps) {
  const std::size_t n = static_cast<std::size_t>(std::max<std::uint64_t>(bytes, 1));
  std::vector<char> src(n, 1), dst(n, 0);
  std::vector<double> gbps;
  for (int r = 0; r <= std::max(reps, 1); ++r) {  // the first copy faults the pages in: not timed
    src[static_cast<std::size_t>(r) % n] = static_cast<char>(r);  // a fresh source each time: no elision
    const auto t0 = std::chrono::steady_clock::now();
    std::memcpy(dst.data(), src.data(), n);
    const auto t1 = std::chrono::steady_clock::now();
    if (r > 0) gbps.push_back(static_cast<double>(n) / std::chrono::duration<double>(t1 - t0).count() / 1e9);
  }
  volatile char sink = dst[n / 2];
  (void)sink;
  std::sort(gbps.begin(), gbps.end());
  const std::size_t m = gbps.size();
  return m % 2 ? gbps[m / 2] : (gbps[m / 2 - 1] + gbps[m / 2]) / 2;
}

std::optional<double> parse_ib_rate(const std::string& text) {
  double gbit = 0;
  char unit[8] = {};
  if (std::sscanf(text.c_str(), "%lf %7s", &gbit, unit) != 2 || gbit <= 0) return std::nullopt;
  if (std::strncmp(unit, "Gb", 2) != 0) return std::nullopt;
  return gbit / 8.0;
}

std::optional<std::pair<double, std::string>> fastest_network_port(const std::string& sysfs_root) {
  std::optional<std::pair<double, std::string>> best;
  auto consider = [&](double gbs, const std::string& name) {
    if (gbs > 0 && (!best || gbs > best->first)) best = std::make_pair(gbs, name);
  };
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(sysfs_root) / "class/net", ec)) {
    const auto name = e.path().filename().string();
    if (name == "lo" || first_line(e.path() / "operstate") != "up") continue;
    try {
      const long mbit = std::stol(first_line(e.path() / "speed"));  // -1 when unknown
      if (mbit > 0) consider(static_cast<double>(mbit) / 8000.0, name);
    } catch (const std::exception&) {
    }
  }
  for (const auto& dev : fs::directory_iterator(fs::path(sysfs_root) / "class/infiniband", ec)) {
    std::error_code ec2;
    for (const auto& port : fs::directory_iterator(dev.path() / "ports", ec2)) {
      if (first_line(port.path() / "state").find("ACTIVE") == std::string::npos) continue;
      if (auto r = parse_ib_rate(first_line(port.path() / "rate")))
        consider(*r, dev.path().filename().string() + "/" + port.path().filename().string());
    }
  }
  return best;
}

ExpectedPeak network_link_peak(const World& world, const BackendOptions& opts) {
  // Each node's first rank reads its ports; every rank keeps the slowest node's fastest port.
  nlohmann::json mine = {{"host", world.host()}};
  if (world.local_rank() == 0)
    if (auto port = fastest_network_port()) mine["port"] = {port->first, port->second};
  double port_min = 0;
  std::string port_desc;
  for (const auto& text : world.allgather(mine.dump())) {
    const auto j = nlohmann::json::parse(text);
    if (j.contains("port") && (port_desc.empty() || j["port"][0].get<double>() < port_min)) {
      port_min = j["port"][0].get<double>();
      port_desc = fmt::format("{} on {}", j["port"][1].get<std::string>(), j["host"].get<std::string>());
    }
  }
  if (opts.net_peak) return {*opts.net_peak, "--net-peak"};
  if (!port_desc.empty()) return {port_min, fmt::format("line rate of {} (slowest node's fastest port)", port_desc)};
  return {std::nullopt, "no network port reports a speed (give --net-peak GB/s)"};
}

LinkPeaks cpu_link_peaks(const World& world, const BackendOptions& opts) {
  LinkPeaks peaks;
  peaks.inter_node = network_link_peak(world, opts);
  if (opts.link_peak) {
    peaks.intra_node = {*opts.link_peak, "--link-peak"};
  } else {
    peaks.intra_node = {std::nullopt, fmt::format("measured when a collective first needs it: median of {} one-thread "
                                                  "memcpy of a buffer beyond the caches (shared memory has no datasheet peak)",
                                                  kLinkProbeReps)};
    // One figure for every message size: measured once, at a size no cache holds (a small copy timed
    // once is cache speed and timer noise, and would make every row's efficiency a guess).
    auto measured = std::make_shared<std::optional<ExpectedPeak>>();
    const std::string host = world.host();
    peaks.intra_node_at = [measured, host](std::uint64_t) -> ExpectedPeak {
      if (!*measured) {
        const auto topo = read_cpu_topology();
        const std::uint64_t bytes = link_probe_bytes(topo.llc_bytes, topo.available_bytes);
        const double gbps = memcpy_bandwidth(bytes, kLinkProbeReps);
        const std::string llc = topo.llc_bytes > 0 ? fmt::format("{} {}", format_size(topo.llc_bytes), topo.llc_name)
                                                   : std::string("unknown last-level cache");
        *measured = ExpectedPeak{gbps, fmt::format("measured: median of {} one-thread memcpy of {} on {} (the {})",
                                                   kLinkProbeReps, format_size(bytes), host, llc)};
      }
      return **measured;
    };
  }
  return peaks;
}

}  // namespace gpuscale
