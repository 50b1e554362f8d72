// The checkpoint storage benchmark's rows of `gpuscale run`'s option table (--ckpt-dir, --ckpt-size,
// --ckpt-rank-size), added in the table's order by add_checkpoint_options (harness/options/run_option_table.h).
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/units.h"
#include "harness/benchmarks/checkpoint/checkpoint_plan.h"
#include "harness/options/run_option_table.h"
#include "harness/options/run_option_values.h"

namespace gpuscale {

using nlohmann::json;

void add_checkpoint_options(std::vector<RunOption>& t) {
  using O = RunOptions;
  t.push_back({.names = "--ckpt-dir", .key = "ckpt_dir",
               .help = "storage: the directory the checkpoint benchmarks (--benchmarks storage) write their shards "
                       "to and remove them from; it must exist, be writable and hold the checkpoint",
               .parse = [](O& o, const std::string& s, const std::string&) { o.ckpt_dir = s; },
               .recorded = Recorded::label, .record = [](const O& o) { return json(o.ckpt_dir); }});
  t.push_back({.names = "--ckpt-size", .key = "ckpt_bytes",
               .help = "storage: the whole checkpoint, split over the ranks of each GPU count (default 16G, --quick "
                       "256M; a multiple of 4K)",
               .parse = [](O& o, const std::string& s, const std::string& what) {
                 o.ckpt_bytes = parse_size(s, what);
                 if (const auto why = ckpt_size_problem(*o.ckpt_bytes, 1))
                   throw Error(fmt::format("invalid {} '{}': {}", what, s, *why));
               },
               .recorded = Recorded::shapes,
               .record = [](const O& o) { return o.ckpt_bytes ? json(*o.ckpt_bytes) : json(nullptr); },
               .adopt = [](O& o, const json& j) {
                 if (j.is_null()) return o.ckpt_bytes.reset();
                 if (!j.is_number_unsigned() || ckpt_size_problem(j.get<std::uint64_t>(), 1))
                   throw BadRecordedValue{"a checkpoint size, a positive multiple of 4096, or null"};
                 o.ckpt_bytes = j.get<std::uint64_t>();
               }});
  t.push_back({.names = "--ckpt-rank-size", .key = "ckpt_rank_bytes",
               .help = "storage: each rank's shard instead of the whole checkpoint: at k ranks the checkpoint is k times "
                       "it (IOR's fixed block per process; a multiple of 4K; not with --ckpt-size)",
               .parse = [](O& o, const std::string& s, const std::string& what) {
                 o.ckpt_rank_bytes = parse_size(s, what);
                 if (const auto why = ckpt_size_problem(*o.ckpt_rank_bytes, 1))
                   throw Error(fmt::format("invalid {} '{}': {}", what, s, *why));
               },
               .recorded = Recorded::shapes,
               .record = [](const O& o) { return o.ckpt_rank_bytes ? json(*o.ckpt_rank_bytes) : json(nullptr); },
               .adopt = [](O& o, const json& j) {
                 if (j.is_null()) return o.ckpt_rank_bytes.reset();
                 if (!j.is_number_unsigned() || ckpt_size_problem(j.get<std::uint64_t>(), 1))
                   throw BadRecordedValue{"a shard size, a positive multiple of 4096, or null"};
                 o.ckpt_rank_bytes = j.get<std::uint64_t>();
               }});
}

}  // namespace gpuscale
