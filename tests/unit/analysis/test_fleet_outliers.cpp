// analysis/fleet_outliers: outliers from a run's rows (groups of a tiled count, node-pair and
// GPU-pair matrices), attributed to the suspect host, with the GPUs named; nothing named for noise.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "analysis/fleet_outliers.h"

namespace gpuscale {
namespace {

using nlohmann::json;

// One row of `nodes` single-host groups around `level` with +-3% noise; `slow` (if >= 0) at half.
ResultRow group_row(std::mt19937_64& gen, int nodes, int slow, double level) {
  std::uniform_real_distribution<double> u(0.97, 1.03);
  ResultRow row;
  row.benchmark = "stream.triad";
  row.gpu_count = 1;
  row.unit = "GB/s";
  for (int i = 0; i < nodes; ++i) {
    RowGroup g;
    g.hosts = {"h" + std::to_string(i)};
    g.ranks = {i};
    g.value = level * u(gen) * (i == slow ? 0.5 : 1.0);
    g.spread_down = 0.01;
    g.spread_up = 0.01;
    row.groups.push_back(g);
  }
  return row;
}

// A node-pair matrix row of `nodes` nodes; every pair with `slow` at half.
ResultRow pair_row(std::mt19937_64& gen, int nodes, int slow) {
  std::uniform_real_distribution<double> u(0.97, 1.03);
  ResultRow row;
  row.benchmark = "pairs";
  row.gpu_count = nodes;
  json hosts = json::array(), ranks = json::array(), values = json::array();
  for (int i = 0; i < nodes; ++i) {
    hosts.push_back("h" + std::to_string(i));
    ranks.push_back({i});
    values.push_back(json::array());
  }
  for (int i = 0; i < nodes; ++i)
    for (int j = 0; j < nodes; ++j) values[static_cast<std::size_t>(i)].push_back(nullptr);
  for (int i = 0; i < nodes; ++i)
    for (int j = i + 1; j < nodes; ++j) {
      const double v = 20 * u(gen) * ((i == slow || j == slow) ? 0.5 : 1.0);
      values[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = v;
      values[static_cast<std::size_t>(j)][static_cast<std::size_t>(i)] = v;
    }
  row.matrices = json::array({{{"kind", "node"}, {"hosts", hosts}, {"ranks", ranks}, {"values", values}}});
  return row;
}

json identities(int n) {
  json ids = json::array();
  for (int i = 0; i < n; ++i)
    ids.push_back({{"rank", i},
                   {"host", "h" + std::to_string(i)},
                   {"device", {{"details", {{"uuid", "GPU-" + std::to_string(i)}, {"pci_bus_id", "0000:0" + std::to_string(i) + ":00.0"}}}}}});
  return ids;
}

TEST(FleetOutliers, ThePlantedHostAloneIsNamedWithItsGpu) {
  std::mt19937_64 gen(21);
  const auto fleet = fleet_outliers({group_row(gen, 8, 3, 10), pair_row(gen, 8, 3)}, identities(8), OutlierRule{});
  EXPECT_EQ(fleet["outlier_hosts"], json::array({"h3"}));
  ASSERT_FALSE(fleet["outliers"].empty());
  std::set<std::string> kinds;
  for (const auto& o : fleet["outliers"]) {
    kinds.insert(o["kind"].get<std::string>());
    bool has_h3 = false;
    for (const auto& h : o["hosts"]) has_h3 |= h == "h3";
    EXPECT_TRUE(has_h3) << o.dump();
  }
  EXPECT_TRUE(kinds.count("group"));
  EXPECT_TRUE(kinds.count("node"));  // a node whose pairs are all slow, not 7 slow links
  EXPECT_FALSE(kinds.count("pair"));
  const auto& group = fleet["outliers"][0];
  EXPECT_EQ(group["benchmark"], "stream.triad");
  EXPECT_EQ(group["uuids"], json::array({"GPU-3"}));
  EXPECT_EQ(group["pci_bus_ids"], json::array({"0000:03:00.0"}));
  const auto text = format_fleet_outliers(fleet);
  EXPECT_NE(text.find("suspect hosts: h3"), std::string::npos) << text;
}

TEST(FleetOutliers, NoiseAloneNamesNothing) {
  std::mt19937_64 gen(22);
  for (int trial = 0; trial < 200; ++trial) {
    const auto fleet = fleet_outliers({group_row(gen, 16, -1, 10), pair_row(gen, 8, -1)}, identities(16), OutlierRule{});
    ASSERT_TRUE(fleet["outliers"].empty()) << fleet.dump();
    EXPECT_TRUE(fleet["outlier_hosts"].empty());
    EXPECT_EQ(format_fleet_outliers(fleet), "");
  }
}

TEST(FleetOutliers, ASlowGroupSpanningTheSuspectIsExplainedByIt) {
  std::mt19937_64 gen(23);
  // Groups of two nodes at 4 GPUs: the one with h3 is slow; at 1 GPU h3 alone is.
  ResultRow wide = group_row(gen, 4, 1, 40);
  for (int i = 0; i < 4; ++i) wide.groups[static_cast<std::size_t>(i)].hosts = {"h" + std::to_string(2 * i), "h" + std::to_string(2 * i + 1)};
  const auto fleet = fleet_outliers({group_row(gen, 8, 3, 10), wide}, identities(8), OutlierRule{});
  EXPECT_EQ(fleet["outlier_hosts"], json::array({"h3"}));
  bool explained = false;
  for (const auto& o : fleet["outliers"])
    if (o["hosts"].size() == 2) explained = o.value("explained_by", "") == "h3";
  EXPECT_TRUE(explained) << fleet.dump();
}

TEST(FleetOutliers, HostileMatricesAreSkipped) {
  ResultRow row;
  row.benchmark = "pairs";
  row.matrices = json::array({json{{"kind", "node"}, {"hosts", {"a", "b", "c"}}, {"values", {{1, 2}}}}, json(3),
                              json{{"hosts", "x"}, {"values", 1}}});
  const auto fleet = fleet_outliers({row}, json::array(), OutlierRule{});
  EXPECT_TRUE(fleet["outliers"].empty());
}

}  // namespace
}  // namespace gpuscale
