#include <gtest/gtest.h>

#include <cstdlib>

#include "text/escape.h"
#include "core/shown_text.h"
#include "core/term_text.h"
#include "text/svg_chart.h"

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
  EXPECT_EQ(csv_field("\"a,b\"\n"), "\"\"\"a,b\"\"?\"");  // a line break never inside a field: one record, one line
  EXPECT_EQ(csv_field("host\r\nname"), "host??name");
  EXPECT_EQ(csv_field("a\tb"), "a\tb");
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

// The one rule for a line on stderr (run's option errors, --store's lines, GPUSCALE_TEST_HOSTS...):
// terminal_safe, and cut at 8 x kMaxShownBytes with the cut marked.
TEST(Escape, MessageLineIsOneSafeLine) {
  EXPECT_EQ(message_line("invalid --benchmarks 'x\x1b]0;pwn\x07\x1b[2J\xc2\x9b': no such"), "invalid --benchmarks 'x?]0;pwn??[2J?': no such");
  EXPECT_EQ(message_line("a\nb\r"), "a?b?");
  const std::string big(8 * kMaxShownBytes + 5, 'm');
  EXPECT_EQ(message_line(big), std::string(8 * kMaxShownBytes, 'm') + "...[5 bytes cut]");
}

// Every escaper applies the same rule: no C0 control but the tab and newline a format allows, no DEL,
// no C1 (U+0080..U+009F: U+009B is CSI, U+0085 NEL), no CR; and a long string is cut with a marker.
TEST(Escape, OneRuleForControlsAndLengthInEveryFormat) {
  const std::string hostile = "a\x1b[31mb\x1b]0;title\x07" "c\xc2\x9b" "2J\xc2\x85" "d\ref\x7fg\u00e9";
  auto clean = [](const std::string& out, bool newline_ok, const char* format) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      const auto c = static_cast<unsigned char>(out[i]);
      EXPECT_FALSE((c < 0x20 && c != '\t' && !(newline_ok && c == '\n')) || c == 0x7f) << format << ": " << out;
      EXPECT_FALSE(c == 0xC2 && i + 1 < out.size() && static_cast<unsigned char>(out[i + 1]) <= 0x9F)
          << format << ": " << out;
    }
  };
  const std::string in = std::string("x\0y", 3) + hostile + "\n";
  clean(html_escape(in), true, "html");
  clean(markdown_escape(in), false, "markdown");
  clean(csv_field(in), false, "csv");
  clean(prom_label_value(in), false, "openmetrics");
  clean(term_text(in), false, "terminal");
  EXPECT_EQ(csv_field("a\rb"), "a?b");
  EXPECT_EQ(prom_label_value("a\x1b" "b\xc2\x85"), "a?b?");
  EXPECT_EQ(markdown_escape("a\xc2\x9b" "b"), "a?b");
  EXPECT_EQ(html_escape("\xc3\xa9\xc2\x9f"), "\xc3\xa9\xEF\xBF\xBD");  // U+00E9 kept, U+009F replaced
  // The cut: at most kMaxShownBytes of the string and a marker with the count cut.
  const std::string longest(kMaxShownBytes, 'h');
  EXPECT_EQ(term_text(longest), longest);
  const std::size_t extra = 1 + static_cast<std::size_t>(std::rand() % 100000);
  const std::string big(kMaxShownBytes + extra, 'h');
  const std::string marker = "...[" + std::to_string(extra) + " bytes cut]";
  for (const auto& out : {html_escape(big), csv_field(big), prom_label_value(big), term_text(big)}) {
    EXPECT_EQ(out, longest + marker);
  }
  EXPECT_EQ(markdown_escape(big), longest + "...\\[" + std::to_string(extra) + " bytes cut\\]");  // [ ] escaped
  // Cut at a character boundary: no half of a two-byte character is left before the marker.
  std::string wide = "x";
  while (wide.size() < kMaxShownBytes + 10) wide += "\xc3\xa9";
  const auto cut = clip_text(wide);
  EXPECT_EQ(cut.substr(0, kMaxShownBytes - 1), wide.substr(0, kMaxShownBytes - 1));
  EXPECT_EQ(cut.substr(kMaxShownBytes - 1, 4), "...[");
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
