#pragma once
// Continuing an interrupted run (gpuscale run --resume FILE), and the run options a result file records.
//
// plan.options records every option that shapes the plan's points or how they are measured (quick,
// benchmarks, dtypes, sizes, repetitions, threads, ...) and a few that only label results (peaks files
// and link peaks, the watchdog). A resumed run takes each shaping option it was not given from the
// file, and refuses one given differently: rows measured with other methodologies must not mix in one
// file. The points and the seed are the file's own (plan.point_list, plan.seed), so the remaining points
// are exactly the interrupted run's, with the same inputs. The launch must match too: backend, world
// size, nodes and ranks per node, and the device model of every rank.
//
// A point is kept (not measured again) when the file holds a valid row (ok or skipped) at every GPU
// count of the plan; a point with any row missing, invalid or failed is measured again at every count,
// replacing its old rows. Rows carry the attempt that measured them (0: the original run), and
// `attempts` lists the earlier runs. Pure functions on JSON, unit-tested and fuzzed.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/options/options.h"

namespace gpuscale {

// plan.options of a result file: every recorded option of the run option table (harness/options/run_option_table.h).
nlohmann::json plan_options_json(const RunOptions& o);

// (plan.options key, command-line flag) of every recorded option, for RunOptions::given.
std::vector<std::pair<std::string, std::string>> recorded_option_flags();

// The options of a run resumed from `doc` (a valid result document): what the command line did not
// give (o.given) comes from the file (backend, seed and plan.options); a shaping option given
// differently throws gpuscale::Error naming it, both values and `file`.
RunOptions adopt_recorded_options(const nlohmann::json& doc, RunOptions o, const std::string& file);

// This launch, as the check needs it.
struct LaunchShape {
  std::string backend;
  std::vector<std::string> hosts;    // host of every rank
  std::vector<std::string> devices;  // device model of every rank
};

struct ResumePlan {
  nlohmann::json plan;              // {"points": [...], "seed": n}: the file's plan, as the runner uses it
  std::vector<bool> done;           // per point: valid at every GPU count, kept
  nlohmann::json kept_rows;         // the rows of the kept points, unchanged, in file order
  std::vector<std::size_t> kept_points;  // each kept row's point (its place in plan.points)
  nlohmann::json attempts;          // the earlier runs, the file's own last (for the new file's `attempts`)
  int attempt = 1;                  // this run's attempt number (rows it measures carry it)
  std::size_t remaining() const;    // points to measure
};

// Whether a benchmark measures once, at the job's full size (the registry's BenchmarkInfo::whole_job).
using WholeJobRule = std::function<bool(const std::string& benchmark)>;

// Checks `doc` (a valid result document) against this launch and splits its points. Throws
// gpuscale::Error with one line naming `file` and the first mismatch. A point is whole-job when
// plan.point_list marks it so, or when `whole_job` says so of its benchmark: files written before the
// list kept the mark (their fleet points were measured again).
ResumePlan plan_resume(const nlohmann::json& doc, const LaunchShape& launch, const std::string& file,
                       const WholeJobRule& whole_job = {});

// plan.point_list: the planned points ({benchmark, params}) in order.
nlohmann::json point_list(const nlohmann::json& plan);

// Sorts rows into plan order (the point's position in `point_list`, then gpu_count); stable.
void order_rows_by_plan(nlohmann::json& results, const nlohmann::json& point_list);

}  // namespace gpuscale
