// gpuscale reference: a reference file from one or more known-good runs (reference.h states the rule).
#include <algorithm>
#include <cmath>
#include <optional>
#include <map>

#include <fmt/format.h>

#include "analysis/reference.h"
#include "core/error.h"
#include "core/stats.h"

namespace gpuscale {
namespace {

struct Samples {
  const ResultRow* first = nullptr;  // benchmark, params, gpu_count and unit of the entry
  std::vector<double> values;
  bool usable = true;  // every run that holds the row measured it ok, with a positive value, in one unit
};

}  // namespace

nlohmann::json make_reference(const std::vector<const LoadedResult*>& runs, const ReferenceOptions& opts) {
  if (runs.empty()) throw Error("reference needs at least one result file");
  std::string cluster = opts.cluster;
  if (cluster.empty()) {
    cluster = runs.front()->cluster;
    for (const LoadedResult* r : runs)
      if (r->cluster != cluster)
        throw Error(fmt::format("{} is from cluster '{}', {} from '{}': name the reference's cluster with --cluster",
                                runs.front()->path, cluster, r->path, r->cluster));
  }
  std::vector<std::string> order;  // row keys in order of first appearance
  std::map<std::string, Samples> rows;
  for (const LoadedResult* run : runs)
    for (const auto& r : run->rows) {
      const auto key = row_key(r);
      auto [it, fresh] = rows.try_emplace(key);
      Samples& s = it->second;
      if (fresh) order.push_back(key), s.first = &r;
      if (r.status != RowStatus::ok || !r.aggregate || !(*r.aggregate > 0) || r.unit != s.first->unit) s.usable = false;
      else s.values.push_back(*r.aggregate);
    }
  nlohmann::json entries = nlohmann::json::array();
  std::size_t left_out = 0;
  for (const auto& key : order) {
    const Samples& s = rows.at(key);
    if (!s.usable || s.values.empty()) {
      ++left_out;
      continue;
    }
    const double value = median_of(s.values);
    const auto [lo, hi] = std::minmax_element(s.values.begin(), s.values.end());
    // Rounded so that check's bound, value x (1 - lower), never lands above a run's value by an ulp.
    double lower = std::min(1.0, std::max(opts.lower, (value - *lo) / value));
    while (lower < 1 && value * (1 - lower) > *lo) lower = std::nextafter(lower, 2.0);
    std::optional<double> upper;
    if (opts.upper) {
      upper = std::max(*opts.upper, (*hi - value) / value);
      while (value * (1 + *upper) < *hi) upper = std::nextafter(*upper, 2.0 * *upper + 1);
    }
    const auto& r = *s.first;
    nlohmann::json e = {{"benchmark", r.benchmark},
                        {"params", r.params},
                        {"gpu_count", r.gpu_count},
                        {"value", value},
                        {"lower", lower},
                        {"upper", upper ? nlohmann::json(*upper) : nlohmann::json(nullptr)},
                        {"unit", r.unit}};
    if (runs.size() > 1)
      e["comment"] = fmt::format("median of {} run(s): min {:.4g}, max {:.4g}", s.values.size(), *lo, *hi);
    entries.push_back(std::move(e));
  }
  const auto& doc = runs.front()->doc;
  nlohmann::json from = {{"file", runs.front()->path},
                         {"cluster", runs.front()->cluster},
                         {"created_utc", doc.value("created_utc", nlohmann::json())},
                         {"tool", doc.value("tool", nlohmann::json())}};
  if (runs.size() > 1) {
    from["files"] = nlohmann::json::array();
    for (const LoadedResult* run : runs) from["files"].push_back(run->path);
    from["rows_left_out"] = left_out;
  }
  return {{"schema", kReferenceSchema},
          {"schema_version", 1},
          {"created_from", std::move(from)},
          {"clusters", nlohmann::json::array({{{"cluster", cluster}, {"entries", std::move(entries)}}})}};
}

nlohmann::json make_reference(const LoadedResult& run, const ReferenceOptions& opts) {
  return make_reference(std::vector<const LoadedResult*>{&run}, opts);
}

}  // namespace gpuscale
