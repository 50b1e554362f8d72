#include "tests/emulated_gpu/cublaslt/lt_fault.h"

#include <charconv>
#include <cstdlib>

#include "tests/emulated_gpu/core/faults.h"
#include "tests/emulated_gpu/cublaslt/lt_objects.h"

namespace gpuscale_emu::lt {

namespace {
template <typename T>
bool parse_number(std::string_view s, T& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}
}  // namespace

std::vector<GemmFlip> parse_gemm_flips(std::string_view text) {
  std::vector<GemmFlip> out;
  constexpr std::string_view kKind = "flip-gemm:";
  while (!text.empty()) {
    const auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (item.substr(0, kKind.size()) != kKind) continue;
    item.remove_prefix(kKind.size());
    const auto colon = item.find(':');
    GemmFlip f;
    std::string device;  // an ordinal, or HOST/ordinal for one test host only (core/faults.h)
    if (colon == std::string_view::npos || !target_here(std::string(item.substr(0, colon)), device) ||
        !parse_number(std::string_view(device), f.device) ||
        !parse_number(item.substr(colon + 1), f.element) || f.device < 0)
      continue;
    out.push_back(f);
  }
  return out;
}

std::vector<GemmFlip> planted_gemm_flips() {
  const char* env = std::getenv("GPUSCALE_EMU_FAULTS");
  return env == nullptr ? std::vector<GemmFlip>{} : parse_gemm_flips(env);
}

void flip_element_bit(void* data, cudaDataType_t type, std::uint64_t index) {
  int bit = 4;  // integers
  switch (type) {
    case CUDA_R_64F: bit = 51; break;
    case CUDA_R_32F: bit = 22; break;
    case CUDA_R_16F: bit = 9; break;
    case CUDA_R_16BF: bit = 6; break;
    case CUDA_R_8F_E4M3: bit = 2; break;
    case CUDA_R_8F_E5M2: bit = 1; break;
    default: break;
  }
  auto* bytes = static_cast<unsigned char*>(data) + index * element_bytes(type);
  bytes[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));  // little-endian, as x86 and the GPU store
}

}  // namespace gpuscale_emu::lt
