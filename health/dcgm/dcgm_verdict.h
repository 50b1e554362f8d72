#pragma once
// `gpuscale health --dcgm rN`: what `dcgmi diag -r N -j` said, as checks in each GPU's verdict. Pure,
// unit-tested: the program's outcome (health/dcgm/program_run.h) in, per-GPU findings, notes and test
// results out, or the one reason the diagnostic could not be read.
//
// The rules (docs/health.md, "DCGM diagnostics"):
// - each test's result for a GPU is a check "dcgm" of that GPU, with DCGM's own words (terminal-safe);
// - "Fail" is FAIL, unless every error DCGM gives with it has severity DCGM_ERROR_MONITOR (1: "can
//   perform workload, but needs to be monitored"): WARN. dcgmi's JSON cannot say "Warn": it writes a
//   result with Diag::HelperDisplayDiagResult's default DDR_NO_DISPLAY_WARN, which turns DCGM's WARN into
//   "Fail" (NVIDIA/DCGM dcgmi/Diag.cpp HelperJsonAddResult, dcgmi/Diag.h). Which results are warnings is
//   each plugin's choice, and each error's severity is fixed by its code (dcgmlib/src/dcgm_errors.c's
//   table; meanings in dcgmlib/dcgm_errors.h: 2 ISOLATE "cannot perform workload", 6 RESET "drain and
//   reset GPU", ...), so the severity is what the JSON still says of the GPU: only MONITOR says it can
//   work. "Warn" (the text output's word) is WARN; "Skip" is a note saying skipped (never a pass);
//   "Pass" adds nothing. The severities are the thresholds file's "dcgm" rules (health/thresholds.h);
// - a test's outcome that names no GPU (its test_summary, or results naming no entity as DCGM 3.x's
//   software tests write them) holds for every GPU; skipped, it is a node note;
// - DCGM's GPUs are ours by serial number where DCGM gives one for each and ours are unique, else by
//   index (DCGM's GPU id is NVML's index when no GPUs are hidden from DCGM); the report says which;
// - a GPU of ours with no result, where DCGM gave others one, is a finding of its own (WARN by
//   default); a DCGM GPU that is none of ours is a node note;
// - the program not started, killed at the deadline, ended by a signal, more output than the limit,
//   a DCGM runtime_error, output that is not DCGM's JSON, or no result at all: the diagnostic could not
//   be read (`problem`), the node's check is incomplete (exit 5). A non-zero exit with a document of
//   results is what dcgmi does when a test fails (DCGM_ST_NVVS_ERROR): the results are judged; with no
//   failure among them it is a finding on the node (WARN by default).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "health/dcgm/dcgm_diag_json.h"
#include "health/dcgm/program_run.h"
#include "health/gpu_state.h"
#include "health/verdict.h"

namespace gpuscale::health {

inline constexpr int kDcgmErrorMonitor = 1;  // DCGM_ERROR_MONITOR, dcgmlib/dcgm_errors.h

struct DcgmRequest {
  int level = 0;             // 1-4: `dcgmi diag -r N`; 0: not asked
  double timeout_s = 0;      // the deadline for the whole diagnostic
  std::string program = "dcgmi";  // a name looked up in $PATH, or a path
};

// "r1".."r4" -> 1..4; throws gpuscale::Error (exit 5, `gpuscale health`'s bad-flag code) otherwise.
int parse_dcgm_level(const std::string& text);
// The deadline a level gets unless --dcgm-timeout says otherwise: DCGM's own durations for the levels
// (dcgmi-diag docs: r1 seconds, r2 about 2 minutes, r3 about 15 minutes, r4 longer) with room to spare.
double default_dcgm_timeout_s(int level);
// The arguments after the program: {"diag", "-r", "2", "-j"}.
std::vector<std::string> dcgm_diag_args(int level);
inline constexpr std::size_t kMaxDcgmOutputBytes = 64ULL << 20;

struct DcgmGpuOutcome {
  Verdict verdict;        // the "dcgm" findings and notes of this GPU
  nlohmann::json tests = nlohmann::json::array();  // [{category, test, status, warnings, info}]
  int passed = 0, skipped = 0, warned = 0, failed = 0;
};

struct DcgmOutcome {
  int level = 0;
  std::string program;             // the path run
  std::optional<std::string> problem;  // the diagnostic could not be read: why (one line)
  std::string matched_by;          // "serial number" or "index (...why...)"
  std::vector<DcgmGpuOutcome> gpus;  // one per GPU given, in order (empty with a problem)
  Verdict node;                    // findings on the node as a whole, notes (DCGM GPUs not ours)
  nlohmann::json summary;          // the report's node "dcgm" object
};

DcgmOutcome judge_dcgm_run(const DcgmRequest& req, const std::string& program, const ProgramRun& run,
                           const std::vector<GpuIdentity>& gpus, const DcgmRules& rules);

// " [DCGM r2: 3 Pass, 1 Skip]" for a GPU's line.
std::string dcgm_line_part(int level, const DcgmGpuOutcome& g);

}  // namespace gpuscale::health
