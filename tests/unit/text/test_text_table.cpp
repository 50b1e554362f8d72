// analysis/text_table: tables and text that fit the terminal width (COLUMNS), split into blocks that
// repeat their key columns; one number format per column; the width COLUMNS gives.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "test_seed.h"
#include "analysis/stragglers.h"
#include "text/text_table.h"
#include "text_lines.h"

namespace gpuscale {
namespace {

using test::lines_of;

std::string random_word(std::mt19937& rng, std::size_t lo, std::size_t hi) {
  std::string w(std::uniform_int_distribution<std::size_t>(lo, hi)(rng), 'a');
  for (auto& c : w) c = static_cast<char>('a' + rng() % 26);
  return w;
}

TEST(TextTable, ColumnsFromTheEnvironmentValue) {
  EXPECT_EQ(columns_from(nullptr), 80u);
  EXPECT_EQ(columns_from(""), 80u);
  EXPECT_EQ(columns_from("abc"), 80u);
  EXPECT_EQ(columns_from("100x"), 80u);
  EXPECT_EQ(columns_from("-5"), 80u);
  EXPECT_EQ(columns_from("132"), 132u);
  EXPECT_EQ(columns_from("10"), kMinColumns);
  EXPECT_EQ(columns_from("99999999999999999999999"), 80u);  // not a number we can hold
  EXPECT_EQ(columns_from("5000"), kMaxColumns);
}

TEST(TextTable, EveryLineFitsAndNothingIsLost) {
  std::mt19937 rng(test_seed());
  for (int trial = 0; trial < 50; ++trial) {
    TextTable t;
    const int ncols = std::uniform_int_distribution<int>(2, 9)(rng);
    for (int c = 0; c < ncols; ++c) t.columns.push_back({random_word(rng, 1, 10), c % 2 == 0, c == 1});
    for (int r = 0; r < 5; ++r) {
      std::vector<std::string> row;
      for (int c = 0; c < ncols; ++c) row.push_back(random_word(rng, 1, c == 0 ? 70 : 24));
      t.rows.push_back(row);
    }
    const std::size_t width = std::uniform_int_distribution<std::size_t>(40, 120)(rng);
    const auto text = t.render(width);
    for (const auto& l : lines_of(text)) EXPECT_LE(l.size(), width) << l;
    std::string joined;  // every cell is in the text (a wrapped cell: its pieces, in order)
    for (const auto& l : lines_of(text)) joined += l;
    std::string squeezed;
    for (char ch : joined)
      if (ch != ' ') squeezed += ch;
    for (const auto& row : t.rows)
      for (const auto& cell : row) EXPECT_NE(squeezed.find(cell), std::string::npos) << cell << "\n" << text;
    // No limit: one heading and one line per row.
    EXPECT_EQ(lines_of(t.render(0)).size(), t.rows.size() + 1);
  }
}

TEST(TextTable, BlocksRepeatTheLabelAndKeys) {
  TextTable t;
  t.columns = {{"point", false}, {"rank", true, true}, {"a", true}, {"b", true}, {"c", true}};
  t.rows = {{"p1", "3", std::string(30, '1'), std::string(30, '2'), std::string(30, '3')}};
  const auto lines = lines_of(t.render(80));
  std::size_t headings = 0;
  for (const auto& l : lines) headings += l.find("point") != std::string::npos && l.find("rank") != std::string::npos;
  EXPECT_EQ(headings, 2u) << t.render(80);  // a and b fit beside the keys, c goes to a second block
  for (const auto& l : lines) EXPECT_LE(l.size(), 80u);
  const auto wide = lines_of(t.render(0));
  ASSERT_EQ(wide.size(), 2u);
  EXPECT_GT(wide[1].size(), 80u);
}

TEST(TextTable, LongLabelGoesOnItsOwnLine) {
  TextTable t;
  t.columns = {{"point", false}, {"GPUs", true}, {"value", true}};
  const std::string label(75, 'L');
  t.rows = {{label, "8", "12.5"}, {"", "16", "3.25"}};
  const auto lines = lines_of(t.render(80));
  ASSERT_EQ(lines.size(), 4u) << t.render(80);
  EXPECT_EQ(lines[1], "  " + label);
  EXPECT_EQ(lines[2].find('L'), std::string::npos);
  EXPECT_NE(lines[2].find("12.5"), std::string::npos);
}

TEST(TextTable, OneNumberFormatPerColumn) {
  std::mt19937 rng(test_seed());
  std::vector<double> values;
  for (int i = 0; i < 20; ++i) values.push_back(std::pow(10.0, std::uniform_real_distribution<double>(-3, 6)(rng)));
  const int d = column_decimals(values);
  for (double v : values) {
    const auto s = fixed_text(v, d);
    EXPECT_EQ(s.find('e'), std::string::npos) << s;
    const auto dot = s.find('.');
    EXPECT_EQ(d == 0 ? std::string::npos : s.size() - dot - 1, d == 0 ? dot : static_cast<std::size_t>(d)) << s;
  }
  EXPECT_EQ(column_decimals({0.01872, 74900}), 5);
  EXPECT_EQ(column_decimals({3000, 11640}), 0);
  EXPECT_EQ(column_decimals({}), 0);
}

TEST(TextTable, FitLinesBreaksAtSpaces) {
  const std::string line = "  " + std::string(30, 'a') + " " + std::string(30, 'b') + " " + std::string(30, 'c') + "\n";
  const auto lines = lines_of(fit_lines(line, 70));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "      " + std::string(30, 'c'));
  EXPECT_EQ(fit_lines(line, 0), line);
  for (const auto& l : lines_of(fit_lines(std::string(200, 'x') + "\n", 50))) EXPECT_LE(l.size(), 50u);
}

TEST(TextTable, StragglersFitWithLongHostsAndIds) {
  ResultRow row;
  row.benchmark = "stream.triad";
  row.params = {{"dtype", "fp64"}, {"array_bytes", 1 << 30}};
  row.gpu_count = 512;
  std::vector<Straggler> list;
  for (int i = 0; i < 3; ++i)
    list.push_back({&row, 100 + i, "a-very-long-hostname-of-the-cluster-" + std::to_string(i) + ".example.org", i,
                    "GPU-" + std::string(36, 'f'), "00000000:19:00.0", 2550.5 - i, 3015.0, 0.154});
  for (std::size_t width : {40u, 80u}) {
    TextStyle style;
    style.width = width;
    style.device = device_word("cuda");
    const auto text = format_stragglers(list, 0.1, style);
    if (width == 80) {
      EXPECT_NE(text.find("ranks): 3\n"), std::string::npos) << text;
    }
    for (const auto& l : lines_of(text)) EXPECT_LE(l.size(), width) << l;
    const int d = column_decimals({2550.5, 2549.5, 2548.5, 3015.0});  // value and median: one format
    for (const auto& s : list) {
      EXPECT_NE(text.find(" " + fixed_text(s.value, d) + "\n"), std::string::npos) << text;
      EXPECT_NE(text.find(" " + fixed_text(s.median, d) + "\n"), std::string::npos) << text;
    }
  }
}

}  // namespace
}  // namespace gpuscale
