// analysis/report_formats.cpp and reporter.h: the one table of gpuscale report's formats (a flag,
// help and '-' rule each, found by its flag), every format renders what it is given, and the extras
// (the history, a capacity plan) land where each kind of document puts them, not spliced in by a command.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "analysis/reporter.h"
#include "analysis/suite_reporter.h"
#include "analysis_fixtures.h"

namespace gpuscale {
namespace {

std::vector<FileReport> one_file() {
  std::vector<FileReport> files;
  files.push_back(make_file_report(
      testing::loaded({testing::row_json("stream.triad", "independent", {{"dtype", "fp64"}}, 2, {100, 101})}), 0.1));
  return files;
}

TEST(ReportFormats, EachFormatHasItsOwnFlagAndHelpAndIsFoundByIt) {
  std::set<std::string_view> flags;
  ASSERT_FALSE(report_formats().empty());
  for (const Reporter* format : report_formats()) {
    EXPECT_EQ(format->flag().rfind("--", 0), 0u) << format->flag();
    EXPECT_TRUE(flags.insert(format->flag()).second) << format->flag() << " twice";
    EXPECT_FALSE(format->help().empty()) << format->flag();
    EXPECT_EQ(&report_format(format->flag()), format);
  }
  EXPECT_THROW((void)report_format("--no-such-format"), std::logic_error);
  EXPECT_FALSE(report_format("--html").may_write_stdout());  // a page to open in a browser
  EXPECT_TRUE(report_format("--markdown").may_write_stdout());
}

TEST(ReportFormats, EveryFormatRendersNoFilesAndOneFile) {
  const auto files = one_file();
  for (const Reporter* format : report_formats()) {
    EXPECT_NO_THROW((void)format->render({}, {})) << format->flag();
    const auto text = format->render(files, {});
    EXPECT_FALSE(text.empty()) << format->flag();
    EXPECT_EQ(text, format->render(files, {})) << format->flag() << ": not the same twice";
  }
  EXPECT_NE(terminal_reporter()->render(files, {}).find("stream.triad"), std::string::npos);
}

TEST(ReportFormats, ExtrasGoWhereEachKindPutsThem) {
  const auto files = one_file();
  ReportExtras extras;
  extras.opening = {"OPEN-TEXT\n", "OPEN-MD\n", "<p>OPEN-HTML</p>\n"};
  extras.closing = {"CLOSE-TEXT\n", "CLOSE-MD\n", "<p>CLOSE-HTML</p>\n"};

  const auto text = terminal_reporter(0)->render(files, extras);
  EXPECT_EQ(text, "OPEN-TEXT\n" + terminal_reporter(0)->render(files, {}) + "\nCLOSE-TEXT\n");
  EXPECT_EQ(terminal_reporter(0)->render({}, extras), "OPEN-TEXT\nCLOSE-TEXT\n");  // the history alone

  const auto html = report_format("--html").render(files, extras);
  const auto open = html.find("<p>OPEN-HTML</p>"), run = html.find("<section class=\"run\">");
  const auto close = html.find("<p>CLOSE-HTML</p>"), end = html.find("</body>");
  ASSERT_NE(open, std::string::npos);
  ASSERT_NE(close, std::string::npos);
  EXPECT_LT(html.find("</h1>"), open);
  EXPECT_LT(open, run);
  EXPECT_LT(html.rfind("</section>"), close);
  EXPECT_EQ(close + std::string("<p>CLOSE-HTML</p>\n").size(), end);
  EXPECT_EQ(html.find("TEXT"), std::string::npos);

  const auto md = report_format("--markdown").render(files, extras);
  EXPECT_EQ(md.rfind("# gpuscale report\nOPEN-MD\n", 0), 0u);
  EXPECT_EQ(md.substr(md.size() - 9), "CLOSE-MD\n");

  // The row-per-line formats have no place for prose.
  for (const char* flag : {"--csv", "--openmetrics"})
    EXPECT_EQ(report_format(flag).render(files, extras), report_format(flag).render(files, {})) << flag;
}

TEST(SuiteFormats, TheTableFindsJUnitByItsFlag) {
  ASSERT_FALSE(suite_formats().empty());
  const SuiteReporter& junit = suite_format("--junit");
  EXPECT_TRUE(junit.may_write_stdout());
  EXPECT_NE(junit.render("gpuscale compare", {}).find("<testsuites name=\"gpuscale compare\""), std::string::npos);
  EXPECT_THROW((void)suite_format("--html"), std::logic_error);
}

}  // namespace
}  // namespace gpuscale
