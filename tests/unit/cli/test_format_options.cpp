// cli/format_options.h: a command's output options come from its formats' table: one option each with
// the format's help (and "'-': standard output" where it may take '-'), the outputs asked for in the
// table's order, '-' refused by name to a format that needs a file, and the flags' list for messages.
#include <gtest/gtest.h>

#include "analysis/reporter.h"
#include "cli/format_options.h"
#include "core/error.h"

namespace gpuscale {
namespace {

TEST(FormatOptions, OneOptionPerFormatOfTheTable) {
  CLI::App app;
  FormatPaths paths;
  add_format_options(app, report_formats(), paths, ", of the inputs");
  ASSERT_EQ(paths.size(), report_formats().size());
  for (const Reporter* format : report_formats()) {
    const auto* option = app.get_option(std::string(format->flag()));
    ASSERT_NE(option, nullptr) << format->flag();
    const auto help = option->get_description();
    EXPECT_EQ(help.rfind(std::string(format->help()) + ", of the inputs", 0), 0u) << help;
    EXPECT_EQ(help.find("('-': standard output)") != std::string::npos, format->may_write_stdout()) << help;
  }
  app.parse(std::vector<std::string>{"out.csv", "--csv", "out.md", "--markdown"});  // reversed, as CLI11 reads
  const auto asked = asked_outputs(report_formats(), paths);
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[0].flag, "--markdown");  // the table's order, not the command line's
  EXPECT_EQ(asked[0].path, "out.md");
  EXPECT_EQ(asked[1].flag, "--csv");
}

TEST(FormatOptions, DashOnlyWhereTheFormatMayWriteStandardOutput) {
  FormatPaths paths(report_formats().size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    paths.assign(paths.size(), "");
    paths[i] = "-";
    const Reporter& format = *report_formats()[i];
    if (format.may_write_stdout())
      EXPECT_EQ(asked_outputs(report_formats(), paths).at(0).path, "-");
    else
      EXPECT_THROW(
          try { (void)asked_outputs(report_formats(), paths); } catch (const Error& e) {
            EXPECT_EQ(std::string(e.what()), std::string(format.flag()) + " needs a file name, not '-'");
            throw;
          },
          Error);
  }
}

TEST(FormatOptions, FlagListForMessages) {
  const std::string list = flag_list(report_formats());
  for (const Reporter* format : report_formats()) EXPECT_NE(list.find(format->flag()), std::string::npos) << list;
  EXPECT_NE(list.find(" or " + std::string(report_formats().back()->flag())), std::string::npos) << list;
  EXPECT_EQ(list.find(", " + std::string(report_formats().back()->flag())), std::string::npos) << list;
}

}  // namespace
}  // namespace gpuscale
