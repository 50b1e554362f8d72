#include "backends/cpu/link_probe.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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

double memcpy_bandwidth(std::uint64_t bytes) {
  const std::size_t n = static_cast<std::size_t>(std::max<std::uint64_t>(bytes, 1));
  std::vector<char> src(n, 1), dst(n, 0);
  // Batches of at least ~1 ms, so small copies are timed over many repetitions.
  const int per_batch = static_cast<int>(std::clamp<std::uint64_t>((8ULL << 20) / n, 1, 100000));
  double best = std::numeric_limits<double>::max();
  for (int b = 0; b < 6; ++b) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_batch; ++i) {
      src[static_cast<std::size_t>(i) % n] = static_cast<char>(i);  // a fresh source each time: no elision
      std::memcpy(dst.data(), src.data(), n);
    }
    auto t1 = std::chrono::steady_clock::now();
    if (b > 0) best = std::min(best, std::chrono::duration<double>(t1 - t0).count() / per_batch);
  }
  volatile char sink = dst[n / 2];
  (void)sink;
  return static_cast<double>(n) / best / 1e9;
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
    peaks.intra_node = {std::nullopt, "measured per message size: one-thread memcpy of the same size (shared memory "
                                      "has no datasheet peak; a same-size local copy is the ceiling of one transfer)"};
    auto cache = std::make_shared<std::map<std::uint64_t, double>>();
    const std::string host = world.host();
    peaks.intra_node_at = [cache, host](std::uint64_t bytes) -> ExpectedPeak {
      auto it = cache->find(bytes);
      if (it == cache->end()) it = cache->emplace(bytes, memcpy_bandwidth(bytes)).first;
      // Every row says this, so it is short: links.intra_node.source in the header says why.
      return {it->second, fmt::format("measured: one-thread memcpy of {} bytes on {}", bytes, host)};
    };
  }
  return peaks;
}

}  // namespace gpuscale
