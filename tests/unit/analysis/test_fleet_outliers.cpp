// analysis/fleet_outliers: outliers from a run's rows (groups of a tiled count, node-pair, rail and
// GPU-pair matrices), attributed to the suspect host, with the GPUs named and a rail's NIC; nothing
// named for noise; a node-matrix outlier that a rail explains listed once, on its rail.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include <fmt/format.h>

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

// A lenient false-alarm rate for the tests of attribution on 4 to 8 members, which at the run's 1%
// name a half-speed member only when their noise allows (test_outliers.cpp measures the rule itself).
OutlierRule lenient() {
  OutlierRule rule;
  rule.false_alarm = 0.3;
  return rule;
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
  const auto fleet = fleet_outliers({group_row(gen, 8, 3, 10), pair_row(gen, 8, 3)}, identities(8), lenient());
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
  const auto fleet = fleet_outliers({group_row(gen, 8, 3, 10), wide}, identities(8), lenient());
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

// The sendrecv row of `nodes` nodes of `rails` GPUs each (rank = node x rails + local rank), measured
// rail by rail: rail matrices around 20 (+-3%), and the node matrix as each pair's slowest rail.
// slow(rail, i, j) is the factor of pair (i, j) on that rail.
template <class Slow>
ResultRow rail_row(std::mt19937_64& gen, int nodes, int rails, Slow slow) {
  std::uniform_real_distribution<double> u(0.97, 1.03);
  const auto n = static_cast<std::size_t>(nodes);
  ResultRow row;
  row.benchmark = "pairs";
  row.gpu_count = nodes * rails;
  row.params = {{"collective", "sendrecv"}};
  json hosts = json::array(), node_ranks = json::array();
  for (int i = 0; i < nodes; ++i) {
    hosts.push_back("h" + std::to_string(i));
    node_ranks.push_back(json::array());
    for (int r = 0; r < rails; ++r) node_ranks.back().push_back(i * rails + r);
  }
  std::vector<std::vector<double>> node(n, std::vector<double>(n, 1e300));
  json list = json::array();
  for (int r = 0; r < rails; ++r) {
    json values = json::array(), ranks = json::array();
    for (std::size_t i = 0; i < n; ++i) {
      values.push_back(json::array());
      ranks.push_back({static_cast<int>(i) * rails + r});
      for (std::size_t j = 0; j < n; ++j) values[i].push_back(nullptr);
    }
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j) {
        const double v = 20 * u(gen) * slow(r, static_cast<int>(i), static_cast<int>(j));
        values[i][j] = values[j][i] = v;
        node[i][j] = node[j][i] = std::min(node[i][j], v);
      }
    list.push_back({{"kind", "rail"}, {"rail", r}, {"hosts", hosts}, {"ranks", ranks}, {"values", values}});
  }
  json values = json::array();
  for (std::size_t i = 0; i < n; ++i) {
    values.push_back(json::array());
    for (std::size_t j = 0; j < n; ++j) values[i].push_back(i == j ? json(nullptr) : json(node[i][j]));
  }
  list.insert(list.begin(), json{{"kind", "node"}, {"hosts", hosts}, {"ranks", node_ranks}, {"values", values}});
  row.matrices = list;
  return row;
}

// Identities of `n` ranks of `rails` per host, each with the NIC of its local rank (or none: the CPU
// backend's null and its reason).
json rail_identities(int n, int rails, bool nics) {
  json ids = json::array();
  for (int i = 0; i < n; ++i) {
    json details = {{"uuid", "GPU-" + std::to_string(i)}};
    if (nics) details["nic"] = {{"device", "mlx5_" + std::to_string(i % rails)}, {"port", 1}, {"rule", "nearest"}};
    else details.update({{"nic", nullptr}, {"nic_note", "the CPU backend has no NIC per rank"}});
    ids.push_back({{"rank", i}, {"host", "h" + std::to_string(i / rails)}, {"device", {{"details", details}}}});
  }
  return ids;
}

