// harness/run_cost: rank 0's account of the harness's own cost: the parts add up, the rest of the
// measuring span is "other", and the peak memory is read from a status file's VmHWM line.
#include <gtest/gtest.h>

#include <random>

#include "harness/run/run_cost.h"

namespace gpuscale {
namespace {

using namespace std::chrono;

TEST(RunCost, PartsAndTheRestOfTheSpan) {
  std::mt19937_64 rng(15);
  RunCost c;
  EXPECT_TRUE(c.to_json()["per_row_overhead_s"].is_null());
  const auto t0 = RunCost::Clock::now();
  auto at = t0;
  double bench = 0, gather = 0, build = 0, gaps = 0;
  const int rows = 3 + static_cast<int>(rng() % 10);
  for (int r = 0; r < rows; ++r) {
    const auto b = milliseconds(10 + rng() % 90), g = milliseconds(1 + rng() % 9), u = milliseconds(1 + rng() % 5),
               gap = milliseconds(rng() % 20);
    c.add(RunCost::Part::benchmark, at, at + b);
    c.add(RunCost::Part::gather, at + b, at + b + g);
    c.add(RunCost::Part::build, at + b + g, at + b + g + u);
    c.row_done();
    at += b + g + u + gap;
    bench += duration<double>(b).count();
    gather += duration<double>(g).count();
    build += duration<double>(u).count();
    if (r + 1 < rows) gaps += duration<double>(gap).count();  // after the last row: outside the span
  }
  const auto j = c.to_json();
  EXPECT_EQ(j["rows"], rows);
  EXPECT_NEAR(j["benchmark_s"].get<double>(), bench, 1e-9);
  EXPECT_NEAR(j["gather_s"].get<double>(), gather, 1e-9);
  EXPECT_NEAR(j["build_s"].get<double>(), build, 1e-9);
  EXPECT_NEAR(j["other_s"].get<double>(), gaps, 1e-6);
  EXPECT_NEAR(j["per_row_overhead_s"].get<double>(), (gather + build + gaps) / rows, 1e-6);
  EXPECT_GT(j["rank0_peak_rss_bytes"].get<long long>(), 0);  // this process's own
}

TEST(RunCost, PeakRssFromStatus) {
  EXPECT_EQ(peak_rss_from_status("Name:\tx\nVmPeak:\t  999 kB\nVmHWM:\t  12345 kB\nVmRSS:\t 1 kB\n"), 12345LL * 1024);
  EXPECT_FALSE(peak_rss_from_status("Name:\tx\n").has_value());
  EXPECT_FALSE(peak_rss_from_status("VmHWM:\t lots\n").has_value());
  EXPECT_FALSE(peak_rss_from_status("VmHWM:\t 12 MB\n").has_value());
}

}  // namespace
}  // namespace gpuscale
