#pragma once
// A burn-in (`gpuscale run --duration 20m [--burn gemm,stream,all_reduce,mix] [--window 10s]`, docs/acceptance.md):
// every GPU of the job loaded for the duration, measured in windows, so a figure that drifts as a GPU
// heats shows as a time series, and a killed burn-in keeps every finished window (each window is one
// point of the plan, journalled when it ends). The windows take the kinds in turn, so every kind's
// series spans the whole burn-in. Pure: the option table and the burn benchmark
// (harness/benchmarks/burn.cpp) ask it; tests/unit/harness/test_burn_plan.cpp.
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale {

enum class BurnKind {
  gemm,        // the GEMM benchmark's largest shape, back to back (compute, power, thermals)
  stream,      // STREAM triad (memory)
  all_reduce,  // all_reduce over every rank of the job (links, NICs)
  mix,         // the backend's data-parallel step: GEMMs with their gradients all-reduced (training)
};

inline constexpr double kDefaultBurnWindowS = 10;
inline constexpr double kMaxBurnDurationS = 7 * 86400.0;  // a week
// Each window's repetitions are this many equal slices of it, each slice's figure its work over its
// time: a bounded sample whatever one pass takes.
inline constexpr int kBurnSlicesPerWindow = 20;

std::string_view burn_kind_name(BurnKind kind);
// "gemm,mix" -> the kinds, in the order given. Throws gpuscale::Error (one line, exit 2) for an unknown
// or repeated kind or an empty item.
std::vector<BurnKind> parse_burn_kinds(std::string_view text);
// The kinds a burn-in runs: `given` (--burn), or mix when none was given.
inline std::vector<BurnKind> burn_kinds_or_default(const std::vector<BurnKind>& given) {
  return given.empty() ? std::vector<BurnKind>{BurnKind::mix} : given;
}
// The kind named `name` (as burn_kind_name writes it); throws gpuscale::Error otherwise.
BurnKind burn_kind_of(std::string_view name);

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
