// nccl-tests' text output read into rows (import/nccl_tests_text.h): a table printed here with
// nccl-tests' own formats (src/util.cu) from random times, read back figure for figure; its damages refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include <fmt/format.h>

#include "core/error.h"
#include "import/nccl_tests_text.h"
#include "test_seed.h"

namespace gpuscale {
namespace {

// nccl-tests' getFloatStr: the widest of %.2f, %.1f, %.0f that fits, else %.1e.
std::string float_str(double v, int width) {
  for (int p = 2; p >= 0; --p) {
    auto s = fmt::format("{:{}.{}f}", v, width, p);
    if (static_cast<int>(s.size()) <= width) return s;
  }
  return fmt::format("{:{}.1e}", v, width);
}

struct Printed {
  std::string text;
  std::vector<double> busbw;  // per row and half, as printed
};

// An all_reduce_perf log of `n` ranks on two hosts, sizes 2^lo .. 2^hi, times drawn at random.
Printed all_reduce_log(std::mt19937_64& rng, int n, int lo, int hi) {
  std::uniform_real_distribution<double> lat(5, 40), bw(5, 400);
  Printed p;
  std::string& t = p.text;
  t += "# nccl-tests version 2.19.6 nccl-headers=22703 nccl-library=22703\n# Collective test starting: all_reduce_perf\n";
  t += "# nThread 1 nGpus 1 minBytes 8 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n#\n# Using devices\n";
  for (int r = 0; r < n; ++r)
    t += fmt::format("#  Rank {:2d} Group {:2d} Pid {:6d} on {:>10} device {:2d} [0000:{:02x}:00] NVIDIA H100 80GB HBM3\n", r, 0, 100 + r,
                     r < n / 2 ? "node-a" : "node-b", r % (n / 2), 0x18 + r);
  t += "#\n#                                                              out-of-place                       in-place          \n";
  t += "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n";
  t += "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n";
  const double factor = 2.0 * (n - 1) / n;
  double sum = 0;
  const double latency = lat(rng), plateau = bw(rng);
  for (int k = lo; k <= hi; ++k) {
    const double size = std::ldexp(1.0, k);
    t += fmt::format("{:12}  {:12}  {:>8}  {:>6}  {:>6}", static_cast<long long>(size), static_cast<long long>(size / 4), "float", "sum", -1);
    for (int h = 0; h < 2; ++h) {
      const double time = latency + size / plateau / 1e3 * (1 + 0.1 * std::uniform_real_distribution<double>(0, 1)(rng));
      const double alg = size / time / 1e3;
      t += fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}", float_str(time, 7), float_str(alg, 6), float_str(alg * factor, 6), 0);
      p.busbw.push_back(std::stod(float_str(alg * factor, 6)));
      sum += alg * factor;
    }
    t += "\n";
  }
  t += fmt::format("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : {:g} \n#\n# Collective test concluded: all_reduce_perf\n#\n",
                   sum / static_cast<double>(p.busbw.size()));
  return p;
}

TEST(NcclTestsText, ReadsEveryFigureOfARandomTable) {
  std::mt19937_64 rng(test_seed());
  const int n = 2 * std::uniform_int_distribution<int>(1, 8)(rng);
  const int lo = std::uniform_int_distribution<int>(3, 10)(rng), hi = lo + std::uniform_int_distribution<int>(0, 14)(rng);
  const auto log = all_reduce_log(rng, n, lo, hi);
  const auto in = read_nccl_tests_text(ImportText("log.txt", log.text), "");
  ASSERT_EQ(in.ranks.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(in.ranks[n - 1].host, "node-b");
  EXPECT_EQ(in.ranks[n - 1].device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(in.tool_version, "2.19.6");
  EXPECT_EQ(in.software["nccl"], "2.27.3");
  EXPECT_FALSE(in.command_line);
  ASSERT_EQ(in.rows.size(), log.busbw.size());
  for (std::size_t i = 0; i < in.rows.size(); ++i) {
    const auto& r = in.rows[i];
    EXPECT_EQ(r.benchmark, "all_reduce");
    EXPECT_EQ(r.params["placement"], i % 2 ? "in-place" : "out-of-place");
    EXPECT_EQ(r.params["size_bytes"], 1ULL << (lo + i / 2));
    EXPECT_EQ(r.params["op"], "sum");
    EXPECT_EQ(r.params["dtype"], "fp32");
    EXPECT_DOUBLE_EQ(r.metrics["busbw"].get<double>(), log.busbw[i]);
    ASSERT_TRUE(r.aggregate);
    EXPECT_DOUBLE_EQ(*r.aggregate, log.busbw[i]);
    EXPECT_EQ(r.ranks.size(), static_cast<std::size_t>(n));
  }
}

TEST(NcclTestsText, RefusesAnEditedFigureNamingItsLine) {
  std::mt19937_64 rng(test_seed());
  auto log = all_reduce_log(rng, 4, 10, 20);
  // The last size line's busbw doubled: no longer algbw x 2(n-1)/n.
  auto lines_end = log.text.rfind("\n# Out of bounds");
  auto line_start = log.text.rfind('\n', lines_end - 1) + 1;
  std::string line = log.text.substr(line_start, lines_end - line_start);
  const auto busbw = std::to_string(log.busbw[log.busbw.size() - 2]).substr(0, 4);
  const auto at = line.find(float_str(log.busbw[log.busbw.size() - 2], 6));
  ASSERT_NE(at, std::string::npos) << busbw;
  line.replace(at, 6, float_str(log.busbw[log.busbw.size() - 2] * 2 + 1, 6));
  log.text.replace(line_start, lines_end - line_start, line);
  const auto line_no = std::count(log.text.begin(), log.text.begin() + static_cast<long>(line_start), '\n') + 1;
  try {
    read_nccl_tests_text(ImportText("log.txt", log.text), "");
    FAIL() << "an edited busbw was imported";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitUsage);
    EXPECT_NE(std::string(e.what()).find(fmt::format("log.txt:{}: out-of-place busbw", line_no)), std::string::npos) << e.what();
  }
}

TEST(NcclTestsText, OldLogsNeedTheirCollectiveNamed) {
  std::mt19937_64 rng(test_seed());
  auto log = all_reduce_log(rng, 2, 3, 6);
  // Before 2.18 there is no version or binary line.
  log.text = log.text.substr(log.text.find("# nThread"));
  EXPECT_THROW(read_nccl_tests_text(ImportText("old.txt", log.text), ""), Error);
  const auto in = read_nccl_tests_text(ImportText("old.txt", log.text), "all_reduce_perf");
  EXPECT_EQ(in.rows.size(), 8u);
  EXPECT_FALSE(in.tool_version);
  EXPECT_THROW(read_nccl_tests_text(ImportText("old.txt", log.text), "gather_perf"), Error);
}

TEST(NcclTestsText, RefusesATruncatedLog) {
  std::mt19937_64 rng(test_seed());
  const auto log = all_reduce_log(rng, 4, 3, 12);
  const auto cut = std::uniform_int_distribution<std::size_t>(log.text.find("#  Rank  0"), log.text.find("# Avg bus") - 1)(rng);
  EXPECT_THROW(read_nccl_tests_text(ImportText("cut.txt", log.text.substr(0, cut)), ""), Error) << "cut at byte " << cut;
}

}  // namespace
}  // namespace gpuscale
