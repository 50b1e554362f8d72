// The descriptors of cublasLt.h: the matmul operation, matrix layouts and the heuristic's preference,
// each holding every attribute the CUDA module sets, with the sizes and defaults cublasLt.h states.
#include <new>

#include "tests/emulated_gpu/cublaslt/lt_attribute.h"
#include "tests/emulated_gpu/cublaslt/lt_objects.h"

using namespace gpuscale_emu::lt;

namespace {

AttributeSlot desc_slot(MatmulDesc& d, cublasLtMatmulDescAttributes_t attr) {
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return slot(d.compute);  // int32_t
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return slot(d.scale);      // int32_t
    case CUBLASLT_MATMUL_DESC_POINTER_MODE: return slot(d.pointer_mode);
    case CUBLASLT_MATMUL_DESC_TRANSA: return slot(d.trans_a);
    case CUBLASLT_MATMUL_DESC_TRANSB: return slot(d.trans_b);
    case CUBLASLT_MATMUL_DESC_TRANSC: return slot(d.trans_c);
    case CUBLASLT_MATMUL_DESC_FILL_MODE: return slot(d.fill_mode);
    case CUBLASLT_MATMUL_DESC_EPILOGUE: return slot(d.epilogue);  // uint32_t
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: return slot(d.bias);
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE: return slot(d.bias_batch_stride);  // int64_t
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: return slot(d.bias_data_type);
    case CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET: return slot(d.sm_count_target);
    case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER: return slot(d.a_scale);  // const void*
    case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER: return slot(d.b_scale);
    case CUBLASLT_MATMUL_DESC_C_SCALE_POINTER: return slot(d.c_scale);
    case CUBLASLT_MATMUL_DESC_D_SCALE_POINTER: return slot(d.d_scale);
    case CUBLASLT_MATMUL_DESC_AMAX_D_POINTER: return slot(d.amax_d);  // void*
    case CUBLASLT_MATMUL_DESC_FAST_ACCUM: return slot(d.fast_accum);  // int8_t
    default: return {};
  }
}

AttributeSlot layout_slot(MatrixLayout& l, cublasLtMatrixLayoutAttribute_t attr) {
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE: return slot(l.type);  // uint32_t
    case CUBLASLT_MATRIX_LAYOUT_ORDER: return slot(l.order);  // int32_t
    case CUBLASLT_MATRIX_LAYOUT_ROWS: return slot(l.rows);  // uint64_t
    case CUBLASLT_MATRIX_LAYOUT_COLS: return slot(l.cols);
    case CUBLASLT_MATRIX_LAYOUT_LD: return slot(l.ld);  // int64_t
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return slot(l.batch_count);  // int32_t
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: return slot(l.batch_stride);  // int64_t
    case CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET: return slot(l.plane_offset);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_MODE: return slot(l.batch_mode);  // uint32_t
    default: return {};
  }
}

AttributeSlot preference_slot(Preference& p, cublasLtMatmulPreferenceAttributes_t attr) {
  switch (attr) {
    case CUBLASLT_MATMUL_PREF_SEARCH_MODE: return slot(p.search_mode);  // uint32_t
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES: return slot(p.max_workspace);  // uint64_t
    case CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK: return slot(p.reduction_mask);  // uint32_t
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES: return slot(p.min_align_a);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES: return slot(p.min_align_b);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES: return slot(p.min_align_c);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES: return slot(p.min_align_d);
    case CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT: return slot(p.max_waves);  // float
    case CUBLASLT_MATMUL_PREF_IMPL_MASK: return slot(p.impl_mask);  // uint64_t
    default: return {};
  }
}

}  // namespace

extern "C" {

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute, cudaDataType_t scale) {
  if (desc == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  auto* d = new (std::nothrow) MatmulDesc;
  if (d == nullptr) return CUBLAS_STATUS_ALLOC_FAILED;  // "if memory could not be allocated"
  d->compute = compute;
  d->scale = scale;
  *desc = reinterpret_cast<cublasLtMatmulDesc_t>(d);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete of(desc);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              const void* buf, size_t size) {
  if (desc == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  return set_attribute(desc_slot(*of(desc), attr), buf, size);
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, void* buf,
                                              size_t size, size_t* written) {
  if (desc == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  return get_attribute(desc_slot(*of(desc), attr), buf, size, written);
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  if (layout == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  auto* l = new (std::nothrow) MatrixLayout;
  if (l == nullptr) return CUBLAS_STATUS_ALLOC_FAILED;
  l->type = type;
  l->rows = rows;
  l->cols = cols;
  l->ld = ld;
  *layout = reinterpret_cast<cublasLtMatrixLayout_t>(l);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete of(layout);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                                                const void* buf, size_t size) {
  if (layout == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  return set_attribute(layout_slot(*of(layout), attr), buf, size);
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                                                void* buf, size_t size, size_t* written) {
  if (layout == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  return get_attribute(layout_slot(*of(layout), attr), buf, size, written);
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  if (pref == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  auto* p = new (std::nothrow) Preference;
  if (p == nullptr) return CUBLAS_STATUS_ALLOC_FAILED;
  *pref = reinterpret_cast<cublasLtMatmulPreference_t>(p);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  delete of(pref);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                                    size_t size) {
  if (pref == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  return set_attribute(preference_slot(*of(pref), attr), buf, size);
}

cublasStatus_t cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, void* buf, size_t size,
                                                    size_t* written) {
  if (pref == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  return get_attribute(preference_slot(*of(pref), attr), buf, size, written);
}

}  // extern "C"
