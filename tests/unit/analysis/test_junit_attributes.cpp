// analysis/junit: every <testsuite> carries time (its cases' seconds), timestamp (now, UTC, without a
// zone as JUnit's schema writes it) and hostname.
#include <gtest/gtest.h>

#include <unistd.h>

#include <climits>
#include <random>
#include <regex>

#include "test_seed.h"
#include "analysis/junit.h"

namespace gpuscale {
namespace {

TEST(JUnit, SuitesCarryTimeTimestampAndHostname) {
  std::mt19937_64 rng(test_seed());
  JUnitSuite s{"check r.json", {}};
  double total = 0;
  const int n = std::uniform_int_distribution<int>(1, 5)(rng);
  for (int i = 0; i < n; ++i) {
    JUnitCase c;
    c.classname = "check.stream.triad";
    c.name = "case " + std::to_string(i);
    c.time_s = std::uniform_int_distribution<int>(0, 999)(rng) / 1000.0;
    total += c.time_s;
    s.cases.push_back(c);
  }
  const auto xml = junit_xml("gpuscale check", {s});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(xml, m, std::regex("<testsuite [^>]*time=\"([0-9.]+)\" timestamp=\"([^\"]+)\" hostname=\"([^\"]*)\"")))
      << xml;
  EXPECT_NEAR(std::stod(m[1].str()), total, 1e-3);
  EXPECT_TRUE(std::regex_match(m[2].str(), std::regex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"))) << m[2];
  char host[HOST_NAME_MAX + 1] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  EXPECT_EQ(m[3].str(), host);
}

}  // namespace
}  // namespace gpuscale
