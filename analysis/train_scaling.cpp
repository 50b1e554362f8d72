#include "analysis/train_scaling.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "text/escape.h"
#include "text/number_text.h"
#include "analysis/projection.h"
#include "analysis/row_text.h"
#include "results/row_fields.h"

namespace gpuscale {
namespace {

std::string text_param(const nlohmann::json& params, const char* key) {
  const auto it = params.find(key);
  return it != params.end() && it->is_string() ? it->get<std::string>() : std::string("?");
}

// "fp32, 2 layers, hidden 256, seq 128, shrunk": what tells two points of one model and layout apart.
std::string shapes_label(const nlohmann::json& params) {
  auto number = [&](const char* key) {
    const auto it = params.find(key);
    return it != params.end() && it->is_number_integer() ? it->dump() : std::string("?");
  };
  std::string out =
      fmt::format("{}, {} layers, hidden {}, seq {}", text_param(params, "dtype"), number("layers"), number("hidden"), number("seq"));
  const auto shrunk = params.find("shrunk_from");
  if (shrunk != params.end() && shrunk->is_object() && !shrunk->empty()) out += ", shrunk (shrunk_from)";
  if (text_param(params, "scaling") == "strong") out += fmt::format(", global batch of {} data-parallel ranks", number("global_dp"));
  return out;
}

// The phases of a row in display order: known names first, then any others by name.
std::vector<TrainPhaseTime> phases_of(const ResultRow& r) {
  std::vector<TrainPhaseTime> out;
  const auto j = field_json(r, fields::phase_us);
  if (!j.is_object()) return out;
  for (const auto& name : train_phase_order())
    if (j.contains(name) && j[name].is_number()) out.push_back({name, j[name].get<double>()});
  for (const auto& [name, v] : j.items()) {
    const auto& order = train_phase_order();
    if (std::find(order.begin(), order.end(), name) == order.end() && v.is_number())
      out.push_back({name, v.get<double>()});
  }
  return out;
}

// GPU-us per token at a point: n / tokens/s.
double cost_us(const TrainScalingPoint& p) { return p.gpu_count * 1e6 / p.tokens_per_s; }

// c(n) = a + b x log2(n / n0), weighted least squares on relative residuals (weights 1 / c^2).
void fit_cost(TrainScaling& s) {
  if (s.points.size() < kMinProjectionCounts + 1) {
    s.why = fmt::format("not projected: measured at {} GPU count(s), the model needs at least {}", s.points.size(),
                        kMinProjectionCounts + 1);
    return;
  }
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& p : s.points) {
    const double x = std::log2(static_cast<double>(p.gpu_count) / s.base_count), y = cost_us(p), w = 1 / (y * y);
    sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
  }
  const double det = sw * sxx - sx * sx;
  if (!(det > 0)) {
    s.why = "the measured counts do not span a range to fit";
    return;
  }
  s.b = (sw * sxy - sx * sy) / det;
  s.a = (sy - s.b * sx) / sw;
  double ss = 0;
  for (const auto& p : s.points) {
    const double m = s.a + s.b * std::log2(static_cast<double>(p.gpu_count) / s.base_count);
    ss += std::pow((m - cost_us(p)) / cost_us(p), 2);
  }
  s.rms_rel_error = std::sqrt(ss / static_cast<double>(s.points.size()));
  if (auto why = projection_refusal(s.points.size() - 1, s.rms_rel_error)) {
    s.why = "not projected: " + *why;
    return;
  }
  if (!(s.a > 0)) {
    s.why = "not projected: the fitted cost at the smallest count is not positive";
    return;
  }
  s.fitted = true;
}

std::string band_text(const TrainScalingPoint& p) {
  return fmt::format("{:.1f}% at {} GPUs (repetition band {:.1f}-{:.1f}%)", p.efficiency * 100, p.gpu_count,
                     p.efficiency_low * 100, std::min(p.efficiency_high * 100, 999.9));
}

void decide_max_useful(TrainScaling& s) {
  const int largest = s.points.back().gpu_count;
  const TrainScalingPoint* noisy = nullptr;  // the first count under the bar whose band holds it
  for (std::size_t i = 1; i < s.points.size(); ++i) {
    const auto& p = s.points[i];
    if (p.efficiency >= kUsefulEfficiency) continue;
    if (p.efficiency_high >= kUsefulEfficiency) {
      if (!noisy) noisy = &p;
      continue;
    }
    s.max_useful_measured = true;
    s.max_useful_gpus = s.points[i - 1].gpu_count;
    s.max_useful_text = fmt::format("max useful GPUs {} (measured: efficiency {}, under {:.0f}%{})",
                                    s.points[i - 1].gpu_count, band_text(p), kUsefulEfficiency * 100,
                                    noisy ? "; " + band_text(*noisy) + " is within the noise" : std::string());
    return;
  }
  if (noisy) {
    s.max_useful_text = fmt::format("max useful GPUs: undecided: efficiency {} holds {:.0f}% (more --reps narrow the band)",
                                    band_text(*noisy), kUsefulEfficiency * 100);
    return;
  }
  if (!s.fitted) {
    s.max_useful_text = fmt::format("max useful GPUs: at least {} (measured); {}", largest, s.why);
    return;
  }
  const auto model = fmt::format("GPU-us per token = {} + {} x log2(n/{}), fit error {:.1f}% RMS over {} counts",
                                 figure_text(s.a), figure_text(s.b), s.base_count, s.rms_rel_error * 100,
                                 s.points.size());
  if (!(s.b > 0)) {
    s.max_useful_text = fmt::format(
        "max useful GPUs: no limit in sight: the GPU time per token did not grow from {} to {} GPUs ({})",
        s.base_count, largest, model);
    return;
  }
  const double exponent = s.a / (4 * s.b);  // a / (a + b x) >= 0.8  <=>  x <= a / (4 b)
  const double limit = exponent > 40 ? kLargestProjectedGpus * 2 : s.base_count * std::exp2(exponent);
  if (limit > kLargestProjectedGpus) {
    s.max_useful_text = fmt::format("PROJECTED max useful GPUs: beyond {:.0f} ({})", kLargestProjectedGpus, model);
    return;
  }
  double n = s.base_count;
  while (n * 2 <= limit * (1 + 1e-9)) n *= 2;  // exactly 80% is still useful
  s.max_useful_gpus = std::max(n, static_cast<double>(largest));
  s.max_useful_text = fmt::format("PROJECTED max useful GPUs {:.0f}: efficiency falls under {:.0f}% past {:.0f} GPUs ({})",
                                  *s.max_useful_gpus, kUsefulEfficiency * 100, limit, model);
}

}  // namespace

