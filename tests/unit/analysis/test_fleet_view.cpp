// analysis/fleet_view: the fleet data of a result file (groups, pair matrices, outliers) read from
// seeded random documents with a planted slow host; the slowest members, pairs and groups; which rows
// get per-node bars; outlier marks; and hostile fleet data (skipped with a problem line when it is
// drawing data, refused with gpuscale::Error when it is the outlier analysis).
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "analysis/fleet_check.h"
#include "analysis/fleet_view.h"
#include "core/error.h"
#include "results/result_schema.h"
#include "fleet_fixtures.h"

namespace gpuscale {
namespace {

using nlohmann::json;
using testing::FleetSpec;

LoadedResult load(const json& doc) { return result_from_json("fleet.json", doc); }

TEST(FleetView, OldFilesHaveNone) {
  const auto run = testing::loaded({testing::row_json("stream.triad", "independent", {{"dtype", "fp64"}}, 2, {100, 101})});
  const auto v = fleet_view(run);
  EXPECT_FALSE(v.any());
  EXPECT_TRUE(v.problems.empty());
  EXPECT_TRUE(per_node_rows(run, v).empty());
}

TEST(FleetView, ReadsGroupsMatricesAndOutliers) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 gen(seed);
    FleetSpec s;
    s.nodes = std::uniform_int_distribution<int>(5, 12)(gen);  // 5 or more: the slow host's pairs stay a minority
    s.gpus_per_node = std::uniform_int_distribution<int>(2, 4)(gen);
    s.slow = std::uniform_int_distribution<int>(0, s.nodes - 1)(gen);
    std::vector<std::string> hosts;
    const auto doc = testing::fleet_doc(s, gen, &hosts);
    const auto run = load(doc);
    const auto v = fleet_view(run);
    ASSERT_TRUE(v.any());
    EXPECT_TRUE(v.problems.empty()) << v.problems.front();
    ASSERT_EQ(v.rows.size(), 2u);
    const std::size_t n = static_cast<std::size_t>(s.nodes * s.gpus_per_node);
    EXPECT_EQ(v.rows[0].groups.size(), n);
    EXPECT_EQ(v.rows[1].groups.size(), static_cast<std::size_t>(s.nodes));
    for (const auto& r : v.rows) {
      EXPECT_TRUE(r.intra_node);
      EXPECT_EQ(r.measured(), r.groups.size());
      ASSERT_TRUE(r.median);
      // group_summary is written from the groups' values in full, the groups' values to 6 digits.
      const double written = doc["results"][r.row]["group_summary"]["median"].get<double>();
      EXPECT_NEAR(*r.median, written, written * 5e-6);
    }
    ASSERT_EQ(v.matrices.size(), 1u + static_cast<std::size_t>(s.nodes));
    const auto& m = v.matrices[0];
    EXPECT_EQ(m.kind, "node");
    EXPECT_EQ(m.hosts, hosts);
    const auto& values = doc["results"][m.row]["matrices"][0]["values"];
    for (std::size_t i = 0; i < m.size(); ++i) {
      EXPECT_FALSE(m.pair(i, i));
      for (std::size_t j = i + 1; j < m.size(); ++j) {
        ASSERT_TRUE(m.pair(i, j));
        EXPECT_DOUBLE_EQ(*m.pair(i, j), values[i][j].get<double>());
        EXPECT_EQ(m.pair(i, j), m.pair(j, i));
      }
    }
    EXPECT_TRUE(v.analysed);
    EXPECT_TRUE(v.hosts_listed);
    // At half speed against 2% noise the rule names the slowed host, as a node and in both rows' groups.
    EXPECT_EQ(v.outlier_hosts, std::vector<std::string>{hosts[static_cast<std::size_t>(s.slow)]});
    ASSERT_FALSE(v.outliers.empty());
    for (const auto& o : v.outliers) {
      EXPECT_TRUE(o.kind == "node" || o.kind == "group") << o.kind;
      EXPECT_EQ(o.hosts.front(), hosts[static_cast<std::size_t>(s.slow)]);
      ASSERT_TRUE(o.value && o.median && o.deficit);
      EXPECT_LT(*o.value, *o.median);
    }
  }
}

