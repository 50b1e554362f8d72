#pragma once
// Text of result rows shared by every output: the run's end-of-run summary, the report's terminal and
// Markdown tables, HTML, CSV and compare. Rows are grouped per benchmark into series (one parameter
// point without its message size); collectives show their largest message size in the headline tables
// (every size is in the nccl-tests tables, the JSON, CSV and the busbw charts).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "text/text_table.h"
#include "results/result_file.h"

namespace gpuscale {

// Short text for a parameter point: "fp64 1536M", "fp32 sum in-place", "bf16 8192x8192x8192:TN".
std::string params_label(const nlohmann::json& params, bool drop_size);
// The collective message size of a parameter point (params.size_bytes), when it has one.
std::optional<std::uint64_t> size_param(const nlohmann::json& params);
// "fp64 64M @ 4 GPU(s)": a row's point and GPU count, as messages and test cases name it.
std::string point_at(const ResultRow& r);
// "12.3%" or "-".
std::string percent_text(const std::optional<double>& fraction);
// The row's value as a table shows it: the aggregate (4 significant digits), or INVALID / FAILED / skipped.
std::string value_text(const ResultRow& r);
// "yes" for ok rows, else the status name; "UNTRUSTED" for a row read with --lenient from a file that
// contradicts itself there (analysis/result_set.h, mark_untrusted).
std::string valid_text(const ResultRow& r);
inline constexpr const char* kUntrustedFlag = "untrusted";
// The contradiction that makes the row untrusted (its "untrusted" flag's reason), or nullptr.
const std::string* untrusted_reason(const ResultRow& r);
bool row_is_problem(const ResultRow& r);  // invalid or failed

struct Series {
  std::string label;                  // params_label without the size
  bool sized = false;                 // has size_bytes (collectives)
  std::uint64_t largest_size = 0;
  std::vector<const ResultRow*> rows;  // every row of the series, in file order
  // The rows a table shows: all of them, or for a sized series those at the largest size.
  std::vector<const ResultRow*> table_rows() const;
};

struct BenchmarkGroup {
  std::string benchmark, unit, scope;
  std::vector<Series> series;  // in order of first appearance
};

// Groups rows per benchmark (order of first appearance) and series.
std::vector<BenchmarkGroup> group_rows(const std::vector<ResultRow>& rows);

// The headline table of one benchmark, cells as the file has them (each format escapes them): its
// title says the unit and, for collectives, that each series shows its largest size.
struct HeadlineTable {
  std::string title;
  TextTable table;                  // a series names its point on its first row only
  std::vector<std::string> labels;  // the point of every row
};
HeadlineTable headline_table(const BenchmarkGroup& g, const DeviceWord& device);

// The terminal table per benchmark (point, GPUs or ranks, value, scaling, % peak, valid; a collective's
// busbw at each series' largest size, without the scaling column that would repeat % peak), the
// nccl-tests table of every collective sweep (analysis/nccl_table.h) and the list of invalid or failed
// measurements: the run's summary and `gpuscale report` print the same text. Every line but the
// nccl-tests tables' fits style.width.
std::string format_summary(const std::vector<ResultRow>& rows, const TextStyle& style = {});

}  // namespace gpuscale
