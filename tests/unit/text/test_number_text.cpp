// analysis/number_text: 4 significant digits, plain notation from 0.001 to below a million.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "test_seed.h"
#include "text/number_text.h"

namespace gpuscale {
namespace {

TEST(NumberText, PlainDigitsInsideTheRangeExponentsOutside) {
  EXPECT_EQ(figure_text(74900), "74900");
  EXPECT_EQ(figure_text(38412.7), "38413");
  EXPECT_EQ(figure_text(0.01872), "0.01872");
  EXPECT_EQ(figure_text(1.5), "1.5");
  EXPECT_EQ(figure_text(-2.25), "-2.25");
  EXPECT_EQ(figure_text(9.99996), "10");  // the rounding carries
  EXPECT_EQ(figure_text(0), "0");
  EXPECT_EQ(figure_text(-0.0), "0");
  EXPECT_EQ(figure_text(1.234e7), "1.234e+07");
  EXPECT_EQ(figure_text(2.5e-5), "2.5e-05");
  EXPECT_EQ(figure_text(INFINITY), "inf");
  EXPECT_EQ(figure_text(NAN), "nan");
  // Random values: within the range plain, at most 8 characters and a sign, and read back to within
  // half a unit of the 4th significant digit (or exactly, for whole numbers of 5 or 6 digits).
  std::mt19937_64 rng(test_seed());
  for (int i = 0; i < 2000; ++i) {
    const double v = std::pow(10.0, std::uniform_real_distribution<double>(-3, 6)(rng)) *
                     (std::bernoulli_distribution(0.2)(rng) ? -1 : 1);
    const auto s = figure_text(v);
    if (std::fabs(v) >= 999999.5) continue;
    EXPECT_EQ(s.find('e'), std::string::npos) << v << " -> " << s;
    EXPECT_LE(s.size(), 9u) << v << " -> " << s;
    EXPECT_LE(std::fabs(std::stod(s) - v), 0.5000001 * std::pow(10.0, std::floor(std::log10(std::fabs(v))) - 3))
        << v << " -> " << s;
    if (std::fabs(v) < 999.95) {
      EXPECT_NEAR(std::stod(s), v, 5.0000001e-4 * std::fabs(v)) << v << " -> " << s;
    }
  }
}

}  // namespace
}  // namespace gpuscale
