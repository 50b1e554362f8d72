#include "tools/detection_power/detection_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace gpuscale::detection {
namespace {

double rate(std::int64_t k, std::int64_t n) { return n > 0 ? static_cast<double>(k) / static_cast<double>(n) : 0.0; }

std::string pct(double f) { return fmt::format("{:.1f}%", 100 * f); }

std::string interval(std::int64_t k, std::int64_t n) {
  const auto [lo, hi] = wilson_interval(k, n);
  return fmt::format("[{:.1f}, {:.1f}]", 100 * lo, 100 * hi);
}

}  // namespace

std::pair<double, double> wilson_interval(std::int64_t k, std::int64_t n) {
  if (n <= 0) return {0.0, 1.0};
  constexpr double z = 1.959963984540054;  // the 97.5% point of the normal distribution
  const double nn = static_cast<double>(n), p = rate(k, n);
  const double centre = (p + z * z / (2 * nn)) / (1 + z * z / nn);
  const double half = z / (1 + z * z / nn) * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn));
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

std::string table_text(const PowerTable& t) {
  const auto& c = t.config;
  const auto& n = c.noise;
  std::string out = fmt::format(
      "detection power: {} GPUs ({} nodes x {} GPUs), {} trials, seed {}\n"
      "  replay trial I: the same command with --trial I (trial I's seed mixes seed {} and I)\n"
      "  noise (relative standard deviations, own speed / one repetition): GEMM {} / {}, HBM {} / {}, NIC {} / {}, "
      "NVLink {} / {}; run to run {}; repetitions: GEMM {}, STREAM {}, pairs {}; flaky: each repetition slow with "
      "probability {:.2f}\n"
      "  storage (checkpoint.write, a node's ranks at once): repetition {}, node to node {}, {} repetitions\n"
      "  fault of size x: the faulty thing takes 1/(1-x) as long (its throughput is (1-x) of healthy)\n"
      "  rules: fleet --false-alarm {} over {} members judged per run, --min-effect {}, --outlier {}; history "
      "--threshold {}, {} baseline runs, {} runs with the fault from run {} (history: the latest run judged; history "
      "--since: the window from run {})\n"
      "  claim rows: each trial plants the size its clean verdict states it names with 95% probability (the mean "
      "size planted, then the largest; trials with no bar under 40% are not planted)\n\n",
      c.shape.gpus, c.shape.nodes(), c.shape.gpus_per_node, c.trials, c.seed, c.seed, pct(n.gemm.spread),
      pct(n.gemm.rep), pct(n.hbm.spread), pct(n.hbm.rep), pct(n.nic.spread), pct(n.nic.rep), pct(n.nvlink.spread),
      pct(n.nvlink.rep), pct(n.run_noise), n.gemm_reps, n.stream_reps, n.pair_reps, n.flaky_p,
      pct(n.storage_rep_noise), pct(n.storage_spread), n.ckpt_reps, c.outlier.false_alarm, c.outlier.judged,
      c.outlier.min_effect, c.outlier.fraction, c.regression.threshold, c.regression.baseline_runs, n.runs, n.step_run,
      n.step_run);
  out += fmt::format("{:<15} {:>5}  {:<16} {:>13} {:>7}  {:<14} {:>7} {:>8}  {}\n", "fault", "size", "rule", "named",
                     "rate", "95% interval", "wrong", "per run", "");
  for (const auto& r : t.rows) {
    std::string step = r.judge == Judge::fleet ? "" : fmt::format("from run {}: {}", n.step_run, r.step_right);
    if (r.claim) {
      step = fmt::format("claim: mean {}, largest {}; no bar in {}", pct(r.size), pct(r.claimed_max), r.no_bar);
      out += fmt::format("{:<15} {:>5}  {:<16} {:>13} {:>7}  {:<14} {:>7} {:>8.3f}  {}\n", fault_kind_name(r.fault),
                         "claim", judge_name(r.judge), fmt::format("{}/{}", r.named, r.trials),
                         pct(rate(r.named, r.trials)), interval(r.named, r.trials), r.wrong, rate(r.wrong, r.trials), step);
      continue;
    }
    out += fmt::format("{:<15} {:>4.0f}%  {:<16} {:>13} {:>7}  {:<14} {:>7} {:>8.3f}  {}\n", fault_kind_name(r.fault),
                       100 * r.size, judge_name(r.judge), fmt::format("{}/{}", r.named, r.trials),
                       pct(rate(r.named, r.trials)), interval(r.named, r.trials), r.wrong, rate(r.wrong, r.trials), step);
  }
  out += fmt::format("\n{:<17} {:>6} {:>11} {:>8}  {:>15}  {}\n", "clean runs", "runs", "false named", "per run",
                     "runs naming any", "95% interval");
  for (const auto& r : t.clean)
    out += fmt::format("{:<17} {:>6} {:>11} {:>8.4f}  {:>15}  {}\n", r.measurement, r.runs, r.named, rate(r.named, r.runs),
                       fmt::format("{} ({})", r.runs_with_any, pct(rate(r.runs_with_any, r.runs))),
                       interval(r.runs_with_any, r.runs));
  return out;
}

