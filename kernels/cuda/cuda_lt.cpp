#include "kernels/cuda/cuda_lt.h"

#include <fmt/format.h>

#include "core/error.h"

namespace gpuscale::cuda {

static_assert(kReduceInplace == CUBLASLT_REDUCTION_SCHEME_INPLACE);
static_assert(kReduceComputeType == CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE);
static_assert(kReduceOutputType == CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE);
static_assert(kReduceAll == CUBLASLT_REDUCTION_SCHEME_MASK);

LtTypes lt_types(DType t) {
  switch (t) {
#define GPUSCALE_DTYPE_CUBLASLT(id, ab_type, c_type, scale_type, compute_type) \
  case DType::id: return {ab_type, c_type, scale_type, compute_type, #compute_type};
#include "core/dtype_table.def"
    default: throw Error(fmt::format("the CUDA backend has no GEMM for {}", dtype_name(t)), kExitInvalidResult);
  }
}

nlohmann::json algo_config(const cublasLtMatmulAlgo_t& algo) {
  nlohmann::json j = nlohmann::json::object();
  const std::pair<cublasLtMatmulAlgoConfigAttributes_t, const char*> attrs[] = {
      {CUBLASLT_ALGO_CONFIG_ID, "algo_id"},
      {CUBLASLT_ALGO_CONFIG_TILE_ID, "tile_id"},
      {CUBLASLT_ALGO_CONFIG_STAGES_ID, "stages_id"},
      {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, "splitk"},
      {CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, "reduction_scheme"},
      {CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, "cta_swizzling"},
      {CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, "custom_option"},
  };
  for (const auto& [attr, name] : attrs) {
    std::int32_t v = 0;
    std::size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof v, &written) == CUBLAS_STATUS_SUCCESS &&
        written == sizeof v)
      j[name] = v;
  }
  // The inner and cluster shapes are 16-bit attributes.
  const std::pair<cublasLtMatmulAlgoConfigAttributes_t, const char*> shapes[] = {
      {CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, "inner_shape_id"},
      {CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, "cluster_shape_id"},
  };
  for (const auto& [attr, name] : shapes) {
    std::uint16_t v = 0;
    std::size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof v, &written) == CUBLAS_STATUS_SUCCESS &&
        written == sizeof v)
      j[name] = v;
  }
  return j;
}

void lt_matmul(cublasLtHandle_t lt, const LtProblem& problem, const cublasLtMatmulAlgo_t& algo, const void* a,
               const void* b, void* c, void* workspace, std::uint64_t workspace_bytes, cudaStream_t stream) {
  static const double one_d = 1, zero_d = 0;
  static const float one_f = 1, zero_f = 0;
  static const std::int32_t one_i = 1, zero_i = 0;
  const auto scale = problem.types().scale;
  const void* alpha = scale == CUDA_R_64F ? static_cast<const void*>(&one_d)
                      : scale == CUDA_R_32I ? static_cast<const void*>(&one_i)
                                            : static_cast<const void*>(&one_f);
  const void* beta = scale == CUDA_R_64F ? static_cast<const void*>(&zero_d)
                     : scale == CUDA_R_32I ? static_cast<const void*>(&zero_i)
                                           : static_cast<const void*>(&zero_f);
  check(cublasLtMatmul(lt, problem.op(), alpha, a, problem.a(), b, problem.b(), beta, c, problem.c(), c, problem.c(),
                       &algo, workspace, workspace_bytes, stream),
        "cublasLtMatmul");
}

}  // namespace gpuscale::cuda
