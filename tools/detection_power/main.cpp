// gpuscale-detection-power (scripts/detection-power; docs/fleet.md, "Detection power"): how often the
// run's outlier and history rules name a fault planted in a synthetic fleet, and how often they name
// what is not there, over seeded trials. Flags in, one library call (tools/detection_power/detection_power.h), the
// table out (detection_report.h); --trial I tells one trial in full.
#include <chrono>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "tools/detection_power/detection_report.h"

int main(int argc, char** argv) {
  using namespace gpuscale;
  using namespace gpuscale::detection;
  PowerConfig c;
  std::vector<std::string> faults;
  std::optional<std::uint64_t> trial;
  bool json = false;
  CLI::App app{"gpuscale-detection-power: the true- and false-positive rates of the run's outlier and history rules "
               "on synthetic fleets with planted faults (docs/fleet.md, \"Detection power\")"};
  app.add_option("--gpus", c.shape.gpus, "GPUs of the fleet: 64, 512, 4096 or any multiple of --gpus-per-node (default 512)");
  app.add_option("--gpus-per-node", c.shape.gpus_per_node, "GPUs (and rails) per node (default 8)");
  app.add_option("--trials", c.trials, "seeded trials per fault and size (default 200)");
  app.add_option("--seed", c.seed, "the run's seed: trial I uses a seed mixed from it and I (default 1)");
  app.add_option("--trial", trial, "replay trial I alone: where each fault sat and what every rule named");
  app.add_option("--outlier", c.outlier.fraction, "the fleet rule's fixed floor below the median (the run's default: 0, none)");
  app.add_option("--min-effect", c.outlier.min_effect, "the fleet rule's smallest slowdown named (the run's default 0.03)");
  app.add_option("--false-alarm", c.outlier.false_alarm,
                 "the fleet rule's chance that a clean run names anything (the run's default 0.01)");
  app.add_flag("!--no-claims", c.claims, "leave out the rows that plant each trial's claimed power");
  app.add_option("--threshold", c.regression.threshold, "the history rule's threshold (the run's default 0.1)");
  app.add_option("--baseline-runs", c.regression.baseline_runs,
                 fmt::format("the history rule's baseline: at most the last K runs before a step (the run's default {})",
                             history::RegressionRules{}.baseline_runs));
  // Each kind's noise as SPREAD,REP: relative standard deviations of one thing's own speed and of one repetition.
  auto noise = [&](const char* flag, KindNoise& k, const char* what) {
    app.add_option_function<std::vector<double>>(
           flag, [&k](const std::vector<double>& v) { k = {v.at(0), v.at(1)}; },
           fmt::format("{}: SPREAD,REP, the relative standard deviations of one's own speed and of one repetition "
                       "(default {},{})", what, k.spread, k.rep))
        ->expected(2)
        ->delimiter(',');
  };
  noise("--gemm-noise", c.noise.gemm, "GEMM (slow-gpu, flaky, the history)");
  noise("--hbm-noise", c.noise.hbm, "STREAM on HBM (slow-mem)");
  noise("--nic-noise", c.noise.nic, "a rail's sendrecv (slow-nic)");
  noise("--nvlink-noise", c.noise.nvlink, "an NVLink GPU pair (slow-link)");
  app.add_option("--run-noise", c.noise.run_noise, "relative standard deviation of a GPU's speed from run to run (default 0.01)");
  app.add_option("--storage-noise", c.noise.storage_rep_noise,
                 "slow-storage: relative standard deviation of one rank's timed checkpoint write (default 0.05)");
  app.add_option("--storage-spread", c.noise.storage_spread,
                 "slow-storage: relative standard deviation of a node's storage speed (default 0.05)");
  app.add_option("--flaky-p", c.noise.flaky_p, "flaky: the chance that each repetition is slow (default 0.3)");
  app.add_option("--runs", c.noise.runs, "runs in the history's series (default 10)");
  app.add_option("--step-run", c.noise.step_run, "throttle-after: the first slow run, 1-based (default 6)");
  app.add_option("--faults", faults, fmt::format("fault kinds, comma-separated (default all: {})", judged_kind_names(",")))
      ->delimiter(',');
  app.add_option("--sizes", c.sizes, "fault sizes, comma-separated fractions (default 0.05,0.1,0.2,0.5)")->delimiter(',');
  app.add_flag("--json", json, "the table as JSON");
  try {
    app.parse(argc, argv);
    if (!faults.empty()) c.faults = judged_kinds_named(faults);
    if (trial) {
      fmt::print("{}", trial_text(c, *trial));
      return kExitOk;
    }
    const auto start = std::chrono::steady_clock::now();
    const auto table = measure_power(c);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    if (json)
      fmt::print("{}\n", table_json(table).dump(2));
    else
      fmt::print("{}", table_text(table));
    fmt::print(stderr, "gpuscale-detection-power: {} trials in {:.1f} s\n", c.trials, took.count());
    return kExitOk;
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "gpuscale-detection-power: {} (see --help)\n", message_line(e.what()));
    return kExitUsage;
  } catch (const Error& e) {
    fmt::print(stderr, "gpuscale-detection-power: {}\n", message_line(e.what()));
    return e.exit_code();
  }
}
