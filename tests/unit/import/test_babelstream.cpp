// BabelStream's CSV and text read into STREAM rows (import/babelstream.h), from random figures printed
// in BabelStream's formats (src/main.cpp).
#include <gtest/gtest.h>

#include <random>

#include <fmt/format.h>

#include "core/error.h"
#include "import/babelstream.h"
#include "test_seed.h"

namespace gpuscale {
namespace {

struct Kernel {
  const char* label;
  const char* benchmark;
  int weight;
};
constexpr Kernel kKernels[] = {{"Copy", "stream.copy", 2}, {"Mul", "stream.scale", 2}, {"Add", "stream.add", 3},
                               {"Triad", "stream.triad", 3}, {"Dot", "stream.dot", 2}};

TEST(BabelStream, CsvInEveryUnitGivesGbPerSecond) {
  std::mt19937_64 rng(test_seed());
  const std::pair<const char*, double> units[] = {{"MB", 1e6}, {"MiB", 1048576.0}, {"GB", 1e9}, {"GiB", 1073741824.0}};
  const auto [unit, per] = units[std::uniform_int_distribution<int>(0, 3)(rng)];
  const long long n = std::uniform_int_distribution<long long>(1 << 20, 1 << 28)(rng);
  const int size = std::uniform_int_distribution<int>(0, 1)(rng) ? 8 : 4;
  std::string csv = fmt::format("function,num_times,n_elements,sizeof,max_{}_per_sec,min_runtime,max_runtime,avg_runtime\n", unit);
  std::vector<double> gbs;
  for (const auto& k : kKernels) {
    const double t = std::uniform_real_distribution<double>(1e-4, 1e-1)(rng);
    const double bw = static_cast<double>(k.weight) * size * static_cast<double>(n) / t / per;
    csv += fmt::format("{},100,{},{},{:g},{:g},{:g},{:g}\n", k.label, n, size, bw, t, t * 1.5, t * 1.2);
    gbs.push_back(std::stod(fmt::format("{:g}", bw)) * per / 1e9);
  }
  const auto in = read_babelstream_csv(ImportText("s.csv", csv), "cpu");
  ASSERT_EQ(in.rows.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(in.rows[i].benchmark, kKernels[i].benchmark);
    EXPECT_EQ(in.rows[i].params["elements"], n);
    EXPECT_EQ(in.rows[i].params["dtype"], size == 8 ? "fp64" : "fp32");
    EXPECT_DOUBLE_EQ(in.rows[i].rank_metrics["best_gb_s"].get<double>(), gbs[i]);
    EXPECT_FALSE(in.rows[i].aggregate) << "BabelStream prints no median";
  }
  EXPECT_THROW(read_babelstream_csv(ImportText("s.csv", csv), ""), Error) << "the CSV does not say where it ran";
}

TEST(BabelStream, TextNamesItsImplementationAndVersion) {
  const std::string text =
      "BabelStream\nVersion: 5.0\nImplementation: OpenMP\nRunning  Classic kernels 20 times in  Classic order \n"
      "Number of elements: 33554432\nPrecision: double\nArray size: 268.4 MB\nTotal size: 805.3 MB\n"
      "Function    MB/s        Min (sec)   Max         Average     \n"
      "Copy        17143.948   0.03132     0.06075     0.04479     \n";
  const auto in = read_babelstream_text(ImportText("s.txt", text), "");
  EXPECT_EQ(in.backend, "cpu");
  EXPECT_EQ(in.tool_version, "5.0");
  ASSERT_EQ(in.rows.size(), 1u);
  EXPECT_NEAR(in.rows[0].rank_metrics["best_gb_s"].get<double>(), 17.143948, 1e-9);
  EXPECT_THROW(read_babelstream_text(ImportText("s.txt", text), "cuda"), Error) << "OpenMP does not run on CUDA";
  try {
    std::string bad = text;
    bad.replace(bad.find("17143.948"), 9, "34287.896");
    read_babelstream_text(ImportText("s.txt", bad), "");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("s.txt:10:"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpuscale
