// The table of gpuscale report's formats. A format is its own file in analysis/formats/ (a Reporter
// and the function that returns it; the build takes every file there) and its line here; the command's
// option, its help, the '-' rule, the --drain-list message and the fuzz target follow this table.
#include <stdexcept>

#include "analysis/reporter.h"

namespace gpuscale {

// Defined by each format's own file.
const Reporter& html_format();
const Reporter& markdown_format();
const Reporter& csv_format();
const Reporter& openmetrics_format();
const Reporter& nccl_tests_json_format();

const std::vector<const Reporter*>& report_formats() {
  static const std::vector<const Reporter*> formats{
      &html_format(),
      &markdown_format(),
      &csv_format(),
      &openmetrics_format(),
      &nccl_tests_json_format(),
  };
  return formats;
}

const Reporter& report_format(std::string_view flag) {
  for (const Reporter* format : report_formats())
    if (format->flag() == flag) return *format;
  throw std::logic_error("no report format " + std::string(flag));
}

}  // namespace gpuscale
