#include "analysis/result_set.h"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "core/error.h"
#include "results/result_io.h"
#include "results/result_schema.h"
#include "results/result_stream.h"

namespace gpuscale {
namespace {

// Row metrics analysis computes with: when present they must be non-negative numbers (the schema
// allows any object there; a negative time or size would turn into a nonsense fit). algbw and busbw
// may be null: a collective at one rank moves nothing between ranks.
constexpr const char* kNumericMetrics[] = {"time_us", "size_bytes", "algbw", "busbw", "bus_factor",
                                           "step_time_us", "exposed_comm_us", "compute_time_us", "gradient_bytes"};

void check_metrics(const std::string& label, const nlohmann::json& metrics, const std::string& where) {
  for (const char* key : kNumericMetrics) {
    if (!metrics.contains(key)) continue;
    const auto& v = metrics.at(key);
    // A collective at one rank has no bandwidth: null there (harness/benchmarks/collectives.cpp).
    if (v.is_null() && (std::string_view(key) == "algbw" || std::string_view(key) == "busbw")) continue;
    if (!v.is_number() || v.get<double>() < 0)
      throw Error(fmt::format("{}: {}/metrics/{} must be a non-negative number, not {}", label, where, key,
                              v.dump().substr(0, 40)));
  }
}

// The checks analysis adds to a converted row: its metrics, and its rank list agreeing with itself
// (each rank once). Returns the row's highest rank (or
// -1), which finish() checks against the world. Throws naming the file and the row.
int check_row(const std::string& label, const ResultRow& row, std::size_t i) {
  const std::string where = fmt::format("/results/{}", i);
  check_metrics(label, row.metrics, where);
  for (const auto& r : row.ranks) check_metrics(label, r.metrics, fmt::format("{}/ranks (rank {})", where, r.rank));
  std::vector<int> ranks;
  for (const auto& r : row.ranks) ranks.push_back(r.rank);
  std::sort(ranks.begin(), ranks.end());
  if (auto twice = std::adjacent_find(ranks.begin(), ranks.end()); twice != ranks.end())
    throw Error(fmt::format("{}: {}: rank {} is listed twice", label, where, *twice));
  return ranks.empty() ? -1 : ranks.back();
}

// Every row inside the file's world: gpu_count and ranks no larger than mpi.world_size allows.
void check_world(const std::string& label, const nlohmann::json& header, const std::vector<ResultRow>& rows,
                 const std::vector<int>& top_rank) {
  const int world = header.at("mpi").at("world_size").get<int>();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].gpu_count > world)
      throw Error(fmt::format("{}: /results/{}: gpu_count {} in a world of {} ranks", label, i, rows[i].gpu_count, world));
    if (top_rank[i] >= world)
      throw Error(fmt::format("{}: /results/{}: rank {} in a world of {} ranks", label, i, top_rank[i], world));
  }
}

// The header's facts every reader uses; `header` comes without its rows.
LoadedResult finish(const std::string& label, nlohmann::json header, std::vector<ResultRow> rows,
                    const std::vector<int>& top_rank) {
  check_world(label, header, rows, top_rank);
  LoadedResult out;
  out.path = label;
  out.version = header.at("schema_version").get<int>();
  out.rows = std::move(rows);
  out.cluster = header.at("cluster").at("name").get<std::string>();
  for (const auto& r : header.at("ranks")) {
    const auto name = r.at("device").at("name").get<std::string>();
    if (std::find(out.device_models.begin(), out.device_models.end(), name) == out.device_models.end())
      out.device_models.push_back(name);
  }
  header["results"] = nlohmann::json::array();
  out.doc = std::move(header);
  return out;
}

}  // namespace

LoadedResult result_from_json(const std::string& label, nlohmann::json doc) {
  if (auto problems = validate_result_json(doc); !problems.empty())
    throw Error(fmt::format("{}: does not match the result schema: {}", label, problems));
  std::vector<ResultRow> rows;
  std::vector<int> top_rank;
  auto& results = doc.at("results");
  rows.reserve(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    // The document schema leaves rows to the row schema (results/result_schema.h), as the streamed
    // readers apply it: integers beyond their range are refused here, never wrapped by the conversion.
    const int version = doc.at("schema_version").get<int>();
    if (auto problems = validate_result_row(results[i], version, i); !problems.empty())
      throw Error(fmt::format("{}: does not match the result schema: {}", label, problems));
    try {
      rows.push_back(results[i].get<ResultRow>());
    } catch (const nlohmann::json::exception& e) {
      throw Error(fmt::format("{}: /results/{}: {}", label, i, e.what()));
    } catch (const Error& e) {
      throw Error(fmt::format("{}: /results/{}/{}", label, i, e.what()));
    }
    top_rank.push_back(check_row(label, rows.back(), i));
    results[i] = nullptr;  // converted: its JSON is not needed any more
  }
  return finish(label, std::move(doc), std::move(rows), top_rank);
}

LoadedResult load_result(const std::string& path, RowDetail detail, const std::function<void(ResultRow&)>& whole_row) {
  std::vector<ResultRow> rows;
  std::vector<int> top_rank;
  auto read = stream_result_file(path, [&](ResultRow&& row, std::size_t i) {
    top_rank.push_back(check_row(path, row, i));
    if (whole_row) whole_row(row);
    if (detail == RowDetail::rows_only) {
      if (!row.spread) row.spread = spread_of_ranks(row.ranks);  // the noise band, before the ranks go
      row.ranks = {};
    }
    rows.push_back(std::move(row));
  });
  return finish(path, std::move(read.header), std::move(rows), top_rank);
}

LoadedResult load_result_text(const std::string& label, const std::string& text) {
  std::vector<ResultRow> rows;
  std::vector<int> top_rank;
  auto read = stream_result_text(text, label, [&](ResultRow&& row, std::size_t i) {
    top_rank.push_back(check_row(label, row, i));
    rows.push_back(std::move(row));
  });
  return finish(label, std::move(read.header), std::move(rows), top_rank);
}

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
