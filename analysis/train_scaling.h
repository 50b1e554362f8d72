#pragma once
// How a train-step series scales (docs/training.md, "Scaling and the max useful GPUs"). A series is
// one model at one layout; its rows are the GPU counts the layout ran at. For each count: the step,
// the time of each phase on the slowest rank (the stacked bar of the report), and the scaling
// efficiency against the layout's smallest measured count n0 (per-GPU tokens/s at n over at n0: a
// layout such as tp=2 has no 1-GPU row to compare with). Weak and strong scaling (params.scaling) are
// separate series and share the rule: per-GPU tokens/s is what both hold constant when ideal.
//
// The max useful GPUs: the largest count at which efficiency stays at or above kUsefulEfficiency.
// Each efficiency has a band from the repetition spreads of its two rows (the row's `spread`: at n,
// e x (1 - down_n) / (1 + up_n0) to e x (1 + up_n) / (1 - down_n0)). A count whose whole band is under
// the bar is a measured fall, and the answer is the count before it. A count under the bar whose band
// still holds it is within the noise: with no clear fall after it, the answer is "undecided" (more
// repetitions narrow the band), never a number the next launch may contradict. Otherwise a model of the GPU
// time per token (n / tokens/s: the step time of weak scaling over its fixed tokens per GPU, and the
// GPU time a fixed global batch costs under strong scaling)
//   c(n) = a + b x log2(n / n0)
// is fitted to the measured rows (least squares on relative residuals, as the collective projection
// does): the communication of a layout grows with the number of hops its collectives take, which a
// ring or tree adds per doubling. Then e(n) = a / c(n) >= 0.8 up to n* = n0 x 2^(a / (4 b)), and the
// answer is the largest power-of-two multiple of n0 not above n*. That figure is a PROJECTION and is
// labelled so; it is refused, with why, on fewer than three measured counts or a fit error above the
// projection's bound (analysis/projection.h).
#include <optional>
#include <string>
#include <vector>

#include "results/result_file.h"

namespace gpuscale {

inline constexpr double kUsefulEfficiency = 0.8;
// Projections beyond this many GPUs are not given as a number.
inline constexpr double kLargestProjectedGpus = 1 << 20;

struct TrainPhaseTime {
  std::string name;  // compute, tp_comm, fsdp_comm, pp_comm, ep_comm, dp_comm, bubble, wait
  double us = 0;
};

struct TrainScalingPoint {
  int gpu_count = 0;
  double step_us = 0;
  double tokens_per_s = 0;
  double efficiency = 0;  // against n0: per-GPU tokens/s at n over at n0
  double efficiency_low = 0, efficiency_high = 0;  // its repetition band (1, 1 at n0)
  double spread_down = 0, spread_up = 0;           // the row's relative repetition spread
  std::vector<TrainPhaseTime> phases;  // in the display order, zero phases kept (a bar's parts agree)
};

struct TrainScaling {
  std::string model, layout, series;  // series: the point's other parameters (shapes, dtype) as text
  std::string scaling = "weak";       // weak, or strong (the global batch held)
  int base_count = 0;                 // n0
  std::vector<TrainScalingPoint> points;  // ascending GPU count, ok rows only
  std::vector<std::string> skipped;       // rows not used, with why ("4 GPUs: invalid")
  // The model of GPU-us per token; fitted false with why when refused.
  bool fitted = false;
  std::string why;
  double a = 0, b = 0, rms_rel_error = 0;
  // The answer: measured (a measured count fell under the bar), projected, or none with why.
  std::optional<double> max_useful_gpus;
  bool max_useful_measured = false;
  std::string max_useful_text;  // one line, "PROJECTED" when it is
};

// The display order of the phases (unknown names from a newer file follow, in name order).
const std::vector<std::string>& train_phase_order();

// Every train-step series of the rows, in file order.
std::vector<TrainScaling> train_scaling(const std::vector<ResultRow>& rows);

// Terminal text: per series, a line per count (step, efficiency, phases) and the max-useful line.
// Empty when there are no train-step rows.
std::string format_train_scaling(const std::vector<TrainScaling>& series);

}  // namespace gpuscale
