#include <gtest/gtest.h>

#include "analysis/escape.h"
#include "core/term_text.h"
#include "analysis/svg_chart.h"

namespace gpuscale {
namespace {

const std::string kEvil = "<script>alert(1)</script> \"a,b\"\n'x' & \x1b[2J|`*_";

TEST(Escape, Html) {
  const auto h = html_escape(kEvil);
  EXPECT_EQ(h.find('<'), std::string::npos);
  EXPECT_EQ(h.find('"'), std::string::npos);
  EXPECT_EQ(h.find('\x1b'), std::string::npos);
  EXPECT_NE(h.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(h.find("&amp;"), std::string::npos);
  EXPECT_EQ(html_escape("plain text"), "plain text");
}

TEST(Escape, Markdown) {
  const auto m = markdown_escape(kEvil);
  EXPECT_EQ(m.find('\n'), std::string::npos);
  EXPECT_EQ(m.find("<script"), std::string::npos);
  EXPECT_NE(m.find("\\|"), std::string::npos);
  EXPECT_NE(m.find("\\`"), std::string::npos);
  EXPECT_EQ(markdown_escape("fp64 64M"), "fp64 64M");
}

TEST(Escape, Csv) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("\"a,b\"\n"), "\"\"\"a,b\"\"\n\"");
  EXPECT_EQ(csv_field("=1+1"), "'=1+1");
  EXPECT_EQ(csv_field("-x,y"), "\"'-x,y\"");
}

TEST(Escape, PrometheusLabelValue) {
  EXPECT_EQ(prom_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
}

TEST(Escape, TerminalHasNoControlCharacters) {
  EXPECT_EQ(term_text("a\x1b[2Jb\n"), "a?[2Jb?");
  // C1 controls (U+009B is CSI) and bytes that are not UTF-8 are replaced too; other text is kept.
  EXPECT_EQ(term_text("a\xc2\x9b" "31mb"), "a?31mb");
  EXPECT_EQ(term_text("x\xff\xfey"), "x??y");
  EXPECT_EQ(term_text("\xe2\x82"), "??");              // a cut character
  EXPECT_EQ(term_text("\xed\xa0\x80"), "???");         // a surrogate
  EXPECT_EQ(term_text("\xc0\xaf"), "??");              // an overlong '/'
  EXPECT_EQ(term_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(term_text("\x7f\t"), "??");
  EXPECT_EQ(terminal_quote(std::string(100, 'x'), 10), "xxxxxxxxxx...");
  EXPECT_EQ(terminal_quote("\xc3\xa9\xc3\xa9", 3), "\xc3\xa9...");  // cut at a character boundary
}

TEST(Svg, ChartsEscapeTheirTextAndCarryTheirKind) {
  LineChart c;
  c.kind = "busbw";
  c.title = kEvil;
  c.series.push_back({kEvil, {{1, 2}, {2, 3}}, false});
  const auto svg = render_line_chart(c);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_NE(svg.find("data-chart=\"busbw\""), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  BarChart b;
  b.kind = "per-gpu";
  b.labels = {kEvil, "b"};
  b.values = {1.0, std::nullopt};
  b.highlight = {true, false};
  b.reference = 1.0;
  const auto bars = render_bar_chart(b);
  EXPECT_EQ(bars.find("<script"), std::string::npos);
  EXPECT_NE(bars.find("straggler"), std::string::npos);
  EXPECT_NE(bars.find("n/a"), std::string::npos);
}

}  // namespace
}  // namespace gpuscale
