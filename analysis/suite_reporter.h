#pragma once
// The formats of gpuscale compare's and gpuscale check's judgements: test suites of passed, failed and
// skipped cases (analysis/junit.h), one per matched or checked row and per outlier. A different kind of
// document from the report's (the cases of a comparison, not the sections of result files:
// analysis/reporter.h), so an interface of its own, in the same shape and behind the same kind of table:
// a format is its own file and its line in suite_formats() (analysis/suite_formats.cpp).
#include <string>
#include <string_view>
#include <vector>

#include "analysis/junit.h"
#include "analysis/output.h"

namespace gpuscale {

class SuiteReporter : public OutputFormat {
 public:
  // `name`: what judged ("gpuscale compare"), the name of the whole document.
  virtual std::string render(const std::string& name, const std::vector<JUnitSuite>& suites) const = 0;
};

// The formats, in the order of their options.
const std::vector<const SuiteReporter*>& suite_formats();
// The table's format with this flag ("--junit"); throws std::logic_error for a flag not in the table.
const SuiteReporter& suite_format(std::string_view flag);

}  // namespace gpuscale
