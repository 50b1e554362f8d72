#include "analysis/nccl_table.h"

#include <algorithm>

#include <fmt/format.h>

#include "text/escape.h"
#include "analysis/row_text.h"
#include "results/row_fields.h"
#include "collectives/collective_table.h"
#include "core/dtype.h"

namespace gpuscale {
namespace {

// The parameters a line of the table spells out; any other one makes a table of its own.
constexpr const char* kLineParams[] = {"dtype", "op", "root", "size_bytes", "placement"};

// A string from the file as the table prints it: terminal-safe, and no backtick (the Markdown report
// puts the table in a code block).
std::string safe(const std::string& s) {
  std::string out = term_text(s);
  std::replace(out.begin(), out.end(), '`', '\'');
  return out;
}

std::string text_of(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

nlohmann::json other_params(const nlohmann::json& p) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : p.items()) {
    const std::string& key = k;  // clang 14 (the fuzz build) cannot capture a structured binding
    if (std::find_if(std::begin(kLineParams), std::end(kLineParams), [&](const char* x) { return key == x; }) ==
        std::end(kLineParams))
      out[k] = v;
  }
  return out;
}

std::string line_key(const nlohmann::json& p) {
  return nlohmann::json::array({p.value("dtype", nlohmann::json()), p.value("op", nlohmann::json()),
                                p.value("root", nlohmann::json()), p.value("size_bytes", nlohmann::json())})
      .dump();
}

bool in_place(const ResultRow& r) { return r.params.value("placement", std::string()) == "in-place"; }

std::string integer_metric(const ResultRow& r, const RowField& f) {
  const auto v = number_field(r, f);
  return v ? fmt::format("{:.0f}", *v) : "-";
}

std::string bandwidth(const ResultRow& r, const RowField& f) {
  if (r.status != RowStatus::ok) return value_text(r);  // INVALID, FAILED, skipped: never a figure
  const auto v = number_field(r, f);
  return v ? fmt::format("{:.2f}", *v) : "n/a";
}

// time, algbw, busbw, #wrong of one placement, in nccl-tests' widths.
std::string placement_cells(const ResultRow* r) {
  if (r == nullptr) return fmt::format("  {:>7}  {:>6}  {:>6}  {:>5}", "-", "-", "-", "-");
  const auto t = number_field(*r, fields::time_us);
  const auto wrong = number_field(*r, fields::wrong);
  return fmt::format("  {:>7}  {:>6}  {:>6}  {:>5}", t ? nccl_time_text(*t) : "-", bandwidth(*r, fields::algbw),
                     bandwidth(*r, fields::busbw), wrong ? fmt::format("{:g}", *wrong) : "-");
}

std::string line_text(const NcclLine& l) {
  const auto p = nccl_point(l.out_of_place ? *l.out_of_place : *l.in_place);
  return fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", safe(p->size), safe(p->count), safe(p->type), safe(p->redop),
                     safe(p->root)) +
         placement_cells(l.out_of_place) + placement_cells(l.in_place);
}

}  // namespace

std::vector<NcclTable> nccl_tables(const std::vector<ResultRow>& rows) {
  std::vector<NcclTable> out;
  std::vector<std::string> keys;                    // per table: benchmark, count, other params
  std::vector<std::vector<std::string>> line_keys;  // per table: its lines' keys
  for (const auto& r : rows) {
    const auto coll = parse_collective(r.benchmark);
    if (!coll || !size_param(r.params)) continue;
    const auto others = other_params(r.params);
    const std::string key = nlohmann::json::array({r.benchmark, r.gpu_count, others}).dump();
    auto t = std::find(keys.begin(), keys.end(), key);
    if (t == keys.end()) {
      keys.push_back(key);
      line_keys.emplace_back();
      out.push_back({r.benchmark, std::string(collective_spec(*coll).nccl_tests), r.gpu_count,
                     params_label(others, false), {}});
      t = std::prev(keys.end());
    }
    const auto i = static_cast<std::size_t>(t - keys.begin());
    auto& lk = line_keys[i];
    const std::string lkey = line_key(r.params);
    auto l = std::find(lk.begin(), lk.end(), lkey);
    if (l == lk.end()) {
      lk.push_back(lkey);
      out[i].lines.emplace_back();
      l = std::prev(lk.end());
    }
    auto& line = out[i].lines[static_cast<std::size_t>(l - lk.begin())];
    auto& slot = in_place(r) ? line.in_place : line.out_of_place;
    if (slot == nullptr) slot = &r;  // a second row of the same point (a merged file): the first is shown
  }
  return out;
}

