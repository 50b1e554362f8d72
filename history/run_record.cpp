// A verified result file as the history stores it (run_record.h).
#include "history/run_record.h"
#include "results/row_fields.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "analysis/noise.h"
#include "core/error.h"
#include "core/shown_text.h"
#include "history/content_hash.h"

namespace gpuscale::history {
namespace {

// Every string the store keeps is cut by the rule the outputs show strings by (core/shown_text.h,
// clip_text: 400 bytes, the cut marked): a valid file's 50 MiB cluster name would otherwise come back in
// every row a query returns (a 4-rank file's export grew to 6 GB).
std::string kept(std::string_view s) { return clip_text(s); }

// The same for JSON kept as text (software, environment, params, outliers): each key and string cut.
nlohmann::json kept_json(const nlohmann::json& j) {
  if (j.is_string()) return kept(j.get_ref<const std::string&>());
  if (j.is_array()) {
    auto out = nlohmann::json::array();
    for (const auto& e : j) out.push_back(kept_json(e));
    return out;
  }
  if (j.is_object()) {
    auto out = nlohmann::json::object();
    for (const auto& [k, v] : j.items()) out[kept(k)] = kept_json(v);
    return out;
  }
  return j;
}

std::string text_of(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return "";
  return kept(it->get_ref<const std::string&>());
}

}  // namespace

std::string canonical_params(const nlohmann::json& params) { return kept_json(params).dump(); }  // std::map: keys sorted

std::map<std::string, std::string> software_versions(const std::string& software_json) {
  std::map<std::string, std::string> out;
  const auto j = nlohmann::json::parse(software_json, nullptr, false);
  if (!j.is_object()) return out;
  for (const auto& [k, v] : j.items()) out[k] = v.is_string() ? v.get<std::string>() : "";
  return out;
}

RunRecord make_run_record(const LoadedResult& loaded, const std::string& id) {
  const auto& doc = loaded.doc;
  RunRecord r;
  r.id = id;
  r.source = kept(loaded.path);
  r.file_version = loaded.version;
  r.created_utc = text_of(doc, "created_utc");
  r.finished_utc = text_of(doc, "finished_utc");
  r.cluster = kept(loaded.cluster);
  r.backend = text_of(doc, "backend");
  if (doc.contains("tool")) r.tool_version = text_of(doc["tool"], "version");
  if (doc.contains("slurm") && doc["slurm"].is_object()) r.slurm_job_id = text_of(doc["slurm"], "job_id");
  if (doc.contains("hosts"))
    for (const auto& h : doc["hosts"]) r.hosts.push_back(text_of(h, "name"));
  r.software = kept_json(doc.value("software", nlohmann::json::object())).dump();
  r.environment = kept_json(doc.value("environment", nlohmann::json::object())).dump();
  for (std::size_t i = 0; i < loaded.rows.size(); ++i) {
    const ResultRow& row = loaded.rows[i];
    RowRecord rr;
    rr.index = static_cast<int>(i);
    rr.benchmark = kept(row.benchmark);
    rr.scope = kept(row.scope);
    rr.params = canonical_params(row.params);
    rr.gpu_count = row.gpu_count;
    rr.unit = kept(row.unit);
    rr.value = row.aggregate;
    const NoiseBand band = noise_band(row);  // the same band compare judges by
    rr.noise_down = band.down;
    rr.noise_up = band.up;
    rr.reps = static_cast<int>(band.reps);
    rr.status = std::string(row_status_name(row.status));
    rr.fields = history_figures(row);  // the figure itself has its own column (value)
    r.rows.push_back(std::move(rr));
    for (auto& m : matrix_members(row, static_cast<int>(i))) r.members.push_back(std::move(m));
    for (const RankValue& v : row.ranks) {
      RankRecord k{static_cast<int>(i), v.rank, v.device_index, kept(v.host),
                   kept(device_detail(rank_identity(doc, v.rank, v.host), "uuid")), v.value, v.valid, 0, 0, 0};
      // The rank's own band by the readers' one rule (results/result_file.h, spread_of_ranks: the
      // figure noise.h's band is made of), for this rank alone.
      RankValue alone;
      alone.value = v.value;
      alone.stats = v.stats;
      alone.valid = v.valid;
      if (const auto own = spread_of_ranks({alone}); own && own->reps >= 2) {
        k.noise_down = std::max(own->down, 0.0);
        k.noise_up = std::max(own->up, 0.0);
        k.reps = static_cast<int>(own->reps);
      }
      r.ranks.push_back(std::move(k));
    }
  }
  if (doc.contains("analysis") && doc["analysis"].is_object())
    for (const auto& o : doc["analysis"].value("outliers", nlohmann::json::array())) {
      std::string hosts;
      for (const auto& h : o.value("hosts", nlohmann::json::array()))
        if (h.is_string()) hosts += (hosts.empty() ? "" : ",") + kept(h.get_ref<const std::string&>());
      r.outliers.push_back({kept(hosts), kept_json(o).dump()});
    }
  if (doc.contains("health") && doc["health"].is_object())
    for (const auto& g : doc["health"].value("gpus", nlohmann::json::array()))
      r.health.push_back({g.value("rank", 0), text_of(g, "host"), g.contains("gpu") ? kept(g["gpu"].dump()) : "",
                          text_of(g, "verdict"), text_of(g, "line")});
  return r;
}

RunRecord read_run_record(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot read the file", path));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  const std::string text = bytes.str();
  // The bytes hashed are the bytes verified: load from the same text.
  return make_run_record(load_result_text(path, text), sha256_hex(text));
}

}  // namespace gpuscale::history
