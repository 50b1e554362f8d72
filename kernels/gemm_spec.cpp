#include "kernels/gemm_spec.h"

#include <charconv>

#include "core/error.h"

namespace gpuscale {

std::string gemm_layout(const GemmShape& s) {
  return fmt::format("{}{}", s.trans_a ? 'T' : 'N', s.trans_b ? 'T' : 'N');
}

std::string format_gemm_shape(const GemmShape& s) {
  return fmt::format("{}x{}x{}:{}", s.m, s.n, s.k, gemm_layout(s));
}

GemmShape parse_gemm_shape(std::string_view text) {
  auto bad = [&](std::string_view why) -> GemmShape {
    throw Error(fmt::format("invalid GEMM shape '{}': {} (use N, MxNxK, optionally :NN/:TN/:NT/:TT)", text, why));
  };
  GemmShape s;
  std::string_view dims = text;
  if (auto colon = text.find(':'); colon != std::string_view::npos) {
    auto layout = text.substr(colon + 1);
    dims = text.substr(0, colon);
    if (layout.size() != 2) return bad("the layout must be two letters");
    s.layout_given = true;
    for (int i = 0; i < 2; ++i) {
      char ch = layout[i];
      if (ch != 'N' && ch != 'T' && ch != 'n' && ch != 't') return bad("layout letters are N or T");
      (i == 0 ? s.trans_a : s.trans_b) = (ch == 'T' || ch == 't');
    }
  }
  std::uint64_t v[3] = {0, 0, 0};
  int count = 0;
  const char* p = dims.data();
  const char* end = dims.data() + dims.size();
  while (p < end) {
    if (count == 3) return bad("too many dimensions");
    auto [next, ec] = std::from_chars(p, end, v[count]);
    if (ec != std::errc() || next == p) return bad("expected positive whole numbers");
    if (v[count] == 0) return bad("dimensions must be greater than zero");
    ++count;
    p = next;
    if (p < end) {
      if (*p != 'x' && *p != 'X') return bad("separate dimensions with 'x'");
      ++p;
      if (p == end) return bad("missing dimension after 'x'");
    }
  }
  if (count == 1) {
    s.m = s.n = s.k = v[0];
  } else if (count == 3) {
    s.m = v[0];
    s.n = v[1];
    s.k = v[2];
  } else {
    return bad("give one (square) or three dimensions");
  }
  return s;
}

GemmTolerance gemm_tolerance(DType type, bool fast_accum) {
  const double e24 = dtype_epsilon(DType::fp32);
  // Fast accumulation: a ~14-bit accumulator per 32-product chunk, 2^-13 with a factor 2 of margin.
  if (fast_accum && gemm_has_fast_accum(type)) return {dtype_epsilon(DType::bf16), e24, 0, std::ldexp(1.0, -13)};
  switch (type) {
    case DType::fp64: return {dtype_epsilon(DType::fp64), dtype_epsilon(DType::fp64)};
    case DType::fp32: return {e24, e24};
    // fp32 accumulation; each fp32 input rounded or truncated to 10 mantissa bits (relative error
    // < 2^-10), so a product is off by < 2^-9 = 4 tf32 units.
    case DType::tf32: return {e24, e24, 4 * dtype_epsilon(DType::tf32)};
    case DType::fp16: return {dtype_epsilon(DType::fp16), e24};   // fp32 accumulation, fp16 output
    case DType::bf16: return {dtype_epsilon(DType::bf16), e24};   // fp32 accumulation, bf16 output
    case DType::fp8_e4m3:
    case DType::fp8_e5m2: return {dtype_epsilon(DType::bf16), e24};  // fp8 in, bf16 out
    case DType::int8:
    case DType::int32: return {0.0, 0.0};  // exact integer accumulation
  }
  return {e24, e24};
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> gemm_sample_points(const GemmShape& s, std::uint64_t seed,
                                                                        std::size_t count) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pts = {
      {0, 0}, {s.m - 1, 0}, {0, s.n - 1}, {s.m - 1, s.n - 1}};
  for (std::size_t t = 0; t < count; ++t) {
    auto i = static_cast<std::uint64_t>(random_int(seed, 21, t, 0, static_cast<std::int64_t>(s.m - 1)));
    auto j = static_cast<std::uint64_t>(random_int(seed, 22, t, 0, static_cast<std::int64_t>(s.n - 1)));
    pts.emplace_back(i, j);
  }
  return pts;
}

}  // namespace gpuscale
