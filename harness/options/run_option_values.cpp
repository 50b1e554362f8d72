#include "harness/options/run_option_values.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include <sched.h>

#include <fmt/format.h>

#include "collectives/alltoallv_plan.h"
#include "core/error.h"
#include "core/term_text.h"
#include "core/units.h"
#include "results/result_io.h"
#include "training/parallel_layout.h"

namespace gpuscale {

using nlohmann::json;

std::span<const TimeReduceValue> time_reduce_values() {
  static constexpr std::array<TimeReduceValue, 4> kValues{{{"avg", '1'}, {"min", '2'}, {"max", '3'}, {"rank0", '0'}}};
  return kValues;
}

std::span<const std::string_view> transport_values() {
  static constexpr std::array<std::string_view, 2> kValues{"nccl", "mpi"};
  return kValues;
}

std::span<const PlacementValue> placement_values() {
  static constexpr std::array<PlacementValue, 2> kValues{{{"out-of-place", "out", false}, {"in-place", "in", true}}};
  return kValues;
}

std::string_view placement_name(bool in_place) {
  for (const auto& p : placement_values())
    if (p.in_place == in_place) return p.name;
  return {};
}

std::string join_values(std::span<const std::string_view> values, std::string_view sep, std::string_view last) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i)
    out += std::string(i == 0 ? "" : i + 1 == values.size() ? last : sep) + std::string(values[i]);
  return out;
}

std::vector<std::string_view> time_reduce_names() {
  std::vector<std::string_view> out;
  for (const auto& v : time_reduce_values()) out.push_back(v.name);
  return out;
}

std::vector<std::string_view> placement_names() {
  std::vector<std::string_view> out;
  for (const auto& p : placement_values()) out.push_back(p.name);
  return out;
}

std::vector<std::string> strings(const json& j) {
  if (!j.is_array()) throw BadRecordedValue{"an array of strings"};
  std::vector<std::string> out;
  for (const auto& e : j) {
    if (!e.is_string()) throw BadRecordedValue{"an array of strings"};
    out.push_back(e.get<std::string>());
  }
  return out;
}

std::string shape_text(const GemmShape& s) {
  return fmt::format("{}x{}x{}{}", s.m, s.n, s.k, s.layout_given ? ":" + gemm_layout(s) : std::string());
}

void parse_ops(RunOptions& o, const std::string& t, const std::string& what) {
  for (const auto& name : split_list(t, what)) {
    auto op = parse_redop(name);
    if (!op) throw Error(fmt::format("invalid {} '{}': use sum, prod, min, max or avg", what, name));
    o.ops.push_back(*op);
  }
}

// A skew file's size cap: 65536 weights of a few dozen characters.
constexpr std::uintmax_t kSkewFileBytes = 4 << 20;

void parse_skews(RunOptions& o, const std::string& t, const std::string& what) {
  for (const auto& text : split_list(t, what)) {
    std::string why;
    std::optional<AlltoallvSkew> skew;
    if (text.rfind("file:", 0) == 0) {  // read here, recorded as its weights: the file need not outlive the run
      const std::string path = text.substr(5);
      std::ifstream in = open_input_file(path, kSkewFileBytes);
      std::stringstream content;
      content << in.rdbuf();
      skew = parse_alltoallv_skew_file(content.str(), why);
      if (!skew) throw Error(fmt::format("invalid {} '{}': {}", what, terminal_quote(text), why));
    } else {
      skew = parse_alltoallv_skew(text, why);
    }
    if (!skew) throw Error(fmt::format("invalid {} '{}': {}", what, terminal_quote(text), why));
    if (std::find(o.skews.begin(), o.skews.end(), *skew) == o.skews.end()) o.skews.push_back(*skew);
  }
}

void parse_layouts(RunOptions& o, const std::string& t, const std::string& what) {
  // Layouts hold commas themselves ("tp=2,pp=2"): items are separated by ';' here.
  std::size_t at = 0;
  while (at <= t.size()) {
    const std::size_t end = std::min(t.find(';', at), t.size());
    const std::string text = t.substr(at, end - at);
    std::string why;
    if (!parse_layout(text, why)) throw Error(fmt::format("invalid {} '{}': {}", what, terminal_quote(text), why));
    o.layouts.push_back(text);
    at = end + 1;
  }
}

