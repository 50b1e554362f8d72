// dcgmi diag's JSON (health/dcgm/dcgm_diag_json.h) in DCGM 4.x's and 3.x's layouts: every planted result
// read back with its GPU, status, DCGM's words and error ids; each kind of damage refused with its place.
#include <gtest/gtest.h>

#include <random>

#include "test_seed.h"

#include "core/error.h"
#include "health/dcgm/dcgm_diag_json.h"
#include "dcgm_doc_builder.h"

namespace gpuscale::health {
namespace {

using test::PlantedResult;

TEST(DcgmDiagJson, ReadsEveryPlantedResultOfDcgm4) {
  std::mt19937_64 rng(test_seed());
  const std::vector<std::pair<std::string, std::string>> tests = {
      {"Deployment", "software"}, {"Integration", "pcie"}, {"Hardware", "memory"}, {"Stress", "targeted_stress"}};
  const std::vector<std::string> statuses = {"Pass", "Fail", "Skip", "Warn"};
  for (int round = 0; round < 20; ++round) {
    const int n = 1 + static_cast<int>(rng() % 8);
    std::vector<int> gpus;
    std::map<int, std::string> serials;
    for (int g = 0; g < n; ++g) {
      gpus.push_back(g);
      if (rng() % 2) serials[g] = "16509230" + std::to_string(rng() % 100000);
    }
    std::vector<PlantedResult> planted;
    for (const auto& [c, t] : tests)
      for (int g : gpus) {
        PlantedResult r{c, t, g, statuses[rng() % statuses.size()], {}, {}};
        if (r.status != "Pass") r.warnings.push_back(test::dcgm_warning("GPU " + std::to_string(g) + " said no", 50 + g, 10, 2));
        if (rng() % 3 == 0) r.info.push_back("info " + std::to_string(rng()));
        planted.push_back(r);
      }
    const auto d = parse_dcgm_diag(test::dcgm4_doc(planted, gpus, serials).dump());
    EXPECT_EQ(d.format, "DCGM 4.x");
    EXPECT_EQ(d.version, "4.6.0");
    EXPECT_EQ(d.gpu_ids, gpus);
    EXPECT_EQ(d.serials, serials);
    ASSERT_EQ(d.results.size(), planted.size());
    // The builder groups by category: compare as sets of (test, gpu) -> what was planted.
    for (const auto& p : planted) {
      const auto it = std::find_if(d.results.begin(), d.results.end(),
                                   [&](const DcgmResult& r) { return r.test == p.test && r.gpu_id == p.gpu; });
      ASSERT_NE(it, d.results.end()) << p.test << " GPU " << p.gpu;
      EXPECT_EQ(it->category, p.category);
      EXPECT_EQ(it->status, p.status);
      EXPECT_EQ(it->info, p.info);
      ASSERT_EQ(it->warnings.size(), p.warnings.size());
      if (!p.warnings.empty()) {
        EXPECT_EQ(it->warnings[0].text, p.warnings[0]["warning"]);
        EXPECT_EQ(it->warnings[0].error_id, p.warnings[0]["error_id"].get<long long>());
        EXPECT_EQ(it->warnings[0].error_severity, 2);
      }
    }
  }
}

TEST(DcgmDiagJson, ReadsDcgm3Layout) {
  // DCGM 3.x (v3.3.9 Diag.cpp HelperJsonAddResult): gpu_id as text, info as one string, serials by id.
  const auto doc = R"({"DCGM GPU Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [
      {"name": "Memory", "results": [
        {"gpu_id": "0", "status": "Pass"},
        {"gpu_id": "1", "status": "Fail", "info": "Allocated 2 GB",
         "warnings": [{"warning": "Found 4 faulty memory elements on GPU 1", "error_id": 52, "error_category": 10, "error_severity": 2}]}]}]}],
      "version": "3.3.9"},
    "GPU Device Serials": {"0": "1650923000001", "1": "1650923000002"}, "GPU Device IDs": ["2330", "2330"]})";
  const auto d = parse_dcgm_diag(doc);
  EXPECT_EQ(d.format, "DCGM 3.x");
  EXPECT_EQ(d.version, "3.3.9");
  ASSERT_EQ(d.results.size(), 2u);
  EXPECT_EQ(d.results[1].gpu_id, 1);
  EXPECT_EQ(d.results[1].status, "Fail");
  EXPECT_EQ(d.results[1].info, std::vector<std::string>{"Allocated 2 GB"});
  EXPECT_EQ(d.results[1].warnings.at(0).error_id, 52);
  EXPECT_EQ(d.serials.at(1), "1650923000002");
  EXPECT_EQ(d.gpu_ids, (std::vector<int>{0, 1}));
}

