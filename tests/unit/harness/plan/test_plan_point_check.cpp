// harness/plan_point_check: a plan point from a file by the command line's rules.
#include "harness/plan/plan_point_check.h"

#include <gtest/gtest.h>

namespace gpuscale {
namespace {

using json = nlohmann::json;

std::string problem(const std::string& b, const json& params, int world = 2) {
  return plan_point_problem(b, params, world).value_or("");
}

const json kAllReduce = {{"dtype", "fp32"}, {"op", "sum"}, {"placement", "out-of-place"}, {"size_bytes", 1024}};
const json kGemm = {{"dtype", "fp64"}, {"m", 512}, {"n", 256}, {"k", 128}, {"layout", "NN"}};
const json kStream = {{"dtype", "fp64"}, {"elements", 1 << 20}};

TEST(PlanPointCheck, PointsTheCliPlansPass) {
  EXPECT_EQ(problem("all_reduce", kAllReduce), "");
  EXPECT_EQ(problem("gemm", kGemm), "");
  EXPECT_EQ(problem("stream.triad", kStream), "");
  auto b = kAllReduce;
  b.erase("op");
  b["root"] = 1;
  EXPECT_EQ(problem("broadcast", b), "");
}

TEST(PlanPointCheck, EachBadValueIsNamed) {
  const struct {
    const char* benchmark;
    json base;
    const char* key;
    json value;
    const char* needle;
  } cases[] = {
      {"all_reduce", kAllReduce, "op", "xor", "parameter 'op'"},
      {"all_reduce", kAllReduce, "size_bytes", -5, "parameter 'size_bytes': expected a whole number of at least 1"},
      {"all_reduce", kAllReduce, "size_bytes", 0, "parameter 'size_bytes'"},
      {"all_reduce", kAllReduce, "size_bytes", 1.5, "parameter 'size_bytes'"},
      {"all_reduce", kAllReduce, "size_bytes", json(1ULL << 63), "outside 1 .. 2^62"},
      {"all_reduce", kAllReduce, "placement", "sideways", "parameter 'placement'"},
      {"all_reduce", kAllReduce, "dtype", "fp128", "unknown dtype"},
      {"all_reduce", kAllReduce, "transport", "carrier-pigeon", "parameter 'transport'"},
      {"gemm", kGemm, "m", 0, "parameter 'm'"},
      {"gemm", kGemm, "k", json(1ULL << 63), "parameter 'k'"},
      {"gemm", kGemm, "layout", "XY", "parameter 'layout'"},
      {"gemm", kGemm, "fast_accum", "yes", "parameter 'fast_accum'"},
      {"stream.triad", kStream, "elements", 0, "parameter 'elements'"},
      {"stream.triad", kStream, "elements", "many", "parameter 'elements'"},
  };
  for (const auto& c : cases) {
    auto p = c.base;
    p[c.key] = c.value;
    const auto why = problem(c.benchmark, p);
    EXPECT_NE(why.find(c.needle), std::string::npos) << c.key << "=" << c.value.dump() << ": " << why;
  }
  auto rooted = kAllReduce;
  rooted.erase("op");
  rooted["root"] = 2;  // a world of 2 has ranks 0 and 1
  EXPECT_NE(problem("broadcast", rooted).find("parameter 'root'"), std::string::npos);
  rooted["root"] = 4294967297LL;  // 2^32 + 1 must not read as 1
  EXPECT_NE(problem("broadcast", rooted).find("parameter 'root'"), std::string::npos);
}

TEST(PlanPointCheck, MissingParametersAndUnknownBenchmarksAreNamed) {
  auto p = kStream;
  p.erase("elements");
  EXPECT_EQ(problem("stream.triad", p), "parameter 'elements' is missing");
  EXPECT_NE(problem("stream.bogus", kStream).find("no benchmark"), std::string::npos);
  EXPECT_NE(problem("all_reduce", json::array()).find("not an object"), std::string::npos);
  auto esc = kAllReduce;
  esc["op"] = "\x1b[2Jx";
  EXPECT_EQ(problem("all_reduce", esc).find('\x1b'), std::string::npos);  // made safe for the terminal
}

}  // namespace
}  // namespace gpuscale
