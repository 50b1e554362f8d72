#include "analysis/junit.h"

#include <fmt/format.h>

#include "analysis/escape.h"
#include "analysis/row_text.h"

namespace gpuscale {

JUnitCase row_case(const std::string& prefix, const ResultRow& row) {
  JUnitCase c;
  c.classname = prefix + "." + row.benchmark;
  c.name = point_at(row);
  return c;
}

std::string junit_xml(const std::string& name, const std::vector<JUnitSuite>& suites) {
  std::size_t tests = 0, failures = 0;
  std::string body;
  for (const auto& s : suites) {
    std::size_t f = 0, sk = 0;
    std::string cases;
    for (const auto& c : s.cases) {
      cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"", html_escape(c.classname),
                           html_escape(c.name));
      if (c.failed) {
        ++f;
        cases += fmt::format(">\n      <failure message=\"{}\" type=\"failure\">{}</failure>\n    </testcase>\n",
                             html_escape(c.message), html_escape(c.details.empty() ? c.message : c.details));
      } else if (c.skipped) {
        ++sk;
        cases += fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n", html_escape(c.message));
      } else {
        cases += "/>\n";
      }
    }
    body += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n{}  </testsuite>\n",
                        html_escape(s.name), s.cases.size(), f, sk, cases);
    tests += s.cases.size();
    failures += f;
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\">\n{}</testsuites>\n",
                     html_escape(name), tests, failures, body);
}

}  // namespace gpuscale
