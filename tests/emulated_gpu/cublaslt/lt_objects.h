#pragma once
// What the emulated cuBLASLt's handles point at (tests only). cublasLt.h declares the descriptors as
// pointers to fixed-size "semi-opaque" structs that only the library reads, so the emulation allocates
// its own objects in cublasLt*Create and hands them out under NVIDIA's pointer types.
#include <cstdint>

#include <cublasLt.h>

namespace gpuscale_emu::lt {

struct Handle {
  std::uint32_t magic = 0x4c74486e;  // "LtHn": a handle this library made
};

// Every attribute of cublasLtMatmulDescAttributes_t the emulation holds, with the defaults cublasLt.h
// states beside each one.
struct MatmulDesc {
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale = CUDA_R_32F;  // "default: same as CUBLASLT_MATMUL_DESC_COMPUTE_TYPE" (set by Create)
  std::int32_t pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  std::int32_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N, trans_c = CUBLAS_OP_N;
  std::int32_t fill_mode = CUBLAS_FILL_MODE_FULL;
  std::uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
  std::int64_t bias_batch_stride = 0;
  std::int32_t bias_data_type = -1;
  std::int32_t sm_count_target = 0;
  const void* a_scale = nullptr;  // fp8 tensor-wide scales: device pointers to one float each
  const void* b_scale = nullptr;
  const void* c_scale = nullptr;
  const void* d_scale = nullptr;
  void* amax_d = nullptr;
  std::int8_t fast_accum = 0;
};

// cublasLtMatrixLayoutAttribute_t, column-major unless ORDER says otherwise.
struct MatrixLayout {
  cudaDataType_t type = CUDA_R_32F;
  std::int32_t order = CUBLASLT_ORDER_COL;
  std::uint64_t rows = 0, cols = 0;
  std::int64_t ld = 0;
  std::int32_t batch_count = 1;  // "int32_t, default: 1"
  std::int64_t batch_stride = 0;  // STRIDED_BATCH_OFFSET, elements; "int64_t, default: 0"
  std::int64_t plane_offset = 0;
  std::uint32_t batch_mode = CUBLASLT_BATCH_MODE_STRIDED;
};

// cublasLtMatmulPreferenceAttributes_t.
struct Preference {
  std::uint32_t search_mode = CUBLASLT_SEARCH_BEST_FIT;
  std::uint64_t max_workspace = 0;  // "uint64_t, default: 0 - no workspace allowed"
  std::uint32_t reduction_mask = CUBLASLT_REDUCTION_SCHEME_MASK;  // "default: ... allows all reduction schemes"
  std::uint32_t min_align_a = 256, min_align_b = 256, min_align_c = 256, min_align_d = 256;
  float max_waves = 0;  // "float, default: 0.0f"
  std::uint64_t impl_mask = ~std::uint64_t{0};
};

inline MatmulDesc* of(cublasLtMatmulDesc_t d) { return reinterpret_cast<MatmulDesc*>(d); }
inline MatrixLayout* of(cublasLtMatrixLayout_t l) { return reinterpret_cast<MatrixLayout*>(l); }
inline Preference* of(cublasLtMatmulPreference_t p) { return reinterpret_cast<Preference*>(p); }
inline Handle* of(cublasLtHandle_t h) { return reinterpret_cast<Handle*>(h); }

// Bytes of one element of `t` (0 for a type the emulation does not compute with).
std::uint64_t element_bytes(cudaDataType_t t);

}  // namespace gpuscale_emu::lt
