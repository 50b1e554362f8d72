#pragma once
// The simulation behind history/level_steps.cpp's tables c(m) and q(m), shared by their check
// (test_level_steps.cpp, TablesMatchASimulation) and their generator (tests/tools/level_step_tables.cpp).
#include <cmath>
#include <random>
#include <vector>

#include "history/level_steps.h"

namespace gpuscale::history {

// m + 1 points of Gaussian log noise (sigma 0.05) against one more, the noise from their m
// differences: appends (median |difference|, z at c = 1) of each draw to `medians` and `z`.
inline void draw_noise_only(std::mt19937_64& rng, std::size_t m, int draws, std::vector<double>& medians,
                            std::vector<double>& z) {
  std::normal_distribution<double> noise(0, 0.05);
  std::vector<LevelPoint> p(m + 2, {1, {0, 0, 10}});
  for (int d = 0; d < draws; ++d) {
    for (auto& q : p) q.value = 100 * std::exp(noise(rng));
    const RunNoise n = run_noise(p, 0, m + 2, m + 1);
    const double median = n.sigma / noise_scale_factor(m);
    medians.push_back(median);
    z.push_back(level_shift(p, 0, m + 1, m + 2, Better::higher, {median, m}).z);
  }
}

}  // namespace gpuscale::history
