#include "core/dtype.h"

#include <array>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"

namespace gpuscale {
namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  std::size_t size;
  int significand_bits;  // including the implicit bit; 0 for integers
  int subnormal_exponent;  // the smallest positive value is 2^this (floats; 0 for integers)
  std::string_view aliases[3];
};

constexpr std::array<DTypeInfo, 9> kTypes{{
    {DType::fp64, "fp64", 8, 53, -1074, {"double", "float64", "f64"}},
    {DType::fp32, "fp32", 4, 24, -149, {"float", "float32", "f32"}},
    {DType::tf32, "tf32", 4, 11, -149, {}},
    {DType::fp16, "fp16", 2, 11, -24, {"half", "float16", "f16"}},
    {DType::bf16, "bf16", 2, 8, -133, {"bfloat16", "bfloat", {}}},
    {DType::fp8_e4m3, "fp8_e4m3", 1, 4, -9, {"fp8", "e4m3", {}}},
    {DType::fp8_e5m2, "fp8_e5m2", 1, 3, -16, {"e5m2", {}, {}}},
    {DType::int32, "int32", 4, 0, 0, {"int", "i32", {}}},
    {DType::int8, "int8", 1, 0, 0, {"char", "i8", {}}},
}};

const DTypeInfo& info(DType t) {
  for (const auto& i : kTypes)
    if (i.type == t) return i;
  return kTypes[0];  // unreachable: every enumerator is in the table
}

}  // namespace

std::string_view dtype_name(DType t) { return info(t).name; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& i : kTypes) {
    if (i.name == name) return i.type;
    for (auto a : i.aliases)
      if (!a.empty() && a == name) return i.type;
  }
  return std::nullopt;
}

DType parse_dtype_or_throw(std::string_view name) {
  if (auto t = parse_dtype(name)) return *t;
  std::string known;
  for (const auto& i : kTypes) known += fmt::format("{}{}", known.empty() ? "" : ", ", i.name);
  throw Error(fmt::format("unknown dtype '{}' (known: {})", name, known));
}

std::vector<DType> parse_dtype_list(std::string_view csv) {
  std::vector<DType> out;
  std::size_t start = 0;
  while (start <= csv.size()) {
    auto end = csv.find(',', start);
    if (end == std::string_view::npos) end = csv.size();
    auto item = csv.substr(start, end - start);
    if (item.empty()) throw Error(fmt::format("empty dtype in list '{}'", csv));
    out.push_back(parse_dtype_or_throw(item));
    start = end + 1;
  }
  return out;
}

std::size_t dtype_size(DType t) { return info(t).size; }

bool dtype_is_float(DType t) { return info(t).significand_bits > 0; }

double dtype_epsilon(DType t) {
  int p = info(t).significand_bits;
  return p > 0 ? std::ldexp(1.0, -p) : 0.0;
}

double dtype_min_subnormal(DType t) {
  return dtype_is_float(t) ? std::ldexp(1.0, info(t).subnormal_exponent) : 0.0;
}

double dtype_exact_integer_limit(DType t) {
  switch (t) {
    case DType::int8: return 127;
    case DType::int32: return 2147483647.0;
    default: return std::ldexp(1.0, info(t).significand_bits);
  }
}

}  // namespace gpuscale