TEST(FleetOutliers, ASlowNicIsNamedOnItsRailWithItsNicAndTheNodeMatrixSaysSo) {
  for (std::uint64_t seed = 31; seed < 36; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 gen(seed);
    const int nodes = 8, rails = 4, sick = 5, rail = std::uniform_int_distribution<int>(0, rails - 1)(gen);
    const auto row = rail_row(gen, nodes, rails, [&](int r, int i, int j) { return r == rail && (i == sick || j == sick) ? 0.1 : 1.0; });
    const auto fleet = fleet_outliers({row}, rail_identities(nodes * rails, rails, true), OutlierRule{});
    EXPECT_EQ(fleet["outlier_hosts"], json::array({"h5"}));
    std::size_t on_rail = 0, listed = 0;
    for (const auto& o : fleet["outliers"]) {
      EXPECT_EQ(o["hosts"], json::array({"h5"})) << o.dump();
      if (o.contains("rail")) {
        ++on_rail;
        EXPECT_EQ(o["rail"], rail);
        EXPECT_EQ(o["kind"], "node");
        EXPECT_EQ(o["ranks"], json::array({sick * rails + rail}));
        EXPECT_EQ(o["nics"], json::array({{{"device", "mlx5_" + std::to_string(rail)}, {"port", 1}}}));
        EXPECT_FALSE(o.contains("nic_note"));
        EXPECT_NE(o["reason"].get<std::string>().find("on rail " + std::to_string(rail)), std::string::npos);
        EXPECT_NE(o["reason"].get<std::string>().find(fmt::format("the node's rail {} is suspect", rail)), std::string::npos)
            << o["reason"];
        EXPECT_FALSE(o.contains("explained_by"));
      } else {  // the node matrix's record of the same host: explained by the rail
        EXPECT_EQ(o["kind"], "node");
        EXPECT_EQ(o["explained_by"], "h5");
        EXPECT_EQ(o["explained_by_rail"], rail);
      }
      listed += o.contains("explained_by") || o.contains("explained_by_rail") ? 0 : 1;
    }
    EXPECT_EQ(on_rail, 1u);
    EXPECT_EQ(listed, 1u);
    const auto text = format_fleet_outliers(fleet);
    EXPECT_NE(text.find(fmt::format("on rail {} (NIC mlx5_{} port 1)", rail, rail)), std::string::npos) << text;
    EXPECT_NE(text.find("(1 more slow groups, nodes or pairs are explained"), std::string::npos) << text;
  }
}

TEST(FleetOutliers, ASlowRailLinkIsAPairOnItsRailAndExplainsTheNodePair) {
  std::mt19937_64 gen(41);
  // The link between h1 and h6 on rail 2 at a tenth: a pair outlier on rail 2, no suspect host.
  const auto row = rail_row(gen, 8, 4, [](int r, int i, int j) { return r == 2 && i == 1 && j == 6 ? 0.1 : 1.0; });
  const auto fleet = fleet_outliers({row}, rail_identities(32, 4, false), OutlierRule{});
  EXPECT_TRUE(fleet["outlier_hosts"].empty()) << fleet.dump();
  ASSERT_EQ(fleet["outliers"].size(), 2u) << fleet.dump();
  // The node matrix comes first in the row, its records first.
  const auto& link = fleet["outliers"][1];
  EXPECT_EQ(link["kind"], "pair");
  EXPECT_EQ(link["rail"], 2);
  EXPECT_EQ(link["ranks"], json::array({1 * 4 + 2, 6 * 4 + 2}));
  EXPECT_EQ(link["nics"], json::array({nullptr, nullptr}));  // the CPU backend: none, and why
  EXPECT_EQ(link["nic_note"], "the CPU backend has no NIC per rank");
  const auto& node_pair = fleet["outliers"][0];
  EXPECT_EQ(node_pair["kind"], "pair");
  EXPECT_FALSE(node_pair.contains("rail"));
  EXPECT_EQ(node_pair["explained_by_rail"], 2);
  EXPECT_FALSE(node_pair.contains("explained_by"));
}

TEST(FleetOutliers, RailNoiseAloneNamesNothingAndBadRailsAreSkipped) {
  std::mt19937_64 gen(42);
  for (int trial = 0; trial < 100; ++trial) {
    const auto fleet = fleet_outliers({rail_row(gen, 8, 8, [](int, int, int) { return 1.0; })}, rail_identities(64, 8, true),
                                      OutlierRule{});
    ASSERT_TRUE(fleet["outliers"].empty()) << fleet.dump();
  }
  // A rail matrix without its index (or a bad one) is not read; the node matrix still is.
  auto row = rail_row(gen, 8, 2, [](int r, int i, int) { return r == 1 && i == 0 ? 0.1 : 1.0; });
  row.matrices[2].erase("rail");
  row.matrices[1]["rail"] = "one";
  const auto fleet = fleet_outliers({row}, json::array(), OutlierRule{});
  for (const auto& o : fleet["outliers"]) EXPECT_FALSE(o.contains("rail")) << o.dump();
  EXPECT_EQ(fleet["outlier_hosts"], json::array({"h0"}));
}

}  // namespace
}  // namespace gpuscale
