#include "analysis/result_set.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "results/result_io.h"

namespace gpuscale {
namespace {

// Row metrics analysis computes with: when present they must be non-negative numbers (the schema
// allows any object there; a negative time or size would turn into a nonsense fit).
constexpr const char* kNumericMetrics[] = {"time_us", "size_bytes", "algbw", "busbw", "bus_factor",
                                           "step_time_us", "exposed_comm_us", "compute_time_us", "gradient_bytes"};

void check_metrics(const std::string& label, const nlohmann::json& metrics, const std::string& where) {
  for (const char* key : kNumericMetrics) {
    if (!metrics.contains(key)) continue;
    const auto& v = metrics.at(key);
    if (!v.is_number() || v.get<double>() < 0)
      throw Error(fmt::format("{}: {}/metrics/{} must be a non-negative number, not {}", label, where, key,
                              v.dump().substr(0, 40)));
  }
}

// Converts a schema-valid document.
LoadedResult convert(const std::string& label, nlohmann::json doc) {
  LoadedResult out;
  out.path = label;
  const auto& results = doc.at("results");
  out.rows.reserve(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string where = fmt::format("/results/{}", i);
    try {
      out.rows.push_back(results[i].get<ResultRow>());
    } catch (const nlohmann::json::exception& e) {
      throw Error(fmt::format("{}: {}: {}", label, where, e.what()));
    }
    check_metrics(label, results[i].at("metrics"), where);
    for (std::size_t r = 0; r < results[i].at("ranks").size(); ++r)
      check_metrics(label, results[i]["ranks"][r].at("metrics"), fmt::format("{}/ranks/{}", where, r));
  }
  out.cluster = doc.at("cluster").at("name").get<std::string>();
  for (const auto& r : doc.at("ranks")) {
    const auto name = r.at("device").at("name").get<std::string>();
    if (std::find(out.device_models.begin(), out.device_models.end(), name) == out.device_models.end())
      out.device_models.push_back(name);
  }
  out.doc = std::move(doc);
  return out;
}

}  // namespace

LoadedResult result_from_json(const std::string& label, nlohmann::json doc) {
  if (auto problems = validate_result_json(doc); !problems.empty())
    throw Error(fmt::format("{}: does not match the result schema: {}", label, problems));
  return convert(label, std::move(doc));
}

LoadedResult load_result(const std::string& path) { return convert(path, read_result_file(path)); }

const nlohmann::json* rank_identity(const nlohmann::json& doc, int rank, const std::string& host) {
  if (!doc.contains("ranks")) return nullptr;
  for (const auto& r : doc["ranks"])
    if (r.value("rank", -1) == rank && r.value("host", std::string()) == host) return &r;
  return nullptr;
}

std::string device_detail(const nlohmann::json* identity, const char* key) {
  if (!identity || !identity->contains("device")) return "-";
  const auto& details = (*identity)["device"].value("details", nlohmann::json::object());
  if (!details.is_object() || !details.contains(key)) return "-";
  const auto& v = details[key];
  if (v.is_string()) return v.get<std::string>().empty() ? "-" : v.get<std::string>();
  return v.is_null() ? "-" : v.dump();
}

}  // namespace gpuscale
