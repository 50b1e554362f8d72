// Prints the tables c(m) and q(m) of history/level_steps.cpp (kScale, kCritical) for m = 1..30, from
// 2,000,000 Gaussian series each at seed 20240601: `build/bin/gpuscale_level_step_tables` (minutes).
// A generator, not a test: the unit test TablesMatchASimulation checks the committed tables against a
// smaller simulation of its own, at a printed seed.
#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "history/level_steps.h"
#include "level_noise_draws.h"

int main() {
  using namespace gpuscale::history;
  std::mt19937_64 rng(20240601);
  const int draws = 2000000;
  std::printf("m c(m) q(m)\n");
  for (std::size_t m = 1; m <= 30; ++m) {
    std::vector<double> medians, z;
    draw_noise_only(rng, m, draws, medians, z);
    double sum = 0;
    for (const double v : medians) sum += v;
    const double c = 0.05 * draws / sum;
    const auto at = static_cast<std::size_t>((1 - kStepAlpha) * draws);
    std::nth_element(z.begin(), z.begin() + static_cast<long>(at), z.end());
    std::printf("%zu %.4f %.3f\n", m, c, z[at] / c);
  }
  return 0;
}
