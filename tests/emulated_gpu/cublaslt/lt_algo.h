#pragma once
// The algorithms the emulated heuristic offers: a configuration per candidate (the values
// cublasLtMatmulAlgoConfigGetAttribute reads back), chosen deterministically from the problem and
// the GPU, stored in the caller's cublasLtMatmulAlgo_t (cublasLt.h: a "semi-opaque algorithm
// descriptor" of 64 bytes the library fills).
#include <cstdint>
#include <vector>

#include <cublasLt.h>

#include "tests/emulated_gpu/cublaslt/lt_problem.h"

namespace gpuscale_emu::lt {

struct AlgoConfig {
  std::uint32_t magic = kMagic;
  std::int32_t id = 0;             // CUBLASLT_ALGO_CONFIG_ID, int32_t
  std::uint32_t tile = 0;          // TILE_ID, cublasLtMatmulTile_t
  std::uint32_t stages = 0;        // STAGES_ID, cublasLtMatmulStages_t
  std::int32_t splitk = 1;         // SPLITK_NUM
  std::uint32_t reduction = 0;     // REDUCTION_SCHEME, cublasLtReductionScheme_t (NONE without split-K)
  std::uint32_t swizzle = 0;       // CTA_SWIZZLING, 0 or 1
  std::uint32_t custom = 0;        // CUSTOM_OPTION
  std::uint16_t inner_shape = 0;   // INNER_SHAPE_ID, cublasLtMatmulInnerShape_t
  std::uint16_t cluster_shape = 0; // CLUSTER_SHAPE_ID, cublasLtClusterShape_t
  std::uint64_t workspace = 0;     // bytes the algorithm needs
  float waves = 0;                 // tiles x split-K x batch per SM
  static constexpr std::uint32_t kMagic = 0x4c74416c;  // "LtAl": an algorithm this library made
};
static_assert(sizeof(AlgoConfig) <= sizeof(cublasLtMatmulAlgo_t));

void store(const AlgoConfig& c, cublasLtMatmulAlgo_t& algo);
// false when `algo` was not filled by this library.
bool load(const cublasLtMatmulAlgo_t& algo, AlgoConfig& c);

// Every candidate for a supported problem on a GPU of `sm_count` SMs and compute capability `cc`,
// best first, before the preference's filters.
std::vector<AlgoConfig> candidate_algorithms(const Problem& p, int cc, int sm_count);

// Whether the preference admits a candidate (workspace, reduction scheme mask, waves).
bool preference_admits(const Preference& pref, const AlgoConfig& c);

}  // namespace gpuscale_emu::lt
