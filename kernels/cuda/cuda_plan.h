#pragma once
// The CUDA device's host-side decisions, as pure functions of what the driver reports (no CUDA
// header here), so they are unit-tested on machines without a GPU: grid and array sizing, whether a
// problem fits in free memory, which dtypes and layouts a compute capability runs, whether this build
// carries code for the GPU, the choice among timed GEMM algorithms, and the one-line error texts.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/units.h"
#include "kernels/gemm_spec.h"

namespace gpuscale::cuda {

struct ComputeCapability {
  int major = 0;
  int minor = 0;
  int value() const { return major * 10 + minor; }  // 9.0 -> 90
  friend bool operator==(const ComputeCapability&, const ComputeCapability&) = default;
};
std::string format_cc(ComputeCapability cc);                     // "9.0"
std::optional<ComputeCapability> parse_cc(std::string_view text);  // "9.0", "12.0"

// ---- grids ---------------------------------------------------------------------------------------

inline constexpr int kStreamThreads = 256;  // threads per block of the STREAM and copy kernels

// Blocks for a grid-stride kernel: every SM filled at the occupancy the kernel reaches (blocks_per_sm
// from the occupancy API; at least 1), never more blocks than there are vectors to give them.
int grid_blocks(int sm_count, int blocks_per_sm, int threads, std::uint64_t elements, int vector_width);

// ---- memory --------------------------------------------------------------------------------------

// Free memory left untouched for the CUDA context, cuBLASLt and the verification buffers.
inline constexpr std::uint64_t kMemoryHeadroom = 256ULL << 20;

struct ArraySizing {
  std::uint64_t bytes = 0;  // per array, a multiple of 2 MiB
  bool capped = false;      // free memory forced it below the target
};
// Default bytes per STREAM array: at least 8x the L2 cache and at least 1 GiB, so the figure is HBM
// bandwidth and launch overhead is small; capped so the 3 arrays take at most half the free memory.
ArraySizing default_stream_array_bytes(std::uint64_t l2_bytes, std::uint64_t free_bytes);

// "12.00 GiB (12884901888 bytes)" and a x b without wrapping (core/units.h).
using ::gpuscale::format_bytes;
using ::gpuscale::saturating_mul;
// Why `needed` bytes cannot be allocated with `free_bytes` free (keeping kMemoryHeadroom), or nullopt.
// `what` names the allocation, e.g. "STREAM fp64: 3 arrays of 4.00 GiB".
std::optional<std::string> memory_shortfall(std::string_view what, std::uint64_t needed, std::uint64_t free_bytes,
                                            int ordinal);

// ---- which code runs on which GPU ----------------------------------------------------------------

// Whether a build for `archs` (CMake CUDA_ARCHITECTURES syntax, e.g. "80-real;90-real;120", or with
// commas) has code
// this GPU runs: machine code for sm_XY runs on X.Z with Z >= Y ("90a"-style variants only on 9.0),
// PTX for compute_XY is compiled by the driver for any GPU of X.Y or newer.
bool build_runs_on(std::string_view archs, ComputeCapability cc);

// Why the GPU cannot run a GEMM at `type` (compute capability too old, or a type cuBLASLt has no GEMM
// for); nullopt when it can.
std::optional<std::string> gemm_dtype_unsupported(DType type, ComputeCapability cc);
// Why cuBLASLt cannot run this layout at `type` on the GPU: fp8 takes only TN before compute
// capability 10.0. nullopt when it can.
std::optional<std::string> gemm_layout_unsupported(DType type, ComputeCapability cc, const GemmShape& s);

// Element type of C (= D) for a GEMM at `type`: the input type, except fp8 (bf16 out) and int8 (int32).
DType gemm_output_type(DType type);
// A, B and C of `s` at `type` plus the workspace, in bytes (saturating).
std::uint64_t gemm_device_bytes(DType type, const GemmShape& s, std::uint64_t workspace_bytes);

// ---- GEMM algorithm choice -----------------------------------------------------------------------

inline constexpr int kGemmCandidates = 8;                       // top-K heuristic results timed
inline constexpr std::uint64_t kGemmWorkspaceBytes = 32ULL << 20;  // cuBLAS's advice for Hopper and newer

struct GemmCandidate {
  int heuristic_rank = 0;  // position in cublasLtMatmulAlgoGetHeuristic's answer
  double seconds = 0;      // median time of one product; <= 0 when it failed
  std::string error;       // why it failed
};
// The fastest candidate that ran (lowest seconds; the heuristic's order breaks ties), nullopt when none did.
std::optional<std::size_t> fastest_candidate(const std::vector<GemmCandidate>& candidates);
// Products per timed repetition so one repetition lasts about `target_seconds` (1 ... max_batch). The
// batch is captured once into a CUDA graph and each repetition is one graph launch between two
// events, so a small GEMM's figure is the GPU's time, not the host's launch cost.
int gemm_batch(double seconds_per_product, double target_seconds = 2e-3, int max_batch = 1000);
// Products run before the algorithms are timed, so the clocks have left idle when the choice is made:
// enough to keep the GPU busy about `warmup_seconds`, from one product's time (1 ... max_products).
inline constexpr double kGemmWarmupSeconds = 0.2;
int gemm_warmup_products(double seconds_per_product, double warmup_seconds = kGemmWarmupSeconds,
                         int max_products = 20000);
// The warm-up runs for a fixed GPU time, in rounds. The very first product is not counted: it pays
// for CUDA's lazy module loading (CUDA_MODULE_LOADING=LAZY, the default), which once made one product
// look long enough to be the whole warm-up. Each round runs gemm_warmup_next(warmed, per) products,
// `warmed` the GPU seconds counted so far, `per` the last round's seconds per product (clocks rise
// during the warm-up, so each round sizes itself anew); 0: done (kGemmWarmupSeconds reached, or
// kGemmWarmupRounds rounds, so it always ends).
inline constexpr int kGemmWarmupRounds = 8;
int gemm_warmup_next(double warmed_seconds, double seconds_per_product, int round);

// cuBLASLt's split-K reduction schemes, as bits of CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK (the
// values of cublasLtReductionScheme_t; kernels/cuda/cuda_lt.cpp checks they match).
inline constexpr std::uint32_t kReduceInplace = 1;      // partial sums added into C, in C's type
inline constexpr std::uint32_t kReduceComputeType = 2;  // partial sums kept in the compute type, then reduced
inline constexpr std::uint32_t kReduceOutputType = 4;   // partial sums kept in C's type, then reduced
inline constexpr std::uint32_t kReduceAll = kReduceInplace | kReduceComputeType | kReduceOutputType;
// The split-K schemes the heuristic may offer at `type`: every one when C's type is as precise as the
// compute type (fp64, fp32, tf32, int8 with int32 out); else only the compute-type scheme, since
// INPLACE and OUTPUT_TYPE round each partial sum to C's type (bf16, fp16; fp8 with bf16 out), an
// error that grows with the split and is not in the check's tolerance. Algorithms without split-K
// are never filtered. `fixed` (GemmShape::fixed_algorithm): none, so no split-K algorithm is offered.
std::uint32_t gemm_reduction_scheme_mask(DType type, bool fixed = false);
// The mask as text for the row: "compute_type", "inplace|compute_type|output_type".
std::string reduction_scheme_names(std::uint32_t mask);

// ---- opening the device --------------------------------------------------------------------------

// What opening a rank's GPU does, in this order (CudaDevice's constructor runs them from this list).
// The CPU binding comes before cudaSetDevice and the context: the driver's threads and the context's
// host allocations are made by the process as it is bound then, so binding after the context left them
// on the launcher's cores. Reading the PCI bus id needs no context.
enum class DeviceOpenStep {
  read_pci_bus_id,  // cudaDeviceGetPCIBusId: which GPU, for sysfs (its NUMA node, its NIC)
  bind_cpus,        // bind_to_gpu_numa_node (kernels/cuda/cpu_binding.h)
  set_device,       // cudaSetDevice
  create_context,   // cudaFree(nullptr)
};
inline constexpr DeviceOpenStep kDeviceOpenOrder[] = {DeviceOpenStep::read_pci_bus_id, DeviceOpenStep::bind_cpus,
                                                      DeviceOpenStep::set_device, DeviceOpenStep::create_context};

// ---- the burn-in's agreement check ---------------------------------------------------------------

// What decides a GEMM output's bits on a GPU: the SDC digest's config (GemmProblem::output_digest), so
// ranks compare bits only when all of it is equal. cuBLAS promises identical results only on the same
// architecture and SM count with the same toolkit ("cuBLAS: Results reproducibility"), and for the same
// algorithm; a mixed fleet is compared within each of its configurations.
struct GemmBitsConfig {
  std::string library;      // "cuBLASLt 13.0.0"
  std::string device_name;  // as the driver reports it
  ComputeCapability cc;
  int sm_count = 0;
  std::string algorithm;    // the algorithm's config attributes, ids, tile, stages, split-K, inner and
                            // cluster shape (kernels/cuda/cuda_lt.h's algo_config, as JSON text)
  std::string compute_type, output_dtype;
};
std::uint64_t gemm_bits_config(const GemmBitsConfig& c);  // their digest

// ---- errors --------------------------------------------------------------------------------------

// "cudaMemcpyAsync failed: out of memory (cudaErrorMemoryAllocation)". The harness adds the rank and
// host when the error ends a measurement.
std::string call_failure(std::string_view call, std::string_view error_string, std::string_view error_name);

}  // namespace gpuscale::cuda
