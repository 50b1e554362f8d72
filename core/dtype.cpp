#include "core/dtype.h"

#include <cmath>

#include <fmt/format.h>

#include "core/error.h"

namespace gpuscale {
namespace {

std::vector<DTypeInfo> build_table() {
  std::vector<DTypeInfo> t;
#define GPUSCALE_DTYPE(id, name, bytes, significand_bits, subnormal_exponent, nccl_tests, uses, ...) \
  t.push_back(DTypeInfo{DType::id, name, bytes, significand_bits, subnormal_exponent, nccl_tests, uses, {__VA_ARGS__}, {}, {}, {}, false});
#include "core/dtype_table.def"
  auto row = [&t](DType id) -> DTypeInfo& { return t[static_cast<std::size_t>(id)]; };
  // The library names, spelled as the backends' rows spell them (the backends expand the same rows).
#define GPUSCALE_DTYPE_NCCL(id, nccl_type, since_major, since_minor, what, reduce_min_cc) row(DType::id).nccl = #nccl_type;
#define GPUSCALE_DTYPE_MPI(id, mpi_type, reduces) \
  row(DType::id).mpi = #mpi_type;                 \
  row(DType::id).mpi_reduces = reduces;
#define GPUSCALE_DTYPE_CUBLASLT(id, ab_type, c_type, scale_type, compute_type) row(DType::id).cublaslt_compute = #compute_type;
#include "core/dtype_table.def"
  return t;
}

}  // namespace

const std::vector<DTypeInfo>& dtype_table() {
  static const std::vector<DTypeInfo> table = build_table();
  return table;
}

const DTypeInfo& dtype_info(DType t) { return dtype_table().at(static_cast<std::size_t>(t)); }

std::vector<DType> every_dtype() { return dtypes_for(DTypeUse(0)); }

std::vector<DType> dtypes_for(DTypeUse use) {
  std::vector<DType> out;
  for (const auto& i : dtype_table())
    if (use == 0 || (i.uses & use)) out.push_back(i.type);
  return out;
}

bool dtype_used_by(DType t, DTypeUse use) { return (dtype_info(t).uses & use) != 0; }

std::string dtype_names_text(unsigned use, std::string_view sep) {
  std::string out;
  for (const auto& i : dtype_table())
    if (use == 0 || (i.uses & use)) out += fmt::format("{}{}", out.empty() ? "" : sep, i.name);
  return out;
}

std::string_view dtype_name(DType t) { return dtype_info(t).name; }

std::string_view dtype_nccl_tests_name(DType t) {
  const auto& i = dtype_info(t);
  return i.nccl_tests.empty() ? i.name : i.nccl_tests;
}

std::optional<DType> parse_dtype(std::string_view name) {
  if (name.empty()) return std::nullopt;
  for (const auto& i : dtype_table()) {
    if (i.name == name || i.nccl_tests == name) return i.type;
    for (auto a : i.aliases)
      if (!a.empty() && a == name) return i.type;
  }
  return std::nullopt;
}

DType parse_dtype_or_throw(std::string_view name) {
  if (auto t = parse_dtype(name)) return *t;
  throw Error(fmt::format("unknown dtype '{}' (known: {})", name, dtype_names_text()));
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

std::size_t dtype_size(DType t) { return dtype_info(t).size; }

bool dtype_is_float(DType t) { return dtype_info(t).significand_bits > 0; }

double dtype_epsilon(DType t) {
  int p = dtype_info(t).significand_bits;
  return p > 0 ? std::ldexp(1.0, -p) : 0.0;
}

double dtype_min_subnormal(DType t) {
  return dtype_is_float(t) ? std::ldexp(1.0, dtype_info(t).subnormal_exponent) : 0.0;
}

double dtype_exact_integer_limit(DType t) {
  const auto& i = dtype_info(t);
  // A signed integer of b bits holds [-2^(b-1), 2^(b-1) - 1]; a float's significand holds every
  // integer up to 2^p.
  if (i.significand_bits == 0) return std::ldexp(1.0, static_cast<int>(i.size * 8 - 1)) - 1;
  return std::ldexp(1.0, i.significand_bits);
}

}  // namespace gpuscale
