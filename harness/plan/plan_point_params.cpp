#include "harness/plan/plan_point_params.h"

#include <string_view>

#include <fmt/format.h>

#include "collectives/collective_table.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/term_text.h"
#include "harness/options/run_option_values.h"
#include "harness/plan/plan_point_check.h"  // kMaxPointQuantity
#include "kernels/gemm_spec.h"

namespace gpuscale {
namespace {

using json = nlohmann::json;

std::optional<std::string> quantity(const json& v) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() > 0))
    return std::string("expected a whole number of at least 1");
  const auto q = v.get<std::uint64_t>();
  if (q < 1 || q > kMaxPointQuantity) return fmt::format("{} is outside 1 .. 2^62", q);
  return std::nullopt;
}

std::optional<std::string> small_int(const json& v, std::int64_t lo, std::int64_t hi) {
  if (!v.is_number_integer()) return std::string("expected a whole number");
  const bool in = v.is_number_unsigned() ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(hi)
                                         : v.get<std::int64_t>() >= lo && v.get<std::int64_t>() <= hi;
  if (!in) return fmt::format("{} is outside {} .. {}", v.dump(), lo, hi);
  return std::nullopt;
}

std::optional<std::string> one_of_strings(const json& v, std::span<const std::string_view> names) {
  if (!v.is_string()) return std::string("expected a string");
  for (auto n : names)
    if (v.get<std::string>() == n) return std::nullopt;
  return fmt::format("'{}' is not {}", terminal_quote(v.get<std::string>()), join_values(names, ", ", " or "));
}

// The parameters every family may hold, each with the CLI's rule for it.
std::optional<std::string> parameter_problem(const std::string& key, const json& v, int world) {
  if (key == "dtype") {
    if (!v.is_string() || !parse_dtype(v.get<std::string>())) return fmt::format("unknown dtype {}", terminal_quote(v.dump()));
  } else if (key == "op") {
    if (!v.is_string() || !parse_redop(v.get<std::string>()))
      return fmt::format("{} is not a reduction op (sum, prod, min, max, avg)", terminal_quote(v.dump()));
  } else if (key == "placement") {
    return one_of_strings(v, placement_names());
  } else if (key == "size_bytes" || key == "elements" || key == "width" || key == "batch" || key == "bucket_bytes" ||
             key == "m" || key == "n" || key == "k") {
    return quantity(v);
  } else if (key == "depth") {
    return small_int(v, 1, 1 << 20);
  } else if (key == "root") {
    return small_int(v, 0, world - 1);
  } else if (key == "peer_offset") {
    return small_int(v, 1, 4096);  // a peer copy's offset among a node's GPUs
  } else if (key == "layout") {
    return one_of_strings(v, gemm_layouts());
  } else if (key == "transport") {
    return one_of_strings(v, transport_values());
  } else if (key == "fast_accum") {
    if (!v.is_boolean()) return std::string("expected true or false");
  }
  return std::nullopt;  // a family's own parameter (direction, mode, collective): its parser decides
}

}  // namespace

std::optional<std::string> plan_point_params_problem(const json& params, int world_size) {
  if (!params.is_object()) return std::string("params is not an object");
  for (const auto& [key, value] : params.items())
    if (auto why = parameter_problem(key, value, world_size))
      return fmt::format("parameter '{}': {}", terminal_quote(key), *why);
  if (params.contains("m") && params.contains("n") && params.contains("k") && params.contains("layout")) {
    try {  // the --gemm-shapes rules on the shape as text
      parse_gemm_shape(fmt::format("{}x{}x{}:{}", params["m"].get<std::uint64_t>(), params["n"].get<std::uint64_t>(),
                                   params["k"].get<std::uint64_t>(), params["layout"].get<std::string>()));
    } catch (const Error& e) {
      return std::string(e.what());
    }
  }
  return std::nullopt;
}

}  // namespace gpuscale
