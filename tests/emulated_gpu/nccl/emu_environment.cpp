#include "tests/emulated_gpu/nccl/emu_environment.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace emu_nccl {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);) out.push_back(item);
  return out;
}

bool to_double(const std::string& s, double& v) {
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && end != nullptr && *end == '\0';
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

EmuFaults parse_emu_faults(const std::string& text) {
  EmuFaults f;
  for (const auto& item : split(text, ',')) {
    const auto parts = split(item, ':');
    if (parts.empty()) continue;
    const std::string& kind = parts[0];
    if (kind != "hang-collective" && kind != "slow-link" && kind != "slow-nic") continue;
    double a = 0, b = 0;
    const bool ok = parts.size() == 3 && to_double(parts[2], b) &&
                    (kind != "hang-collective" || (to_double(parts[1], a) && a >= 0 && b >= 1)) && b > 0;
    if (!ok) {
      std::fprintf(stderr, "emulated NCCL: GPUSCALE_EMU_FAULTS item '%s' is malformed; skipped\n", item.c_str());
      continue;
    }
    if (kind == "hang-collective")
      f.hangs.push_back({static_cast<int>(a), static_cast<long>(b)});
    else
      f.slow.push_back({kind == "slow-nic", parts[1], b});
  }
  return f;
}

const EmuFaults& emu_faults() {
  static const EmuFaults f = parse_emu_faults(env("GPUSCALE_EMU_FAULTS"));
  return f;
}

int world_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK"}) {
    const std::string v = env(name);
    if (!v.empty()) return std::atoi(v.c_str());
  }
  return -1;
}

std::string this_host() {
  const auto hosts = split(env("GPUSCALE_TEST_HOSTS"), ',');
  const int r = world_rank();
  if (r < 0 || static_cast<std::size_t>(r) >= hosts.size()) return "";
  std::string h = hosts[static_cast<std::size_t>(r)];
  const auto first = h.find_first_not_of(" \t"), last = h.find_last_not_of(" \t");
  return first == std::string::npos ? "" : h.substr(first, last - first + 1);
}

double wait_bound_s() {
  double v = 0;
  return to_double(env("GPUSCALE_EMU_NCCL_WAIT_S"), v) && v > 0 ? v : 120.0;
}

int reported_version() {
  const std::string v = env("FAKE_NCCL_VERSION");
  return v.empty() ? 22800 : std::atoi(v.c_str());
}

}  // namespace emu_nccl
