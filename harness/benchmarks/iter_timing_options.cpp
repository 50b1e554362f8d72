// The collectives' per-iteration timing rows of `gpuscale run`'s option table (-I/--iter-timing,
// -K/--skip-iters: nccl-tests 2.19's -I and -K), added after -n/--iters by add_iter_timing_options
// (harness/options/run_option_table.h). What the pass measures: harness/benchmarks/collectives.cpp.
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "core/units.h"
#include "harness/benchmarks/defaults.h"
#include "harness/options/run_option_table.h"

namespace gpuscale {

using nlohmann::json;

namespace {

// -K must leave a sample to summarise: nccl-tests disables it with a warning, gpuscale refuses it.
void check_skip(const RunOptions& o, const OptionText& text) {
  const int iters = collective_methodology(o).iters;
  if (o.skip_iters >= iters)
    throw Error(fmt::format("invalid -K/--skip-iters '{}': it must be below the iterations per pass (-n/--iters: {})",
                            terminal_quote(text("skip_iters")), iters));
}

}  // namespace

void add_iter_timing_options(std::vector<RunOption>& t) {
  using O = RunOptions;
  t.push_back({.names = "-I,--iter-timing", .key = "iter_timing",
               .help = "collectives: 1 (default) times each of -n operations on its own after the timed repetitions "
                       "(the ranks meet before each; nccl-tests' -I 1 -z 3): rows get p50, p99 and max per iteration "
                       "and the slowest rank; 0: no such pass",
               .initial = "1",
               .parse = [](O& o, const std::string& s, const std::string& what) {
                 if (s != "0" && s != "1") throw Error(fmt::format("invalid {} '{}': expected 0 or 1", what, terminal_quote(s)));
                 o.iter_timing = s == "1";
               },
               .recorded = Recorded::shapes, .record = [](const O& o) { return json(o.iter_timing); },
               .adopt = [](O& o, const json& j) {
                 if (!j.is_boolean()) throw BadRecordedValue{"true or false"};
                 o.iter_timing = j.get<bool>();
               }});
  t.push_back({.names = "-K,--skip-iters", .key = "skip_iters",
               .help = "collectives: leading iterations of the per-iteration pass left out of its p50, p99, max and "
                       "straggler (kept in the exported series; nccl-tests' -K; default 0)",
               .initial = "0",
               .parse = [](O& o, const std::string& s, const std::string& what) {
                 o.skip_iters = s == "0" ? 0 : parse_positive_int(s, what);
               },
               .check = check_skip, .recorded = Recorded::shapes, .record = [](const O& o) { return json(o.skip_iters); },
               .adopt = [](O& o, const json& j) {
                 if (!j.is_number_integer() || j.get<long long>() < 0 || j.get<long long>() > 1000000)
                   throw BadRecordedValue{"a count of iterations, 0 or more"};
                 o.skip_iters = j.get<int>();
               }});
}

}  // namespace gpuscale
