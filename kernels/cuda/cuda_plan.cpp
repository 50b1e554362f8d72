#include "kernels/cuda/cuda_plan.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernels/output_digest.h"

namespace gpuscale::cuda {

std::string format_cc(ComputeCapability cc) { return fmt::format("{}.{}", cc.major, cc.minor); }

std::optional<ComputeCapability> parse_cc(std::string_view text) {
  const auto dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 >= text.size()) return std::nullopt;
  ComputeCapability cc;
  const char* end = text.data() + text.size();
  auto [p1, e1] = std::from_chars(text.data(), text.data() + dot, cc.major);
  auto [p2, e2] = std::from_chars(text.data() + dot + 1, end, cc.minor);
  if (e1 != std::errc() || e2 != std::errc() || p1 != text.data() + dot || p2 != end) return std::nullopt;
  if (cc.major <= 0 || cc.minor < 0 || cc.minor > 9) return std::nullopt;
  return cc;
}

int grid_blocks(int sm_count, int blocks_per_sm, int threads, std::uint64_t elements, int vector_width) {
  const std::uint64_t full = static_cast<std::uint64_t>(std::max(sm_count, 1)) * std::max(blocks_per_sm, 1);
  const std::uint64_t t = static_cast<std::uint64_t>(std::max(threads, 1));
  const std::uint64_t vectors = (elements + vector_width - 1) / std::max(vector_width, 1);
  const std::uint64_t needed = std::max<std::uint64_t>((vectors + t - 1) / t, 1);
  return static_cast<int>(std::min(full, needed));
}

ArraySizing default_stream_array_bytes(std::uint64_t l2_bytes, std::uint64_t free_bytes) {
  constexpr std::uint64_t kAlign = 2ULL << 20;
  const std::uint64_t target = std::max<std::uint64_t>(saturating_mul(l2_bytes, 8), 1ULL << 30);
  const std::uint64_t cap = free_bytes / 2 / 3;
  ArraySizing s;
  s.bytes = std::min(target, cap) / kAlign * kAlign;
  s.capped = cap < target;
  if (s.bytes == 0) s.bytes = kAlign;
  return s;
}

std::optional<std::string> memory_shortfall(std::string_view what, std::uint64_t needed, std::uint64_t free_bytes,
                                            int ordinal) {
  const std::uint64_t usable = free_bytes > kMemoryHeadroom ? free_bytes - kMemoryHeadroom : 0;
  if (needed <= usable) return std::nullopt;
  return fmt::format("{} need {} but GPU {} has {} free ({} kept for the CUDA context and libraries)", what,
                     needed == std::numeric_limits<std::uint64_t>::max() ? std::string("more than 2^64 bytes")
                                                                         : format_bytes(needed),
                     ordinal, format_bytes(free_bytes), format_bytes(kMemoryHeadroom));
}

bool build_runs_on(std::string_view archs, ComputeCapability cc) {
  std::size_t pos = 0;
  while (pos <= archs.size()) {
    auto next = archs.find_first_of(";,", pos);
    if (next == std::string_view::npos) next = archs.size();
    std::string_view item = archs.substr(pos, next - pos);
    pos = next + 1;
    if (item.empty()) continue;
    bool sass = true, ptx = true;
    if (auto dash = item.find('-'); dash != std::string_view::npos) {
      const auto kind = item.substr(dash + 1);
      item = item.substr(0, dash);
      sass = kind == "real";
      ptx = kind == "virtual";
    }
    int number = 0;
    auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), number);
    if (ec != std::errc() || number < 10) continue;
    const bool specific = p != item.data() + item.size();  // "90a", "100f": arch-specific features
    const ComputeCapability built{number / 10, number % 10};
    if (sass && built.major == cc.major &&
        (specific ? built.minor == cc.minor : cc.minor >= built.minor))
      return true;
    if (ptx && !specific && cc.value() >= built.value()) return true;
  }
  return false;
}

std::optional<std::string> gemm_dtype_unsupported(DType type, ComputeCapability cc) {
  auto needs = [&](int min_value, std::string_view what) -> std::optional<std::string> {
    if (cc.value() >= min_value) return std::nullopt;
    return fmt::format("{} GEMM needs compute capability {}.{} or newer ({}); this GPU is {}", dtype_name(type),
                       min_value / 10, min_value % 10, what, format_cc(cc));
  };
  const auto* rule = gemm_type_rule(type);
  if (!rule) return fmt::format("{} is not a GEMM input type", dtype_name(type));
  if (!rule->refusal.empty()) return std::string(rule->refusal);
  return rule->min_cc > 0 ? needs(rule->min_cc, rule->needs) : std::nullopt;
}

