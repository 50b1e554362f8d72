#pragma once
// The planted GEMM bit flip (GPUSCALE_EMU_FAULTS, kind `flip-gemm:DEVICE:N`): after every product on
// device DEVICE (the ordinal this process sees), one bit of D's element N (counted from D's pointer in
// D's type) is flipped, as a silent data corruption in the GPU's output would. Parsed here until the
// core's faults.h parses every kind; only this kind is read, the others are left to their parts.
#include <cstdint>
#include <string_view>
#include <vector>

#include <cublasLt.h>

namespace gpuscale_emu::lt {

struct GemmFlip {
  int device = 0;
  std::uint64_t element = 0;
};

// The flip-gemm items of a comma-separated fault list; malformed items of this kind are skipped.
std::vector<GemmFlip> parse_gemm_flips(std::string_view text);
// The flips GPUSCALE_EMU_FAULTS plants now (read at each call, so a test may change it).
std::vector<GemmFlip> planted_gemm_flips();

// Flips the top mantissa bit of element `index` of a `type` array (bit 4 of an integer): a change of
// a quarter to a half of the value, far outside any GEMM tolerance.
void flip_element_bit(void* data, cudaDataType_t type, std::uint64_t index);

}  // namespace gpuscale_emu::lt
