#include "harness/benchmarks/burn/burn_sdc.h"

#include <fmt/format.h>

#include "harness/benchmarks/burn/sdc_agreement.h"
#include "kernels/output_digest.h"

namespace gpuscale {
namespace {

// One allgather of every rank's digest: its config, its count, then the digests padded to
// kDigestBlocks (every value is below 2^48, so it travels exactly as a double).
constexpr std::size_t kWidth = 2 + kDigestBlocks;

std::vector<std::vector<std::uint64_t>> gather_digests(const Group& group, std::uint64_t config,
                                                       const std::vector<std::uint64_t>& mine,
                                                       std::vector<std::uint64_t>* configs) {
  std::vector<double> send(kWidth, 0.0);
  send[0] = static_cast<double>(config);
  send[1] = static_cast<double>(std::min<std::size_t>(mine.size(), kDigestBlocks));
  for (std::size_t i = 0; i < mine.size() && i < kDigestBlocks; ++i) send[2 + i] = static_cast<double>(mine[i]);
  const auto all = group.allgather(send);
  std::vector<std::vector<std::uint64_t>> digests;
  for (std::size_t at = 0; at + kWidth <= all.size(); at += kWidth) {
    if (configs) configs->push_back(static_cast<std::uint64_t>(all[at]));
    const auto n = static_cast<std::size_t>(all[at + 1]);
    digests.emplace_back();
    for (std::size_t i = 0; i < n && i < kDigestBlocks; ++i) digests.back().push_back(static_cast<std::uint64_t>(all[at + 2 + i]));
  }
  return digests;
}

// The disagreeing ranks narrowed to one element each (the first few; later ones keep their block), and
// the rounds one narrowing may take (64^8 elements: beyond any output).
constexpr std::size_t kNarrowed = 4;
constexpr int kMaxRounds = 8;

}  // namespace

void check_output_agreement(RankMeasurement& out, GemmProblem& problem, const Group& group, std::uint64_t rows) {
  const auto mine = problem.output_digest();
  std::vector<std::uint64_t> configs;
  const auto digests = gather_digests(group, mine.config, mine.blocks, &configs);
  const auto verdicts = sdc_agreement(configs, digests);
  const auto me = static_cast<std::size_t>(group.rank());
  if (me >= verdicts.size()) return;

  // Every rank takes part in every round (the group's collective), in the same order: the verdicts are
  // the same on every rank, and so is each round's outcome.
  std::optional<std::uint64_t> my_element;
  std::size_t narrowed = 0;
  for (std::size_t d = 0; d < verdicts.size() && narrowed < kNarrowed; ++d) {
    if (verdicts[d].status != SdcStatus::disagrees) continue;
    const int w = majority_witness(configs, verdicts, d);
    if (w < 0) continue;
    ++narrowed;
    auto range = digest_block_range(mine.elements, static_cast<int>(digests[d].size()), verdicts[d].first_block);
    for (int round = 0; round < kMaxRounds && range.last - range.first > 1; ++round) {
      const bool asked = me == d || me == static_cast<std::size_t>(w);
      const auto parts = gather_digests(group, 0, asked ? problem.range_digests(range.first, range.last)
                                                        : std::vector<std::uint64_t>{}, nullptr);
      const auto next = narrow_disagreement(range, parts[d], parts[static_cast<std::size_t>(w)]);
      if (!next) break;
      range = *next;
    }
    if (d == me && range.last - range.first == 1) my_element = range.first;
  }

  const auto& v = verdicts[me];
  out.metrics["sdc"] = sdc_status_name(v.status);
  out.metrics["sdc_agreeing"] = v.agreeing;
  out.metrics["sdc_compared"] = v.compared;
  if (v.status != SdcStatus::disagrees) return;
  const auto range = digest_block_range(mine.elements, static_cast<int>(mine.blocks.size()), v.first_block);
  out.metrics["sdc_block"] = v.first_block;
  out.metrics["sdc_elements"] = {range.first, range.last};
  std::string where = fmt::format("elements {}-{} (block {} of {})", range.first, range.last - 1, v.first_block,
                                  mine.blocks.size());
  if (my_element) {
    out.metrics["sdc_element"] = *my_element;
    if (rows > 0) out.metrics["sdc_at"] = {*my_element % rows, *my_element / rows};
    where = rows > 0 ? fmt::format("element {} (C[{},{}], column-major) of {}", *my_element, *my_element % rows,
                                   *my_element / rows, where)
                     : fmt::format("element {} of {}", *my_element, where);
  }
  out.valid = false;
  out.message = (out.message.empty() ? "" : out.message + "; ") +
                fmt::format("silent data corruption: its GEMM output differs from the one {} of {} ranks share, first at {}",
                            v.agreeing, v.compared, where);
}

}  // namespace gpuscale
