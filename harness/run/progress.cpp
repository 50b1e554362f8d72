#include "harness/run/progress.h"

#include <cstdio>
#include <numeric>

#include <fmt/format.h>

#include "core/term_text.h"
#include "harness/guard/watchdog.h"
#include "harness/plan/plan_limits.h"
#include "harness/registry.h"
#include "text/number_text.h"

namespace gpuscale {

std::FILE* summary_stream(const RunOptions& o) {
  if (o.quiet) {
    static std::FILE* const sink = std::fopen("/dev/null", "w");
    if (sink != nullptr) return sink;
  }
  return o.result_to_stdout || o.quiet ? stderr : stdout;
}

double row_weight(const PointDemand& demand, const std::string& backend) {
  const auto r = watchdog_rates(backend);
  // A weight is in the watchdog's slow-device seconds (plan_estimate_seconds divides them by
  // kTypicalOverSlowRates): a fixed time is the same on every device, so it is weighed up to match.
  return demand.bytes / r.bytes_per_s + demand.flops / r.flops_per_s + demand.setup_s + kProgressRowSeconds +
         demand.fixed_s * kTypicalOverSlowRates;
}

std::vector<double> plan_row_weights(const nlohmann::json& points, const std::vector<bool>& kept,
                                     const DemandContext& ctx, const std::function<std::size_t(const Benchmark&)>& rows) {
  std::vector<double> out;
  for (std::size_t i = 0; i < points.size() && i < kept.size(); ++i) {
    if (kept[i]) continue;
    const Benchmark* b = registry().find(points[i]["benchmark"].get<std::string>());
    out.insert(out.end(), rows(*b), row_weight(b->demand(points[i]["params"], ctx), ctx.backend));
  }
  return out;
}

double eta_seconds(double elapsed_s, double done_weight, double left_weight) {
  if (done_weight <= 0 || left_weight <= 0) return 0;
  return elapsed_s / done_weight * left_weight;
}

Progress::Progress(std::vector<double> row_weights, bool enabled, double max_time_s)
    : weights_(std::move(row_weights)),
      total_weight_(std::accumulate(weights_.begin(), weights_.end(), 0.0)),
      enabled_(enabled),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {
  if (enabled_)
    fmt::print(stderr, "gpuscale: {}\n", plan_estimate_line({plan_estimate_seconds(weights_), weights_.size(), 0}, {max_time_s, 0}));
}

void Progress::step(const std::string& what) {
  if (done_ < weights_.size()) done_weight_ += weights_[done_];
  ++done_;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const std::size_t total = weights_.size();
  if (done_ != total && now - last_ < std::chrono::seconds(1)) return;
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double eta = done_ >= total ? 0 : eta_seconds(elapsed, done_weight_, total_weight_ - done_weight_);
  fmt::print(stderr, "gpuscale: [{}/{}] {} (elapsed {}, ETA {})\n", done_, total, message_line(what), format_duration(elapsed),
             format_duration(eta));
  std::fflush(stderr);
}

}  // namespace gpuscale
