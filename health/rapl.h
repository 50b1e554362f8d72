#pragma once
// The node's CPU energy from RAPL through Linux powercap (/sys/class/powercap/intel-rapl:N, one zone
// per CPU package; AMD's packages appear under the same name): each zone's energy_uj, a µJ counter that
// wraps at its max_energy_range_uj. The CPU backend's rows take their energy from here (scope "node":
// the whole package, every process on it). Since Linux 5.10 energy_uj is readable by root only: a zone
// that cannot be read gives no energy, with the reason, never a guess.
#include <cstdint>
#include <string>
#include <vector>

#include "health/energy_counter.h"

namespace gpuscale::health {

inline constexpr const char* kPowercapRoot = "/sys/class/powercap";

struct RaplZone {
  std::string name;    // "package-0", from the zone's name file
  std::string energy;  // path of its energy_uj
  EnergyCounter counter;
};

struct Rapl {
  std::vector<RaplZone> zones;  // the package zones, in directory order
  std::string why_none;         // why there is none ("" when some)
  std::string source() const;   // "RAPL package-0+package-1"
};

// The package zones under `root` (kPowercapRoot; tests pass a directory of their own). Subzones (core,
// uncore, dram: intel-rapl:N:M) are inside their package's figure and are not added again.
Rapl find_rapl(const std::string& root = kPowercapRoot);

struct RaplReading {
  double t = 0;  // seconds on the caller's clock
  std::vector<std::uint64_t> uj;  // one per zone; empty when unreadable
  std::string why_not;            // why unreadable ("" when read)
};
RaplReading read_rapl(const Rapl& rapl, double t);

// The node's energy between two readings: the sum of its packages (unknown with the reason when a
// reading failed or a counter misbehaved).
EnergyWindow rapl_energy(const Rapl& rapl, const RaplReading& before, const RaplReading& after);

}  // namespace gpuscale::health
