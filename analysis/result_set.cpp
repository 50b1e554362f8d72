#include "analysis/result_set.h"
#include "analysis/row_checks.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "results/result_io.h"
#include "results/result_schema.h"
#include "results/result_stream.h"
#include "results/result_upgrade.h"
#include "results/row_fields.h"

namespace gpuscale {
namespace {

// The metric fields the row-field table marks non-negative (results/row_fields.h), at `place` (the row's
// metrics or a rank's): when present they must be non-negative finite numbers (the schema checks only
// their type; a negative time or size would turn into a nonsense fit), or null where the field allows it
// (a collective at one rank has no bandwidth).
// `where` makes the row's path only for a message: a file of 4,096 ranks x 1,000 rows checks millions.
template <typename Where>
void check_metrics(const std::string& label, const nlohmann::json& metrics, FieldPlace place, const Where& where) {
  if (!metrics.is_object() || metrics.empty()) return;
  for (const auto& f : row_fields()) {
    if (f.place != place || !f.non_negative) continue;
    const auto it = metrics.find(std::string(f.name));
    if (it == metrics.end()) continue;
    const auto& v = *it;
    if (v.is_null() && f.nullable) continue;
    if (!v.is_number() || !(v.get<double>() >= 0) || !std::isfinite(v.get<double>()))
      throw Error(fmt::format("{}: {}/metrics/{} must be a non-negative number, not {}", label, where(), f.name,
                              terminal_quote(v.dump(), 40)));
  }
}

// What the checks against the world (and the rank count) need of a row, kept while a file streams: the
// world (mpi.world_size) may come after the rows.
struct RowReach {
  int gpu_count = 0;
  int top_rank = -1;  // the highest rank the row lists (-1: none)
  bool ok = false;
  std::size_t listed = 0;  // ranks the row lists
};

// A measured figure (a rank's value, the row's aggregate): absent (null) or a non-negative finite number.
template <typename Where>
void check_figure(const std::string& label, const std::optional<double>& v, const Where& where) {
  if (v && !(*v >= 0 && std::isfinite(*v)))
    throw Error(fmt::format("{}: {} must be a non-negative number, not {}", label, where(), *v));
}

// The checks of one converted row on its own: its figures, and its rank list agreeing with itself
// (each rank once). Returns what check_reach needs.
RowReach check_row(const std::string& label, const ResultRow& row, std::size_t i) {
  const std::string name = terminal_safe(label);
  const std::string where = fmt::format("/results/{}", i);
  check_metrics(name, row.metrics, FieldPlace::row_metric, [&] { return where; });
  check_figure(name, row.aggregate, [&] { return where + "/aggregate"; });
  for (const auto& r : row.ranks) {
    check_metrics(name, r.metrics, FieldPlace::rank_metric, [&] { return fmt::format("{}/ranks (rank {})", where, r.rank); });
    check_figure(name, r.value, [&] { return fmt::format("{}/ranks (rank {}) value", where, r.rank); });
  }
  std::vector<int> ranks;
  for (const auto& r : row.ranks) ranks.push_back(r.rank);
  std::sort(ranks.begin(), ranks.end());
  if (auto twice = std::adjacent_find(ranks.begin(), ranks.end()); twice != ranks.end())
    throw Error(fmt::format("{}: {}: rank {} is listed twice", name, where, *twice));
  return {row.gpu_count, ranks.empty() ? -1 : ranks.back(), row.status == RowStatus::ok, ranks.size()};
}

// A row inside the file's world (gpu_count and ranks no larger than mpi.world_size allows), and an ok
// row listing its gpu_count ranks.
void check_reach(const std::string& label, const RowReach& reach, std::size_t i, int world) {
  if (reach.gpu_count > world)
    throw Error(fmt::format("{}: /results/{}: gpu_count {} in a world of {} ranks", terminal_safe(label), i,
                            reach.gpu_count, world));
  if (reach.top_rank >= world)
    throw Error(fmt::format("{}: /results/{}: rank {} in a world of {} ranks", terminal_safe(label), i,
                            reach.top_rank, world));
  // An ok row measured on gpu_count ranks lists every one of them (a tiled count lists more: each group's).
  if (reach.ok && reach.listed < static_cast<std::size_t>(reach.gpu_count))
    throw Error(fmt::format("{}: /results/{}: an ok row at {} GPUs lists {} rank{}", terminal_safe(label), i,
                            reach.gpu_count, reach.listed, reach.listed == 1 ? "" : "s"));
}

int world_of(const nlohmann::json& header) { return header.at("mpi").at("world_size").get<int>(); }

// The header's facts every reader uses; `header` comes without its rows.
LoadedResult finish(const std::string& label, nlohmann::json header, std::vector<ResultRow> rows,
                    const std::vector<RowReach>& reach) {
  for (std::size_t i = 0; i < reach.size(); ++i) check_reach(label, reach[i], i, world_of(header));
  LoadedResult out;
  out.path = label;
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

void check_result_row(const std::string& label, const ResultRow& row, std::size_t index, int world_size) {
  check_reach(label, check_row(label, row, index), index, world_size);
}

LoadedResult result_from_json(const std::string& label, nlohmann::json doc) {
  if (auto problems = validate_result_json(doc); !problems.empty())
    throw Error(fmt::format("{}: does not match the result schema: {}", label, problems));
  std::vector<ResultRow> rows;
  std::vector<RowReach> reach;
  ResultRowUpgrader upgrader;  // either version's rows, as the streamed readers take them
  auto& results = doc.at("results");
  rows.reserve(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    // The document schema leaves rows to the row schema (results/result_schema.h), as the streamed
    // readers apply it: integers beyond their range are refused here, never wrapped by the conversion.
    ResultRow row;
    if (auto problem = upgrader.read(results[i], i, row); !problem.empty())
      throw Error(fmt::format("{}: {}", label, problem));
    rows.push_back(std::move(row));
    reach.push_back(check_row(label, rows.back(), i));
    results[i] = nullptr;  // converted: its JSON is not needed any more
  }
  const int version = doc.at("schema_version").get<int>();  // valid: one of the versions read
  if (auto problem = upgrader.check_file_version(version); !problem.empty()) throw Error(fmt::format("{}: {}", label, problem));
  auto loaded = finish(label, upgrade_result_header(std::move(doc)), std::move(rows), reach);
  loaded.version = version;
  return loaded;
}

LoadedResult load_result(const std::string& path, RowDetail detail, const std::function<void(ResultRow&)>& whole_row) {
  std::vector<ResultRow> rows;
  std::vector<RowReach> reach;
  auto read = stream_result_file(path, [&](ResultRow&& row, std::size_t i) {
    reach.push_back(check_row(path, row, i));
    if (whole_row) whole_row(row);
    if (detail == RowDetail::rows_only) {
      if (!row.spread) row.spread = spread_of_ranks(row.ranks);  // the noise band, before the ranks go
      row.ranks = {};
    }
    rows.push_back(std::move(row));
  });
  auto loaded = finish(path, std::move(read.header), std::move(rows), reach);
  loaded.version = read.version;
  return loaded;
}

LoadedResult load_result_text(const std::string& label, const std::string& text) {
  std::vector<ResultRow> rows;
  std::vector<RowReach> reach;
  auto read = stream_result_text(text, label, [&](ResultRow&& row, std::size_t i) {
    reach.push_back(check_row(label, row, i));
    rows.push_back(std::move(row));
  });
  auto loaded = finish(label, std::move(read.header), std::move(rows), reach);
  loaded.version = read.version;
  return loaded;
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
