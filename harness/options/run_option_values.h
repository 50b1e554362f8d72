#pragma once
// What an option's value is, apart from which options exist: the option table
// (harness/options/run_option_table.h) says how each option is spelled, helped, recorded and in what
// order it is read; this file says how a value of each kind that is more than a size, a count or a
// text is read from the command line, recorded in plan.options and taken back by a resumed run: the
// value lists (time-reduce, transports, placements), each defined once, the list-valued options, and
// the checked numbers (--threads, --outlier, --pairs-rounds, --max-time). dtypes and reduction ops are
// core's and collectives' own lists (parse_dtype, parse_redop).
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/options/options.h"

namespace gpuscale {

// -a/--time-reduce: how the ranks' times of a collective combine; nccl_tests is nccl-tests' -a number.
struct TimeReduceValue {
  std::string_view name;
  char nccl_tests;
};
std::span<const TimeReduceValue> time_reduce_values();  // avg, min, max, rank0
// --transports: the collective transports a run may compare.
std::span<const std::string_view> transport_values();  // nccl, mpi
// --placement: out-of-place (false) or in-place (true), as recorded; `alias` is also accepted on the
// command line.
struct PlacementValue {
  std::string_view name, alias;
  bool in_place;
};
std::span<const PlacementValue> placement_values();  // out-of-place, in-place
std::string_view placement_name(bool in_place);

// "a, b or c" (last = " or ") / "a and/or b": value lists in messages.
std::string join_values(std::span<const std::string_view> values, std::string_view sep, std::string_view last);

// A recorded value that is not what its option holds: `expected` says what it should be.
struct BadRecordedValue {
  std::string expected;
};

std::vector<std::string_view> time_reduce_names();  // in time_reduce_values() order
std::vector<std::string_view> placement_names();    // in placement_values() order
// A recorded array of strings; throws BadRecordedValue.
std::vector<std::string> strings(const nlohmann::json& j);

// From command-line text; throw gpuscale::Error naming `what` and the bad item.
void parse_ops(RunOptions& o, const std::string& text, const std::string& what);
void parse_placements(RunOptions& o, const std::string& text, const std::string& what);
void parse_skews(RunOptions& o, const std::string& text, const std::string& what);
// train-step: --layout's items must parse (training/parallel_layout.h); --model's are preset names or
// files, read when the plan is made.
void parse_layouts(RunOptions& o, const std::string& text, const std::string& what);
void parse_time_reduce(RunOptions& o, const std::string& text, const std::string& what);
void parse_transports(RunOptions& o, const std::string& text, const std::string& what);
// nccl-tests' habits (docs/usage.md "Coming from nccl-tests"): -d takes nccl-tests' type names and
// `all`; -c 0/1 (gpuscale always checks: 0 leaves a note); -o refuses a reduction op name (nccl-tests'
// -o is the op: --ops here).
void parse_dtypes(RunOptions& o, const std::string& text, const std::string& what);
void parse_check(RunOptions& o, const std::string& text, const std::string& what);
void parse_output(RunOptions& o, const std::string& text, const std::string& what);
// --threads: a whole number from 1 to `limit`, the logical CPUs this process may run on
// (visible_cores(), sched_getaffinity): more cannot run at once, and a typo such as 100000 would
// otherwise start that many threads per rank.
int visible_cores();
int parse_thread_count(const std::string& text, const std::string& what, int limit);

// Fleet coverage (docs/fleet.md). // --outlier: a fraction strictly between 0 and 1 ("0.1" = 10% below the median). "0", "1", "1.5",
// "-0.1", "nan", "inf", "", "10%" and trailing junk are refused.
double parse_outlier_fraction(std::string_view text, std::string_view flag = "--outlier");

// --pairs-rounds: a whole number of tournament rounds, at least 1 (at most INT_MAX). More rounds than
// the tournament has are allowed: they mean the full matrix (sampled_rounds caps them).
int parse_pairs_rounds(std::string_view text);
// --max-time's text: 0 (no limit), or a positive number of seconds with an optional unit s, m, h or d
// ("90m", "24h", "3600"). Throws gpuscale::Error naming `what` and the text.
double parse_max_time(const std::string& text, const std::string& what);

// To plan.options, and back (the adopt_* throw BadRecordedValue).
nlohmann::json record_dtypes(const RunOptions& o);
void adopt_dtypes(RunOptions& o, const nlohmann::json& j);
nlohmann::json record_ops(const RunOptions& o);
void adopt_ops(RunOptions& o, const nlohmann::json& j);
void adopt_layouts(RunOptions& o, const nlohmann::json& j);
nlohmann::json record_skews(const RunOptions& o);
void adopt_skews(RunOptions& o, const nlohmann::json& j);
nlohmann::json record_placements(const RunOptions& o);
void adopt_placements(RunOptions& o, const nlohmann::json& j);
nlohmann::json record_gemm_shapes(const RunOptions& o);
void adopt_gemm_shapes(RunOptions& o, const nlohmann::json& j);
void adopt_time_reduce(RunOptions& o, const nlohmann::json& j);
void adopt_transports(RunOptions& o, const nlohmann::json& j);
void adopt_threads(RunOptions& o, const nlohmann::json& j);  // the same limit as parse_thread_count

}  // namespace gpuscale