std::optional<NcclPoint> nccl_point(const ResultRow& r) {
  const auto coll = parse_collective(r.benchmark);
  if (!coll || !size_param(r.params)) return std::nullopt;
  const auto& spec = collective_spec(*coll);
  const auto& p = r.params;
  NcclPoint out;
  out.size = integer_metric(r, fields::size_bytes);
  if (out.size == "-") out.size = std::to_string(*size_param(p));
  out.count = integer_metric(r, fields::count);
  out.type = nccl_type_name(p.contains("dtype") ? text_of(p["dtype"]) : "-");
  out.redop = spec.reduces && p.contains("op") ? text_of(p["op"]) : "none";
  out.root = spec.rooted ? (p.contains("root") ? text_of(p["root"]) : "0") : "-1";
  return out;
}

NcclAverage nccl_average(const NcclTable& t) {
  NcclAverage a;
  double sum = 0;
  for (const auto& l : t.lines)
    for (const ResultRow* r : {l.out_of_place, l.in_place}) {
      if (r == nullptr || r->status != RowStatus::ok) continue;
      if (const auto bw = number_field(*r, fields::busbw)) {
        sum += *bw;
        ++a.rows;
      }
    }
  if (a.rows > 0) a.busbw = sum / static_cast<double>(a.rows);
  return a;
}

std::string nccl_type_name(const std::string& dtype) {
  const auto t = parse_dtype(dtype);
  return t ? std::string(dtype_nccl_tests_name(*t)) : dtype;
}

std::string nccl_time_text(double us) {
  if (us >= 10000.0) return fmt::format("{:.0f}", us);
  if (us >= 100.0) return fmt::format("{:.1f}", us);
  return fmt::format("{:.2f}", us);
}

const std::vector<std::string>& nccl_column_names() {
  static const std::vector<std::string> names = {"size",  "count", "type",   "redop", "root",  "time", "algbw",
                                                 "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"};
  return names;
}

std::string nccl_table_text(const NcclTable& t, const DeviceWord& device) {
  const auto& n = nccl_column_names();
  std::string out = fmt::format("# gpuscale {} at {}{}: nccl-tests' {} layout\n", t.benchmark, device.count(t.gpu_count),
                                t.extra.empty() ? "" : ", " + safe(t.extra), t.nccl_tests);
  out += "#\n";
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}", "", "", "", "", "") +
         "           out-of-place                       in-place          \n";
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6} {:>6}  {:>7}  {:>6}  {:>6} {:>6}\n", n[0],
                     n[1], n[2], n[3], n[4], n[5], n[6], n[7], n[8], n[9], n[10], n[11], n[12]);
  out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>5}  {:>7}  {:>6}  {:>6}  {:>5}\n", "(B)",
                     "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  double wrong = 0;
  for (const auto& l : t.lines) {
    out += line_text(l) + "\n";
    for (const ResultRow* r : {l.out_of_place, l.in_place})
      if (r != nullptr) wrong += number_field(*r, fields::wrong).value_or(0);
  }
  out += fmt::format("# Out of bounds values : {:g} {}\n", wrong, wrong > 0 ? "FAILED" : "OK");
  const auto avg = nccl_average(t);
  out += fmt::format("# Avg bus bandwidth    : {} \n", avg.busbw ? fmt::format("{:g}", *avg.busbw) : "n/a");
  out += fmt::format("#  (the mean busbw of the {} ok row(s) above that have one, both placements)\n#\n", avg.rows);
  return out;
}

std::string nccl_tables_text(const std::vector<ResultRow>& rows, const DeviceWord& device) {
  std::string out;
  for (const auto& t : nccl_tables(rows)) out += "\n" + nccl_table_text(t, device);
  return out;
}

}  // namespace gpuscale
