#pragma once
// gpuscale plan (docs/capacity.md): a what-if for one training workload, from measured rows only.
// For each layout the model's train-step rows were measured at, and each GPU count from the smallest
// measured to the planned limit: the step time and tokens/s (measured where measured; beyond, the
// train-step scaling model of analysis/train_scaling.h, a PROJECTION with its fit error), the
// efficiency, the time to train (with the checkpoint stalls), the average power and energy, the
// checkpoint stall per interval, and the first bottleneck. Pure: rows in, a CapacityPlan out.
//
// Refusals (never a number the rows do not support):
// - no ok train-step row of the workload's model: the plan is refused (gpuscale::Error, exit 2);
// - beyond kMaxPlanExtrapolation x the largest measured count, or where the scaling model is refused
//   (fewer than 3 counts, fit error above the projection's bound), counts are not planned, and the
//   plan says why;
// - a deadline no planned count meets: refused, naming the fastest count and its time.
//
// Sources, each named in the plan:
// - power: the train-step row's own average power (NVML or RAPL during the step), per GPU times the
//   count; else the burn-in's sustained power per GPU (analysis/burn_capacity.h), a full-load figure;
//   else none, with why;
// - checkpoint: model weights x training/model_spec.h's bytes per weight, written at the best
//   checkpoint.write bandwidth measured at the largest rank count not above the GPU count (held, and
//   said so, beyond the largest measured);
// - bottleneck: storage when a checkpoint stalls more than the budget of its interval; else the
//   largest phase other than compute when it takes at least 1 - the efficiency bar of the step (tp_comm
//   and one node's collectives: "intra-node link"; collectives across nodes: "network"; "pipeline
//   bubble"; "wait": a slower peer); else "compute". Beyond the measured counts, the phase that grew
//   most per token over the measured counts, placed on the network once the count spans nodes.
//   "unknown" where the rows carry no phase times (stored in a history before it kept them).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/train_scaling.h"
#include "results/result_file.h"

namespace gpuscale {

inline constexpr double kMaxPlanExtrapolation = 4;   // planned counts stop at 4x the largest measured
inline constexpr double kCheckpointStallBudget = 0.05;  // of the checkpoint interval

struct PlanWorkload {
  std::string model;                       // the rows' params.name (a preset key, or "file")
  double tokens = 0;                       // tokens to train
  std::optional<double> ckpt_every_s;      // checkpoint interval
  std::optional<int> gpus;                 // GPUs available (the planned counts stop there)
  std::optional<double> deadline_s;        // the time to train must fit
  std::string layout;                      // "" every measured layout
  double efficiency_bar = kUsefulEfficiency;
};

struct PlanCount {
  int gpus = 0;
  int nodes = 0;                 // measured, or projected from the measured GPUs per node
  bool measured = false;         // false: PROJECTED from the scaling model
  double tokens_per_s = 0, step_s = 0, efficiency = 0;
  double train_s = 0;            // tokens / tokens/s plus the checkpoint stalls in that time
  std::optional<double> power_w, energy_j;
  std::optional<double> ckpt_stall_s, ckpt_stall_fraction;  // per checkpoint; of the interval
  std::string ckpt_source;       // the checkpoint.write row used
  std::string bottleneck, bottleneck_why;
};

struct PlanSeries {
  TrainScaling scaling;          // the measured series and its model (analysis/train_scaling.h)
  std::vector<PlanCount> counts;
  std::string limit_why;         // why the planned counts stop where they do
  std::optional<int> max_useful; // the largest planned count at or above the bar ("" : none)
  std::optional<int> chosen;     // the plan's answer for this series (max useful, or the deadline's)
  std::string chosen_why;
  std::string first_bottleneck;  // the first planned count's bottleneck other than compute, with its count
};

struct CapacityPlan {
  PlanWorkload workload;
  nlohmann::json model;               // model_json of the measured model (shrunk_from when --quick)
  bool shrunk = false;
  double total_params = 0, ckpt_bytes = 0, ckpt_bytes_per_param = 0;
  std::optional<double> ckpt_needed_gb_s;  // to keep one checkpoint under the stall budget
  std::string power_source, ckpt_note;     // where the power and checkpoint figures come from, or why none
  std::vector<PlanSeries> series;
  std::optional<std::size_t> best;    // the series whose chosen count trains soonest
};

// `rows`: every input file's rows; `capacity`: burn_capacity() entries of the inputs (may be empty).
// Throws gpuscale::Error for a refusal (exit 2).
CapacityPlan make_capacity_plan(const PlanWorkload& w, const std::vector<ResultRow>& rows, const nlohmann::json& capacity);

// The formats (planning/capacity_plan_text.cpp): terminal text, Markdown, JSON, an HTML section.
std::string plan_text(const CapacityPlan& p, std::size_t width);  // within width columns (0: no limit)
std::string plan_markdown(const CapacityPlan& p);
nlohmann::json plan_json(const CapacityPlan& p);
std::string plan_html(const CapacityPlan& p);
std::string plan_tokens_text(double tokens);  // "1T", "300B", "12M"

}  // namespace gpuscale
