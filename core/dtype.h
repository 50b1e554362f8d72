#pragma once
// Element types gpuscale measures with. One enum for kernels, GEMM and collectives, made from the one
// table of types (core/dtype_table.def), which also says which benchmark families take each type.
// Names follow cuBLAS/PyTorch usage ("bf16"); nccl-tests' names ("float", "half", "bfloat16", "double",
// "f8e4m3") are accepted as aliases.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale {

enum class DType {
#define GPUSCALE_DTYPE(id, ...) id,
#include "core/dtype_table.def"
};

// The benchmark families that take a type (the table's `uses`); a backend narrows each to its kernels.
enum DTypeUse : unsigned { kForStream = 1, kForGemm = 2, kForCollectives = 4, kForTraining = 8 };

// One row of the table as plain data (the library names as text, for listings).
struct DTypeInfo {
  DType type;
  std::string_view name;
  std::size_t size;  // bytes per element in memory (tf32 is stored as fp32)
  int significand_bits;  // including the implicit bit; 0 for integers
  int subnormal_exponent;  // the smallest positive value is 2^this (floats; 0 for integers)
  std::string_view nccl_tests;  // nccl-tests' name; "" where it has none
  unsigned uses;  // DTypeUse bits
  std::array<std::string_view, 3> aliases;
  // The names the libraries give it ("" where the library has none).
  std::string_view nccl, mpi, cublaslt_compute;
  bool mpi_reduces = false;  // false: MPI moves it as bits and refuses its reductions
};

const std::vector<DTypeInfo>& dtype_table();  // every type, in the table's order
const DTypeInfo& dtype_info(DType t);
std::vector<DType> every_dtype();               // nccl-tests' -d all
std::vector<DType> dtypes_for(DTypeUse use);    // the types a benchmark family takes, in table order
bool dtype_used_by(DType t, DTypeUse use);
// "fp64, fp32, ...": the names of the types `use` takes (every type when use is 0), for help texts.
std::string dtype_names_text(unsigned use = 0, std::string_view sep = ", ");

std::string_view dtype_name(DType t);
std::string_view dtype_nccl_tests_name(DType t);  // nccl-tests' name, or ours where it has none
std::optional<DType> parse_dtype(std::string_view name);  // nullopt for an unknown name
DType parse_dtype_or_throw(std::string_view name);       // gpuscale::Error naming the bad value
std::vector<DType> parse_dtype_list(std::string_view csv);
std::size_t dtype_size(DType t);  // bytes per element in memory (tf32 is stored as fp32)
bool dtype_is_float(DType t);
// Unit roundoff (2^-p for p significand bits including the implicit one); 0 for integer types.
double dtype_epsilon(DType t);
// Smallest positive (subnormal) value of a float type: the spacing of results near zero; 0 for integers.
double dtype_min_subnormal(DType t);
// Largest integer n such that every integer in [-n, n] is exactly representable.
double dtype_exact_integer_limit(DType t);

}  // namespace gpuscale
