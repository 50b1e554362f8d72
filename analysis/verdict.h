#pragma once
// The verdict every output opens with (the run's end-of-run summary, `gpuscale report` as text,
// Markdown and HTML): PASS, WARN or FAIL for the run, the fleet outliers and the drain list, and GPU
// health, read from the result document as written. The rule (docs/analysis.md, "The verdict"):
// - FAIL: a measurement invalid or failed, an outlier in analysis.outliers, a GPU whose health
//   verdict is FAIL;
// - WARN: none of those, but a GPU health WARN, a straggler, a run that did not complete, or a
//   population whose noise allows no bar under 40% (analysis.power: a clean verdict there means nothing);
// - PASS: otherwise, with the power of the verdict: the smallest slowdown of each kind of member the
//   outlier rule would have named with 95% probability, from the run's own noise.
// Read leniently, as health_text is: a report renders whatever a valid (or hand-edited) file holds.
// The strings are raw; each format escapes them where it writes them.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/result_file.h"

namespace gpuscale {

enum class VerdictLevel { pass, warn, fail };

struct RunVerdict {
  VerdictLevel level = VerdictLevel::pass;
  std::vector<std::string> reasons;  // what made it WARN or FAIL, worst first ("1 measurement(s) invalid or failed")
  std::string outliers;              // "2", "none", "not analysed (no analysis.outliers in the file)"
  bool drain_known = false;          // the file has analysis.outlier_hosts (possibly empty)
  std::vector<std::string> drain;    // analysis.outlier_hosts: the hosts to drain
  std::string health;                // "0 FAIL, 1 WARN, 7 PASS", "telemetry unavailable (why)", "not recorded"
  // From analysis.power: "no GPU slower than 3.1% in stream.triad, 7.5% in gemm bf16; no node pair slower than
  // 11% in pairs (95% power)"; "" when the file has none (a run of one GPU, or written before it).
  std::string power;
  std::vector<std::string> no_bar;  // "GPU in stream.triad (52%)": populations whose bar is over 40%
};

// The power text of analysis.power (above) and the populations without a useful bar.
std::string power_text(const nlohmann::json& power, std::vector<std::string>* no_bar = nullptr);

std::string_view verdict_word(VerdictLevel level);  // "PASS" | "WARN" | "FAIL"

// `stragglers`: how many stragglers the caller found (at its threshold) in `rows`.
RunVerdict run_verdict(const nlohmann::json& doc, const std::vector<ResultRow>& rows, std::size_t stragglers);

// The terminal lines: "verdict: FAIL: ...", then outliers, drain list and health, every string escaped.
std::string format_verdict(const RunVerdict& v);

}  // namespace gpuscale
