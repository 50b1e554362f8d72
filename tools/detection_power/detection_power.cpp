#include "tools/detection_power/detection_power.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "analysis/fleet_outliers.h"
#include "core/error.h"
#include "harness/rows/row_groups.h"

namespace gpuscale::detection {
namespace {

bool fraction(double x) { return x > 0 && x < 1; }  // false for NaN

std::string gib(std::uint64_t bytes) { return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1 << 30)); }

// The nodes whose rail matrix stays within the limit.
int most_nodes() {
  int n = 3;
  while (largest_matrix_bytes({(n + 1) * 3, 3}) <= kMemoryLimit) ++n;
  return n;
}

// A matrix record's identity: a member by its host (and, for a GPU, its local rank), a pair by both.
std::string matrix_id(const Outlier& o, int per_node, std::optional<int> rail) {
  auto local = [&](std::size_t i) { return i < o.ranks.size() ? o.ranks[i] % per_node : -1; };
  if (o.kind == OutlierKind::pair) {
    if (rail) return fmt::format("{}+{}:rail{}", o.hosts.at(0), o.hosts.at(1), *rail);
    return link_id(o.hosts.at(0), local(0), local(1));
  }
  return rail ? rail_id(o.hosts.at(0), *rail) : gpu_id(o.hosts.at(0), local(0));
}

}  // namespace

std::uint64_t largest_matrix_bytes(const FleetShape& shape) {
  const auto n = static_cast<std::uint64_t>(std::max(shape.nodes(), shape.gpus_per_node));
  return n * n * 3 * sizeof(double) * 2;  // the pass's cells and the PairMatrix made of them
}

std::uint64_t gpu_bytes(const FleetShape& shape, const NoiseModel& noise) {
  // Strings (hosts, run ids, times, params, units) live beside the structures: 256 bytes a point and
  // 512 a row are more than this tool makes.
  const std::uint64_t per_point = sizeof(history::RankPoint) + sizeof(history::SeriesPoint) + 256;
  const std::uint64_t per_row = sizeof(GroupRow) + 2 * sizeof(RankValue) + sizeof(RowGroup) + 512;
  return static_cast<std::uint64_t>(shape.gpus) *
         (static_cast<std::uint64_t>(std::max(noise.runs, 0)) * per_point + 3 * per_row);  // gemm, stream, storage
}