TEST(DcgmDiagJson, ReadsDcgm3LevelOneResultsAsTheNodes) {
  // DCGM 3.x's software tests (v3.3.9 Diag.cpp HelperJsonAddBasicTests): one result each, a "gpu_id"
  // (an integer, -1 for none) only beside an error, the error's text under "warnings"; codes, texts and
  // severities from v3.3.9's dcgm_errors.h (DCGM_FR_BAD_CUDA_ENV 28, DCGM_FR_PERSISTENCE_MODE 29, CONFIG).
  const auto doc = R"({"DCGM GPU Diagnostic": {"test_categories": [{"category": "Deployment", "tests": [
      {"name": "Denylist", "results": [{"status": "Pass"}]},
      {"name": "Environment Variables", "results": [{"gpu_id": -1, "status": "Fail",
        "warnings": [{"warnings": "Found CUDA performance-limiting environment variable 'CUDA_LAUNCH_BLOCKING'.",
                      "error_id": 28, "error_category": 6, "error_severity": 5}]}]},
      {"name": "Persistence Mode", "results": [{"gpu_id": 1, "status": "Fail",
        "warnings": [{"warnings": "Persistence mode for GPU 1 is disabled.", "error_id": 29, "error_category": 8,
                      "error_severity": 5}]}]}]}]},
    "GPU Device Serials": {"0": "1650923000001", "1": "1650923000002"}})";
  const auto d = parse_dcgm_diag(doc);
  ASSERT_EQ(d.tests.size(), 3u);
  EXPECT_EQ(d.tests[0].status, "Pass");
  EXPECT_FALSE(d.tests[0].has_gpu_results);
  EXPECT_EQ(d.tests[1].status, "Fail");
  EXPECT_EQ(d.tests[1].warnings.at(0).text, "Found CUDA performance-limiting environment variable 'CUDA_LAUNCH_BLOCKING'.");
  EXPECT_EQ(d.tests[1].warnings.at(0).error_severity, 5);
  ASSERT_EQ(d.results.size(), 1u);  // the one that names its GPU
  EXPECT_EQ(d.results[0].gpu_id, 1);
  EXPECT_EQ(d.results[0].warnings.at(0).text, "Persistence mode for GPU 1 is disabled.");
  EXPECT_EQ(d.gpu_ids, (std::vector<int>{0, 1}));
}

TEST(DcgmDiagJson, RuntimeErrorAndOtherEntities) {
  const auto d = parse_dcgm_diag(R"({"DCGM Diagnostic": {"version": "4.6.0", "runtime_error": "no GPUs to test"}})");
  EXPECT_EQ(d.runtime_error, "no GPUs to test");
  EXPECT_TRUE(d.results.empty());
  // A CPU result (entity group 7, DCGM_FE_CPU) is counted, never taken for GPU 0.
  const auto c = parse_dcgm_diag(R"({"DCGM Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [
      {"name": "cpu_eud", "results": [{"entity_group": "CPU", "entity_group_id": 7, "entity_id": 0, "status": "Fail"}]}]}]}})");
  EXPECT_EQ(c.other_entity_results, 1);
  EXPECT_TRUE(c.results.empty());
}

TEST(DcgmDiagJson, RefusesDamageNamingItsPlace) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"DCGM Diagnostic": {"test_categories": [)", "printed no JSON"},
      {R"([1, 2])", "expected an object"},
      {R"({"Diagnostic": {}})", "neither \"DCGM Diagnostic\""},
      {R"({"DCGM Diagnostic": {"test_categories": {}}})", "/DCGM Diagnostic/test_categories: expected array"},
      {R"({"DCGM Diagnostic": {"test_categories": [{"category": "H", "tests": [{"name": "m", "results": [
          {"entity_group_id": 1, "entity_id": 0, "status": "Maybe"}]}]}]}})", "unknown status 'Maybe'"},
      {R"({"DCGM Diagnostic": {"test_categories": [{"category": "H", "tests": [{"name": "m", "results": [
          {"entity_group_id": 1, "entity_id": "0", "status": "Pass"}]}]}]}})", "results/0/entity_id: expected a GPU id"},
      {R"({"DCGM GPU Diagnostic": {"test_categories": [{"category": "H", "tests": [{"name": "m", "results": [
          {"gpu_id": true, "status": "Pass"}]}]}]}})", "results/0/gpu_id: expected a GPU id"},
      {R"({"DCGM Diagnostic": {"test_categories": [{"category": "H", "tests": [{"name": "m", "results": [
          {"entity_group_id": 1, "entity_id": 0, "status": "Fail", "warnings": [{"error_id": 3}]}]}]}]}})",
       "warnings/0: no \"warning\""},
  };
  for (const auto& [text, needle] : cases) {
    try {
      parse_dcgm_diag(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what() << " lacks " << needle;
      EXPECT_EQ(e.exit_code(), 5);
    }
  }
}

}  // namespace
}  // namespace gpuscale::health
