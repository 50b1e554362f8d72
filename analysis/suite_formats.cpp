// The table of compare's and check's formats (analysis/suite_reporter.h): each format's file defines its
// function; the commands' options, their help and the '-' rule follow this table.
#include <stdexcept>

#include "analysis/suite_reporter.h"

namespace gpuscale {

const SuiteReporter& junit_format();  // analysis/junit.cpp

const std::vector<const SuiteReporter*>& suite_formats() {
  static const std::vector<const SuiteReporter*> formats{
      &junit_format(),
  };
  return formats;
}

const SuiteReporter& suite_format(std::string_view flag) {
  for (const SuiteReporter* format : suite_formats())
    if (format->flag() == flag) return *format;
  throw std::logic_error("no judgement format " + std::string(flag));
}

}  // namespace gpuscale