nlohmann::json table_json(const PowerTable& t) {
  const auto& c = t.config;
  const auto& n = c.noise;
  nlohmann::json rows = nlohmann::json::array(), clean = nlohmann::json::array();
  for (const auto& r : t.rows) {
    const auto [lo, hi] = wilson_interval(r.named, r.trials);
    nlohmann::json j = {{"fault", fault_kind_name(r.fault)}, {"size", r.size}, {"rule", judge_name(r.judge)},
                        {"trials", r.trials}, {"named", r.named}, {"rate", rate(r.named, r.trials)},
                        {"interval", {lo, hi}}, {"wrong", r.wrong}, {"wrong_per_run", rate(r.wrong, r.trials)}};
    if (r.judge != Judge::fleet) j["named_from_step_run"] = r.step_right;
    if (r.claim) {
      j["size"] = "claim";
      j["claimed_mean"] = r.size;
      j["claimed_max"] = r.claimed_max;
      j["no_bar"] = r.no_bar;
    }
    rows.push_back(std::move(j));
  }
  for (const auto& r : t.clean) {
    const auto [lo, hi] = wilson_interval(r.runs_with_any, r.runs);
    clean.push_back({{"measurement", r.measurement}, {"runs", r.runs}, {"named", r.named},
                     {"named_per_run", rate(r.named, r.runs)}, {"runs_naming_any", r.runs_with_any},
                     {"interval", {lo, hi}}});
  }
  return {{"gpus", c.shape.gpus},
          {"gpus_per_node", c.shape.gpus_per_node},
          {"nodes", c.shape.nodes()},
          {"trials", c.trials},
          {"seed", c.seed},
          {"noise", {{"gemm", {{"spread", n.gemm.spread}, {"rep", n.gemm.rep}}},
                     {"hbm", {{"spread", n.hbm.spread}, {"rep", n.hbm.rep}}},
                     {"nic", {{"spread", n.nic.spread}, {"rep", n.nic.rep}}},
                     {"nvlink", {{"spread", n.nvlink.spread}, {"rep", n.nvlink.rep}}},
                     {"run_noise", n.run_noise}, {"flaky_p", n.flaky_p},
                     {"storage_rep_noise", n.storage_rep_noise}, {"storage_spread", n.storage_spread},
                     {"gemm_reps", n.gemm_reps}, {"stream_reps", n.stream_reps}, {"pair_reps", n.pair_reps},
                     {"ckpt_reps", n.ckpt_reps},
                     {"runs", n.runs}, {"step_run", n.step_run}}},
          {"rules", {{"outlier", c.outlier.fraction}, {"min_effect", c.outlier.min_effect},
                     {"false_alarm", c.outlier.false_alarm}, {"judged", c.outlier.judged},
                     {"threshold", c.regression.threshold},
                     {"baseline_runs", c.regression.baseline_runs}}},
          {"fault_size", "the faulty thing takes 1/(1-size) as long: its throughput is (1-size) of healthy"},
          {"rows", rows},
          {"clean", clean}};
}

std::string trial_text(const PowerConfig& given, std::uint64_t trial) {
  check_config(given);
  const PowerConfig config = fleet_config(given);
  const auto seed = trial_seed(config.seed, trial);
  Trial t(config, seed);
  auto list = [](const std::vector<std::string>& v) { return v.empty() ? std::string("nothing") : fmt::format("{}", fmt::join(v, " ")); };
  std::string out = fmt::format("trial {} of seed {}: trial seed {} ({} GPUs, {} per node)\nclean:\n", trial, config.seed,
                                seed, config.shape.gpus, config.shape.gpus_per_node);
  for (const auto& c : t.clean()) out += fmt::format("  {:<16} named {}\n", c.measurement, list(c.named));
  out += "planted:\n";
  for (auto kind : config.faults)
    for (double size : config.sizes)
      for (auto judge : judges_of(kind)) {
        const auto j = t.planted({kind, size}, judge);
        const bool hit = std::find(j.named.begin(), j.named.end(), j.planted) != j.named.end();
        std::vector<std::string> wrong;
        for (const auto& n : j.named)
          if (n != j.planted) wrong.push_back(n);
        out += fmt::format("  {:<14} {:>4.0f}%  {:<15} {:<20} {}{}; wrong: {}\n", fault_kind_name(kind), size * 100,
                           judge_name(judge), j.planted, hit ? "NAMED" : "missed",
                           j.changed_run ? fmt::format(" (from run {})", *j.changed_run) : "", list(wrong));
      }
  return out;
}

}  // namespace gpuscale::detection
