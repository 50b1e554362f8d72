#pragma once
// `dcgmi diag -r N -j`'s JSON read into one result per test and GPU. Pure, unit-tested.
//
// The layout, from NVIDIA/DCGM's source (dcgmi/Diag.cpp HelperJsonBuildOutput / HelperJsonAddResult /
// HelperJsonAddEntities, key names in nvvs/include/NvvsJsonStrings.h; the schema DCGM's own tests
// check, testing/python3/dcgm_diag_schema.json):
//   DCGM 4.x: {"DCGM Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [{"name":
//     "memory", "results": [{"entity_group": "GPU", "entity_group_id": 1, "entity_id": 0, "status":
//     "Fail", "warnings": [{"warning": TEXT, "error_id": N, "error_category": N, "error_severity": N}],
//     "info": [TEXT, ...]}], "test_summary": {"status": ...}}]}], "runtime_error": TEXT (instead, when
//     the diagnostic could not run)}, "entity_groups": [{"entity_group": "GPU", "entity_group_id": 1,
//     "entities": [{"entity_id": 0, "serial_num": TEXT (absent when DCGM has none), "device_id": TEXT}]}],
//     "metadata": {"version": TEXT, "Driver Version Detected": TEXT}}
//   DCGM 3.x: {"DCGM GPU Diagnostic": {"test_categories": [... "results": [{"gpu_id": "0" (a string),
//     "status": ..., "warnings": [...], "info": TEXT (one string)}] ...], "runtime_error", "version"},
//     "GPU Device Serials": {"0": TEXT}, "GPU Device IDs": [TEXT]}; its level-one (software) tests have
//     one result each, with "gpu_id" (an integer) only when an error names a GPU, and their warnings'
//     text under "warnings" (v3.3.9 dcgmi/Diag.cpp HelperJsonAddLevelOneResults / HelperJsonAddResult).
// A result that names no entity is its test's outcome on the node (DcgmTestSummary).
// "status" is "Pass", "Skip" or "Fail" in both: dcgmi writes a result DCGM judged a warning as "Fail"
// in JSON (HelperDisplayDiagResult's default, DDR_NO_DISPLAY_WARN); "Warn" is its text output's word,
// read here too. Results of other entity groups (CPUs, NVSwitches) are counted, not judged.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale::health {

struct DcgmWarning {
  std::string text;
  std::optional<long long> error_id, error_category, error_severity;  // dcgm_errors.h's codes
};

struct DcgmResult {
  std::string category, test;
  int gpu_id = 0;      // DCGM's GPU id (entity_id / gpu_id)
  std::string status;  // "Pass", "Fail", "Warn", "Skip", as DCGM wrote it
  std::vector<DcgmWarning> warnings;
  std::vector<std::string> info;
};

// A test's outcome that names no GPU: its test_summary, or its results that name no entity.
struct DcgmTestSummary {
  std::string category, test, status;
  std::vector<DcgmWarning> warnings;
  bool has_gpu_results = false;
};

struct DcgmDiag {
  std::string format;                 // "DCGM 4.x" or "DCGM 3.x" (the top-level key it found)
  std::optional<std::string> version, driver;
  std::optional<std::string> runtime_error;  // the diagnostic did not run: DCGM's reason
  std::vector<int> gpu_ids;           // the GPUs DCGM lists (entity_groups / serials), sorted
  std::map<int, std::string> serials; // by GPU id, where DCGM gives one
  std::vector<DcgmResult> results;    // GPU results only
  std::vector<DcgmTestSummary> tests;
  int other_entity_results = 0;       // results for entities that are not GPUs
};

// Throws gpuscale::Error naming what is wrong (not JSON, neither layout, a field of the wrong type,
// an unknown status) with the JSON pointer of the offending value.
DcgmDiag parse_dcgm_diag(std::string_view text);

}  // namespace gpuscale::health
