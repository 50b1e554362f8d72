#include "harness/summary.h"

#include <map>

#include <fmt/format.h>

#include "core/units.h"

namespace gpuscale {
namespace {

std::string percent(const std::optional<double>& v) { return v ? fmt::format("{:.1f}%", *v * 100) : "-"; }

std::string value_text(const ResultRow& r) {
  switch (r.status) {
    case RowStatus::ok: return r.aggregate ? fmt::format("{:.4g}", *r.aggregate) : "-";
    case RowStatus::invalid: return "INVALID";
    case RowStatus::failed: return "FAILED";
    case RowStatus::skipped: return "skipped";
  }
  return "-";
}

}  // namespace

std::string params_label(const nlohmann::json& p, bool drop_size) {
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : " ") + s; };
  if (p.contains("dtype")) add(p["dtype"].get<std::string>());
  if (p.contains("m") && p.contains("n") && p.contains("k"))
    add(fmt::format("{}x{}x{}:{}", p["m"].get<std::uint64_t>(), p["n"].get<std::uint64_t>(),
                    p["k"].get<std::uint64_t>(), p.value("layout", std::string("NN"))));
  if (p.contains("array_bytes")) add(format_size(p["array_bytes"].get<std::uint64_t>()));
  if (p.contains("op")) add(p["op"].get<std::string>());
  if (p.contains("placement")) add(p["placement"].get<std::string>());
  if (!drop_size && p.contains("size_bytes")) add(format_size(p["size_bytes"].get<std::uint64_t>()));
  for (const auto& [k, v] : p.items()) {
    static const char* known[] = {"dtype", "m", "n", "k", "layout", "array_bytes", "elements", "op", "placement",
                                  "size_bytes", "root"};
    if (std::find(std::begin(known), std::end(known), k) == std::end(known))
      add(fmt::format("{}={}", k, v.is_string() ? v.get<std::string>() : v.dump()));
  }
  return out;
}

std::string format_summary(const std::vector<ResultRow>& rows) {
  // benchmark -> series label -> rows (collectives: only the largest size of the series)
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> series_order;
  std::map<std::pair<std::string, std::string>, std::vector<const ResultRow*>> series;
  std::map<std::pair<std::string, std::string>, std::uint64_t> largest;
  std::map<std::string, std::string> units;
  for (const auto& r : rows) {
    if (std::find(order.begin(), order.end(), r.benchmark) == order.end()) order.push_back(r.benchmark);
    units[r.benchmark] = r.unit;
    const bool sized = r.params.contains("size_bytes");
    const auto label = params_label(r.params, sized);
    const auto key = std::make_pair(r.benchmark, label);
    auto& so = series_order[r.benchmark];
    if (std::find(so.begin(), so.end(), label) == so.end()) so.push_back(label);
    if (sized) {
      const auto size = r.params["size_bytes"].get<std::uint64_t>();
      if (size > largest[key]) {
        largest[key] = size;
        series[key].clear();
      }
      if (size < largest[key]) continue;
    }
    series[key].push_back(&r);
  }
  std::string out;
  for (const auto& b : order) {
    out += fmt::format("\n{} ({})\n", b, units[b]);
    out += fmt::format("  {:<34} {:>5} {:>12} {:>9} {:>8}  {}\n", "point", "GPUs", "value", "scaling", "% peak",
                       "valid");
    for (const auto& label : series_order[b]) {
      const auto key = std::make_pair(b, label);
      std::string shown = label;
      if (largest.count(key)) shown += " " + format_size(largest[key]);
      bool first = true;
      for (const ResultRow* r : series[key]) {
        out += fmt::format("  {:<34} {:>5} {:>12} {:>9} {:>8}  {}\n", first ? shown : "", r->gpu_count, value_text(*r),
                           percent(r->scaling_efficiency), percent(r->fraction_of_peak),
                           r->status == RowStatus::ok ? "yes" : std::string(row_status_name(r->status)));
        first = false;
      }
    }
  }
  std::size_t bad = 0;
  for (const auto& r : rows)
    if (r.status == RowStatus::invalid || r.status == RowStatus::failed) ++bad;
  if (bad > 0) {
    out += fmt::format("\n{} measurement(s) invalid or failed:\n", bad);
    for (const auto& r : rows)
      if (r.status == RowStatus::invalid || r.status == RowStatus::failed)
        out += fmt::format("  {} {} at {} GPU(s): {}\n", r.benchmark, params_label(r.params, false), r.gpu_count,
                           r.errors.empty() ? std::string(row_status_name(r.status)) : r.errors.front());
  }
  return out;
}

}  // namespace gpuscale