void check_config(const PowerConfig& c) {
  const auto& s = c.shape;
  const auto& n = c.noise;
  if (s.gpus_per_node < 3)
    throw Error(fmt::format("--gpus-per-node {}: a node's GPU-pair matrix needs at least 3 GPUs (3 pairs: the outlier "
                            "rule's smallest population)", s.gpus_per_node));
  if (s.gpus < 1 || s.gpus % s.gpus_per_node != 0)
    throw Error(fmt::format("--gpus {}: not a positive multiple of --gpus-per-node {}", s.gpus, s.gpus_per_node));
  if (s.nodes() < 3)
    throw Error(fmt::format("--gpus {}: {} node(s) of {} GPUs; the rail matrices need at least 3 nodes (3 pairs: the "
                            "outlier rule's smallest population)", s.gpus, s.nodes(), s.gpus_per_node));
  if (largest_matrix_bytes(s) > kMemoryLimit)
    throw Error(fmt::format("--gpus {}: the largest matrix ({} x {} pairs, 3 doubles a cell, twice) needs {}, beyond "
                            "the limit of {} (at most {} nodes)", s.gpus, std::max(s.nodes(), s.gpus_per_node),
                            std::max(s.nodes(), s.gpus_per_node), gib(largest_matrix_bytes(s)), gib(kMemoryLimit),
                            most_nodes()));
  if (c.trials < 1 || c.trials > kMaxTrials)
    throw Error(fmt::format("--trials {}: between 1 and {} (a trial is counted and dropped, so the bound is time, "
                            "not memory)", c.trials, kMaxTrials));
  if (!(c.outlier.fraction == 0 || fraction(c.outlier.fraction)))
    throw Error(fmt::format("--outlier {}: a fraction in (0, 1), or 0 for none", c.outlier.fraction));
  if (!(c.outlier.min_effect == 0 || fraction(c.outlier.min_effect)))
    throw Error(fmt::format("--min-effect {}: a fraction in [0, 1)", c.outlier.min_effect));
  if (!fraction(c.outlier.false_alarm)) throw Error(fmt::format("--false-alarm {}: a probability in (0, 1)", c.outlier.false_alarm));
  if (!fraction(c.regression.threshold))
    throw Error(fmt::format("--threshold {}: a fraction in (0, 1)", c.regression.threshold));
  if (c.regression.baseline_runs < 1) throw Error("--baseline-runs: at least 1");
  for (const auto& [name, v] :
       {std::pair{"--gemm-noise", n.gemm.spread}, {"--gemm-noise", n.gemm.rep}, {"--hbm-noise", n.hbm.spread},
        {"--hbm-noise", n.hbm.rep}, {"--nic-noise", n.nic.spread}, {"--nic-noise", n.nic.rep},
        {"--nvlink-noise", n.nvlink.spread}, {"--nvlink-noise", n.nvlink.rep}, {"--run-noise", n.run_noise},
        {"--storage-noise", n.storage_rep_noise}, {"--storage-spread", n.storage_spread}})
    if (!(v >= 0 && v <= 0.5)) throw Error(fmt::format("{} {}: a relative standard deviation in [0, 0.5]", name, v));
  if (!(n.flaky_p > 0 && n.flaky_p <= 1)) throw Error(fmt::format("--flaky-p {}: a probability in (0, 1]", n.flaky_p));
  if (n.runs < 2 || n.runs > 1000) throw Error(fmt::format("--runs {}: between 2 and 1000", n.runs));
  if (n.step_run < 2 || n.step_run > n.runs)
    throw Error(fmt::format("--step-run {}: between 2 and --runs {} (the first slow run, 1-based)", n.step_run, n.runs));
  if (gpu_bytes(s, n) > kMemoryLimit)
    throw Error(fmt::format("--gpus {} --runs {}: the GPUs' rows and history points need {}, beyond the limit of {}",
                            s.gpus, n.runs, gib(gpu_bytes(s, n)), gib(kMemoryLimit)));
  if (c.sizes.empty()) throw Error("--sizes: at least one fault size");
  for (double x : c.sizes)
    if (!fraction(x)) throw Error(fmt::format("--sizes: {} is not a slowdown in (0, 1)", x));
  if (c.faults.empty()) throw Error("--faults: at least one fault kind");
  for (auto kind : c.faults)
    if (fault_kind_info(kind).judged_by == DetectionRule::none)
      throw Error(fmt::format("--faults: '{}' is not a fault kind detection power plants ({})", fault_kind_name(kind),
                              judged_kind_names()));
}

std::uint64_t trial_seed(std::uint64_t seed, std::uint64_t trial) { return mix(seed, trial); }

PowerConfig fleet_config(PowerConfig config) {
  config.outlier.judged = std::max(config.outlier.judged, fleet_judged(config.shape));
  return config;
}

std::size_t fleet_judged(const FleetShape& shape) {
  const auto gpus = static_cast<std::size_t>(shape.gpus), nodes = static_cast<std::size_t>(shape.nodes()),
             per = static_cast<std::size_t>(shape.gpus_per_node);
  const std::size_t rail = nodes * (nodes - 1) / 2 + nodes, node_pairs = per * (per - 1) / 2 + per;
  return 2 * gpus + nodes + per * rail + nodes * node_pairs;
}

std::string_view judge_name(Judge judge) {
  switch (judge) {
    case Judge::fleet: return "fleet";
    case Judge::history: return "history";
    case Judge::history_since: return "history --since";
  }
  return "?";
}

std::vector<FaultKind> judged_kinds() {
  std::vector<FaultKind> out;
  for (const auto& k : fault_kinds())
    if (k.judged_by != DetectionRule::none) out.push_back(k.kind);
  return out;
}

