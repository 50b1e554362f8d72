#include "planning/capacity_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "text/number_text.h"
#include "core/error.h"
#include "core/term_text.h"
#include "core/units.h"
#include "results/row_fields.h"
#include "training/model_spec.h"

namespace gpuscale {
namespace {

std::string text_of(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Per-unit power of a source: per GPU (scope "gpu") or per node ("node": RAPL, never split per GPU).
struct PowerSource {
  std::string scope;
  double watts = 0;
  std::string what;
  double at(int gpus, int nodes) const { return scope == "node" ? watts * nodes : watts * gpus; }
};

std::optional<PowerSource> row_power(const ResultRow& r) {
  const auto w = number_field(r, fields::avg_power_w);
  if (!w || !(*w > 0)) return std::nullopt;
  const bool node = text_of(r.metrics, "energy_scope") == "node";
  const double units = node ? std::max(r.nodes, 1) : r.gpu_count;
  return PowerSource{node ? "node" : "gpu", *w / units,
                     fmt::format("the train-step row's own average power at {} GPUs ({})", r.gpu_count,
                                 node ? "RAPL, per node" : "per GPU")};
}

// The burn-in's sustained power: the highest of its kinds (a full-load figure, an upper bound for training).
std::optional<PowerSource> burn_power(const nlohmann::json& capacity) {
  std::optional<PowerSource> best;
  if (!capacity.is_array()) return best;
  for (const auto& c : capacity) {
    std::optional<PowerSource> p;
    if (c.value("power_per_gpu_w", nlohmann::json()).is_number())
      p = PowerSource{"gpu", c["power_per_gpu_w"].get<double>(), ""};
    else if (const auto node = c.value("power_per_node_w", nlohmann::json()); node.is_object() && node.value("median", nlohmann::json()).is_number())
      p = PowerSource{"node", node["median"].get<double>(), ""};
    if (!p || !(p->watts > 0)) continue;
    p->what = fmt::format("the burn-in's sustained power ({}, {} {}): a full-load figure, an upper bound for training",
                          text_of(c, "benchmark"), figure_text(p->watts), p->scope == "node" ? "W per node" : "W per GPU");
    if (!best || (p->scope == best->scope && p->watts > best->watts)) best = p;
  }
  return best;
}

struct CkptRow {
  int ranks = 0;
  double gb_s = 0;
  std::string what;
};

// The best checkpoint.write bandwidth at each measured rank count.
std::map<int, CkptRow> checkpoint_writes(const std::vector<ResultRow>& rows) {
  std::map<int, CkptRow> out;
  for (const auto& r : rows) {
    if (r.benchmark != "checkpoint.write" || r.status != RowStatus::ok) continue;
    const auto gb = number_field(r, fields::checkpoint_gb_s);
    if (!gb || !(*gb > 0)) continue;
    auto& best = out[r.gpu_count];
    if (*gb > best.gb_s)
      best = {r.gpu_count, *gb,
              fmt::format("checkpoint.write at {} ranks, {} {}, {} GB/s", r.gpu_count, text_of(r.params, "layout"),
                          text_of(r.params, "io"), figure_text(*gb))};
  }
  return out;
}

const CkptRow* checkpoint_row_for(const std::map<int, CkptRow>& writes, int gpus) {
  if (writes.empty()) return nullptr;
  auto it = writes.upper_bound(gpus);
  return it == writes.begin() ? &writes.begin()->second : &std::prev(it)->second;
}

// The link a phase's collective crosses at a count spanning `nodes` nodes ("" for compute).
std::string phase_link(const std::string& phase, int nodes) {
  if (phase == "compute") return "";
  if (phase == "tp_comm") return "intra-node link";  // a TP group is consecutive ranks on one node
  if (phase == "bubble") return "pipeline bubble";
  if (phase == "wait") return "a slower peer (wait)";
  return nodes > 1 ? "network" : "intra-node link";
}

// The phase that grew most in GPU-us per token over the measured counts: what the model's growth is.
std::string growing_phase(const TrainScaling& s) {
  const auto& first = s.points.front();
  const auto& last = s.points.back();
  auto per_token = [](const TrainScalingPoint& p, const std::string& name) {
    for (const auto& ph : p.phases)
      if (ph.name == name) return ph.us * p.gpu_count / (p.step_us * p.tokens_per_s / 1e6);
    return 0.0;
  };
  std::string best;
  double growth = 0;
  for (const auto& ph : last.phases) {
    if (ph.name == "compute") continue;
    const double g = per_token(last, ph.name) - per_token(first, ph.name);
    if (g > growth) growth = g, best = ph.name;
  }
  return best;
}

// `phases`: whether the series' rows carry phase times (rows stored in a history before it kept them carry none).
void name_bottleneck(PlanCount& c, const TrainScalingPoint* measured, bool phases, const std::string& grower,
                     const PlanWorkload& w) {
  if (c.ckpt_stall_fraction && *c.ckpt_stall_fraction > kCheckpointStallBudget) {
    c.bottleneck = "storage";
    c.bottleneck_why = fmt::format("a checkpoint stalls {:.1f}% of its interval (budget {:.0f}%)", *c.ckpt_stall_fraction * 100,
                                   kCheckpointStallBudget * 100);
    return;
  }
  const double bar = 1 - w.efficiency_bar;
  if (!phases && (measured || c.efficiency < w.efficiency_bar)) {
    c.bottleneck = "unknown";
    c.bottleneck_why = "the rows carry no phase times (stored by a gpuscale older than 2026-12: plan from the result file)";
    return;
  }
  if (measured) {
    const TrainPhaseTime* top = nullptr;
    for (const auto& ph : measured->phases)
      if (ph.name != "compute" && (!top || ph.us > top->us)) top = &ph;
    if (top && measured->step_us > 0 && top->us / measured->step_us >= bar) {
      c.bottleneck = phase_link(top->name, c.nodes);
      c.bottleneck_why = fmt::format("{} is {:.0f}% of the measured step", top->name, top->us / measured->step_us * 100);
      return;
    }
  } else if (c.efficiency < w.efficiency_bar && !grower.empty()) {
    c.bottleneck = phase_link(grower, c.nodes);
    c.bottleneck_why = fmt::format("{} grew most per token over the measured counts; efficiency {:.0f}%", grower, c.efficiency * 100);
    return;
  }
  c.bottleneck = "compute";
  c.bottleneck_why = measured ? fmt::format("no phase but compute takes {:.0f}% of the measured step", bar * 100)
                     : c.efficiency < w.efficiency_bar
                         ? fmt::format("projected efficiency {:.0f}%, and no phase but compute grew per token over the "
                                       "measured counts", c.efficiency * 100)
                         : fmt::format("projected efficiency {:.0f}% holds the {:.0f}% bar", c.efficiency * 100,
                                       w.efficiency_bar * 100);
}

struct PlanInputs {
  const PlanWorkload& w;
  std::optional<PowerSource> power;
  std::map<int, CkptRow> writes;
  double ckpt_bytes = 0;
};

// The counts of one series: the measured ones, then doublings of the largest while the model allows.
void plan_counts(PlanSeries& ps, const std::vector<const ResultRow*>& rows, const PlanInputs& in) {
  const auto& s = ps.scaling;
  const auto& w = in.w;
  const auto& last = s.points.back();
  const ResultRow* last_row = nullptr;
  for (const auto* r : rows)
    if (r->gpu_count == last.gpu_count && r->status == RowStatus::ok) last_row = r;
  const int per_node = last_row ? std::max(1, last.gpu_count / std::max(last_row->nodes, 1)) : last.gpu_count;
  const double tokens_per_step_per_gpu = last.step_us * last.tokens_per_s / 1e6 / last.gpu_count;
  const double strong_tokens_per_step = last.step_us * last.tokens_per_s / 1e6;
  const std::string grower = growing_phase(s);
  const bool phases = !s.points.front().phases.empty();
  const int limit = w.gpus.value_or(std::numeric_limits<int>::max());

  auto finish = [&](PlanCount& c, const TrainScalingPoint* measured) {
    const double train = w.tokens / c.tokens_per_s;
    if (const auto* ck = checkpoint_row_for(in.writes, c.gpus); ck && w.ckpt_every_s) {
      c.ckpt_stall_s = in.ckpt_bytes / (ck->gb_s * 1e9);
      c.ckpt_stall_fraction = *c.ckpt_stall_s / *w.ckpt_every_s;
      c.ckpt_source = ck->what + (c.gpus > ck->ranks ? fmt::format(" (held: storage not measured beyond {} ranks)", ck->ranks)
                                  : c.gpus < ck->ranks ? fmt::format(" (the smallest measured count, {} ranks)", ck->ranks)
                                                       : std::string());
    }
    c.train_s = train + (c.ckpt_stall_s ? std::floor(train / *w.ckpt_every_s) * *c.ckpt_stall_s : 0.0);
    if (in.power) {
      c.power_w = in.power->at(c.gpus, c.nodes);
      c.energy_j = *c.power_w * c.train_s;
    }
    name_bottleneck(c, measured, phases, grower, w);
  };

  for (const auto& p : s.points) {
    if (p.gpu_count > limit) break;
    PlanCount c;
    c.gpus = p.gpu_count, c.measured = true, c.tokens_per_s = p.tokens_per_s, c.step_s = p.step_us / 1e6;
    c.efficiency = p.efficiency;
    c.nodes = 1;
    for (const auto* r : rows)
      if (r->gpu_count == p.gpu_count) c.nodes = std::max(r->nodes, 1);
    finish(c, &p);
    ps.counts.push_back(c);
  }
  if (ps.counts.empty()) {
    ps.limit_why = fmt::format("--gpus {} is fewer than the smallest measured count, {}", limit, s.points.front().gpu_count);
  } else if (last.gpu_count >= limit) {
    ps.limit_why = fmt::format("the planned counts stop at --gpus {}", limit);
  } else if (!s.fitted) {
    ps.limit_why = fmt::format("not planned beyond {} GPUs, the largest measured count: {}", last.gpu_count, s.why);
  } else {
    const int stop = static_cast<int>(std::min<double>(limit, last.gpu_count * kMaxPlanExtrapolation));
    for (int n = last.gpu_count * 2; n <= stop; n *= 2) {
      PlanCount c;
      c.gpus = n;
      c.nodes = (n + per_node - 1) / per_node;
      const double cost = s.a + s.b * std::log2(static_cast<double>(n) / s.base_count);  // GPU-us per token
      c.tokens_per_s = n * 1e6 / cost;
      c.efficiency = s.a / cost;
      const double tokens_per_step = s.scaling == "strong" ? strong_tokens_per_step : tokens_per_step_per_gpu * n;
      c.step_s = tokens_per_step / c.tokens_per_s;
      finish(c, nullptr);
      ps.counts.push_back(c);
    }
    ps.limit_why = stop == limit && limit < last.gpu_count * kMaxPlanExtrapolation
                       ? fmt::format("the planned counts stop at --gpus {}", limit)
                       : fmt::format("not planned beyond {} GPUs, {:.0f}x the largest measured count ({}): measure at more "
                                     "GPUs to plan further",
                                     stop, kMaxPlanExtrapolation, last.gpu_count);
  }
}

void choose(PlanSeries& ps, const PlanWorkload& w) {
  for (const auto& c : ps.counts)
    if (c.efficiency >= w.efficiency_bar) ps.max_useful = c.gpus;
  for (const auto& c : ps.counts)
    if (c.bottleneck != "compute") {
      ps.first_bottleneck = fmt::format("{} at {} GPUs: {}", c.bottleneck, c.gpus, c.bottleneck_why);
      break;
    }
  if (ps.first_bottleneck.empty() && !ps.counts.empty())
    ps.first_bottleneck = fmt::format("compute at every planned count (up to {} GPUs)", ps.counts.back().gpus);
  if (w.deadline_s) {
    for (const auto& c : ps.counts)
      if (c.train_s <= *w.deadline_s) {
        ps.chosen = c.gpus;
        ps.chosen_why = fmt::format("the fewest GPUs that train within {}", format_time_span(*w.deadline_s));
        if (c.efficiency < w.efficiency_bar) ps.chosen_why += fmt::format(", below {:.0f}% efficiency", w.efficiency_bar * 100);
        return;
      }
    return;
  }
  if (ps.max_useful) {
    ps.chosen = ps.max_useful;
    ps.chosen_why = fmt::format("the most planned GPUs at or above {:.0f}% efficiency", w.efficiency_bar * 100);
  }
}

const PlanCount* count_of(const PlanSeries& s, int gpus) {
  for (const auto& c : s.counts)
    if (c.gpus == gpus) return &c;
  return nullptr;
}

}  // namespace

CapacityPlan make_capacity_plan(const PlanWorkload& w, const std::vector<ResultRow>& rows, const nlohmann::json& capacity) {
  if (!(w.tokens > 0)) throw Error("plan: --tokens must be positive");
  CapacityPlan plan;
  plan.workload = w;
  // The model's series, one per parameter point (layout, scaling, shapes), in file order.
  std::map<std::string, std::size_t> at;
  std::vector<std::vector<const ResultRow*>> series_rows;
  std::set<std::string> models, shapes, seen;
  for (const auto& r : rows) {
    if (r.benchmark != "train-step") continue;
    const auto name = text_of(r.params, "name");
    models.insert(name);
    if (name != w.model || (!w.layout.empty() && text_of(r.params, "layout") != w.layout)) continue;
    if (!seen.insert(r.params.dump() + "@" + std::to_string(r.gpu_count)).second)
      throw Error(fmt::format("plan: two train-step rows of {} {} at {} GPUs: give each point in one input only",
                              terminal_safe(name), terminal_safe(text_of(r.params, "layout")), r.gpu_count));
    auto shape = r.params;
    for (const char* k : {"layout", "scaling", "global_dp"}) shape.erase(k);
    shapes.insert(shape.dump());
    auto [it, added] = at.emplace(r.params.dump(), series_rows.size());
    if (added) series_rows.emplace_back();
    series_rows[it->second].push_back(&r);
  }
  if (series_rows.empty()) {
    std::string have;
    for (const auto& m : models) have += (have.empty() ? "" : ", ") + terminal_safe(m);
    throw Error(fmt::format("plan: no train-step rows of {}{} in the input ({}): run gpuscale run --benchmarks train-step "
                            "--model {} first",
                            terminal_safe(w.model), w.layout.empty() ? "" : " at layout " + terminal_safe(w.layout),
                            have.empty() ? "it has no train-step rows" : "it has " + have, terminal_safe(w.model)));
  }
  if (shapes.size() > 1)
    throw Error(fmt::format("plan: the train-step rows of {} hold {} different shapes (dtype, size or --quick): give the "
                            "files of one", terminal_safe(w.model), shapes.size()));
  const ModelSpec model = model_from_point(series_rows.front().front()->params, "plan: a train-step row");
  plan.model = model_json(model);
  plan.shrunk = !model.shrink.empty();
  plan.total_params = total_params(model);
  plan.ckpt_bytes_per_param = checkpoint_bytes_per_param(model.dtype);
  plan.ckpt_bytes = checkpoint_bytes(model);
  if (w.ckpt_every_s) plan.ckpt_needed_gb_s = plan.ckpt_bytes / (kCheckpointStallBudget * *w.ckpt_every_s) / 1e9;

  PlanInputs in{w, std::nullopt, checkpoint_writes(rows), plan.ckpt_bytes};
  for (const auto& list : series_rows)
    for (const auto* r : list)
      if (r->status == RowStatus::ok && !in.power)
        if (auto p = row_power(*r)) in.power = p;
  if (!in.power) in.power = burn_power(capacity);
  plan.power_source = in.power ? in.power->what
                               : "none: no train-step row carries its power and no burn-in gives a sustained power "
                                 "(NVML or RAPL unreadable where they ran; health.energy says why)";
  if (!w.ckpt_every_s) plan.ckpt_note = "no --ckpt-every: checkpoint stalls not planned";
  else if (in.writes.empty())
    plan.ckpt_note = "no checkpoint.write rows in the input: run --benchmarks storage --ckpt-dir DIR on the target "
                     "storage to plan the stalls";

  for (const auto& list : series_rows) {
    PlanSeries ps;
    std::vector<ResultRow> copies;
    for (const auto* r : list) {
      copies.push_back(*r);
      copies.back().ranks.clear();  // the series needs the row's figures, not its ranks
    }
    ps.scaling = std::move(train_scaling(copies).front());
    if (ps.scaling.points.empty()) {
      ps.limit_why = "no ok row: " + (ps.scaling.skipped.empty() ? std::string("none measured") : ps.scaling.skipped.front());
      plan.series.push_back(std::move(ps));
      continue;
    }
    plan_counts(ps, list, in);
    choose(ps, w);
    plan.series.push_back(std::move(ps));
  }
  bool any = false;
  for (std::size_t i = 0; i < plan.series.size(); ++i) {
    const auto& s = plan.series[i];
    any = any || !s.counts.empty();
    if (!s.chosen) continue;
    const auto* c = count_of(s, *s.chosen);
    if (!plan.best || c->train_s < count_of(plan.series[*plan.best], *plan.series[*plan.best].chosen)->train_s) plan.best = i;
  }
  if (!any) throw Error(fmt::format("plan: nothing to plan for {}: {}", terminal_safe(w.model), plan.series.front().limit_why));
  if (w.deadline_s && !plan.best) {
    const PlanCount* fastest = nullptr;
    const PlanSeries* of = nullptr;
    for (const auto& s : plan.series)
      for (const auto& c : s.counts)
        if (!fastest || c.train_s < fastest->train_s) fastest = &c, of = &s;
    throw Error(fmt::format("plan: no planned GPU count trains {} tokens of {} within {}: the fastest, {} GPUs at {}, "
                            "takes {} ({})",
                            plan_tokens_text(w.tokens), terminal_safe(w.model), format_time_span(*w.deadline_s), fastest->gpus,
                            terminal_safe(of->scaling.layout), human_duration(fastest->train_s), of->limit_why));
  }
  return plan;
}

}  // namespace gpuscale
