#include "harness/benchmarks/burn/sdc_agreement.h"

#include <map>

namespace gpuscale {

const char* sdc_status_name(SdcStatus s) {
  switch (s) {
    case SdcStatus::agrees: return "agrees";
    case SdcStatus::disagrees: return "disagrees";
    case SdcStatus::no_majority: return "no majority";
    case SdcStatus::not_compared: return "not compared";
  }
  return "?";
}

std::vector<SdcVerdict> sdc_agreement(const std::vector<std::uint64_t>& configs,
                                      const std::vector<std::vector<std::uint64_t>>& digests) {
  std::vector<SdcVerdict> out(digests.size());
  std::map<std::uint64_t, std::vector<std::size_t>> classes;  // config -> its ranks with a digest
  for (std::size_t r = 0; r < digests.size() && r < configs.size(); ++r)
    if (!digests[r].empty()) classes[configs[r]].push_back(r);
  for (const auto& [config, ranks] : classes) {
    const int n = static_cast<int>(ranks.size());
    std::map<std::vector<std::uint64_t>, int> votes;
    for (auto r : ranks) ++votes[digests[r]];
    const std::vector<std::uint64_t>* majority = nullptr;
    int agreeing = 0;
    for (const auto& [digest, count] : votes)
      if (2 * count > n) majority = &digest, agreeing = count;
    for (auto r : ranks) {
      auto& v = out[r];
      v.compared = n;
      v.agreeing = agreeing;
      if (n < 2) continue;  // a class of one: nothing to compare with
      if (majority == nullptr) {
        v.status = SdcStatus::no_majority;
        continue;
      }
      if (digests[r] == *majority) {
        v.status = SdcStatus::agrees;
        continue;
      }
      v.status = SdcStatus::disagrees;
      for (std::size_t b = 0; b < digests[r].size(); ++b)
        if (b >= majority->size() || digests[r][b] != (*majority)[b]) {
          v.first_block = static_cast<int>(b);
          break;
        }
    }
  }
  return out;
}

int majority_witness(const std::vector<std::uint64_t>& configs, const std::vector<SdcVerdict>& verdicts, std::size_t r) {
  if (r >= configs.size()) return -1;
  for (std::size_t w = 0; w < verdicts.size() && w < configs.size(); ++w)
    if (configs[w] == configs[r] && verdicts[w].status == SdcStatus::agrees) return static_cast<int>(w);
  return -1;
}

std::optional<ElementRange> narrow_disagreement(ElementRange range, const std::vector<std::uint64_t>& mine,
                                                const std::vector<std::uint64_t>& theirs) {
  const std::uint64_t size = range.last - range.first;
  if (mine.empty() || mine.size() != theirs.size() || mine.size() > size) return std::nullopt;
  const int parts = static_cast<int>(mine.size());
  for (int i = 0; i < parts; ++i)
    if (mine[static_cast<std::size_t>(i)] != theirs[static_cast<std::size_t>(i)]) {
      const auto sub = digest_block_range(size, parts, i);
      return ElementRange{range.first + sub.first, range.first + sub.last};
    }
  return std::nullopt;
}

}  // namespace gpuscale