std::string judged_kind_names(std::string_view sep) {
  std::vector<std::string_view> names;
  for (auto k : judged_kinds()) names.push_back(fault_kind_name(k));
  return fmt::format("{}", fmt::join(names, sep));
}

std::vector<FaultKind> judged_kinds_named(const std::vector<std::string>& names) {
  std::vector<FaultKind> out;
  for (const auto& name : names) {
    const auto kind = fault_kind_named(name);
    if (!kind || fault_kind_info(*kind).judged_by == DetectionRule::none)
      throw Error(fmt::format("--faults: '{}' is not a fault kind detection power plants ({})", name, judged_kind_names()));
    out.push_back(*kind);
  }
  return out;
}

std::vector<Judge> judges_of(FaultKind kind) {
  switch (fault_kind_info(kind).judged_by) {
    case DetectionRule::fleet: return {Judge::fleet};
    case DetectionRule::history: return {Judge::history, Judge::history_since};
    case DetectionRule::none: break;
  }
  return {};
}

Trial::Trial(const PowerConfig& config, std::uint64_t trial_seed)
    : config_(fleet_config(config)), seed_(trial_seed), places_(draw_places(config.shape, trial_seed)),
      gemm_(group_rows(config.shape, config.noise, trial_seed, "gemm")),
      stream_(group_rows(config.shape, config.noise, trial_seed, "stream")),
      storage_(node_rows(config.shape, config.noise, trial_seed)),
      series_(gpu_series(config.shape, config.noise, trial_seed)) {
  clean_.push_back({"gemm", fleet_named(gemm_, &gemm_power_)});
  clean_.push_back({"stream", fleet_named(stream_, &stream_power_)});
  clean_.push_back({"storage", fleet_named(storage_, &storage_power_)});
  CleanJudgement rails{"rails", {}}, pairs{"gpu pairs", {}};
  for (int r = 0; r < config.shape.gpus_per_node; ++r) {
    rails_.push_back(rail_named(r, std::nullopt, 0, &rail_floors_.emplace_back()));
    rails.named.insert(rails.named.end(), rails_.back().begin(), rails_.back().end());
  }
  for (int n = 0; n < config.shape.nodes(); ++n) {
    pairs_.push_back(pairs_named(n, std::nullopt, 0, &pair_floors_.emplace_back()));
    pairs.named.insert(pairs.named.end(), pairs_.back().begin(), pairs_.back().end());
  }
  clean_.push_back(std::move(rails));
  clean_.push_back(std::move(pairs));
  clean_.push_back({"history", history_named(Judge::history, "", nullptr)});
  clean_.push_back({"history --since", history_named(Judge::history_since, "", nullptr)});
}

std::vector<std::string> Trial::fleet_named(const GroupRows& rows, std::optional<double>* power) const {
  std::vector<std::string> out;
  const auto fleet = fleet_outliers(rows.rows, nlohmann::json::array(), config_.outlier);
  if (power && !fleet["power"].empty()) *power = fleet["power"][0]["detectable"].get<double>();
  for (const auto& o : fleet["outliers"]) {
    const auto& hosts = o["hosts"];
    const auto& ranks = o["ranks"];
    if (hosts.size() == 1 && ranks.size() == 1)
      out.push_back(gpu_id(hosts[0].get<std::string>(), ranks[0].get<int>() % config_.shape.gpus_per_node));
    else if (hosts.size() == 1 && static_cast<int>(ranks.size()) == config_.shape.gpus_per_node)
      out.push_back(hosts[0].get<std::string>());  // a node's group (storage): the node
    else
      out.push_back(fmt::format("{} {} {}", o["kind"].get<std::string>(), hosts.dump(), ranks.dump()));
  }
  return out;
}

std::vector<std::string> Trial::rail_named(int rail, std::optional<int> slow_node, double size, MatrixFloors* floors) const {
  std::vector<std::string> out;
  const auto m = rail_matrix(config_.shape, config_.noise, seed_, rail, config_.outlier, slow_node, size);
  for (const auto& o : matrix_outliers(m, OutlierKind::node, config_.outlier, floors))
    out.push_back(matrix_id(o, config_.shape.gpus_per_node, rail));
  return out;
}

