#pragma once
// Element types gpuscale measures with. One enum for kernels, GEMM and collectives; each benchmark
// says which it supports. Names follow cuBLAS/PyTorch usage ("bf16"); nccl-tests' names ("float",
// "half", "bfloat16", "double") are accepted as aliases.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale {

enum class DType { fp64, fp32, tf32, fp16, bf16, fp8_e4m3, fp8_e5m2, int32, int8 };

std::string_view dtype_name(DType t);
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
