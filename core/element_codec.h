#pragma once
// Reads and writes one element of a typed buffer as a double, for host-side input generation and
// verification (fp16 and bf16 round to nearest even; the values gpuscale stores are small integers,
// which both formats hold exactly).
#include <cstdint>
#include <cstring>

#include "core/dtype.h"

namespace gpuscale {

std::uint16_t float_to_bf16_bits(float f);
float bf16_bits_to_float(std::uint16_t b);
std::uint16_t float_to_fp16_bits(float f);
float fp16_bits_to_float(std::uint16_t h);

// Every type with a host codec in core/dtype_table.def (not fp8); throws gpuscale::Error for the others.
void store_element(DType type, void* buffer, std::uint64_t index, double value);
double load_element(DType type, const void* buffer, std::uint64_t index);

}  // namespace gpuscale