std::vector<std::string> Trial::pairs_named(int node, std::optional<std::pair<int, int>> link, double size,
                                            MatrixFloors* floors) const {
  std::vector<std::string> out;
  const auto m = gpu_pair_matrix(config_.shape, config_.noise, seed_, node, link, size);
  for (const auto& o : matrix_outliers(m, OutlierKind::gpu, config_.outlier, floors))
    out.push_back(matrix_id(o, config_.shape.gpus_per_node, std::nullopt));
  return out;
}

std::vector<std::string> Trial::history_named(Judge judge, const std::string& planted, std::optional<int>* changed) const {
  auto rules = config_.regression;
  rules.since = judge == Judge::history_since ? run_time(config_.noise.step_run) : "";
  std::vector<std::string> out;
  for (const auto& r : history::find_regressions(series_, rules)) {
    out.push_back(r.series->key.gpu);
    if (changed && r.series->key.gpu == planted && r.changed)
      *changed = static_cast<int>(r.changed - r.series->points.data()) + 1;
  }
  return out;
}

std::optional<double> Trial::claimed(FaultKind kind) const {
  auto stated = [](const OutlierFloor& f) { return f.population ? std::optional(f.detectable) : std::nullopt; };
  switch (kind) {
    case FaultKind::slow_gpu: return gemm_power_;
    case FaultKind::slow_mem: return stream_power_;
    case FaultKind::slow_storage: return storage_power_;
    case FaultKind::slow_nic: return stated(rail_floors_[static_cast<std::size_t>(places_.nic_rail)].members);
    case FaultKind::slow_link: return stated(pair_floors_[static_cast<std::size_t>(places_.link_node)].pairs);
    default: return std::nullopt;
  }
}

Judgement Trial::planted(const Fault& fault, Judge judge) {
  const auto& shape = config_.shape;
  const int per = shape.gpus_per_node;
  auto gpu_name = [&](int g) { return gpu_id(host_name(g / per), g % per); };
  Judgement j;
  switch (fault.kind) {
    case FaultKind::slow_gpu:
    case FaultKind::flaky:
    case FaultKind::slow_mem: {
      auto& rows = fault.kind == FaultKind::slow_mem ? stream_ : gemm_;
      const char* benchmark = fault.kind == FaultKind::slow_mem ? "stream" : "gemm";
      const int g = fault.kind == FaultKind::slow_gpu ? places_.gemm_gpu
                    : fault.kind == FaultKind::flaky  ? places_.flaky_gpu
                                                      : places_.stream_gpu;
      const auto clean = rows.reps[static_cast<std::size_t>(g)];
      replace_group(rows, shape, benchmark, g, faulty_reps(clean, fault, config_.noise, seed_));
      j = {gpu_name(g), fleet_named(rows), std::nullopt};
      replace_group(rows, shape, benchmark, g, clean);
      return j;
    }
    case FaultKind::slow_nic:
      j.planted = rail_id(host_name(places_.nic_node), places_.nic_rail);
      for (int r = 0; r < per; ++r) {
        const auto named = r == places_.nic_rail ? rail_named(r, places_.nic_node, fault.size) : rails_[static_cast<std::size_t>(r)];
        j.named.insert(j.named.end(), named.begin(), named.end());
      }
      return j;
    case FaultKind::slow_link:
      j.planted = link_id(host_name(places_.link_node), places_.link_a, places_.link_b);
      for (int n = 0; n < shape.nodes(); ++n) {
        const auto named = n == places_.link_node ? pairs_named(n, std::pair{places_.link_a, places_.link_b}, fault.size)
                                                  : pairs_[static_cast<std::size_t>(n)];
        j.named.insert(j.named.end(), named.begin(), named.end());
      }
      return j;
    case FaultKind::slow_storage: {
      const int node = places_.storage_node;
      const auto first = storage_.reps.begin() + node * per;
      const std::vector<std::vector<double>> clean(first, first + per);
      std::vector<std::vector<double>> slow;
      for (const auto& reps : clean) slow.push_back(faulty_reps(reps, fault, config_.noise, seed_));
      replace_node(storage_, shape, node, slow);
      j = {host_name(node), fleet_named(storage_), std::nullopt};
      replace_node(storage_, shape, node, clean);
      return j;
    }
    case FaultKind::throttle_after: {
      j.planted = gpu_name(places_.throttle_gpu);
      const auto it = std::find_if(series_.begin(), series_.end(), [&](const auto& s) { return s.key.gpu == j.planted; });
      if (it == series_.end()) throw std::logic_error("detection: the throttled GPU has no series");
      const auto clean = it->points;
      for (std::size_t p = static_cast<std::size_t>(config_.noise.step_run - 1); p < it->points.size(); ++p)
        it->points[p].value *= 1 - fault.size;  // each repetition (1 - size): the median too, the relative band as it was
      j.named = history_named(judge, j.planted, &j.changed_run);
      it->points = clean;
      return j;
    }
    default:  // a kind the table does not have detection power judge (judged_kinds) has no place here
      throw std::logic_error(fmt::format("detection: {} is not a kind detection power plants", fault_kind_name(fault.kind)));
  }
}