std::optional<std::string> gemm_layout_unsupported(DType type, ComputeCapability cc, const GemmShape& s) {
  const bool tn = s.trans_a && !s.trans_b;
  if (gemm_has_fast_accum(type) && cc.major < 10 && !tn)  // the fp8 types
    return fmt::format("cuBLASLt runs fp8 GEMMs only in the TN layout before compute capability 10.0 (this GPU is "
                       "{}, the shape asks for {}): use {}x{}x{}:TN",
                       format_cc(cc), gemm_layout(s), s.m, s.n, s.k);
  return std::nullopt;
}

DType gemm_output_type(DType type) {
  const auto* rule = gemm_type_rule(type);
  return rule ? rule->output : type;
}

std::uint64_t gemm_device_bytes(DType type, const GemmShape& s, std::uint64_t workspace_bytes) {
  const std::uint64_t in = dtype_size(type), out = dtype_size(gemm_output_type(type));
  const std::uint64_t a = saturating_mul(saturating_mul(s.m, s.k), in);
  const std::uint64_t b = saturating_mul(saturating_mul(s.k, s.n), in);
  const std::uint64_t c = saturating_mul(saturating_mul(s.m, s.n), out);
  return saturating_add(saturating_add(saturating_add(workspace_bytes, a), b), c);
}

std::optional<std::size_t> fastest_candidate(const std::vector<GemmCandidate>& candidates) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto& c = candidates[i];
    if (!c.error.empty() || !(c.seconds > 0) || !std::isfinite(c.seconds)) continue;
    if (!best || c.seconds < candidates[*best].seconds ||
        (c.seconds == candidates[*best].seconds && c.heuristic_rank < candidates[*best].heuristic_rank))
      best = i;
  }
  return best;
}

std::uint32_t gemm_reduction_scheme_mask(DType type, bool fixed) {
  if (fixed) return 0;  // CUBLASLT_REDUCTION_SCHEME_NONE only
  const DType out = gemm_output_type(type);
  // C stored in 32 bits or more (fp64, fp32 and tf32, int32) holds a reduction's partial sums as
  // precisely as the compute type does.
  const bool out_as_precise = dtype_size(out) >= 4;
  return out_as_precise ? kReduceAll : kReduceComputeType;
}

std::string reduction_scheme_names(std::uint32_t mask) {
  std::string out;
  for (auto [bit, name] : {std::pair{kReduceInplace, "inplace"}, std::pair{kReduceComputeType, "compute_type"},
                           std::pair{kReduceOutputType, "output_type"}})
    if (mask & bit) out += (out.empty() ? "" : "|") + std::string(name);
  return out.empty() ? "none" : out;
}

int gemm_batch(double seconds_per_product, double target_seconds, int max_batch) {
  if (!(seconds_per_product > 0) || !std::isfinite(seconds_per_product)) return 1;
  const double n = std::ceil(target_seconds / seconds_per_product * (1 - 1e-12));  // 2e-3 / 4e-6 is 500, not 501
  return static_cast<int>(std::clamp(n, 1.0, static_cast<double>(std::max(max_batch, 1))));
}

int gemm_warmup_products(double seconds_per_product, double warmup_seconds, int max_products) {
  return gemm_batch(seconds_per_product, warmup_seconds, max_products);
}

int gemm_warmup_next(double warmed_seconds, double seconds_per_product, int round) {
  if (round >= kGemmWarmupRounds || warmed_seconds >= kGemmWarmupSeconds) return 0;
  return gemm_warmup_products(seconds_per_product, kGemmWarmupSeconds - warmed_seconds);
}

std::string call_failure(std::string_view call, std::string_view error_string, std::string_view error_name) {
  if (error_name.empty()) return fmt::format("{} failed: {}", call, error_string);
  return fmt::format("{} failed: {} ({})", call, error_string, error_name);
}

std::uint64_t gemm_bits_config(const GemmBitsConfig& c) {
  const nlohmann::json j = {{"library", c.library},           {"device_name", c.device_name},
                            {"compute_capability", format_cc(c.cc)}, {"sm_count", c.sm_count},
                            {"algorithm", c.algorithm},       {"compute_type", c.compute_type},
                            {"output_dtype", c.output_dtype}};
  return text_digest(j.dump());
}

}  // namespace gpuscale::cuda
