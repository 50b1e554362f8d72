// The terminal layout of compare and check: no line wider than the width asked for (COLUMNS in the
// CLI), --wide one line per row, --only-changes only changed rows, wrapping that loses no word.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "analysis/compare.h"
#include "analysis/reference.h"
#include "text/text_width.h"
#include "analysis_fixtures.h"

namespace gpuscale {
namespace {

using testing::loaded;
using testing::row_json;
using testing::with_status;

std::size_t widest(const std::string& text) {
  std::size_t w = 0, start = 0;
  for (auto end = text.find('\n'); end != std::string::npos; start = end + 1, end = text.find('\n', start))
    w = std::max(w, display_width(std::string_view(text).substr(start, end - start)));
  return w;
}

std::string random_word(std::mt19937_64& gen, std::size_t max_len) {
  std::uniform_int_distribution<std::size_t> len(1, max_len);
  std::uniform_int_distribution<int> ch('a', 'z');
  std::string w(len(gen), 'x');
  for (auto& c : w) c = static_cast<char>(ch(gen));
  return w;
}

TEST(TextWidth, WrapKeepsEveryWordWithinTheWidth) {
  std::mt19937_64 gen(5);
  for (int t = 0; t < 300; ++t) {
    std::string text;
    std::vector<std::string> words;
    for (int i = 0; i < 30; ++i) words.push_back(random_word(gen, i % 7 == 0 ? 120 : 12));
    for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
    const std::size_t width = 20 + static_cast<std::size_t>(t % 90);
    const auto out = wrap_words(text, width, "    ");
    EXPECT_LE(widest(out), width);
    std::string joined;  // every character of every word, in order
    for (char c : out)
      if (c != ' ' && c != '\n') joined += c;
    std::string want;
    for (const auto& w : words) want += w;
    EXPECT_EQ(joined, want);
  }
  EXPECT_EQ(wrap_words("  two words", 80), "  two words\n");
}

TEST(TextWidth, ColumnsFromTheEnvironment) {
  EXPECT_EQ(width_from_columns(nullptr), 80u);
  EXPECT_EQ(width_from_columns("120"), 120u);
  EXPECT_EQ(width_from_columns("abc"), 80u);
  EXPECT_EQ(width_from_columns("12x"), 80u);
  EXPECT_EQ(width_from_columns("-5"), 80u);
  EXPECT_EQ(width_from_columns("20"), kMinWidth);
}

// A comparison with long names, long notes and every verdict.
Comparison sample(std::mt19937_64& gen, std::vector<LoadedResult>& keep) {
  std::vector<nlohmann::json> a, b;
  std::uniform_real_distribution<double> v(0.001, 1e6), f(0.5, 1.5), spread(0, 0.4);
  for (int i = 0; i < 40; ++i) {
    nlohmann::json p = {{"dtype", "fp32"}, {"size_bytes", 1 << (i % 20)}, {"op", "sum"}, {"root", i}};  // each point once
    if (i % 5 == 0) p["a_very_long_parameter_name_" + random_word(gen, 30)] = random_word(gen, 40);
    const std::string bench = i % 7 == 0 ? "collective." + random_word(gen, 60) : "all_reduce";
    const double x = v(gen);
    a.push_back(row_json(bench, "collective", p, 2, {x, x}, i % 3 ? "GB/s" : "us", i % 8 == 3 ? 0.999 : spread(gen)));
    const double extreme = i % 8 == 1 ? 1e7 : i % 8 == 2 ? 1e-7 : 1;  // ratios and ranges of every size
    const double y = x * f(gen) * extreme;  // both ranks of the 2-GPU row (every reader checks an ok row lists them)
    b.push_back(row_json(bench, "collective", p, 2, {y, y}, i % 11 ? (i % 3 ? "GB/s" : "us") : "TFLOP/s", spread(gen)));
    if (i % 9 == 0) b.back() = with_status(b.back(), "invalid", random_word(gen, 200));
    if (i % 13 == 0) b.back()["aggregate"] = nullptr;
  }
  keep.push_back(loaded(a, "Test GPU", "/a/very/long/path/" + random_word(gen, 90) + "/baseline.json"));
  keep.push_back(loaded(b, "Test GPU", "candidate.json"));
  return compare_results(keep[keep.size() - 2], keep.back(), 0.05);
}

TEST(CompareText, FitsTheWidthUnlessWide) {
  std::mt19937_64 gen(9);
  for (int t = 0; t < 20; ++t) {
    std::vector<LoadedResult> keep;
    keep.reserve(2);
    const auto c = sample(gen, keep);
    for (std::size_t w : {64u, 80u, 100u, 132u}) {
      const auto text = format_comparison(c, {w, false, false});
      EXPECT_LE(widest(text), w) << text;
      for (const auto& r : c.rows) EXPECT_NE(text.find(std::string(verdict_name(r.verdict))), std::string::npos);
    }
    const auto wide = format_comparison(c, {80, true, false});
    EXPECT_GT(widest(wide), 80u);
    EXPECT_NE(wide.find("A %peak"), std::string::npos);
  }
}

TEST(CompareText, OnlyChangesShowsChangedRowsAndCountsAll) {
  std::vector<nlohmann::json> a, b;
  const nlohmann::json p = {{"dtype", "fp64"}};
  const std::vector<std::pair<double, double>> values = {{100, 100}, {100, 70}, {100, 140}, {100, 99}, {100, 80}};
  for (std::size_t i = 0; i < values.size(); ++i) {
    auto params = p;
    params["k"] = i;
    a.push_back(row_json("stream.triad", "independent", params, 1, {values[i].first}, "GB/s", i == 4 ? 0.5 : 0.01));
    b.push_back(row_json("stream.triad", "independent", params, 1, {values[i].second}, "GB/s", i == 4 ? 0.5 : 0.01));
  }
  const auto ra = loaded(a), rb = loaded(b);
  const auto c = compare_results(ra, rb, 0.05);
  ASSERT_EQ(c.count(Verdict::same), 2u);
  ASSERT_EQ(c.count(Verdict::regression), 1u);
  ASSERT_EQ(c.count(Verdict::improvement), 1u);
  ASSERT_EQ(c.count(Verdict::inconclusive), 1u);
  const auto all = format_comparison(c, {80, false, false});
  const auto changed = format_comparison(c, {80, false, true});
  EXPECT_NE(all.find(" same"), std::string::npos);
  EXPECT_NE(all.find("inconclusive\n"), std::string::npos);
  EXPECT_EQ(changed.find(" same\n"), std::string::npos);
  EXPECT_EQ(changed.find("inconclusive\n"), std::string::npos);
  EXPECT_NE(changed.find("REGRESSION"), std::string::npos);
  EXPECT_NE(changed.find("improvement"), std::string::npos);
  const auto summary = verdict_summary(c);
  EXPECT_NE(summary.find("1 regression, 1 improvement, 2 same, 1 inconclusive, 0 problem"), std::string::npos) << summary;
  EXPECT_NE(changed.find("1 regression, 1 improvement, 2 same, 1"), std::string::npos);  // all counted
}

TEST(CheckText, FitsTheWidth) {
  std::mt19937_64 gen(21);
  std::uniform_real_distribution<double> v(0.001, 1e6);
  std::uniform_int_distribution<int> exponent(-9, 12);
  std::vector<nlohmann::json> rows, entries;
  for (int i = 0; i < 30; ++i) {
    nlohmann::json p = {{"dtype", "fp64"}, {"n", i}};
    if (i % 4 == 0) p["long_" + random_word(gen, 50)] = random_word(gen, 50);
    const std::string bench = i % 6 == 0 ? "stream." + random_word(gen, 70) : "stream.triad";
    rows.push_back(row_json(bench, "independent", p, 2, {v(gen) * std::pow(10.0, exponent(gen)), v(gen)}));
    if (i % 5 == 0) rows.back() = with_status(rows.back(), "failed", random_word(gen, 150));
  }
  const auto run = loaded(rows, "Test GPU", "/runs/" + random_word(gen, 100) + ".json");
  const auto doc = make_reference(run, ReferenceOptions{});
  auto ref_doc = doc;
  for (auto& e : ref_doc["clusters"][0]["entries"]) e["value"] = e["value"].get<double>() * 2;  // every row fails
  ref_doc["clusters"][0]["entries"].push_back({{"benchmark", "nothing." + random_word(gen, 80)}, {"value", 1}, {"unit", "GB/s"}});
  const auto ref = reference_from_json("ref.json", ref_doc);
  const auto out = check_against(run, ref);
  EXPECT_GT(out.failures(), 20u);
  for (std::size_t w : {64u, 80u, 120u}) {
    const auto text = format_check(out, w);
    EXPECT_LE(widest(text), w) << text;
    EXPECT_NE(text.find("FAIL"), std::string::npos);
    EXPECT_NE(text.find("matched no row"), std::string::npos);
  }
}

}  // namespace
}  // namespace gpuscale