const std::vector<std::string>& train_phase_order() {
  static const std::vector<std::string> order = {"compute", "tp_comm", "fsdp_comm", "pp_comm",
                                                 "ep_comm", "dp_comm", "bubble",    "wait"};
  return order;
}

std::vector<TrainScaling> train_scaling(const std::vector<ResultRow>& rows) {
  std::map<std::string, std::size_t> at;
  std::vector<TrainScaling> out;
  for (const auto& r : rows) {
    if (r.benchmark != "train-step") continue;
    auto [it, added] = at.emplace(r.params.dump(), out.size());
    if (added) {
      TrainScaling s;
      s.model = text_param(r.params, "name");
      s.layout = text_param(r.params, "layout");
      s.series = shapes_label(r.params);
      if (text_param(r.params, "scaling") == "strong") s.scaling = "strong";
      out.push_back(std::move(s));
    }
    TrainScaling& s = out[it->second];
    const auto step = number_field(r, fields::step_time_us);
    if (r.status == RowStatus::skipped) continue;  // a count the layout does not divide, or memory: not a result
    if (r.status != RowStatus::ok || !r.aggregate || !(*r.aggregate > 0) || !step || !(*step > 0)) {
      s.skipped.push_back(fmt::format("{} GPUs: {}", r.gpu_count, valid_text(r)));
      continue;
    }
    TrainScalingPoint p{r.gpu_count, *step, *r.aggregate, 0, 0, 0, 0, 0, phases_of(r)};
    if (r.spread) p.spread_down = std::clamp(r.spread->down, 0.0, 1.0), p.spread_up = std::max(r.spread->up, 0.0);
    s.points.push_back(std::move(p));
  }
  for (auto& s : out) {
    std::sort(s.points.begin(), s.points.end(), [](const auto& a, const auto& b) { return a.gpu_count < b.gpu_count; });
    if (s.points.empty()) {
      s.why = "no measured row";
      s.max_useful_text = "max useful GPUs: unknown, no measured row";
      continue;
    }
    s.base_count = s.points.front().gpu_count;
    const double base = s.points.front().tokens_per_s / s.base_count;
    const auto& b = s.points.front();
    for (auto& p : s.points) {
      p.efficiency = p.tokens_per_s / p.gpu_count / base;
      p.efficiency_low = &p == &b ? 1 : p.efficiency * (1 - p.spread_down) / (1 + b.spread_up);
      p.efficiency_high = &p == &b ? 1 : b.spread_down < 1 ? p.efficiency * (1 + p.spread_up) / (1 - b.spread_down) : INFINITY;
    }
    fit_cost(s);
    decide_max_useful(s);
  }
  return out;
}

std::string format_train_scaling(const std::vector<TrainScaling>& series) {
  if (series.empty()) return {};
  std::string out = "\nTRAINING STEP SCALING (train-step; docs/training.md): phase times of the slowest rank, us\n";
  for (const auto& s : series) {
    out += fmt::format("\n  {} {} {} ({})\n", term_text(s.model), term_text(s.layout), s.scaling, term_text(s.series));
    if (!s.points.empty()) {
      out += fmt::format("  {:>6} {:>11} {:>11} {:>7}", "GPUs", "tokens/s", "step us", "eff");
      for (const auto& ph : s.points.front().phases) out += fmt::format(" {:>10}", term_text(ph.name));
      out += "\n";
    }
    for (const auto& p : s.points) {
      out += fmt::format("  {:>6} {:>11} {:>11} {:>6.1f}%", p.gpu_count, figure_text(p.tokens_per_s),
                         figure_text(p.step_us), p.efficiency * 100);
      for (const auto& ph : p.phases) out += fmt::format(" {:>10}", figure_text(ph.us));
      out += "\n";
    }
    for (const auto& k : s.skipped) out += fmt::format("  not used: {}\n", term_text(k));
    out += fmt::format("  {}-scaling efficiency: per-GPU tokens/s against {} GPU{}, the layout's smallest measured count\n",
                       s.scaling, s.base_count, s.base_count == 1 ? "" : "s");
    out += "  " + s.max_useful_text + "\n";
  }
  return out;
}

}  // namespace gpuscale
