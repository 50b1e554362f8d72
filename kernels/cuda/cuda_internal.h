#pragma once
// Internal to kernels/cuda: what the device's parts share, and the factories the device hands out.
#include <memory>

#include "core/error.h"
#include "kernels/cuda/cuda_plan.h"
#include "kernels/cuda/cuda_util.h"
#include "kernels/cuda/stream_kernels.cuh"
#include "kernels/device.h"

namespace gpuscale::cuda {

struct CudaContext {
  int ordinal = 0;
  int sm_count = 1;
  ComputeCapability cc;
  std::string name;                 // as the driver reports it (the SDC digest's config)
  Stream stream;                    // every measurement of this device runs on it
  cublasLtHandle_t lt = nullptr;

  CudaContext(int ordinal_, int sm_count_, ComputeCapability cc_);
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;
  ~CudaContext();
  std::uint64_t free_memory() const;  // now (cudaMemGetInfo)
};

// Grid for the untimed helper kernels (fills, checks) over n items on GPU `ordinal`.
StreamLaunch helper_launch(int ordinal, std::uint64_t n);
// Throws the memory_shortfall text (a failed measurement) when `needed` bytes do not fit on `ordinal`.
void require_memory(std::string_view what, std::uint64_t needed, int ordinal);

std::unique_ptr<StreamArrays> make_cuda_stream(CudaContext& ctx, DType type, std::uint64_t elements, std::uint64_t seed);
std::unique_ptr<GemmProblem> make_cuda_gemm(CudaContext& ctx, DType type, const GemmShape& shape, std::uint64_t seed);
// Why cuBLASLt has no algorithm for the problem (asked of its heuristic, nothing allocated); nullopt if it has.
std::optional<std::string> cuda_gemm_unsupported(CudaContext& ctx, DType type, const GemmShape& shape);
std::unique_ptr<CopyEngine> make_cuda_copy_engine(CudaContext& ctx);
std::unique_ptr<ShardStaging> make_cuda_shard_staging(CudaContext& ctx, std::uint64_t shard_bytes, std::uint64_t chunk_bytes);

}  // namespace gpuscale::cuda
