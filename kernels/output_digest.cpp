#include "kernels/output_digest.h"

#include <algorithm>

namespace gpuscale {

ElementRange digest_block_range(std::uint64_t elements, int blocks, int block) {
  const auto n = static_cast<std::uint64_t>(std::max(1, blocks));
  const auto b = static_cast<std::uint64_t>(std::max(0, block));
  return {elements * b / n, elements * (b + 1) / n};
}

std::vector<std::uint64_t> block_digests(const void* data, std::uint64_t elements, std::uint64_t element_size,
                                         int blocks) {
  const int n = static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(std::max(1, blocks)), elements));
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::vector<std::uint64_t> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const auto r = digest_block_range(elements, n, i);
    std::uint64_t h = 1469598103934665603ULL;
    for (std::uint64_t at = r.first * element_size; at < r.last * element_size; ++at) h = (h ^ bytes[at]) * 1099511628211ULL;
    out.push_back(h & kDigestMask);
  }
  return out;
}

std::vector<std::uint64_t> range_digests_of(const void* data, std::uint64_t elements, std::uint64_t element_size,
                                            std::uint64_t first, std::uint64_t last, int blocks) {
  last = std::min(last, elements);
  if (first >= last) return {};
  return block_digests(static_cast<const unsigned char*>(data) + first * element_size, last - first, element_size, blocks);
}

std::uint64_t text_digest(std::string_view text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h & kDigestMask;
}

void flip_one_bit(void* data, std::uint64_t elements, std::uint64_t element_size, std::uint64_t pick) {
  if (elements == 0 || element_size == 0) return;
  const std::uint64_t element = pick % elements;
  const std::uint64_t bit = (pick / elements) % (element_size * 8);
  static_cast<unsigned char*>(data)[element * element_size + bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
}

}  // namespace gpuscale
