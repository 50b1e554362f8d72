#include <gtest/gtest.h>

#include <random>

#include "test_seed.h"
#include "analysis/reference.h"
#include "analysis_fixtures.h"
#include "core/error.h"

namespace gpuscale {
namespace {

using testing::loaded;
using testing::row_json;

nlohmann::json ref_doc(nlohmann::json entries, const std::string& cluster = "testcluster") {
  return {{"schema", "gpuscale.reference"}, {"schema_version", 1},
          {"clusters", {{{"cluster", cluster}, {"entries", entries}}}}};
}

nlohmann::json entry(const std::string& bench, nlohmann::json params, nlohmann::json k, double value, nlohmann::json lower,
                     nlohmann::json upper, const std::string& unit = "GB/s") {
  return {{"benchmark", bench}, {"params", params}, {"gpu_count", k}, {"value", value}, {"lower", lower},
          {"upper", upper}, {"unit", unit}};
}

std::string error_of(const nlohmann::json& doc) {
  try {
    reference_from_json("ref.json", doc);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Reference, RejectsMalformedEntriesNamingTheField) {
  EXPECT_NE(error_of(ref_doc({entry("x", nlohmann::json::object(), 1, 1, -0.1, nullptr)})).find("entries[0].lower"),
            std::string::npos);
  EXPECT_NE(error_of(ref_doc({entry("x", nlohmann::json::object(), 0, 1, 0.1, nullptr)})).find("gpu_count"), std::string::npos);
  auto typo = entry("x", nlohmann::json::object(), 1, 1, 0.1, nullptr);
  typo["tolerance"] = 0.1;
  EXPECT_NE(error_of(ref_doc({typo})).find("unknown key 'tolerance'"), std::string::npos);
  EXPECT_NE(error_of({{"schema", "gpuscale.reference"}, {"schema_version", 2}}).find("schema_version"), std::string::npos);
  EXPECT_NE(error_of(nlohmann::json::array()).find("ref.json: "), std::string::npos);
  EXPECT_EQ(error_of(ref_doc({entry("stream.*", {{"dtype", "fp*"}}, "*", 1, 0.1, nullptr)})), "");
}

TEST(Reference, WildcardsSubsetParamsAndAnyGpuCount) {
  const auto ref = reference_from_json("r", ref_doc({entry("stream.*", {{"dtype", "fp6?"}}, "*", 10, 0.1, nullptr),
                                                     entry("all_reduce", {{"size_bytes", 1024}}, 2, 10, 0.1, nullptr)}));
  auto run = loaded({row_json("stream.triad", "independent", {{"dtype", "fp64"}, {"array_bytes", 8}}, 2, {5, 5}),
                     row_json("stream.triad", "independent", {{"dtype", "fp32"}, {"array_bytes", 8}}, 2, {5, 5}),
                     row_json("all_reduce", "collective", {{"dtype", "fp32"}, {"size_bytes", 1024}}, 2, {10, 10}),
                     row_json("all_reduce", "collective", {{"dtype", "fp32"}, {"size_bytes", 2048}}, 2, {10, 10})});
  const auto& e = ref.clusters[0].second;
  EXPECT_TRUE(entry_matches(e[0], run.rows[0]));
  EXPECT_FALSE(entry_matches(e[0], run.rows[1]));
  EXPECT_FALSE(entry_matches(e[0], run.rows[2]));
  EXPECT_TRUE(entry_matches(e[1], run.rows[2]));
  EXPECT_FALSE(entry_matches(e[1], run.rows[3]));
  const auto out = check_against(run, ref);
  EXPECT_EQ(out.checked.size(), 2u);
  EXPECT_EQ(out.uncovered, 2u);
  EXPECT_EQ(out.failures(), 0u);
}

TEST(Reference, TolerancesAreBoundsAroundTheValue) {
  auto run = loaded({row_json("gemm", "independent", {{"m", 1}}, 1, {95}, "TFLOP/s")});
  auto check = [&](double value, nlohmann::json lower, nlohmann::json upper, const std::string& unit = "TFLOP/s") {
    auto out = check_against(run, reference_from_json("r", ref_doc({entry("gemm", nlohmann::json::object(), 1, value, lower, upper, unit)})));
    return out.failures() == 0;
  };
  EXPECT_TRUE(check(100, 0.06, nullptr));   // 95 >= 94
  EXPECT_FALSE(check(100, 0.04, nullptr));  // 95 < 96
  EXPECT_TRUE(check(90, nullptr, 0.06));    // 95 <= 95.4
  EXPECT_FALSE(check(90, 0.1, 0.05));       // 95 > 94.5
  EXPECT_TRUE(check(1000, nullptr, nullptr));
  EXPECT_FALSE(check(95, 0.1, 0.1, "GB/s"));  // unit mismatch fails
}

TEST(Reference, FirstMatchWinsAndUnmatchedEntriesFail) {
  auto run = loaded({row_json("gemm", "independent", {{"m", 1}}, 1, {95}, "TFLOP/s")});
  const auto ref = reference_from_json("r", ref_doc({entry("gemm", nlohmann::json::object(), 1, 95, 0.01, nullptr, "TFLOP/s"),
                                                     entry("gemm", nlohmann::json::object(), "*", 500, 0.01, nullptr, "TFLOP/s"),
                                                     entry("stream.triad", nlohmann::json::object(), 8, 1, 0.1, nullptr)}));
  const auto out = check_against(run, ref);
  ASSERT_EQ(out.checked.size(), 1u);
  EXPECT_TRUE(out.checked[0].pass);
  EXPECT_EQ(out.checked[0].entry->index, 0u);
  EXPECT_EQ(out.unmatched.size(), 2u);  // the general gemm entry and stream.triad at 8
  EXPECT_EQ(out.failures(), 2u);
  const auto suite = check_suite(out);
  EXPECT_EQ(suite.cases.size(), 3u);
}

TEST(Reference, InvalidRowsFailAndClustersMustMatch) {
  auto bad = row_json("gemm", "independent", {{"m", 1}}, 1, {95}, "TFLOP/s");
  bad["status"] = "failed";
  bad["aggregate"] = nullptr;
  bad["errors"] = {"boom"};
  auto run = loaded({bad});
  const auto ok_ref = reference_from_json("r", ref_doc({entry("gemm", nlohmann::json::object(), "*", 95, 0.5, nullptr, "TFLOP/s")}, "test*"));
  const auto out = check_against(run, ok_ref);
  ASSERT_EQ(out.checked.size(), 1u);
  EXPECT_FALSE(out.checked[0].pass);
  EXPECT_NE(out.checked[0].message.find("boom"), std::string::npos);
  const auto other = reference_from_json("r", ref_doc({entry("gemm", nlohmann::json::object(), "*", 95, 0.5, nullptr)}, "dgx-*"));
  EXPECT_THROW(check_against(run, other), Error);
}

// fnmatch stops at a NUL: a cluster (or a params string) "vm\0evil" from a file must not match the
// pattern "vm", and the refusal quotes the name without raw control characters, on one line.
TEST(Reference, ANulInTheClusterOrAParamEndsNoMatchEarly) {
  std::mt19937 rng(test_seed());
  const std::string tail = "evil" + std::to_string(rng() % 1000) + "\x1b[2J\n";
  const std::string cluster = std::string("vm\0", 3) + tail;
  auto run = loaded({row_json("gemm", "independent", {{"layout", std::string("TN\0", 3) + tail}}, 1, {95}, "TFLOP/s")});
  run.cluster = cluster;
  const auto ref = reference_from_json("r", ref_doc({entry("gemm", {{"layout", "TN"}}, "*", 95, 0.5, nullptr, "TFLOP/s")}, "vm"));
  try {
    check_against(run, ref);
    FAIL() << "cluster vm\\0evil matched the reference for vm";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("no reference for cluster 'vm?evil"), std::string::npos) << msg;
    for (char c : msg) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20) << msg;
  }
  run.cluster = "vm";
  const auto out = check_against(run, ref);  // the cluster matches; the NUL in the param does not match "TN"
  EXPECT_EQ(out.checked.size(), 0u);
  EXPECT_EQ(out.uncovered, 1u);
}

TEST(Reference, GeneratedReferencePassesOnItsRun) {
  auto run = loaded({row_json("gemm", "independent", {{"m", 1}}, 1, {95}, "TFLOP/s"),
                     row_json("all_reduce", "collective", {{"size_bytes", 8}}, 1, {0})});
  const auto doc = make_reference(run, ReferenceOptions{});
  ASSERT_EQ(doc["clusters"][0]["entries"].size(), 1u);  // the zero busbw row carries nothing to check
  const auto out = check_against(run, reference_from_json("gen", doc));
  EXPECT_EQ(out.failures(), 0u);
  EXPECT_EQ(out.checked.size(), 1u);
}

// gpuscale reference A B C: the median of the runs, the lower tolerance widened to the runs' spread,
// never below the floor; rows without a value in any run never enter.
TEST(Reference, SeveralRunsGiveTheMedianAndTheirSpread) {
  auto row = [](double v) { return row_json("stream.triad", "independent", {{"n", 1}}, 1, {v}); };
  auto null_row = [](double v) {
    auto r = row_json("all_reduce", "collective", {{"size_bytes", 8}}, 1, {v < 0 ? 5 : v});
    if (v < 0) r["aggregate"] = nullptr;
    return r;
  };
  const auto a = loaded({row(100), null_row(-1)}), b = loaded({row(80), null_row(5)}), c = loaded({row(110), null_row(5)});
  const auto doc = make_reference(std::vector<const LoadedResult*>{&a, &b, &c}, ReferenceOptions{});
  const auto& entries = doc["clusters"][0]["entries"];
  ASSERT_EQ(entries.size(), 1u);  // the collective has no value in run a: left out
  EXPECT_DOUBLE_EQ(entries[0]["value"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(entries[0]["lower"].get<double>(), 0.2);  // (100 - 80) / 100, above the 10% floor
  EXPECT_TRUE(entries[0]["upper"].is_null());
  EXPECT_EQ(doc["created_from"]["files"].size(), 3u);
  EXPECT_EQ(doc["created_from"]["rows_left_out"], 1);
  ReferenceOptions up;
  up.upper = 0.05;
  const auto with_upper = make_reference(std::vector<const LoadedResult*>{&a, &b, &c}, up);
  EXPECT_DOUBLE_EQ(with_upper["clusters"][0]["entries"][0]["upper"].get<double>(), 0.10);  // (110 - 100) / 100
  // Runs close together keep the floor; one run is the floor exactly, as before.
  const auto d = loaded({row(99)});
  EXPECT_DOUBLE_EQ(make_reference(std::vector<const LoadedResult*>{&a, &d}, ReferenceOptions{})["clusters"][0]["entries"][0]["lower"]
                       .get<double>(),
                   0.10);
  const auto one = make_reference(b, ReferenceOptions{});
  EXPECT_DOUBLE_EQ(one["clusters"][0]["entries"][0]["value"].get<double>(), 80);
  EXPECT_DOUBLE_EQ(one["clusters"][0]["entries"][0]["lower"].get<double>(), 0.10);
  EXPECT_FALSE(one["created_from"].contains("files"));
}

TEST(Reference, EveryRunPassesTheReferenceOfItsRuns) {
  std::mt19937_64 gen(31);
  std::uniform_real_distribution<double> level(1, 1e4), jitter(0.6, 1.3);
  std::uniform_int_distribution<int> count(1, 6);
  for (int t = 0; t < 50; ++t) {
    std::vector<LoadedResult> runs;
    const double base = level(gen);
    const int k = count(gen);
    for (int i = 0; i < k; ++i)
      runs.push_back(loaded({row_json("gemm", "independent", {{"m", 1}}, 1, {base * jitter(gen)}, "TFLOP/s"),
                             row_json("stream.copy", "independent", {{"n", 2}}, 2, {base * jitter(gen), base}, "GB/s")}));
    std::vector<const LoadedResult*> of;
    for (const auto& r : runs) of.push_back(&r);
    const auto ref = reference_from_json("gen", make_reference(of, ReferenceOptions{}));
    for (const auto& r : runs) {
      const auto out = check_against(r, ref);
      EXPECT_EQ(out.failures(), 0u) << format_check(out);
      EXPECT_EQ(out.checked.size(), 2u);
    }
  }
}

TEST(Reference, RunsOfDifferentClustersNeedACluster) {
  const auto a = loaded({row_json("gemm", "independent", {{"m", 1}}, 1, {5}, "TFLOP/s")});
  auto doc = testing::doc_json({row_json("gemm", "independent", {{"m", 1}}, 1, {5}, "TFLOP/s")}, "Test GPU", 8, "other");
  const auto b = result_from_json("b.json", doc);
  EXPECT_THROW(make_reference(std::vector<const LoadedResult*>{&a, &b}, ReferenceOptions{}), Error);
  ReferenceOptions named;
  named.cluster = "both*";
  EXPECT_EQ(make_reference(std::vector<const LoadedResult*>{&a, &b}, named)["clusters"][0]["cluster"], "both*");
}

}  // namespace
}  // namespace gpuscale
