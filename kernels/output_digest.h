#pragma once
// A GEMM output's digest for silent-data-corruption checks (docs/acceptance.md): the output's bytes cut
// into `blocks` equal runs of whole elements, each hashed (FNV-1a, 64 bits, kept to its low 48 so it
// travels exactly as a double through the group's allgather). Ranks that ran the same deterministic
// product on the same inputs must give the same digest bit for bit; the first block that differs says
// where. Pure: tests/unit/kernels/test_output_digest.cpp.
#include <cstdint>
#include <string_view>
#include <vector>

namespace gpuscale {

inline constexpr int kDigestBlocks = 64;
inline constexpr std::uint64_t kDigestMask = (1ULL << 48) - 1;

// The digest of `elements` elements of `element_size` bytes at `data`: min(blocks, elements) hashes.
std::vector<std::uint64_t> block_digests(const void* data, std::uint64_t elements, std::uint64_t element_size,
                                         int blocks = kDigestBlocks);
// block_digests of the elements [first, last) of `data` (clamped to `elements`), in min(blocks, its size)
// parts: a range narrowed further.
std::vector<std::uint64_t> range_digests_of(const void* data, std::uint64_t elements, std::uint64_t element_size,
                                            std::uint64_t first, std::uint64_t last, int blocks = kDigestBlocks);
// The elements [first, last) block `block` of such a digest covers.
struct ElementRange {
  std::uint64_t first = 0, last = 0;
};
ElementRange digest_block_range(std::uint64_t elements, int blocks, int block);

// A text's 48-bit FNV-1a hash (a digest's config: the library and algorithm that decide its bits).
std::uint64_t text_digest(std::string_view text);

// Flips one bit of one element in place (the flip-bit test fault): element and bit from `pick`.
void flip_one_bit(void* data, std::uint64_t elements, std::uint64_t element_size, std::uint64_t pick);

}  // namespace gpuscale