TEST(FleetView, LowestFirstAgainstTheMedian) {
  for (std::uint64_t seed = 10; seed < 16; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 gen(seed);
    FleetSpec s;
    s.nodes = 9;
    s.slow = std::uniform_int_distribution<int>(0, s.nodes - 1)(gen);
    std::vector<std::string> hosts;
    const auto run = load(testing::fleet_doc(s, gen, &hosts));
    const auto v = fleet_view(run);
    const auto& slow = hosts[static_cast<std::size_t>(s.slow)];
    const auto& m = v.matrices[0];
    std::vector<double> all;
    for (std::size_t i = 0; i < m.size(); ++i)
      for (std::size_t j = i + 1; j < m.size(); ++j) all.push_back(*m.pair(i, j));
    const auto members = lowest_members(m, 3);
    ASSERT_EQ(members.size(), 3u);
    EXPECT_EQ(members[0].label, slow);
    EXPECT_DOUBLE_EQ(members[0].median, median_of(all));
    EXPECT_LE(members[0].value, members[1].value);
    EXPECT_LE(members[1].value, members[2].value);
    const auto pairs = lowest_pairs(m, 100);
    EXPECT_EQ(pairs.size(), all.size());
    for (std::size_t i = 0; i < static_cast<std::size_t>(s.nodes - 1); ++i)
      EXPECT_NE(pairs[i].label.find(slow), std::string::npos) << pairs[i].label;  // every pair of the slow host first
    EXPECT_EQ(pairs.back().label.find(slow), std::string::npos);
    const auto groups = lowest_groups(v.rows[1], 2);
    ASSERT_EQ(groups.size(), 2u);
    EXPECT_EQ(groups[0].label, slow);
    EXPECT_NE(groups[1].label, slow);
    // At 1 GPU a host holds several groups: each is named with its ranks.
    const auto ones = lowest_groups(v.rows[0], 1);
    EXPECT_EQ(ones[0].label.rfind(slow + " r", 0), 0u) << ones[0].label;
  }
}

TEST(FleetView, PerNodeRowsAreOneGpuAndTheLargestIntraNodeCount) {
  std::mt19937_64 gen(21);
  FleetSpec s;
  s.gpus_per_node = 4;
  auto doc = testing::fleet_doc(s, gen);
  // A row at 2 GPUs (between 1 and 4) and a row whose groups span two nodes: neither gets bars.
  auto two = doc["results"][0].get<ResultRow>();
  two.gpu_count = 2;
  std::vector<RowGroup> groups;
  for (std::size_t gi = 0; gi + 1 < two.groups.size(); gi += 2) {
    auto a = two.groups[gi];
    a.ranks.push_back(two.groups[gi + 1].ranks[0]);
    groups.push_back(a);
  }
  two.groups = groups;
  auto spanning = doc["results"][1].get<ResultRow>();
  spanning.gpu_count = 8;
  // Each row lists at least its gpu_count ranks, as every reader checks of an ok row.
  auto list_ranks = [](ResultRow& row, int n) {
    for (int r = static_cast<int>(row.ranks.size()); r < n; ++r) {
      row.ranks.push_back(row.ranks.front());
      row.ranks.back().rank = r;
    }
  };
  list_ranks(two, 2);
  list_ranks(spanning, 8);
  spanning.groups = {RowGroup{{"a", "b"}, {0, 4}, 5.0, RowStatus::ok, 0, 0}, RowGroup{{"c", "d"}, {8, 12}, 6.0, RowStatus::ok, 0, 0}};
  doc["results"].push_back(json(two));
  doc["results"].push_back(json(spanning));
  // Rows no run writes (groups of 3 at 2 GPUs, hosts the file lacks): read as --lenient reads them.
  const auto run = result_from_json("fleet.json", doc, Contradictions::report);
  const auto v = fleet_view(run);
  ASSERT_EQ(v.rows.size(), 4u);
  EXPECT_FALSE(v.rows[3].intra_node);
  EXPECT_TRUE(v.rows[2].intra_node);
  ASSERT_TRUE(v.rows[2].median);  // no group_summary: the median of its groups
  std::vector<double> values;
  for (const auto& g : v.rows[2].groups) values.push_back(*g.value);
  EXPECT_DOUBLE_EQ(*v.rows[2].median, median_of(values));
  const auto chosen = per_node_rows(run, v);
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_EQ(run.rows[v.rows[chosen[0]].row].gpu_count, 1);
  EXPECT_EQ(run.rows[v.rows[chosen[1]].row].gpu_count, 4);
}

