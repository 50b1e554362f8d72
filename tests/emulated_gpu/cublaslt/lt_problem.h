#pragma once
// One cublasLtMatmul problem as the heuristic and the product see it: the descriptors' attributes,
// the sizes m, n, k they imply, and whether NVIDIA documents it as supported on a device.
#include <cstdint>
#include <string>

#include <cublasLt.h>

#include "tests/emulated_gpu/cublaslt/lt_objects.h"

namespace gpuscale_emu::lt {

struct Problem {
  MatmulDesc op;
  MatrixLayout a, b, c, d;
  bool trans_a = false, trans_b = false;
  std::uint64_t m = 0, n = 0, k = 0;
  int batch = 1;
};

// The problem, or CUBLAS_STATUS_INVALID_VALUE with `why` when the descriptors contradict each other
// (sizes that do not chain, batch counts that differ, a leading dimension below the rows).
cublasStatus_t make_problem(cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                            cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d, Problem& out, std::string* why = nullptr);

// "" when NVIDIA documents the problem as supported on a device of compute capability cc (10 x major
// + minor); otherwise why not. The heuristic answers CUBLAS_STATUS_NOT_SUPPORTED for such a problem.
std::string unsupported_reason(const Problem& p, int cc);

// The index of the problem's row in the table of supported type combinations (stable: it seeds the
// heuristic's algorithm ids); -1 when none.
int type_row(const Problem& p);

// The peaks/gpus.json key of the tensor-core (or CUDA-core) rate the problem runs at: "bf16", "tf32",
// "fp8_e4m3", "int8", ...
std::string peak_key(const Problem& p);

}  // namespace gpuscale_emu::lt
