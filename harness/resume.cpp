#include "harness/resume.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "harness/plan.h"

namespace gpuscale {
namespace {

using nlohmann::json;

// A recorded value that is not what the option holds.
struct BadValue {
  std::string expected;
};

template <typename T>
json opt_json(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

std::optional<std::uint64_t> positive_u64_or_null(const json& j) {
  if (j.is_null()) return std::nullopt;
  if (!j.is_number_unsigned() || j.get<std::uint64_t>() == 0) throw BadValue{"a positive integer or null"};
  return j.get<std::uint64_t>();
}

std::optional<int> int_or_null(const json& j, int min) {
  if (j.is_null()) return std::nullopt;
  if (!j.is_number_integer() || j.get<long long>() < min || j.get<long long>() > INT_MAX)
    throw BadValue{fmt::format("an integer from {} to {} or null", min, INT_MAX)};
  return static_cast<int>(j.get<long long>());
}

std::vector<std::string> strings(const json& j) {
  if (!j.is_array()) throw BadValue{"an array of strings"};
  std::vector<std::string> out;
  for (const auto& e : j) {
    if (!e.is_string()) throw BadValue{"an array of strings"};
    out.push_back(e.get<std::string>());
  }
  return out;
}

// "MxNxK" or "MxNxK:TN" when the layout was given (without one, each dtype's default layout applies).
std::string shape_text(const GemmShape& s) {
  return fmt::format("{}x{}x{}{}", s.m, s.n, s.k, s.layout_given ? ":" + gemm_layout(s) : std::string());
}

struct OptionField {
  const char* key;   // in plan.options
  const char* flag;  // on the command line
  bool shapes;       // shapes the points or their measurement: adopted and compared when resuming
  json (*get)(const RunOptions&);
  void (*set)(RunOptions&, const json&);  // from a recorded value; throws BadValue
};

void no_set(RunOptions&, const json&) {}

// One entry per recorded option: plan_options_json, the given-flags table and adoption all read it.
const std::vector<OptionField>& option_table() {
  static const std::vector<OptionField> table = {
      {"quick", "--quick", true, [](const RunOptions& o) { return json(o.quick); },
       [](RunOptions& o, const json& j) {
         if (!j.is_boolean()) throw BadValue{"true or false"};
         o.quick = j.get<bool>();
       }},
      {"benchmarks", "--benchmarks", true, [](const RunOptions& o) { return json(o.benchmarks); },
       [](RunOptions& o, const json& j) { o.benchmarks = strings(j); }},
      {"dtypes", "--dtypes", true,
       [](const RunOptions& o) {
         json a = json::array();
         for (DType t : o.dtypes) a.push_back(dtype_name(t));
         return a;
       },
       [](RunOptions& o, const json& j) {
         o.dtypes.clear();
         for (const auto& s : strings(j)) {
           auto t = parse_dtype(s);
           if (!t) throw BadValue{"dtype names"};
           o.dtypes.push_back(*t);
         }
       }},
      {"min_bytes", "--minbytes", true, [](const RunOptions& o) { return opt_json(o.min_bytes); },
       [](RunOptions& o, const json& j) { o.min_bytes = positive_u64_or_null(j); }},
      {"max_bytes", "--maxbytes", true, [](const RunOptions& o) { return opt_json(o.max_bytes); },
       [](RunOptions& o, const json& j) { o.max_bytes = positive_u64_or_null(j); }},
      {"step_factor", "--stepfactor", true, [](const RunOptions& o) { return opt_json(o.step_factor); },
       [](RunOptions& o, const json& j) { o.step_factor = positive_u64_or_null(j); }},
      {"step_bytes", "--stepbytes", true, [](const RunOptions& o) { return opt_json(o.step_bytes); },
       [](RunOptions& o, const json& j) { o.step_bytes = positive_u64_or_null(j); }},
      {"iters", "--iters", true, [](const RunOptions& o) { return opt_json(o.iters); },
       [](RunOptions& o, const json& j) { o.iters = int_or_null(j, 1); }},
      {"warmup", "--warmup", true, [](const RunOptions& o) { return opt_json(o.warmup); },
       [](RunOptions& o, const json& j) { o.warmup = int_or_null(j, 0); }},
      {"reps", "--reps", true, [](const RunOptions& o) { return opt_json(o.reps); },
       [](RunOptions& o, const json& j) { o.reps = int_or_null(j, 1); }},
      {"ops", "--ops", true,
       [](const RunOptions& o) {
         json a = json::array();
         for (RedOp op : o.ops) a.push_back(redop_name(op));
         return a;
       },
       [](RunOptions& o, const json& j) {
         o.ops.clear();
         for (const auto& s : strings(j)) {
           auto op = parse_redop(s);
           if (!op) throw BadValue{"reduction op names"};
           o.ops.push_back(*op);
         }
       }},
      {"placements", "--placement", true,
       [](const RunOptions& o) {
         json a = json::array();
         for (bool in : o.in_place) a.push_back(in ? "in-place" : "out-of-place");
         return a;
       },
       [](RunOptions& o, const json& j) {
         o.in_place.clear();
         for (const auto& s : strings(j)) {
           if (s != "in-place" && s != "out-of-place") throw BadValue{"in-place or out-of-place"};
           o.in_place.push_back(s == "in-place");
         }
       }},
      {"array_bytes", "--array-size", true, [](const RunOptions& o) { return opt_json(o.array_bytes); },
       [](RunOptions& o, const json& j) { o.array_bytes = positive_u64_or_null(j); }},
      {"gemm_shapes", "--gemm-shapes", true,
       [](const RunOptions& o) {
         json a = json::array();
         for (const auto& s : o.gemm_shapes) a.push_back(shape_text(s));
         return a;
       },
       [](RunOptions& o, const json& j) {
         o.gemm_shapes.clear();
         for (const auto& s : strings(j)) {
           try {
             o.gemm_shapes.push_back(parse_gemm_shape(s));
           } catch (const Error&) {
             throw BadValue{"GEMM shapes (MxNxK[:TN])"};
           }
         }
       }},
      {"copy_bytes", "--copy-size", true, [](const RunOptions& o) { return opt_json(o.copy_bytes); },
       [](RunOptions& o, const json& j) { o.copy_bytes = positive_u64_or_null(j); }},
      {"threads", "--threads", true, [](const RunOptions& o) { return json(o.backend_options.threads); },
       [](RunOptions& o, const json& j) { o.backend_options.threads = int_or_null(j, 0).value_or(0); }},
      {"time_reduce", "--time-reduce", true, [](const RunOptions& o) { return json(o.time_reduce); },
       [](RunOptions& o, const json& j) {
         const std::string s = j.is_string() ? j.get<std::string>() : "";
         if (s != "avg" && s != "min" && s != "max" && s != "rank0") throw BadValue{"avg, min, max or rank0"};
         o.time_reduce = s;
       }},
      {"transports", "--transports", true, [](const RunOptions& o) { return json(o.transports); },
       [](RunOptions& o, const json& j) {
         o.transports = strings(j);
         for (const auto& t : o.transports)
           if (t != "nccl" && t != "mpi") throw BadValue{"nccl and/or mpi"};
       }},
      {"dp_width", "--dp-width", true, [](const RunOptions& o) { return opt_json(o.dp_width); },
       [](RunOptions& o, const json& j) { o.dp_width = positive_u64_or_null(j); }},
      {"dp_depth", "--dp-depth", true, [](const RunOptions& o) { return opt_json(o.dp_depth); },
       [](RunOptions& o, const json& j) { o.dp_depth = int_or_null(j, 1); }},
      {"dp_batch", "--dp-batch", true, [](const RunOptions& o) { return opt_json(o.dp_batch); },
       [](RunOptions& o, const json& j) { o.dp_batch = positive_u64_or_null(j); }},
      {"dp_bucket", "--dp-bucket", true, [](const RunOptions& o) { return opt_json(o.dp_bucket); },
       [](RunOptions& o, const json& j) { o.dp_bucket = positive_u64_or_null(j); }},
      // Labels only: a resumed run may set them anew.
      {"peaks_file", "--peaks", false,
       [](const RunOptions& o) { return o.backend_options.peaks_file.empty() ? json(nullptr) : json(o.backend_options.peaks_file); }, no_set},
      {"link_peak", "--link-peak", false, [](const RunOptions& o) { return opt_json(o.backend_options.link_peak); }, no_set},
      {"net_peak", "--net-peak", false, [](const RunOptions& o) { return opt_json(o.backend_options.net_peak); }, no_set},
      {"watchdog_s", "--watchdog", false, [](const RunOptions& o) { return opt_json(o.watchdog_s); }, no_set},
      {"timeout_s", "--timeout", false, [](const RunOptions& o) { return json(o.backend_options.timeout_s); }, no_set},
      {"telemetry", "--no-telemetry", false,
       [](const RunOptions& o) {
         return json{{"enabled", o.telemetry.enabled}, {"interval_us", o.telemetry.interval.count()}};
       },
       no_set},
  };
  return table;
}

std::string shown(const json& j) { return terminal_quote(j.dump(), 80); }

std::string point_key(const json& benchmark, const json& params) { return benchmark.dump() + "|" + params.dump(); }

// Ranks per node in order of first appearance: {4, 4} for 8 ranks on 2 nodes.
std::vector<int> ranks_per_host(const std::vector<std::string>& hosts) {
  std::vector<std::string> order;
  std::map<std::string, int> count;
  for (const auto& h : hosts) {
    if (!count.count(h)) order.push_back(h);
    ++count[h];
  }
  std::vector<int> out;
  for (const auto& h : order) out.push_back(count[h]);
  return out;
}

std::string shape_text(const std::vector<int>& per_host) {
  std::string out;
  for (std::size_t i = 0; i < per_host.size(); ++i) out += (i ? "+" : "") + std::to_string(per_host[i]);
  return out;
}

}  // namespace

json plan_options_json(const RunOptions& o) {
  json out = json::object();
  for (const auto& f : option_table()) out[f.key] = f.get(o);
  return out;
}

std::vector<std::pair<std::string, std::string>> recorded_option_flags() {
  std::vector<std::pair<std::string, std::string>> out = {{"backend", "--backend"}, {"seed", "--seed"}};
  for (const auto& f : option_table()) out.emplace_back(f.key, f.flag);
  return out;
}

RunOptions adopt_recorded_options(const json& doc, RunOptions o, const std::string& file) {
  const std::string name = terminal_safe(file);
  const auto& recorded = doc.at("plan").at("options");
  const auto backend = doc.at("backend").get<std::string>();
  if (!o.given.count("backend")) o.backend = backend;
  else if (o.backend != backend)
    throw Error(fmt::format("--resume {}: the file was measured with the {} backend, not --backend {}", name, backend,
                            o.backend));
  const auto seed = doc.at("plan").at("seed").get<std::uint64_t>();
  if (o.seed && *o.seed != seed)
    throw Error(fmt::format("--resume {}: --seed {} differs from the file's seed {} (resumed points reuse its inputs)",
                            name, *o.seed, seed));
  o.seed = seed;
  for (const auto& f : option_table()) {
    if (!f.shapes) continue;
    const json mine = f.get(o);
    if (!recorded.contains(f.key))
      throw Error(fmt::format("--resume {}: plan.options lacks \"{}\" (written by an older gpuscale?): it cannot be "
                              "resumed",
                              name, f.key));
    const json& theirs = recorded.at(f.key);
    if (o.given.count(f.key)) {
      if (mine != theirs)
        throw Error(fmt::format("--resume {}: {} is {} on this command line but {} in the file; resume with the "
                                "file's options (or leave {} out)",
                                name, f.flag, shown(mine), shown(theirs), f.flag));
      continue;
    }
    try {
      f.set(o, theirs);
    } catch (const BadValue& bad) {
      throw Error(fmt::format("--resume {}: plan.options.{} is {}, expected {}", name, f.key, shown(theirs), bad.expected));
    }
  }
  return o;
}

std::size_t ResumePlan::remaining() const { return static_cast<std::size_t>(std::count(done.begin(), done.end(), false)); }

json point_list(const json& plan) {
  json out = json::array();
  for (const auto& p : plan.at("points")) out.push_back({{"benchmark", p.at("benchmark")}, {"params", p.at("params")}});
  return out;
}

ResumePlan plan_resume(const json& doc, const LaunchShape& launch, const std::string& file) {
  const std::string name = terminal_safe(file);
  auto refuse = [&](const std::string& why) { return Error(fmt::format("--resume {}: {}", name, why)); };
  if (doc.contains("merged_from") || doc.at("cluster").value("source", std::string()) == "merge")
    throw refuse("a merged result set (gpuscale merge) cannot be resumed: resume the run it came from");
  const json& plan = doc.at("plan");
  const json* list = plan.contains("point_list") ? &plan.at("point_list") : nullptr;
  if (!list || !list->is_array() || list->size() != plan.at("points").get<std::size_t>())
    throw refuse("the file does not list its planned points (plan.point_list; written by an older gpuscale?)");
  for (const auto& p : *list)
    if (!p.is_object() || !p.contains("benchmark") || !p.at("benchmark").is_string() || !p.contains("params") ||
        !p.at("params").is_object())
      throw refuse("plan.point_list holds an entry that is not {benchmark, params}");

  // The launch: backend, ranks, nodes and ranks per node, device models.
  if (doc.at("backend") != launch.backend)
    throw refuse(fmt::format("the file was measured with the {} backend, this run opened {}",
                             terminal_quote(doc.at("backend").get<std::string>()), launch.backend));
  const auto world = doc.at("mpi").at("world_size").get<std::size_t>();
  if (world != launch.hosts.size())
    throw refuse(fmt::format("the file was measured by {} ranks, this launch has {}: resume with the same number", world,
                             launch.hosts.size()));
  const json& ranks = doc.at("ranks");
  if (ranks.size() != world) throw refuse(fmt::format("the file lists {} ranks for a world of {}", ranks.size(), world));
  std::vector<std::string> hosts(world), devices(world);
  for (const auto& r : ranks) {
    const auto i = r.at("rank").get<std::size_t>();
    if (i >= world || !hosts[i].empty()) throw refuse("the file's ranks are not 0 .. world size - 1, once each");
    hosts[i] = r.at("host").get<std::string>();
    devices[i] = r.at("device").at("name").get<std::string>();
    if (hosts[i].empty()) hosts[i] = "?";
  }
  const auto theirs = ranks_per_host(hosts), mine = ranks_per_host(launch.hosts);
  if (theirs != mine)
    throw refuse(fmt::format("the file's ranks ran {} per node ({} node(s)), this launch's {} ({} node(s)): GPU counts "
                             "would span different nodes",
                             shape_text(theirs), theirs.size(), shape_text(mine), mine.size()));
  for (std::size_t r = 0; r < world && r < launch.devices.size(); ++r)
    if (devices[r] != launch.devices[r])
      throw refuse(fmt::format("rank {} measured a {} in the file but has a {} now", r, terminal_quote(devices[r]),
                               terminal_quote(launch.devices[r])));
  const auto counts = gpu_counts(static_cast<int>(world));
  if (plan.at("gpu_counts").get<std::vector<int>>() != counts)
    throw refuse(fmt::format("plan.gpu_counts is {}, not the GPU counts of {} ranks", shown(plan.at("gpu_counts")), world));

  // Which points are done: a valid row (ok or skipped) at every GPU count.
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < list->size(); ++i)
    if (!index.emplace(point_key((*list)[i].at("benchmark"), (*list)[i].at("params")), i).second)
      throw refuse(fmt::format("plan.point_list holds point {} twice", i));
  std::vector<std::map<int, std::string>> status(list->size());  // per point: gpu_count -> status
  for (const auto& row : doc.at("results")) {
    auto it = index.find(point_key(row.at("benchmark"), row.at("params")));
    if (it == index.end())
      throw refuse(fmt::format("it holds a row ({} {}) outside its own plan", terminal_quote(row.at("benchmark").get<std::string>()),
                               shown(row.at("params"))));
    const int k = row.at("gpu_count").get<int>();
    if (std::find(counts.begin(), counts.end(), k) == counts.end())
      throw refuse(fmt::format("it holds a row at {} GPUs, which is not one of the plan's GPU counts", k));
    if (!status[it->second].emplace(k, row.at("status").get<std::string>()).second)
      throw refuse(fmt::format("it holds two rows of {} {} at {} GPUs", terminal_quote(row.at("benchmark").get<std::string>()),
                               shown(row.at("params")), k));
  }
  ResumePlan out;
  out.done.resize(list->size());
  for (std::size_t i = 0; i < list->size(); ++i)
    out.done[i] = std::all_of(counts.begin(), counts.end(), [&](int k) {
      auto it = status[i].find(k);
      return it != status[i].end() && (it->second == "ok" || it->second == "skipped");
    });
  out.kept_rows = json::array();
  for (const auto& row : doc.at("results"))
    if (out.done[index.at(point_key(row.at("benchmark"), row.at("params")))]) out.kept_rows.push_back(row);
  out.plan = {{"points", *list}, {"seed", plan.at("seed")}};

