#pragma once
// JUnit XML (the format CI dashboards read): test suites of test cases, each passed, failed or skipped.
#include <string>
#include <vector>

#include "results/result_file.h"

namespace gpuscale {

struct JUnitCase {
  std::string classname, name;
  bool failed = false, skipped = false;
  std::string message;  // failure or skip message
  std::string details;  // failure body
  double time_s = 0;    // seconds the case took (a comparison of recorded values: none measurable)
};

struct JUnitSuite {
  std::string name;
  std::vector<JUnitCase> cases;
};

// A test case for one result row: class "<prefix>.<benchmark>", name "<point> @ <k> GPU(s)".
JUnitCase row_case(const std::string& prefix, const ResultRow& row);

// Each <testsuite> carries time (its cases' seconds), timestamp and hostname: when (now, in UTC, as
// JUnit's schema writes it: without a zone) and where (this host) the suite was judged.
std::string junit_xml(const std::string& name, const std::vector<JUnitSuite>& suites);

}  // namespace gpuscale
