// cublasLtMatmulAlgoGetHeuristic and the algorithm's read-back (cublasLtMatmulAlgoConfigGetAttribute).
#include <algorithm>

#include "tests/emulated_gpu/core/emu_core.h"
#include "tests/emulated_gpu/cublaslt/lt_algo.h"
#include "tests/emulated_gpu/cublaslt/lt_attribute.h"

using namespace gpuscale_emu::lt;

namespace {

int compute_capability(const gpuscale_emu::Device& dev) { return dev.model.cc_major * 10 + dev.model.cc_minor; }

}  // namespace

extern "C" {

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t op,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int* returned) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  // "CUBLAS_STATUS_INVALID_VALUE if requestedAlgoCount is less or equal to zero"
  if (requested <= 0 || results == nullptr || returned == nullptr || pref == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *returned = 0;
  Problem p;
  if (const auto rc = make_problem(op, a, b, c, d, p); rc != CUBLAS_STATUS_SUCCESS) return rc;
  const auto& dev = gpuscale_emu::device(gpuscale_emu::current_device());
  const int cc = compute_capability(dev);
  // "CUBLAS_STATUS_NOT_SUPPORTED if no heuristic function available for current configuration",
  // with returnAlgoCount 0.
  if (!unsupported_reason(p, cc).empty()) return CUBLAS_STATUS_NOT_SUPPORTED;
  std::vector<AlgoConfig> fit;
  for (const auto& cand : candidate_algorithms(p, cc, dev.model.sm_count))
    if (preference_admits(*of(pref), cand)) fit.push_back(cand);
  if (fit.empty()) return CUBLAS_STATUS_NOT_SUPPORTED;
  const int n = std::min(requested, static_cast<int>(fit.size()));
  for (int i = 0; i < n; ++i) {
    auto& r = results[i];
    r = cublasLtMatmulHeuristicResult_t{};
    store(fit[static_cast<std::size_t>(i)], r.algo);
    r.workspaceSize = fit[static_cast<std::size_t>(i)].workspace;
    r.state = CUBLAS_STATUS_SUCCESS;
    r.wavesCount = fit[static_cast<std::size_t>(i)].waves;
  }
  *returned = n;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t* algo,
                                                    cublasLtMatmulAlgoConfigAttributes_t attr, void* buf, size_t size,
                                                    size_t* written) {
  AlgoConfig c;
  if (algo == nullptr || !load(*algo, c)) return CUBLAS_STATUS_INVALID_VALUE;
  // The sizes are the types cublasLt.h states for each attribute (int32_t, uint32_t, uint16_t).
  AttributeSlot s;
  switch (attr) {
    case CUBLASLT_ALGO_CONFIG_ID: s = slot(c.id); break;
    case CUBLASLT_ALGO_CONFIG_TILE_ID: s = slot(c.tile); break;
    case CUBLASLT_ALGO_CONFIG_STAGES_ID: s = slot(c.stages); break;
    case CUBLASLT_ALGO_CONFIG_SPLITK_NUM: s = slot(c.splitk); break;
    case CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME: s = slot(c.reduction); break;
    case CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING: s = slot(c.swizzle); break;
    case CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION: s = slot(c.custom); break;
    case CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID: s = slot(c.inner_shape); break;
    case CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID: s = slot(c.cluster_shape); break;
    default: return CUBLAS_STATUS_INVALID_VALUE;
  }
  return get_attribute(s, buf, size, written);
}

}  // extern "C"
