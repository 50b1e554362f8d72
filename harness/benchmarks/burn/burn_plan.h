#pragma once
// A burn-in (`gpuscale run --duration 20m [--burn gemm,stream,all_reduce,mix] [--window 10s]`, docs/acceptance.md):
// every GPU of the job loaded for the duration, measured in windows, so a figure that drifts as a GPU
// heats shows as a time series, and a killed burn-in keeps every finished window (each window is one
// point of the plan, journalled when it ends). The windows take the kinds in turn, so every kind's
// series spans the whole burn-in. Pure: the option table and the burn benchmark
// (harness/benchmarks/burn/burn.cpp) ask it; tests/unit/harness/benchmarks/burn/test_burn_plan.cpp.
#include <string>
#include <string_view>
#include <vector>

#include "harness/options/run_modes.h"  // BurnKind, its names

namespace gpuscale {


inline constexpr double kDefaultBurnWindowS = 10;
inline constexpr double kMaxBurnDurationS = 7 * 86400.0;  // a week
// Each window's repetitions are this many equal slices of it, each slice's figure its work over its
// time: a bounded sample whatever one pass takes.
inline constexpr int kBurnSlicesPerWindow = 20;

struct BurnWindow {
  BurnKind kind = BurnKind::mix;
  int index = 0;       // 0-based, in time order over all kinds
  double start_s = 0;  // its planned start from the burn-in's start
  double seconds = 0;  // its length
};

struct BurnPlan {
  double duration_s = 0;  // as planned: whole windows (the given duration rounded down)
  double window_s = 0;
  std::vector<BurnWindow> windows;
};

// The burn-in's windows: floor(duration / window) of them, kind i % kinds. Throws gpuscale::Error
// (one line, exit 2) when the duration is below one window, beyond a week, or holds fewer windows than
// there are kinds (each kind needs one), or the window is not positive.
BurnPlan make_burn_plan(double duration_s, double window_s, const std::vector<BurnKind>& kinds);

// "the burn-in: 12 windows of 10s (mix), 2m" for the start of the run.
std::string burn_plan_line(const BurnPlan& plan);

}  // namespace gpuscale
