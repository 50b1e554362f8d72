#pragma once
// Planted faults and noise of the emulated node (tests only). Nothing here is NVIDIA behaviour: these
// are the test's own knobs, so a test can plant a slow GPU, slow memory or a failing device and check
// that gpuscale finds it.
//
// GPUSCALE_EMU_FAULTS, a comma list of KIND:TARGET:VALUE items:
//   slow-gpu:ID:FACTOR          every duration on that device x FACTOR   (the core applies it)
//   slow-hbm:ID:FACTOR          memory-kind durations on it x FACTOR     (the core applies it)
//   sticky:ID:N                 the N-th kernel launch on it sets cudaErrorIllegalAddress, sticky
//   slow-link:ID:FACTOR, slow-nic:ID:FACTOR, flip-gemm:ID:N, hang-collective:ID:N
//                               parsed here, acted on by the NCCL and cuBLASLt emulations
// ID is a device ordinal (before CUDA_VISIBLE_DEVICES: the node's own numbering) or a UUID, and may
// be qualified by a test host, HOST/ID: it then acts only in the processes that stand for HOST
// (GPUSCALE_TEST_HOSTS' name for the process's world rank, world/test_hosts.h), as every test host
// reads the same scenario and so numbers its GPUs alike.
//
// GPUSCALE_EMU_NOISE="rep=0.01,gpu=0.02,run=0.0" and GPUSCALE_EMU_SEED=N: multiplicative factors
// exp(sigma * z), z standard normal (log-normal): rep draws one per operation, gpu one per device
// (from the seed and the device's UUID, so every process agrees), run one per process (from the seed
// and the rank the launcher gives). Seeded, so a run replays exactly. Default: no noise, no faults.
#include <cstdint>
#include <string>
#include <vector>

namespace gpuscale_emu {

struct PlantedFault {
  std::string kind;    // one of known_fault_kinds()
  std::string target;  // an ordinal ("0") or a UUID, as written
  double factor = 1;   // slow-*: the multiplier
  long count = 0;      // sticky, flip-gemm, hang-collective: the N-th event it acts on
};

// "slow-gpu, slow-hbm, sticky, slow-link, slow-nic, flip-gemm, hang-collective"
const std::vector<std::string>& known_fault_kinds();

// Parses a GPUSCALE_EMU_FAULTS value. Throws std::invalid_argument with one line naming the item and,
// for an unknown kind, the known kinds.
std::vector<PlantedFault> parse_faults(const std::string& text);
// parse_faults(getenv("GPUSCALE_EMU_FAULTS")), empty when unset.
std::vector<PlantedFault> planted_faults();

// The test host this process stands for: GPUSCALE_TEST_HOSTS' entry for its world rank
// (OMPI_COMM_WORLD_RANK or PMI_RANK; rank 0 without either); "" without GPUSCALE_TEST_HOSTS.
std::string this_test_host();
// A target without its host: "h1/3" -> "3" when this process stands for h1; nothing for another host;
// a target without a host as it is.
bool target_here(const std::string& target, std::string& id);

// Whether `f` targets the device with node index `index` and UUID `uuid` (its host, if any, this one's).
bool fault_targets(const PlantedFault& f, int index, const std::string& uuid);

struct NoiseSpec {
  double rep = 0, gpu = 0, run = 0;  // sigmas of log-normal factors
  std::uint64_t seed = 0;
};
// Parses GPUSCALE_EMU_NOISE's value ("rep=0.01,gpu=0.02"); throws std::invalid_argument on a bad key.
NoiseSpec parse_noise(const std::string& text, std::uint64_t seed);
NoiseSpec noise_from_env();  // GPUSCALE_EMU_NOISE, GPUSCALE_EMU_SEED

// A log-normal factor exp(sigma z) with z drawn from a generator seeded by `key` (deterministic).
double noise_factor(double sigma, std::uint64_t key);
// A stable 64-bit hash of text mixed with a seed (FNV-1a then splitmix64), for the keys above.
std::uint64_t noise_key(std::uint64_t seed, const std::string& text);

// The per-operation factor of this process: the rep sigma's next draw (1 when rep = 0).
double next_rep_noise();
// The per-process factor (run sigma; 1 when 0).
double run_noise();

}  // namespace gpuscale_emu
