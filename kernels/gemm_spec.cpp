#include "kernels/gemm_spec.h"

#include <charconv>
#include <optional>

#include "core/error.h"

namespace gpuscale {

const std::vector<std::string_view>& gemm_layouts() {
  static const std::vector<std::string_view> kLayouts{"NN", "NT", "TN", "TT"};
  return kLayouts;
}

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

namespace {

std::vector<GemmTypeRule> build_gemm_rules() {
  using enum DType;  // the table's rows name types bare (fp32), and `exact` for integer arithmetic
  constexpr std::optional<DType> exact;
  auto eps = [](std::optional<DType> t) { return t ? dtype_epsilon(*t) : 0.0; };
  std::vector<GemmTypeRule> rules;
#define GPUSCALE_DTYPE_GEMM(id, output, output_eps, accum_eps, input_eps_units, fast_accum, tn_default, min_cc, needs, refusal) \
  rules.push_back({id, output, eps(output_eps), eps(accum_eps), input_eps_units * dtype_epsilon(id), fast_accum, tn_default, min_cc, needs, refusal});
#include "core/dtype_table.def"
  return rules;
}

}  // namespace

const GemmTypeRule* gemm_type_rule(DType type) {
  static const std::vector<GemmTypeRule> rules = build_gemm_rules();
  for (const auto& r : rules)
    if (r.type == type) return &r;
  return nullptr;
}

bool gemm_has_fast_accum(DType type) {
  const auto* r = gemm_type_rule(type);
  return r && r->fast_accum;
}

bool gemm_default_transpose_a(DType type) {
  const auto* r = gemm_type_rule(type);
  return r && r->tn_default;
}

GemmShape gemm_shape_for(DType type, GemmShape s) {
  if (!s.layout_given && gemm_default_transpose_a(type)) s.trans_a = true, s.trans_b = false;
  return s;
}

GemmTolerance gemm_tolerance(DType type, bool fast_accum) {
  const auto* r = gemm_type_rule(type);
  if (!r) return dtype_is_float(type) ? GemmTolerance{dtype_epsilon(DType::fp32), dtype_epsilon(DType::fp32)}
                                      : GemmTolerance{0.0, 0.0};
  // Fast accumulation: a ~14-bit accumulator per 32-product chunk, 2^-13 with a factor 2 of margin.
  if (fast_accum && r->fast_accum) return {r->output_eps, r->accum_eps, 0, std::ldexp(1.0, -13)};
  return {r->output_eps, r->accum_eps, r->input_eps};
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
