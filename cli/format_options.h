#pragma once
// A command's output formats, from the one table that lists them (analysis/reporter.h's
// report_formats(), analysis/suite_reporter.h's suite_formats()): an option each, the '-' rule, the
// outputs asked for, and the flags' list for messages. A format added to its table needs no edit here
// or in the command.
#include <concepts>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "analysis/output.h"
#include "core/error.h"

namespace gpuscale {

// The file each format of a table is asked to write ("": not asked), in the table's order.
using FormatPaths = std::vector<std::string>;

// An option per format into `paths` (sized here, once: the options hold its elements). Its help is the
// format's, then what the command writes of its own (`detail`: ", one test case per matched row"), then
// "('-': standard output)" where the format may take '-'.
template <std::derived_from<OutputFormat> Format>
void add_format_options(CLI::App& cmd, const std::vector<const Format*>& formats, FormatPaths& paths,
                        const std::string& detail = "") {
  paths.assign(formats.size(), "");
  for (std::size_t i = 0; i < formats.size(); ++i) {
    const OutputFormat& f = *formats[i];
    cmd.add_option(std::string(f.flag()), paths[i],
                   std::string(f.help()) + detail + (f.may_write_stdout() ? " ('-': standard output)" : ""));
  }
}

// The outputs asked for, in the table's order; '-' for a format that needs a file is refused (gpuscale::Error).
template <std::derived_from<OutputFormat> Format>
std::vector<OutputRequest> asked_outputs(const std::vector<const Format*>& formats, const FormatPaths& paths) {
  std::vector<OutputRequest> out;
  for (std::size_t i = 0; i < formats.size(); ++i) {
    if (paths[i].empty()) continue;
    const OutputFormat& f = *formats[i];
    if (paths[i] == "-" && !f.may_write_stdout()) throw Error(fmt::format("{} needs a file name, not '-'", f.flag()));
    out.push_back({std::string(f.flag()), paths[i], ""});
  }
  return out;
}

// The table's flags for a message: "--html, --markdown, --csv or --openmetrics".
template <std::derived_from<OutputFormat> Format>
std::string flag_list(const std::vector<const Format*>& formats) {
  std::string out;
  for (std::size_t i = 0; i < formats.size(); ++i)
    out += (i == 0 ? "" : i + 1 == formats.size() ? " or " : ", ") + std::string(formats[i]->flag());
  return out;
}

}  // namespace gpuscale
