#pragma once
// Silent data corruption caught by agreement (docs/acceptance.md): ranks that ran the same GEMM on the
// same inputs with the same library and algorithm (an equal digest config, kernels/output_digest.h)
// must give the same output digest bit for bit. Within each such class, the digest more than half of
// its ranks share is the majority; a rank whose digest differs from it is named, with the first block
// that differs. A class where no digest has more than half (two ranks that differ, say) names no one:
// which is wrong cannot be told. Pure: tests/unit/harness/benchmarks/burn/test_sdc_agreement.cpp.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/output_digest.h"

namespace gpuscale {

enum class SdcStatus {
  agrees,        // its digest is its class's majority
  disagrees,     // it differs from its class's majority: named
  no_majority,   // its class has no digest shared by more than half of its ranks
  not_compared,  // no digest (the device cannot give one), or a class of one
};
const char* sdc_status_name(SdcStatus s);  // "agrees", "disagrees", "no majority", "not compared"

struct SdcVerdict {
  SdcStatus status = SdcStatus::not_compared;
  int first_block = -1;  // disagrees: the first block that differs from the majority's
  int agreeing = 0;      // ranks of its class that share the majority digest (0 without one)
  int compared = 0;      // ranks of its class
};

// One verdict per rank: configs[r] and digests[r] are rank r's (an empty digest: none).
std::vector<SdcVerdict> sdc_agreement(const std::vector<std::uint64_t>& configs,
                                      const std::vector<std::vector<std::uint64_t>>& digests);

// Narrowing a disagreement to its first differing element: the rank and a witness of its class's
// majority (the lowest rank of its config that agrees; -1 when none) hash the same range of their
// outputs in up to kDigestBlocks parts, round after round, each round keeping the first part where
// they differ, until one element is left (a handful of rounds: log base 64 of a block's elements).
int majority_witness(const std::vector<std::uint64_t>& configs, const std::vector<SdcVerdict>& verdicts, std::size_t r);
// One round: the part of `range` (cut as block_digests cuts it into mine.size() parts) where `mine`
// first differs from `theirs`; nullopt when they agree or do not cover the range alike.
std::optional<ElementRange> narrow_disagreement(ElementRange range, const std::vector<std::uint64_t>& mine,
                                                const std::vector<std::uint64_t>& theirs);

}  // namespace gpuscale
