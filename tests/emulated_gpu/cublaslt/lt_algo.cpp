// Candidate algorithms for a problem. The values are plausible for the GPU (Hopper and later report
// automatic stages and a thread-block cluster; earlier GPUs fixed stages and an MMA inner shape) and
// fixed by the problem alone, so two runs of one problem get the same answer, as cuBLASLt's do.
#include "tests/emulated_gpu/cublaslt/lt_algo.h"

#include <cstring>

namespace gpuscale_emu::lt {

void store(const AlgoConfig& c, cublasLtMatmulAlgo_t& algo) {
  std::memset(&algo, 0, sizeof algo);
  std::memcpy(&algo, &c, sizeof c);
}

bool load(const cublasLtMatmulAlgo_t& algo, AlgoConfig& c) {
  std::memcpy(static_cast<void*>(&c), &algo, sizeof c);  // AlgoConfig is trivially copyable
  return c.magic == AlgoConfig::kMagic;
}

namespace {

struct Tile {
  cublasLtMatmulTile_t id;
  std::uint64_t rows, cols;
};

std::uint64_t tiles_over(const Problem& p, const Tile& t) {
  return ((p.m + t.rows - 1) / t.rows) * ((p.n + t.cols - 1) / t.cols) * static_cast<std::uint64_t>(p.batch);
}

AlgoConfig config(const Problem& p, int cc, int sm_count, const Tile& t, int splitk, std::uint32_t swizzle) {
  AlgoConfig c;
  const bool narrow = element_bytes(p.a.type) == 1;
  c.id = 60 + type_row(p);  // one kernel family per type combination
  c.tile = t.id;
  if (cc >= 90) {
    c.stages = narrow ? CUBLASLT_MATMUL_STAGES_128xAUTO : CUBLASLT_MATMUL_STAGES_64xAUTO;
    c.cluster_shape = t.rows * t.cols >= 256 * 128 ? CUBLASLT_CLUSTER_SHAPE_2x1x1 : CUBLASLT_CLUSTER_SHAPE_1x1x1;
    c.inner_shape = CUBLASLT_MATMUL_INNER_SHAPE_UNDEFINED;
  } else {
    c.stages = narrow ? CUBLASLT_MATMUL_STAGES_128x3 : CUBLASLT_MATMUL_STAGES_64x4;
    c.cluster_shape = CUBLASLT_CLUSTER_SHAPE_AUTO;
    c.inner_shape = element_bytes(p.a.type) == 2 ? CUBLASLT_MATMUL_INNER_SHAPE_MMA16816
                                                 : CUBLASLT_MATMUL_INNER_SHAPE_UNDEFINED;
  }
  c.splitk = splitk;
  c.swizzle = swizzle;
  c.waves = static_cast<float>(static_cast<double>(tiles_over(p, t) * static_cast<std::uint64_t>(splitk)) /
                               (sm_count > 0 ? sm_count : 1));
  return c;
}

}  // namespace

std::vector<AlgoConfig> candidate_algorithms(const Problem& p, int cc, int sm_count) {
  const Tile wide{CUBLASLT_MATMUL_TILE_256x128, 256, 128}, tall{CUBLASLT_MATMUL_TILE_128x256, 128, 256},
      square{CUBLASLT_MATMUL_TILE_128x128, 128, 128}, small{CUBLASLT_MATMUL_TILE_64x128, 64, 128};
  std::vector<AlgoConfig> out;
  const bool fills = tiles_over(p, square) >= static_cast<std::uint64_t>(sm_count);
  if (fills) {
    // Large outputs: the big tiles first, the longer side along the tile's longer side.
    out.push_back(config(p, cc, sm_count, p.m >= p.n ? wide : tall, 1, 0));
    out.push_back(config(p, cc, sm_count, p.m >= p.n ? tall : wide, 1, 0));
    out.push_back(config(p, cc, sm_count, square, 1, 1));
  } else {
    out.push_back(config(p, cc, sm_count, square, 1, 0));
    out.push_back(config(p, cc, sm_count, small, 1, 0));
  }
  // A deep product (k above both m and n) also gets split-K candidates, one per reduction scheme: the
  // partial sums in the compute type or in the output type need a workspace of one m x n matrix per split.
  if (p.k > p.m && p.k > p.n) {
    const int splits = 4;
    const std::uint64_t mn = p.m * p.n * static_cast<std::uint64_t>(p.batch) * splits;
    const std::uint64_t compute_bytes = element_bytes(p.op.scale == CUDA_R_64F ? CUDA_R_64F : CUDA_R_32F);
    auto by_compute = config(p, cc, sm_count, square, splits, 0);
    by_compute.reduction = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    by_compute.workspace = mn * compute_bytes;
    out.push_back(by_compute);
    auto by_output = config(p, cc, sm_count, square, splits, 0);
    by_output.reduction = CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE;
    by_output.workspace = mn * element_bytes(p.d.type);
    out.push_back(by_output);
    auto in_place = config(p, cc, sm_count, square, splits, 0);
    in_place.reduction = CUBLASLT_REDUCTION_SCHEME_INPLACE;
    out.push_back(in_place);
  }
  return out;
}

bool preference_admits(const Preference& pref, const AlgoConfig& c) {
  // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES: "Maximum allowed workspace size in bytes".
  if (c.workspace > pref.max_workspace) return false;
  // CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK: "Filters heuristic result to only include algo configs
  // that use one of the required modes" (an algorithm without split-K reduces nothing).
  if (c.reduction != CUBLASLT_REDUCTION_SCHEME_NONE && (c.reduction & pref.reduction_mask) == 0) return false;
  // CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT: "Selecting a non-zero value will exclude algorithms that
  // report device utilization higher than specified."
  if (pref.max_waves > 0 && c.waves > pref.max_waves) return false;
  return true;
}

}  // namespace gpuscale_emu::lt
