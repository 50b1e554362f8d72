// analysis/fleet_check: check --fail-on-outliers (one failure per outlier, naming kind and hosts;
// none without outliers; a file without outlier analysis refused) and the drain list (sorted, each
// host once, never a name that is not a host name or that starts with '-').
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "analysis/fleet_check.h"
#include "core/error.h"
#include "fleet_fixtures.h"
#include "usage_error.h"

namespace gpuscale {
namespace {

using nlohmann::json;
using testing::FleetSpec;

LoadedResult load(const json& doc, const std::string& label = "fleet.json") { return result_from_json(label, doc); }
// Read as `report --lenient` reads a file that contradicts itself: what the drain list must still refuse.
LoadedResult load_lenient(const json& doc) { return result_from_json("fleet.json", doc, Contradictions::report); }

std::string error_of(const std::function<void()>& f) { return test::usage_error(f); }

TEST(FleetCheck, OneFailurePerOutlierNamingKindAndHosts) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 gen(seed);
    FleetSpec s;
    s.nodes = std::uniform_int_distribution<int>(6, 12)(gen);
    s.slow = std::uniform_int_distribution<int>(0, s.nodes - 1)(gen);
    std::vector<std::string> hosts;
    auto doc = testing::fleet_doc(s, gen, &hosts);
    auto planted = testing::outlier_entry("pair", {hosts[0], hosts[1]}, {0, 1, 2, 3}, "pairs.sendrecv", 7, 10);
    planted["unit"] = "Gbit/s";  // the outlier's own unit wins over its benchmark's rows'
    doc["analysis"]["outliers"].push_back(planted);
    const auto run = load(doc);
    const auto c = check_outliers(run, fleet_view(run));
    const auto& list = doc["analysis"]["outliers"];
    ASSERT_EQ(c.failures.size(), list.size());
    const auto text = format_outlier_check(c, 1000);  // one line per outlier
    for (std::size_t w : {64u, 80u, 100u}) {
      const auto narrow = format_outlier_check(c, w);
      std::size_t start = 0;
      for (auto end = narrow.find('\n'); end != std::string::npos; start = end + 1, end = narrow.find('\n', start))
        EXPECT_LE(end - start, w) << narrow.substr(start, end - start);
    }
    EXPECT_EQ(text.rfind("outliers in fleet.json (--fail-on-outliers): " + std::to_string(list.size()) + "\n", 0), 0u) << text;
    for (std::size_t i = 0; i < list.size(); ++i) {
      std::string hosts_text;
      for (const auto& h : list[i]["hosts"]) hosts_text += (hosts_text.empty() ? "" : ",") + h.get<std::string>();
      const auto head = list[i]["kind"].get<std::string>() + " " + hosts_text + " (";
      EXPECT_EQ(c.failures[i].rfind(head, 0), 0u) << c.failures[i];
      EXPECT_NE(text.find("  FAIL outlier " + head), std::string::npos);
    }
    EXPECT_NE(text.find("FAIL outlier node " + hosts[static_cast<std::size_t>(s.slow)] + " (pairs.sendrecv @ "), std::string::npos);
    EXPECT_NE(text.find("7 Gbit/s vs median 10, 30.0% below; ranks 0,1,2,3"), std::string::npos) << text;
    EXPECT_NE(text.find("GB/s vs median"), std::string::npos);  // the others: their benchmark's unit
    const auto suite = outlier_suite(c);
    ASSERT_EQ(suite.cases.size(), list.size());
    for (const auto& jc : suite.cases) EXPECT_TRUE(jc.failed);
  }
}

TEST(FleetCheck, NoOutliersPassesAndNoAnalysisIsRefused) {
  std::mt19937_64 gen(9);
  const auto run = load(testing::fleet_doc(FleetSpec{}, gen));
  const auto c = check_outliers(run, fleet_view(run));
  EXPECT_TRUE(c.failures.empty());
  EXPECT_EQ(format_outlier_check(c), "outliers in fleet.json (--fail-on-outliers): none\n");
  const auto suite = outlier_suite(c);
  ASSERT_EQ(suite.cases.size(), 1u);
  EXPECT_FALSE(suite.cases[0].failed);
  FleetSpec s;
  s.analysis = false;
  s.slow = 0;
  const auto bare = load(testing::fleet_doc(s, gen));
  EXPECT_NE(error_of([&] { check_outliers(bare, fleet_view(bare)); }).find("fleet.json: no outlier analysis in the file"),
            std::string::npos);
}

TEST(FleetCheck, DrainListIsSortedUniqueHostNames) {
  std::mt19937_64 gen(17);
  FleetSpec s;
  s.nodes = 10;
  s.slow = std::uniform_int_distribution<int>(0, 9)(gen);
  std::vector<std::string> hosts;
  auto a = testing::fleet_doc(s, gen, &hosts);
  const auto slow = hosts[static_cast<std::size_t>(s.slow)];
  auto b = a;
  b["analysis"]["outlier_hosts"] = {hosts[9], slow, hosts[0]};
  const auto ra = load(a, "a.json"), rb = load(b, "b.json");
  EXPECT_EQ(drain_list({&ra}), std::vector<std::string>{slow});
  std::vector<std::string> want{hosts[0], hosts[9], slow};
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  EXPECT_EQ(drain_list({&ra, &rb}), want);
  auto none = a;
  none["analysis"]["outlier_hosts"] = json::array();
  const auto rn = load(none);
  EXPECT_TRUE(drain_list({&rn}).empty());
}

TEST(FleetCheck, DrainListRefusesWhatIsNotAHostName) {
  std::mt19937_64 gen(23);
  FleetSpec s;
  s.slow = 3;
  const auto good = testing::fleet_doc(s, gen);
  for (const std::string& bad : std::vector<std::string>{"node1;reboot", "a b", "$(id)", "n`x`", "h\x1b[2J", "", "n1\n", "a|b", std::string(254, 'a'),
                                "--help", "../x", "-n"}) {
    SCOPED_TRACE(bad);
    auto doc = good;
    doc["analysis"]["outlier_hosts"] = {"ok-host", bad};  // hosts the file does not have: a contradiction too
    const auto run = load_lenient(doc);
    const auto msg = error_of([&] { drain_list({&run}); });
    EXPECT_EQ(msg.rfind("fleet.json: /analysis/outlier_hosts/1 is not a host name", 0), 0u) << msg;
    EXPECT_EQ(msg.find('\x1b'), std::string::npos);
    EXPECT_EQ(msg.find('\n'), std::string::npos);
  }
  auto fine = good;
  fine["analysis"]["outlier_hosts"] = {"gpu-07.rack_3.example.org", "n-1"};
  const auto ok = load_lenient(fine);
  EXPECT_EQ(drain_list({&ok}), (std::vector<std::string>{"gpu-07.rack_3.example.org", "n-1"}));
  FleetSpec bare_spec;
  bare_spec.analysis = false;
  const auto bare = load(testing::fleet_doc(bare_spec, gen));
  EXPECT_NE(error_of([&] { drain_list({&bare}); }).find("no analysis.outlier_hosts"), std::string::npos);
}

}  // namespace
}  // namespace gpuscale
