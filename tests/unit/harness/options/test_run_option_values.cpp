// The fleet's inputs: GPUSCALE_TEST_HOSTS (world/test_hosts) and the --outlier / --pairs-rounds parsers (harness/fleet_options): values accepted, every bad one
// refused with one line naming the variable or flag, exit 2.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/host_name.h"
#include "harness/options/run_option_values.h"
#include "harness/plan/plan.h"
#include "usage_error.h"
#include "world/test_hosts.h"

namespace gpuscale {
namespace {

using test::has;
using test::usage_error;

TEST(TestHosts, OneNamePerRankInRankOrder) {
  EXPECT_EQ(parse_test_hosts("h1,h1,h2,h2", 4), (std::vector<std::string>{"h1", "h1", "h2", "h2"}));
  EXPECT_EQ(parse_test_hosts(" node-a.x , node_b ", 2), (std::vector<std::string>{"node-a.x", "node_b"}));
  EXPECT_EQ(parse_test_hosts("solo", 1), std::vector<std::string>{"solo"});
  // Placement follows the names: 8 "nodes" of 2 ranks, round-robin as well as block.
  const auto hosts = parse_test_hosts("a,b,a,b", 4);
  EXPECT_EQ(local_ranks_of(hosts), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(make_topology(hosts, local_ranks_of(hosts)).nodes, 2);
  EXPECT_EQ(local_ranks_of({"x", "y", "x", "x", "z"}), (std::vector<int>{0, 0, 1, 2, 0}));
}

TEST(TestHosts, WrongCountNamesTheVariableAndBothCounts) {
  const auto e = usage_error([] { parse_test_hosts("h1,h1,h2", 4); });
  EXPECT_TRUE(has(e, "GPUSCALE_TEST_HOSTS")) << e;
  EXPECT_TRUE(has(e, "names 3 hosts for a world of 4 ranks")) << e;
  EXPECT_TRUE(has(usage_error([] { parse_test_hosts("a,b,c,d,e", 4); }), "names 5 hosts for a world of 4"));
}

TEST(TestHosts, BadNamesAreRefused) {
  for (const char* text : {"", "a,,b", "a,b,", "a b,c", "a;b,c", "h\"1,h2", "h/1,h2", "h:1,h2"}) {
    const auto e = usage_error([&] { parse_test_hosts(text, 2); });
    EXPECT_TRUE(has(e, "GPUSCALE_TEST_HOSTS")) << text << ": " << e;
    EXPECT_TRUE(has(e, "not a host name")) << text << ": " << e;
  }
  EXPECT_TRUE(is_host_name(std::string(253, 'a')));
  EXPECT_FALSE(is_host_name(std::string(254, 'a')));
}

TEST(TestHosts, FromTheEnvironment) {
  unsetenv(kTestHostsEnv);
  EXPECT_FALSE(test_hosts_from_env(2).has_value());
  setenv(kTestHostsEnv, "p,q", 1);
  EXPECT_EQ(*test_hosts_from_env(2), (std::vector<std::string>{"p", "q"}));
  EXPECT_TRUE(has(usage_error([] { test_hosts_from_env(3); }), "names 2 hosts for a world of 3 ranks"));
  unsetenv(kTestHostsEnv);
}

TEST(FleetOptions, OutlierFraction) {
  EXPECT_DOUBLE_EQ(parse_outlier_fraction("0.1"), 0.1);
  EXPECT_DOUBLE_EQ(parse_outlier_fraction("0.999"), 0.999);
  EXPECT_DOUBLE_EQ(parse_outlier_fraction("1e-3"), 0.001);
  // No fixed floor by default: the run's noise, --false-alarm (1%) and --min-effect (3%) set the bar.
  EXPECT_DOUBLE_EQ(kDefaultOutlierFraction, 0);
  EXPECT_DOUBLE_EQ(kDefaultMinEffect, 0.03);
  EXPECT_DOUBLE_EQ(kDefaultFalseAlarm, 0.01);
  for (const char* bad : {"0", "1", "1.5", "-0.1", "nan", "inf", "", "10%", "0.1x", " 0.1"}) {
    const auto e = usage_error([&] { parse_outlier_fraction(bad); });
    EXPECT_TRUE(has(e, std::string("invalid --outlier '") + bad + "'")) << e;
    const auto m = usage_error([&] { parse_outlier_fraction(bad, "--min-effect"); });
    EXPECT_TRUE(has(m, std::string("invalid --min-effect '") + bad + "'")) << m;
  }
}

TEST(FleetOptions, PairsRounds) {
  EXPECT_EQ(parse_pairs_rounds("1"), 1);
  EXPECT_EQ(parse_pairs_rounds("511"), 511);
  EXPECT_EQ(parse_pairs_rounds("2147483647"), 2147483647);
  for (const char* bad : {"0", "-1", "", "1.5", "two", "3 "}) {
    const auto e = usage_error([&] { parse_pairs_rounds(bad); });
    EXPECT_TRUE(has(e, std::string("invalid --pairs-rounds '") + bad + "': a whole number of rounds, at least 1")) << e;
  }
  EXPECT_TRUE(has(usage_error([] { parse_pairs_rounds("99999999999999999999"); }), "at most 2147483647"));
  EXPECT_TRUE(has(usage_error([] { parse_pairs_rounds("2147483648"); }), "at most 2147483647"));
}

}  // namespace
}  // namespace gpuscale
