#include "health/rapl.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>

namespace gpuscale::health {
namespace {

namespace fs = std::filesystem;

// The first line of a sysfs file, or nullopt with the reason.
std::optional<std::string> read_line(const std::string& path, std::string* why) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) {
    *why = fmt::format("cannot read {}: {}", path, errno ? std::strerror(errno) : "empty");
    return std::nullopt;
  }
  return line;
}

std::optional<std::uint64_t> read_counter(const std::string& path, std::string* why) {
  errno = 0;
  const auto line = read_line(path, why);
  if (!line) return std::nullopt;
  try {
    std::size_t used = 0;
    const auto v = std::stoull(*line, &used);
    if (used == line->size()) return v;
  } catch (const std::exception&) {
  }
  *why = fmt::format("{} holds no counter", path);
  return std::nullopt;
}

}  // namespace

std::string Rapl::source() const {
  std::string s = "RAPL ";
  for (std::size_t i = 0; i < zones.size(); ++i) s += (i ? "+" : "") + zones[i].name;
  return s;
}

Rapl find_rapl(const std::string& root) {
  Rapl r;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    r.why_none = fmt::format("no powercap under {}: no RAPL on this node or kernel", root);
    return r;
  }
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const auto name = e.path().filename().string();
    const std::string prefix = "intel-rapl:";
    const auto digits = name.size() > prefix.size() ? name.substr(prefix.size()) : std::string();
    if (name.rfind(prefix, 0) == 0 && !digits.empty() &&
        std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  for (const auto& d : dirs) {
    std::string why;
    RaplZone z;
    z.name = read_line((d / "name").string(), &why).value_or(d.filename().string());
    z.energy = (d / "energy_uj").string();
    const auto range = read_counter((d / "max_energy_range_uj").string(), &why);
    z.counter = EnergyCounter{1e-6, range, "RAPL " + z.name};
    if (!range) {
      r.zones.clear();
      r.why_none = fmt::format("RAPL zone {}: {}", d.filename().string(), why);
      return r;
    }
    r.zones.push_back(std::move(z));
  }
  if (r.zones.empty()) r.why_none = fmt::format("no RAPL package zone (intel-rapl:N) under {}", root);
  return r;
}

RaplReading read_rapl(const Rapl& rapl, double t) {
  RaplReading out;
  out.t = t;
  if (rapl.zones.empty()) {
    out.why_not = rapl.why_none;
    return out;
  }
  for (const auto& z : rapl.zones) {
    const auto v = read_counter(z.energy, &out.why_not);
    if (!v) {
      out.uj.clear();
      return out;
    }
    out.uj.push_back(*v);
  }
  return out;
}

EnergyWindow rapl_energy(const Rapl& rapl, const RaplReading& before, const RaplReading& after) {
  EnergyWindow w{"node", rapl.zones.empty() ? "RAPL" : rapl.source(), {}, after.t - before.t};
  if (!before.why_not.empty() || !after.why_not.empty()) {
    w.energy.invalid = !before.why_not.empty() ? before.why_not : after.why_not;
    return w;
  }
  if (before.uj.size() != rapl.zones.size() || after.uj.size() != rapl.zones.size()) {
    w.energy.invalid = "RAPL was not read at both ends of the window";
    return w;
  }
  std::vector<Energy> parts;
  for (std::size_t i = 0; i < rapl.zones.size(); ++i)
    parts.push_back(energy_between(rapl.zones[i].counter, before.uj[i], after.uj[i]));
  w.energy = sum_energy(parts);
  return w;
}

}  // namespace gpuscale::health