TEST(FleetView, MarksSuspectsPairsAndGroups) {
  std::mt19937_64 gen(31);
  FleetSpec s;
  s.nodes = 6;
  s.slow = 4;
  std::vector<std::string> hosts;
  auto doc = testing::fleet_doc(s, gen, &hosts);
  // A slow link between members 0 and 2 (by ranks), a GPU of node 1, and one of another benchmark.
  auto& list = doc["analysis"]["outliers"];
  list.push_back(testing::outlier_entry("pair", {hosts[0], hosts[2]}, {0, 1, 4, 5}, "pairs.sendrecv", 5, 10));
  list.push_back(testing::outlier_entry("gpu", {hosts[1]}, {3}, "gpu_pairs.sendrecv", 50, 100));
  list.push_back(testing::outlier_entry("pair", {hosts[1], hosts[3]}, {}, "pairs.all_reduce", 5, 10));
  const auto run = load(doc);
  const auto v = fleet_view(run);
  const auto& m = v.matrices[0];
  const auto marks = matrix_marks(m, run.rows[m.row], v);
  for (std::size_t i = 0; i < m.size(); ++i) EXPECT_EQ(marks.suspect[i], i == 4u) << i;
  using Cell = std::pair<std::size_t, std::size_t>;
  EXPECT_EQ(marks.cells, (std::vector<Cell>{{0, 2}, {2, 0}}));
  const auto& gm = v.matrices[2];  // node 1's GPUs: ranks 2 and 3
  const auto gmarks = matrix_marks(gm, run.rows[gm.row], v);
  EXPECT_EQ(gmarks.suspect, (std::vector<bool>{false, true}));
  EXPECT_TRUE(gmarks.cells.empty());
  EXPECT_EQ(matrix_marks(v.matrices[1], run.rows[gm.row], v).suspect, (std::vector<bool>{false, false}));
  const auto& r = v.rows[1];
  const auto groups = group_marks(r, run.rows[r.row], v);
  for (std::size_t g = 0; g < r.groups.size(); ++g) EXPECT_EQ(groups[g], r.groups[g].hosts[0] == hosts[4]) << g;
}