void tally(PowerRow& row, const Judgement& j, int step_run) {
  ++row.trials;
  const auto right = std::count(j.named.begin(), j.named.end(), j.planted);
  row.named += right > 0 ? 1 : 0;
  row.wrong += static_cast<std::int64_t>(j.named.size()) - right;
  row.step_right += right > 0 && j.changed_run == step_run ? 1 : 0;
}

void tally(CleanRow& row, const std::vector<std::string>& named) {
  ++row.runs;
  row.named += static_cast<std::int64_t>(named.size());
  row.runs_with_any += named.empty() ? 0 : 1;
}

PowerTable measure_power(const PowerConfig& given) {
  check_config(given);
  const PowerConfig config = fleet_config(given);
  PowerTable t;
  t.config = config;
  for (auto kind : config.faults) {
    for (double size : config.sizes)
      for (auto judge : judges_of(kind)) t.rows.push_back({kind, size, judge});
    if (config.claims && kind != FaultKind::flaky && judges_of(kind) == std::vector{Judge::fleet}) {
      PowerRow claim{kind, 0, Judge::fleet};
      claim.claim = true;
      t.rows.push_back(claim);
    }
  }
  for (int i = 0; i < config.trials; ++i) {
    Trial trial(config, trial_seed(config.seed, static_cast<std::uint64_t>(i)));
    std::vector<std::string> fleet;  // the fleet rule's clean judgements together: one clean run of the fleet
    for (std::size_t c = 0; c < trial.clean().size(); ++c) {
      const auto& cj = trial.clean()[c];
      if (t.clean.size() <= c) t.clean.push_back({cj.measurement});
      tally(t.clean[c], cj.named);
      if (cj.measurement.rfind("history", 0) != 0) fleet.insert(fleet.end(), cj.named.begin(), cj.named.end());
    }
    if (t.clean.size() == trial.clean().size()) t.clean.push_back({"fleet (all)"});
    tally(t.clean.back(), fleet);
    for (auto& row : t.rows) {
      if (!row.claim) {
        tally(row, trial.planted({row.fault, row.size}, row.judge), config.noise.step_run);
        continue;
      }
      const auto claimed = trial.claimed(row.fault);
      if (!claimed || *claimed > kUsefulBar || !(*claimed > 0)) {
        ++row.no_bar;
        continue;
      }
      // The mean size planted, kept as a running mean over the planted trials.
      row.size += (*claimed - row.size) / static_cast<double>(row.trials + 1);
      row.claimed_max = std::max(row.claimed_max, *claimed);
      tally(row, trial.planted({row.fault, *claimed}, row.judge), config.noise.step_run);
    }
  }
  return t;
}

}  // namespace gpuscale::detection
