// Planted faults and noise (faults.h).
#include "tests/emulated_gpu/core/faults.h"

#include <cmath>
#include <cstdlib>
#include <mutex>
#include <random>
#include <sstream>
#include <stdexcept>

namespace gpuscale_emu {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

bool counted_kind(const std::string& k) { return k == "sticky" || k == "flip-gemm" || k == "hang-collective"; }

std::string joined_kinds() {
  std::string out;
  for (const auto& k : known_fault_kinds()) out += (out.empty() ? "" : ", ") + k;
  return out;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

}  // namespace

const std::vector<std::string>& known_fault_kinds() {
  static const std::vector<std::string> kinds = {"slow-gpu",  "slow-hbm",  "sticky",         "slow-link",
                                                 "slow-nic",  "flip-gemm", "hang-collective"};
  return kinds;
}

std::vector<PlantedFault> parse_faults(const std::string& text) {
  std::vector<PlantedFault> out;
  for (const auto& raw : split(text, ',')) {
    const std::string item = trim(raw);
    if (item.empty()) continue;
    const auto parts = split(item, ':');
    const std::string where = "GPUSCALE_EMU_FAULTS item '" + item + "': ";
    if (parts.empty()) throw std::invalid_argument(where + "expected KIND:TARGET:VALUE");
    bool known = false;
    for (const auto& k : known_fault_kinds()) known = known || k == parts[0];
    if (!known) throw std::invalid_argument(where + "unknown kind '" + parts[0] + "' (known kinds: " + joined_kinds() + ")");
    if (parts.size() != 3 || parts[1].empty()) throw std::invalid_argument(where + "expected KIND:TARGET:VALUE");
    PlantedFault f;
    f.kind = parts[0];
    f.target = parts[1];
    char* end = nullptr;
    if (counted_kind(f.kind)) {
      f.count = std::strtol(parts[2].c_str(), &end, 10);
      if (*end || f.count < 1) throw std::invalid_argument(where + "the count must be a whole number >= 1");
    } else {
      f.factor = std::strtod(parts[2].c_str(), &end);
      if (*end || !(f.factor > 0) || !std::isfinite(f.factor))
        throw std::invalid_argument(where + "the factor must be a positive number");
    }
    out.push_back(f);
  }
  return out;
}

std::vector<PlantedFault> planted_faults() { return parse_faults(env_or("GPUSCALE_EMU_FAULTS", "")); }

std::string this_test_host() {
  const char* hosts = std::getenv("GPUSCALE_TEST_HOSTS");
  if (hosts == nullptr || *hosts == 0) return "";
  const char* rank_text = std::getenv("OMPI_COMM_WORLD_RANK");
  if (rank_text == nullptr) rank_text = std::getenv("PMI_RANK");
  const long rank = rank_text ? std::strtol(rank_text, nullptr, 10) : 0;
  const auto names = split(hosts, ',');
  return rank >= 0 && static_cast<std::size_t>(rank) < names.size() ? trim(names[static_cast<std::size_t>(rank)]) : "";
}

bool target_here(const std::string& target, std::string& id) {
  const auto slash = target.find('/');
  if (slash == std::string::npos) {
    id = target;
    return true;
  }
  if (target.substr(0, slash) != this_test_host()) return false;
  id = target.substr(slash + 1);
  return true;
}

bool fault_targets(const PlantedFault& f, int index, const std::string& uuid) {
  std::string id;
  return target_here(f.target, id) && (id == std::to_string(index) || id == uuid);
}

NoiseSpec parse_noise(const std::string& text, std::uint64_t seed) {
  NoiseSpec n;
  n.seed = seed;
  for (const auto& raw : split(text, ',')) {
    const std::string item = trim(raw);
    if (item.empty()) continue;
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq);
    char* end = nullptr;
    const double v = eq == std::string::npos ? -1 : std::strtod(item.c_str() + eq + 1, &end);
    if (eq == std::string::npos || *end || !(v >= 0))
      throw std::invalid_argument("GPUSCALE_EMU_NOISE item '" + item + "': expected rep=, gpu= or run= a sigma >= 0");
    if (key == "rep") n.rep = v;
    else if (key == "gpu") n.gpu = v;
    else if (key == "run") n.run = v;
    else throw std::invalid_argument("GPUSCALE_EMU_NOISE item '" + item + "': unknown key (known: rep, gpu, run)");
  }
  return n;
}

NoiseSpec noise_from_env() {
  return parse_noise(env_or("GPUSCALE_EMU_NOISE", ""), std::strtoull(env_or("GPUSCALE_EMU_SEED", "0").c_str(), nullptr, 10));
}

std::uint64_t noise_key(std::uint64_t seed, const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
  std::uint64_t z = h ^ (seed + 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double noise_factor(double sigma, std::uint64_t key) {
  if (sigma <= 0) return 1;
  std::mt19937_64 gen(key);
  std::normal_distribution<double> z(0, 1);
  return std::exp(sigma * z(gen));
}

namespace {
// The launcher's rank (Open MPI, MPICH/PMI, Slurm), so each process of one run draws its own factors.
std::string process_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char* r = std::getenv(v); r && *r) return r;
  return "0";
}
}  // namespace

double next_rep_noise() {
  static const NoiseSpec spec = noise_from_env();
  if (spec.rep <= 0) return 1;
  static std::mutex mu;
  static std::mt19937_64 gen(noise_key(spec.seed, "rep/" + process_rank()));
  std::lock_guard<std::mutex> lock(mu);
  std::normal_distribution<double> z(0, 1);
  return std::exp(spec.rep * z(gen));
}

double run_noise() {
  static const double f = [] {
    const NoiseSpec spec = noise_from_env();
    return noise_factor(spec.run, noise_key(spec.seed, "run/" + process_rank()));
  }();
  return f;
}

}  // namespace gpuscale_emu