void adopt_layouts(RunOptions& o, const json& j) {
  o.layouts = strings(j);
  std::string why;
  for (const auto& l : o.layouts)
    if (!parse_layout(l, why)) throw BadRecordedValue{"parallel layouts such as \"tp=2,pp=2\""};
}

void parse_placements(RunOptions& o, const std::string& t, const std::string& what) {
  for (const auto& name : split_list(t, what)) {
    const PlacementValue* found = nullptr;
    for (const auto& p : placement_values())
      if (name == p.name || name == p.alias) found = &p;
    if (!found)
      throw Error(fmt::format("invalid {} '{}': use {}", what, name, join_values(placement_names(), ", ", " and/or ")));
    o.in_place.push_back(found->in_place);
  }
}

void parse_time_reduce(RunOptions& o, const std::string& t, const std::string& what) {
  for (const auto& v : time_reduce_values())
    if (t == v.name || (t.size() == 1 && t[0] == v.nccl_tests)) {
      o.time_reduce = v.name;
      return;
    }
  throw Error(fmt::format("invalid {} '{}': use {} (or 0-3 as nccl-tests)", what, t,
                          join_values(time_reduce_names(), ", ", ", ")));
}

void parse_transports(RunOptions& o, const std::string& t, const std::string& what) {
  const auto known = transport_values();
  for (const auto& name : split_list(t, what)) {
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw Error(fmt::format("invalid {} '{}': use {}", what, name, join_values(known, ", ", " and/or ")));
    o.transports.push_back(name);
  }
}

void parse_dtypes(RunOptions& o, const std::string& t, const std::string& what) {
  o.dtypes.clear();
  if (t == "all") {  // nccl-tests' -d all: every type; each benchmark keeps the ones it measures
    o.dtypes = every_dtype();
    return;
  }
  for (const auto& name : split_list(t, what)) o.dtypes.push_back(parse_dtype_or_throw(name));  // nccl-tests' names too
}

void parse_check(RunOptions& o, const std::string& t, const std::string& what) {
  if (t == "1") return;
  if (t != "0") throw Error(fmt::format("invalid {} '{}': use 1 or 0 (as nccl-tests)", what, t));
  o.notes.push_back(fmt::format("{} 0 changes nothing: gpuscale checks every measurement's results (untimed, "
                                "after the timed repetitions)", what));
}

void parse_output(RunOptions& o, const std::string& t, const std::string& what) {
  if (parse_redop(t))
    throw Error(fmt::format("{} {}: -o is the result file here, not nccl-tests' reduction op: use --ops {} "
                            "(a file of that name: -o ./{})", what, t, t, t));
  o.output = t;
  o.result_to_stdout = t == "-";
}

json record_dtypes(const RunOptions& o) {
  json a = json::array();
  for (DType t : o.dtypes) a.push_back(dtype_name(t));
  return a;
}

void adopt_dtypes(RunOptions& o, const json& j) {
  o.dtypes.clear();
  for (const auto& s : strings(j)) {
    auto t = parse_dtype(s);
    if (!t) throw BadRecordedValue{"dtype names"};
    o.dtypes.push_back(*t);
  }
}

json record_ops(const RunOptions& o) {
  json a = json::array();
  for (RedOp op : o.ops) a.push_back(redop_name(op));
  return a;
}

void adopt_ops(RunOptions& o, const json& j) {
  o.ops.clear();
  for (const auto& s : strings(j)) {
    auto op = parse_redop(s);
    if (!op) throw BadRecordedValue{"reduction op names"};
    o.ops.push_back(*op);
  }
}

json record_skews(const RunOptions& o) {
  json a = json::array();
  for (const auto& s : o.skews) a.push_back(alltoallv_skew_text(s));
  return a;
}

void adopt_skews(RunOptions& o, const json& j) {
  o.skews.clear();
  for (const auto& s : strings(j)) {
    std::string why;
    auto skew = parse_alltoallv_skew(s, why);
    if (!skew) throw BadRecordedValue{"alltoallv skews ('uniform', 'zipf:S' or 'weights:W...')"};
    o.skews.push_back(*skew);
  }
}

