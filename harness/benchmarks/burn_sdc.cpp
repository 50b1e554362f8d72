#include "harness/benchmarks/burn_sdc.h"

#include <fmt/format.h>

#include "harness/sdc_agreement.h"
#include "kernels/output_digest.h"

namespace gpuscale {

void check_output_agreement(RankMeasurement& out, GemmProblem& problem, const Group& group) {
  const auto mine = problem.output_digest();
  // One allgather: config, block count, then the blocks padded to kDigestBlocks (every value is below
  // 2^48, so it travels exactly as a double).
  constexpr std::size_t kWidth = 2 + kDigestBlocks;
  std::vector<double> send(kWidth, 0.0);
  send[0] = static_cast<double>(mine.config);
  send[1] = static_cast<double>(std::min<std::size_t>(mine.blocks.size(), kDigestBlocks));
  for (std::size_t i = 0; i < mine.blocks.size() && i < kDigestBlocks; ++i) send[2 + i] = static_cast<double>(mine.blocks[i]);
  const auto all = group.allgather(send);
  std::vector<std::uint64_t> configs;
  std::vector<std::vector<std::uint64_t>> digests;
  for (std::size_t at = 0; at + kWidth <= all.size(); at += kWidth) {
    configs.push_back(static_cast<std::uint64_t>(all[at]));
    const auto n = static_cast<std::size_t>(all[at + 1]);
    digests.emplace_back();
    for (std::size_t i = 0; i < n && i < kDigestBlocks; ++i) digests.back().push_back(static_cast<std::uint64_t>(all[at + 2 + i]));
  }
  const auto verdicts = sdc_agreement(configs, digests);
  const auto me = static_cast<std::size_t>(group.rank());
  if (me >= verdicts.size()) return;
  const auto& v = verdicts[me];
  out.metrics["sdc"] = sdc_status_name(v.status);
  out.metrics["sdc_agreeing"] = v.agreeing;
  out.metrics["sdc_compared"] = v.compared;
  if (v.status != SdcStatus::disagrees) return;
  const auto range = digest_block_range(mine.elements, static_cast<int>(mine.blocks.size()), v.first_block);
  out.metrics["sdc_block"] = v.first_block;
  out.metrics["sdc_elements"] = {range.first, range.last};
  out.valid = false;
  out.message = (out.message.empty() ? "" : out.message + "; ") +
                fmt::format("silent data corruption: its GEMM output differs from the one {} of {} ranks share, first in "
                            "elements {}-{} (block {} of {})",
                            v.agreeing, v.compared, range.first, range.last - 1, v.first_block, mine.blocks.size());
}

}  // namespace gpuscale