TEST(FleetView, DrawingDataThatDoesNotFitIsLeftOutWithAProblem) {
  std::mt19937_64 gen(41);
  const auto good = testing::fleet_doc(FleetSpec{}, gen);
  const std::vector<std::pair<std::string, std::function<void(json&)>>> breaks = {
      {"values: is not 8 x 8", [](json& m) { m["values"].erase(0); }},
      {"values/1/0: is not a number", [](json& m) { m["values"][1][0] = -3.5; }},
      {"values/2/3: is not a number", [](json& m) { m["values"][2][3] = "fast"; }},
      {"kind: is not", [](json& m) { m["kind"] = "rack"; }},
      {"labels: 7 labels for 8 members", [](json& m) { m["labels"].erase(0); }},
      {"hosts: is not an array of strings", [](json& m) { m["hosts"][3] = 7; }},
      {"ranks/5: is not an array of ranks", [](json& m) { m["ranks"][5] = {-1}; }},
      {"directed: is not true or false", [](json& m) { m["directed"] = "yes"; }},
  };
  // Wrong shapes pass any schema of these fields; the other breaks the result schema may refuse
  // first (also a refusal, with a gpuscale::Error): then the case checks nothing more.
  std::size_t read = 0;
  for (const auto& [want, mutate] : breaks) {
    SCOPED_TRACE(want);
    auto doc = good;
    mutate(doc["results"][2]["matrices"][0]);
    const auto run = testing::load_unless_schema_refuses("fleet.json", doc);
    if (!run) continue;
    ++read;
    const auto v = fleet_view(*run);
    ASSERT_EQ(v.problems.size(), 1u);
    EXPECT_NE(v.problems[0].find("/results/2/matrices/0: " + want), std::string::npos) << v.problems[0];
    EXPECT_EQ(v.rows.size(), 2u);      // the groups are still there
    EXPECT_EQ(v.matrices.size(), 8u);  // and every GPU-pair matrix
  }
  EXPECT_GE(read, 2u);
  // A group without hosts: the row's groups are left out, the other row's kept.
  auto doc = good;
  doc["results"][0]["groups"]["hosts"][std::uniform_int_distribution<int>(0, 15)(gen)] = json::array();
  if (const auto run = testing::load_unless_schema_refuses("fleet.json", doc)) {
    const auto v = fleet_view(*run);
    ASSERT_EQ(v.problems.size(), 1u);
    EXPECT_NE(v.problems[0].find("/results/0/groups/"), std::string::npos) << v.problems[0];
    EXPECT_EQ(v.rows.size(), 1u);
  }
}

TEST(FleetView, MalformedOutlierAnalysisIsRefused) {
  std::mt19937_64 gen(51);
  FleetSpec s;
  s.slow = 2;
  const auto good = testing::fleet_doc(s, gen);
  const std::vector<std::pair<std::string, std::function<void(json&)>>> breaks = {
      {"/analysis/outliers: is not an array", [](json& a) { a["outliers"] = "none"; }},
      {"/analysis/outliers/0/kind", [](json& a) { a["outliers"][0]["kind"] = 3; }},
      {"/analysis/outliers/0/hosts", [](json& a) { a["outliers"][0]["hosts"] = {"h", nullptr}; }},
      {"/analysis/outliers/0/value", [](json& a) { a["outliers"][0]["value"] = "12"; }},
      {"/analysis/outliers/0/deficit", [](json& a) { a["outliers"][0]["deficit"] = "half"; }},
      {"/analysis/outliers/0/median", [](json& a) { a["outliers"][0]["median"] = -10; }},
      {"/analysis/outliers/0/gpu_count", [](json& a) { a["outliers"][0]["gpu_count"] = 0; }},
      {"/analysis/outliers/0/ranks", [](json& a) { a["outliers"][0]["ranks"] = {1.5}; }},
      {"/analysis/outliers/0/params", [](json& a) { a["outliers"][0]["params"] = {1, 2}; }},
      {"/analysis/outlier_hosts", [](json& a) { a["outlier_hosts"] = {{{"name", "x"}}}; }},
  };
  for (const auto& [want, mutate] : breaks) {
    SCOPED_TRACE(want);
    auto doc = good;
    mutate(doc["analysis"]);
    const auto run = testing::load_unless_schema_refuses("fleet.json", doc);
    if (!run) continue;  // the schema refused it first
    try {
      (void)fleet_view(*run);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), kExitUsage);
      EXPECT_EQ(std::string(e.what()).rfind("fleet.json: " + want, 0), 0u) << e.what();
    }
  }
}

// The sendrecv measured rail by rail: 8 nodes of 4 GPUs, host 5's rail 2 at a tenth (a NIC).
json rail_doc(std::mt19937_64& gen, std::vector<std::string>& hosts) {
  FleetSpec s;
  s.gpus_per_node = 4;
  s.slow = 5;
  s.factor = 0.1;
  s.rails = true;
  s.slow_rail = 2;
  s.nics = true;
  return testing::fleet_doc(s, gen, &hosts);
}