  // The earlier attempts, then the file's own.
  out.attempts = doc.contains("attempts") && doc.at("attempts").is_array() ? doc.at("attempts") : json::array();
  const auto& slurm = doc.at("slurm");
  json host_names = json::array();
  for (const auto& h : doc.at("hosts")) host_names.push_back(h.at("name"));
  out.attempts.push_back({{"attempt", out.attempts.size()},
                          {"created_utc", doc.at("created_utc")},
                          {"finished_utc", doc.at("finished_utc")},
                          {"command_line", doc.at("command_line")},
                          {"hosts", host_names},
                          {"job_id", slurm.is_object() ? slurm.value("job_id", json(nullptr)) : json(nullptr)},
                          {"tool_version", doc.at("tool").at("version")},
                          {"summary", doc.at("summary")}});
  out.attempt = static_cast<int>(out.attempts.size());
  return out;
}

void order_rows_by_plan(json& results, const json& list) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < list.size(); ++i) index.emplace(point_key(list[i].at("benchmark"), list[i].at("params")), i);
  auto rank = [&](const json& row) {
    auto it = index.find(point_key(row.at("benchmark"), row.at("params")));
    return std::make_pair(it == index.end() ? list.size() : it->second, row.at("gpu_count").get<int>());
  };
  std::vector<json> rows(results.begin(), results.end());
  std::stable_sort(rows.begin(), rows.end(), [&](const json& a, const json& b) { return rank(a) < rank(b); });
  results = json(rows);
}

}  // namespace gpuscale
