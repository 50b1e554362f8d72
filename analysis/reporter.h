#pragma once
// gpuscale report's output formats, one class each (in the spirit of google/benchmark's
// BenchmarkReporter): a Reporter renders the files' reports as one document. report_formats() is the one
// table of the formats a person asks for by option; `gpuscale report` registers, checks and renders
// every format from it, so adding a format is its own file in analysis/formats/ and its line in
// analysis/report_formats.cpp. The terminal text is a Reporter too, but no option asks for it: it is what
// the command prints when no format takes standard output.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/output.h"
#include "analysis/report.h"

namespace gpuscale {

// One section of a report in each document kind, for what does not come from the files (the results
// history, gpuscale plan's capacity plan); "" for a kind it has no text in. A format shows the kind it is.
struct ExtraSection {
  std::string text, markdown, html;
};

// What a report shows besides its files' sections: before them and after them.
struct ReportExtras {
  ExtraSection opening;  // gpuscale plan --html: the capacity plan opens the page
  ExtraSection closing;  // gpuscale report --history: the trends and what changed end the report
};

class Reporter : public OutputFormat {
 public:
  // Every file's report in the format's order of sections (analysis/report_section.h), the extras
  // around them. Throws gpuscale::Error when the files cannot be said in the format together (two runs
  // that would give the same OpenMetrics series).
  virtual std::string render(const std::vector<FileReport>& files, const ReportExtras& extras) const = 0;
};

// The formats a person asks for by option, in the order of the options (--help, the messages).
const std::vector<const Reporter*>& report_formats();
// The table's format with this flag ("--html"); throws std::logic_error for a flag not in the table.
const Reporter& report_format(std::string_view flag);

// Terminal text (analysis/formats/text.cpp): every line within `width` columns (0: no limit, --wide) but
// the nccl-tests tables' and the training table's.
std::unique_ptr<Reporter> terminal_reporter(std::size_t width = kDefaultColumns);

}  // namespace gpuscale