TEST(FleetView, RailMatricesAndRailOutliersAreReadAndMarkTheirOwnRail) {
  std::mt19937_64 gen(61);
  std::vector<std::string> hosts;
  const auto doc = rail_doc(gen, hosts);
  EXPECT_EQ(validate_result_json(doc), "");
  const auto run = load(doc);
  const auto v = fleet_view(run);
  EXPECT_TRUE(v.problems.empty()) << v.problems.front();
  std::vector<const FleetMatrix*> rails;
  const FleetMatrix* node = nullptr;
  for (const auto& m : v.matrices) {
    if (m.kind == "rail") rails.push_back(&m);
    if (m.kind == "node") node = &m;
  }
  ASSERT_EQ(rails.size(), 4u);
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->note, "each pair's slowest rail");
  EXPECT_FALSE(node->rail);
  for (int r = 0; r < 4; ++r) {
    const auto& m = *rails[static_cast<std::size_t>(r)];
    EXPECT_EQ(m.rail, r);
    ASSERT_EQ(m.ranks.size(), 8u);
    EXPECT_EQ(m.ranks[3], std::vector<int>{3 * 4 + r});
    const auto marks = matrix_marks(m, run.rows[m.row], v);
    for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(marks.suspect[i], r == 2 && i == 5u) << r << " " << i;
    EXPECT_TRUE(marks.cells.empty());
  }
  EXPECT_EQ(matrix_marks(*node, run.rows[node->row], v).suspect[5], true);  // a suspect host
  const FleetOutlier* on_rail = nullptr;
  for (const auto& o : v.outliers)
    if (o.rail) on_rail = &o;
  ASSERT_NE(on_rail, nullptr);
  EXPECT_EQ(*on_rail->rail, 2);
  EXPECT_EQ(on_rail->hosts, std::vector<std::string>{hosts[5]});
  EXPECT_EQ(on_rail->nics, std::vector<std::string>{"mlx5_2 port 1"});
  EXPECT_EQ(outlier_rail(*on_rail), "rail 2 (NIC mlx5_2 port 1)");
  EXPECT_FALSE(on_rail->explained());
  std::size_t explained = 0;
  for (const auto& o : v.outliers) explained += o.explained_by_rail == 2 ? 1 : 0;
  EXPECT_GE(explained, 1u);  // the node matrix's record of the same host
  EXPECT_EQ(v.outlier_hosts, std::vector<std::string>{hosts[5]});
}

TEST(FleetView, TheSchemaAndTheReaderHoldRailMatricesToTheirFields) {
  std::mt19937_64 gen(62);
  std::vector<std::string> hosts;
  const auto good = rail_doc(gen, hosts);
  // The schema: a rail matrix names its rail; a rail is an integer >= 0; so are an outlier's.
  for (const auto& [what, mutate] : std::vector<std::pair<std::string, std::function<void(json&)>>>{
           {"rail matrix without its rail", [](json& d) { d["results"][2]["matrices"][1].erase("rail"); }},
           {"a negative rail", [](json& d) { d["results"][2]["matrices"][1]["rail"] = -1; }},
           {"kind rack", [](json& d) { d["results"][2]["matrices"][1]["kind"] = "rack"; }},
           {"an outlier's rail as text", [](json& d) { d["analysis"]["outliers"][0]["rail"] = "2"; }},
           {"a NIC without its port", [](json& d) { d["analysis"]["outliers"][0]["nics"] = {{{"device", "mlx5_0"}}}; }}}) {
    SCOPED_TRACE(what);
    auto doc = good;
    mutate(doc);
    EXPECT_NE(validate_result_json(doc), "");
  }
  // The reader, where the schema lets it through: a rail on a node matrix.
  auto doc = good;
  doc["results"][2]["matrices"][0]["rail"] = 1;
  const auto v = fleet_view(load(doc));
  ASSERT_EQ(v.problems.size(), 1u);
  EXPECT_NE(v.problems[0].find("/results/2/matrices/0: rail: only a rail matrix has one"), std::string::npos) << v.problems[0];
}

}  // namespace
}  // namespace gpuscale
