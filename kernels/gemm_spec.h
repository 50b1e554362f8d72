#pragma once
// GEMM problems as cuBLAS users think of them: column-major C(m x n) = op(A) op(B) with op = N or T,
// FLOPs = 2 m n k per product. Inputs are random (constant inputs draw less power and flatter the
// result) and regenerated from the seed; verification compares sampled entries of C with a reference
// computed in long double from the inputs as stored, within a per-dtype tolerance.
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/dtype.h"
#include "core/random.h"

namespace gpuscale {

struct GemmShape {
  std::uint64_t m = 0, n = 0, k = 0;
  bool trans_a = false;  // A stored k x m and used transposed
  bool trans_b = false;  // B stored n x k and used transposed
  bool layout_given = false;  // parsed with a ":TN"-style suffix; without one, each dtype's default applies
  // fp8 only: cuBLASLt's CUBLASLT_MATMUL_DESC_FAST_ACCUM (the accumulation NVIDIA's fp8 throughput
  // figures quote), which skips the tensor cores' periodic promotion of partial sums to fp32.
  bool fast_accum = false;
  // The burn-in's agreement check (docs/acceptance.md): the library's first choice of algorithm,
  // untimed, and no split-K, so that every GPU of one model and library runs the same algorithm and
  // their outputs can be compared bit for bit. Otherwise the fastest of the candidates is timed and kept.
  bool fixed_algorithm = false;
};
// What a GEMM at one input type is, from its row of the element-type table (core/dtype_table.def,
// GPUSCALE_DTYPE_GEMM); the tolerance below reads it.
struct GemmTypeRule {
  DType type;
  DType output;       // C's type
  double output_eps;  // unit roundoff of the stored result (0: exact)
  double accum_eps;   // unit roundoff of the multiply's products and sums (0: exact)
  double input_eps;   // relative error of an input the multiply rounds further than it is stored
  bool fast_accum;    // has cuBLASLt's fast accumulation mode (gemm_has_fast_accum)
  bool tn_default;    // a default (square sweep) shape is TN
  int min_cc;         // compute capability its tensor cores need (10 x major + minor; 0: any)
  std::string_view needs;    // what min_cc buys, for the refusal
  std::string_view refusal;  // why no GEMM runs at this type ("" when one does)
};
const GemmTypeRule* gemm_type_rule(DType type);  // nullptr: not a GEMM input type (int32)

// Whether `type` has the two accumulation modes (fast accumulation on or off): the fp8 types.
bool gemm_has_fast_accum(DType type);

inline double gemm_flops(const GemmShape& s) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
}
// The layout a default (square sweep) shape uses at `type`: TN (A transposed) for fp8 and int8, the
// layout their tensor-core GEMMs take in cuBLAS(Lt); NN otherwise.
bool gemm_default_transpose_a(DType type);
// The shape as it runs at `type`, the one place a GEMM's layout is decided for its type (the gemm
// benchmark, the burn-in and train-step ask it): a layout given with the shape (":NN") stands; else a
// type whose tensor-core GEMMs take TN (gemm_default_transpose_a: fp8, int8) runs TN, as fp8 training
// keeps transposed copies of its operands to do; any other type keeps the shape's own transposes.
GemmShape gemm_shape_for(DType type, GemmShape s);
// "NN", "TN", ... (op(A) then op(B), as cuBLAS's transa/transb).
std::string gemm_layout(const GemmShape& s);
// Every layout gemm_layout writes: NN, NT, TN, TT. (A vector, not a span: nvcc compiles this header
// as C++17.)
const std::vector<std::string_view>& gemm_layouts();
// "4096" (square) or "MxNxK"; an optional ":TN" style suffix sets the transposes. Throws on bad text.
GemmShape parse_gemm_shape(std::string_view text);
std::string format_gemm_shape(const GemmShape& s);  // "4096x4096x4096:NN"

// Tolerance for one entry c_ij with reference r = sum_p a_ip b_pj, scale S = sum_p |a_ip b_pj| and
// spread Q = sqrt(sum_p (a_ip b_pj)^2):
//   |c - r| <= output_eps |r| + accum_eps (4 sqrt(k) + 8) S + input_eps (|r| + 8 Q)
//              + chunk_eps (k / 32 + 8) Q
// output_eps: rounding of the stored result; accum_eps: rounding of products and sums inside the
// multiply (int8 is exact); input_eps: relative error of one product when the multiply rounds its
// inputs further than they are stored (tf32 keeps 10 mantissa bits of fp32 inputs). Those errors of
// independent random inputs add like a random walk: |r| covers a bias (truncation), 8 Q far more than
// their spread, so a tf32 result that is wrong by more than a few percent is caught.
// chunk_eps: fp8 with fast accumulation adds each chunk of 32 products into an accumulator that keeps
// about 14 mantissa bits, not fp32's 24, so each of the k/32 additions may lose that much of a partial
// sum, which random inputs keep near Q; 0 in every other mode.
struct GemmTolerance {
  double output_eps;
  double accum_eps;
  double input_eps = 0;
  double chunk_eps = 0;
};
GemmTolerance gemm_tolerance(DType type, bool fast_accum = false);

enum GemmMatrix : std::uint64_t { kMatrixA = 11, kMatrixB = 12 };

// Input value at linear index idx of A or B before rounding to the input type: uniform in [-1, 1),
// or a small integer in [-8, 8] for int8 so products accumulate exactly.
GPUSCALE_HD inline double gemm_input_value(std::uint64_t seed, GemmMatrix m, std::uint64_t idx, bool integer) {
  return integer ? static_cast<double>(random_int(seed, m, idx, -8, 8)) : random_uniform(seed, m, idx, -1.0, 1.0);
}

// Entries of C to check: the four corners plus `count` random positions.
std::vector<std::pair<std::uint64_t, std::uint64_t>> gemm_sample_points(const GemmShape& s, std::uint64_t seed,
                                                                        std::size_t count);

struct GemmEntryCheck {
  bool ok;
  double error_ratio;  // |c - r| / tolerance
};

// Checks one entry given the k products' inputs as stored (a(p) = op(A)[i][p], b(p) = op(B)[p][j]).
// fast_accum: the fp8 product ran with fast accumulation (GemmShape::fast_accum).
template <typename GetA, typename GetB>
GemmEntryCheck check_gemm_entry(DType type, std::uint64_t k, double c, GetA a, GetB b, bool fast_accum = false) {
  long double ref = 0, scale = 0, squares = 0;
  for (std::uint64_t p = 0; p < k; ++p) {
    long double prod = static_cast<long double>(a(p)) * static_cast<long double>(b(p));
    ref += prod;
    scale += prod < 0 ? -prod : prod;
    squares += prod * prod;
  }
  const auto tol = gemm_tolerance(type, fast_accum);
  const double abs_ref = std::fabs(static_cast<double>(ref));
  const double bound = tol.output_eps * abs_ref +
                       tol.accum_eps * (4.0 * std::sqrt(static_cast<double>(k)) + 8.0) * static_cast<double>(scale) +
                       tol.input_eps * (abs_ref + 8.0 * std::sqrt(static_cast<double>(squares))) +
                       tol.chunk_eps * (static_cast<double>(k) / 32.0 + 8.0) * std::sqrt(static_cast<double>(squares));
  const double err = std::fabs(c - static_cast<double>(ref));
  if (bound == 0) return {err == 0, err == 0 ? 0.0 : INFINITY};
  return {err <= bound, err / bound};
}

}  // namespace gpuscale