json record_placements(const RunOptions& o) {
  json a = json::array();
  for (bool in : o.in_place) a.push_back(placement_name(in));
  return a;
}

void adopt_placements(RunOptions& o, const json& j) {
  o.in_place.clear();
  for (const auto& s : strings(j)) {
    const auto names = placement_names();
    if (std::find(names.begin(), names.end(), s) == names.end()) {
      const std::vector<std::string_view> in_first(names.rbegin(), names.rend());
      throw BadRecordedValue{join_values(in_first, ", ", " or ")};
    }
    o.in_place.push_back(s == placement_name(true));
  }
}

json record_gemm_shapes(const RunOptions& o) {
  json a = json::array();
  for (const auto& s : o.gemm_shapes) a.push_back(shape_text(s));
  return a;
}

void adopt_gemm_shapes(RunOptions& o, const json& j) {
  o.gemm_shapes.clear();
  for (const auto& s : strings(j)) {
    try {
      o.gemm_shapes.push_back(parse_gemm_shape(s));
    } catch (const Error&) {
      throw BadRecordedValue{"GEMM shapes (MxNxK[:TN])"};
    }
  }
}

void adopt_time_reduce(RunOptions& o, const json& j) {
  const std::string s = j.is_string() ? j.get<std::string>() : "";
  const auto names = time_reduce_names();
  if (std::find(names.begin(), names.end(), s) == names.end()) throw BadRecordedValue{join_values(names, ", ", " or ")};
  o.time_reduce = s;
}

void adopt_transports(RunOptions& o, const json& j) {
  o.transports = strings(j);
  const auto known = transport_values();
  for (const auto& t : o.transports)
    if (std::find(known.begin(), known.end(), t) == known.end()) throw BadRecordedValue{join_values(known, ", ", " and/or ")};
}

int visible_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

int parse_thread_count(const std::string& text, const std::string& what, int limit) {
  const int n = parse_positive_int(text, what);
  if (n > limit)
    throw Error(fmt::format("invalid {} '{}': must be at most {}, the logical CPUs this process may run on", what,
                            text, limit));
  return n;
}

void adopt_threads(RunOptions& o, const json& j) {
  const int limit = visible_cores();
  if (j.is_null()) return void(o.backend_options.threads = 0);
  if (!j.is_number_integer() || j.get<long long>() < 0 || j.get<long long>() > limit)
    throw BadRecordedValue{fmt::format("an integer from 0 to {} (the logical CPUs this process may run on) or null",
                                       limit)};
  o.backend_options.threads = static_cast<int>(j.get<long long>());
}

double parse_outlier_fraction(std::string_view text, std::string_view flag) {
  double v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const bool number = !text.empty() && ec == std::errc() && ptr == text.data() + text.size();
  if (number && std::isfinite(v) && v > 0 && v < 1) return v;
  throw Error(fmt::format("invalid {} '{}': a fraction between 0 and 1, both excluded (0.10 = 10%)", flag, text));
}

int parse_pairs_rounds(std::string_view text) {
  long long v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const bool number = !text.empty() && ptr == text.data() + text.size();
  if (number && ec == std::errc() && v >= 1 && v <= std::numeric_limits<int>::max()) return static_cast<int>(v);
  if (number && (ec == std::errc::result_out_of_range || v > std::numeric_limits<int>::max()) && text.front() != '-')
    throw Error(fmt::format("invalid --pairs-rounds '{}': at most {} rounds", text, std::numeric_limits<int>::max()));
  throw Error(fmt::format("invalid --pairs-rounds '{}': a whole number of rounds, at least 1", text));
}

double parse_max_time(const std::string& text, const std::string& what) {
  if (text == "0") return 0;
  try {
    return parse_time_span(text, what);
  } catch (const Error&) {
    throw Error(fmt::format("invalid {} '{}': expected 0 (no limit) or a positive time such as 3600, 90m, 24h or 2d",
                            what, terminal_quote(text)));
  }
}

}  // namespace gpuscale
