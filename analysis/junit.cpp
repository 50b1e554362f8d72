#include "analysis/junit.h"

#include <unistd.h>

#include <chrono>
#include <climits>
#include <ctime>

#include <fmt/format.h>

#include "text/escape.h"
#include "analysis/row_text.h"
#include "analysis/suite_reporter.h"

namespace gpuscale {

JUnitCase row_case(const std::string& prefix, const ResultRow& row) {
  JUnitCase c;
  c.classname = prefix + "." + row.benchmark;
  c.name = point_at(row);
  return c;
}

namespace {

std::string now_utc() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

std::string this_host() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

}  // namespace

std::string junit_xml(const std::string& name, const std::vector<JUnitSuite>& suites) {
  const std::string now = now_utc(), host = this_host();
  std::size_t tests = 0, failures = 0;
  std::string body;
  for (const auto& s : suites) {
    std::size_t f = 0, sk = 0;
    double time_s = 0;
    std::string cases;
    for (const auto& c : s.cases) {
      time_s += c.time_s;
      cases += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"", html_escape(c.classname),
                           html_escape(c.name), c.time_s);
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
    body += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.3f}\" "
        "timestamp=\"{}\" hostname=\"{}\">\n{}  </testsuite>\n",
        html_escape(s.name), s.cases.size(), f, sk, time_s, now, html_escape(host), cases);
    tests += s.cases.size();
    failures += f;
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\">\n{}</testsuites>\n",
                     html_escape(name), tests, failures, body);
}

namespace {

class JUnitReporter final : public SuiteReporter {
 public:
  std::string_view flag() const override { return "--junit"; }
  std::string_view help() const override { return "write JUnit XML"; }
  bool may_write_stdout() const override { return true; }
  std::string render(const std::string& name, const std::vector<JUnitSuite>& suites) const override {
    return junit_xml(name, suites);
  }
};

}  // namespace

const SuiteReporter& junit_format() {
  static const JUnitReporter junit;
  return junit;
}

}  // namespace gpuscale
