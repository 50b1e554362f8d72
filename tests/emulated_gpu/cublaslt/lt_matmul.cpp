// cublasLtMatmul: the checks cublasLt.h documents for it, then one operation on the stream (through
// the core's enqueue, so a capturing stream records it in its graph) that computes the product on
// the host and lasts what the GPU model says: 2 m n k per batch member at the type's peak times the
// model's GEMM efficiency.
#include <cstring>
#include <string>

#include <cuda_fp16.h>

#include "tests/emulated_gpu/core/emu_core.h"
#include "tests/emulated_gpu/cublaslt/lt_algo.h"
#include "tests/emulated_gpu/cublaslt/lt_cost.h"
#include "tests/emulated_gpu/cublaslt/lt_fault.h"
#include "tests/emulated_gpu/cublaslt/lt_product_cache.h"

using namespace gpuscale_emu::lt;

namespace {

// alpha or beta as a double, read as the scale type (CUBLASLT_MATMUL_DESC_SCALE_TYPE: "Defines data
// type of alpha and beta").
double scalar(const void* p, cudaDataType_t scale) {
  switch (scale) {
    case CUDA_R_64F: { double v; std::memcpy(&v, p, 8); return v; }
    case CUDA_R_32I: { std::int32_t v; std::memcpy(&v, p, 4); return v; }
    case CUDA_R_16F: { __half v; std::memcpy(&v, p, 2); return __half2float(v); }
    default: { float v; std::memcpy(&v, p, 4); return v; }
  }
}

// An fp8 scale: "The scaling factor value must have the same type as the compute type" (fp32);
// "If not specified, or set to NULL, the scaling factor is assumed to be 1".
float scale_value(const void* p) {
  if (p == nullptr) return 1;
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

bool aligned_to(const void* p, std::uintptr_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

std::string describe(const Problem& p) {
  return "cublasLtMatmul " + peak_key(p) + " " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
         std::to_string(p.k) + (p.batch > 1 ? " batch " + std::to_string(p.batch) : "");
}

}  // namespace

extern "C" cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t op, const void* alpha,
                                         const void* A, cublasLtMatrixLayout_t a_desc, const void* B,
                                         cublasLtMatrixLayout_t b_desc, const void* beta, const void* C,
                                         cublasLtMatrixLayout_t c_desc, void* D, cublasLtMatrixLayout_t d_desc,
                                         const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes,
                                         cudaStream_t stream) {
  // "CUBLAS_STATUS_NOT_INITIALIZED if cuBLASLt handle has not been initialized"
  if (handle == nullptr || of(handle)->magic != Handle{}.magic) return CUBLAS_STATUS_NOT_INITIALIZED;
  Problem p;
  if (const auto rc = make_problem(op, a_desc, b_desc, c_desc, d_desc, p); rc != CUBLAS_STATUS_SUCCESS) return rc;
  if (alpha == nullptr || beta == nullptr || A == nullptr || B == nullptr || D == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  const bool fp8 = p.a.type == CUDA_R_8F_E4M3 || p.a.type == CUDA_R_8F_E5M2;
  // CUBLASLT_MATMUL_DESC_A_SCALE_POINTER ..: "If set for an unsupported matrix data, scale, and compute
  // type combination, calling cublasLtMatmul() will return CUBLAS_INVALID_VALUE" (FP8 inputs take them).
  if (!fp8 && (p.op.a_scale || p.op.b_scale || p.op.c_scale || p.op.d_scale)) return CUBLAS_STATUS_INVALID_VALUE;
  // cublasLtMatmul(): in-place (C == D) needs C and D to share one layout.
  if (C == D && (p.c.ld != p.d.ld || p.c.type != p.d.type || p.c.batch_stride != p.d.batch_stride))
    return CUBLAS_STATUS_INVALID_VALUE;

  gpuscale_emu::Stream* s = gpuscale_emu::stream_of(stream);
  if (s == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  // A sticky CUDA error fails every later call on the device (CUDA Runtime API, cudaGetLastError):
  // "CUBLAS_STATUS_EXECUTION_FAILED if cuda reported execution error from the device".
  if (gpuscale_emu::sticky_error() != 0) return CUBLAS_STATUS_EXECUTION_FAILED;
  const auto& dev = gpuscale_emu::device(s->device);
  const int cc = dev.model.cc_major * 10 + dev.model.cc_minor;
  // "CUBLAS_STATUS_NOT_SUPPORTED if current implementation on selected device doesn't support configured operation"
  if (!unsupported_reason(p, cc).empty()) return CUBLAS_STATUS_NOT_SUPPORTED;
  // The pointer alignments the same notes require: IMMA "All matrix pointers must be 4-byte aligned";
  // FP8 "pointers ... must support 16-byte alignment".
  const std::uintptr_t need = fp8 ? 16 : p.a.type == CUDA_R_8I ? 4 : 1;
  if (!aligned_to(A, need) || !aligned_to(B, need) || !aligned_to(D, need) || (C != nullptr && !aligned_to(C, need)))
    return CUBLAS_STATUS_NOT_SUPPORTED;

  AlgoConfig config;
  if (algo == nullptr) {
    // cuBLAS documentation, cublasLtMatmul(), parameter algo: when NULL, an implicit heuristic query with
    // default search preferences picks the algorithm; its first answer that fits the workspace given.
    Preference pref;
    pref.max_workspace = workspace_bytes;
    bool found = false;
    for (const auto& c : candidate_algorithms(p, cc, dev.model.sm_count))
      if (!found && preference_admits(pref, c)) config = c, found = true;
    if (!found) return CUBLAS_STATUS_NOT_SUPPORTED;
  } else if (!load(*algo, config)) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  // "CUBLAS_STATUS_INVALID_VALUE ... when workspaceSizeInBytes is less than workspace required by configured algo"
  if (workspace_bytes < config.workspace || (config.workspace > 0 && workspace == nullptr)) return CUBLAS_STATUS_INVALID_VALUE;
  const bool beta_zero = scalar(beta, p.op.scale) == 0;
  if (!beta_zero && C == nullptr) return CUBLAS_STATUS_INVALID_VALUE;

  ProductSpec spec;
  spec.acc = accumulator_of(p.op.compute);
  spec.rounding = rounding_of(p.op.compute);
  spec.scale_type = p.op.scale;
  spec.trans_a = p.trans_a;
  spec.trans_b = p.trans_b;
  spec.m = p.m, spec.n = p.n, spec.k = p.k;
  spec.batch = p.batch;
  spec.k_parts = k_partial_sums(dev.model.sm_count);
  spec.a = {A, p.a.type, p.a.ld, p.a.batch_stride};
  spec.b = {B, p.b.type, p.b.ld, p.b.batch_stride};
  spec.c = {C, p.c.type, p.c.ld, p.c.batch_stride};
  spec.d = {D, p.d.type, p.d.ld, p.d.batch_stride};
  // CUBLASLT_POINTER_MODE_HOST: alpha and beta are read now, as cuBLASLt reads host scalars at the
  // call (a captured graph replays the values of capture time); device pointers are read when it runs.
  const bool host_scalars = p.op.pointer_mode == CUBLASLT_POINTER_MODE_HOST;
  if (host_scalars) {
    spec.alpha = scalar(alpha, p.op.scale);
    spec.beta = scalar(beta, p.op.scale);
  }
  const auto desc = p.op;

  // The planted flips on this device, resolved now: element N must lie inside D's storage.
  std::vector<std::uint64_t> flips;
  const std::uint64_t d_span = static_cast<std::uint64_t>((p.batch - 1) * p.d.batch_stride) +
                               (p.n - 1) * static_cast<std::uint64_t>(p.d.ld) + p.m;
  for (const auto& f : planted_gemm_flips())
    if (f.device == dev.ordinal && f.element < d_span) flips.push_back(f.element);
  std::uint64_t flip_tag = 0;
  for (auto e : flips) flip_tag = flip_tag * 1000003 + e + 1;

  gpuscale_emu::Operation operation;
  operation.what = describe(p);
  operation.duration_us = gemm_compute_us(dev.model, peak_key(p),
                                          2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) *
                                              static_cast<double>(p.k) * p.batch);
  operation.repeatable_result = true;  // the same inputs give the same D
  operation.work = [spec, desc, host_scalars, alpha, beta, flips, flip_tag]() mutable {
    if (!host_scalars) {
      spec.alpha = scalar(alpha, desc.scale);
      spec.beta = scalar(beta, desc.scale);
    }
    // FP8 scales are device pointers, read when the product runs.
    spec.scale_a = scale_value(desc.a_scale);
    spec.scale_b = scale_value(desc.b_scale);
    spec.scale_c = scale_value(desc.c_scale);
    spec.scale_d = scale_value(desc.d_scale);
    compute_product_once(spec, flip_tag, [&] {
      for (auto e : flips) flip_element_bit(const_cast<void*>(spec.d.data), spec.d.type, e);
    });
  };
  gpuscale_emu::enqueue(s, std::move(operation));
  return CUBLAS_STATUS_SUCCESS;
}
