// analysis/iteration_stragglers: the ranks the collective rows' per-iteration passes name as their
// straggler, most rows first (ties to the lower rank), each with its host; the result file's
// analysis.iteration_stragglers and the run summary's section say the same. Random runs, seeded.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "analysis/iteration_stragglers.h"
#include "analysis/run_analysis.h"
#include "test_seed.h"

namespace gpuscale {
namespace {

using nlohmann::json;

std::string host_of(int rank) { return "node" + std::to_string(rank / 2); }

ResultRow collective_row(int ranks, std::optional<int> straggler, double share) {
  ResultRow row;
  row.benchmark = "all_reduce";
  row.scope = "collective";
  row.params = {{"size_bytes", 1024}};
  row.gpu_count = ranks;
  for (int r = 0; r < ranks; ++r) {
    RankValue v;
    v.rank = r;
    v.host = host_of(r);
    row.ranks.push_back(v);
  }
  if (straggler) {
    row.metrics["iter_straggler_rank"] = *straggler;
    row.metrics["iter_straggler_share"] = share;
  }
  return row;
}

TEST(IterationStragglers, MostRowsFirstWithTheirHostsAndMedianShare) {
  std::mt19937_64 rng(test_seed());
  for (int trial = 0; trial < 50; ++trial) {
    const int ranks = std::uniform_int_distribution<int>(2, 16)(rng);
    const int planted = std::uniform_int_distribution<int>(0, ranks - 1)(rng);
    std::vector<ResultRow> rows;
    std::map<int, std::vector<double>> shares;  // the oracle: each named rank's shares
    const int n = std::uniform_int_distribution<int>(3, 12)(rng);
    for (int i = 0; i < n; ++i) {
      // Most rows name the planted rank; a few a random one; some name none (no pass, or one rank).
      const double u = std::uniform_real_distribution<double>(0, 1)(rng);
      const int named = u < 0.75 ? planted : std::uniform_int_distribution<int>(0, ranks - 1)(rng);
      const double share = std::uniform_real_distribution<double>(0.3, 1.0)(rng);
      rows.push_back(collective_row(ranks, named, share));
      shares[named].push_back(share);
      if (u > 0.9) rows.push_back(collective_row(ranks, std::nullopt, 0));
    }
    rows.push_back(collective_row(1, 0, 1.0));  // one rank: nobody to be slower than, never counted
    ResultRow failed = collective_row(ranks, planted, 1.0);
    failed.status = RowStatus::failed;
    rows.push_back(failed);  // a failed row names nobody

    const auto list = find_iteration_stragglers(rows);
    ASSERT_EQ(list.size(), shares.size()) << "trial " << trial;
    std::size_t total = 0;
    for (const auto& [rank, s] : shares) total += s.size();
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto& s = list[i];
      const auto& mine = shares.at(s.rank);
      EXPECT_EQ(s.host, host_of(s.rank));
      EXPECT_EQ(s.rows, mine.size());
      EXPECT_EQ(s.of_rows, total);
      auto sorted = mine;
      std::sort(sorted.begin(), sorted.end());
      const std::size_t m = sorted.size();
      const double median = m % 2 ? sorted[m / 2] : (sorted[m / 2 - 1] + sorted[m / 2]) / 2;
      EXPECT_DOUBLE_EQ(s.median_share, median);
      if (i > 0) {  // most rows first, ties to the lower rank
        EXPECT_TRUE(list[i - 1].rows > s.rows || (list[i - 1].rows == s.rows && list[i - 1].rank < s.rank));
      }
    }
    // The file's object and the summary's section name the same first rank and its host.
    const json a = run_analysis(json::object(), rows, AnalysisRules{});
    ASSERT_TRUE(a.contains("iteration_stragglers"));
    ASSERT_EQ(a["iteration_stragglers"].size(), list.size());
    EXPECT_EQ(a["iteration_stragglers"][0]["rank"], list[0].rank);
    EXPECT_EQ(a["iteration_stragglers"][0]["host"], list[0].host);
    EXPECT_EQ(a["iteration_stragglers"][0]["rows"], list[0].rows);
    const std::string text = format_iteration_stragglers(list, TextStyle{});
    EXPECT_NE(text.find("per-iteration stragglers"), std::string::npos);
    EXPECT_NE(text.find(list[0].host), std::string::npos);
  }
}

TEST(IterationStragglers, NoneWithoutAPass) {
  const std::vector<ResultRow> rows{collective_row(4, std::nullopt, 0), collective_row(1, 0, 1.0)};
  EXPECT_TRUE(find_iteration_stragglers(rows).empty());
  EXPECT_EQ(format_iteration_stragglers({}, TextStyle{}), "");
  EXPECT_FALSE(run_analysis(json::object(), rows, AnalysisRules{}).contains("iteration_stragglers"));
}

}  // namespace
}  // namespace gpuscale
