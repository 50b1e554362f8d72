#pragma once
// The modes of `gpuscale run` that RunOptions holds as enums, with their names on the command line and
// in plan.options: --tiling (how the ranks are cut into groups at each count, harness/plan/tiling.h),
// --rep-order (in what order groups that take turns time their repetitions, harness/plan/rep_order_plan.h) and
// --burn (the burn-in's kinds, harness/benchmarks/burn/burn_plan.h). They live with the options so
// that RunOptions, the lowest floor of harness/, needs nothing above it.
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale {

enum class TilingMode {
  concurrent,  // every group measures at once (what a training job sees: groups share the fabric)
  sequential,  // groups measure one after another (each in isolation)
  first,       // only the first k ranks of the packed order measure (before issue 14)
};

// "concurrent" | "sequential" | "first"; anything else throws gpuscale::Error (exit 2) naming --tiling.
TilingMode parse_tiling_mode(std::string_view text);
std::string tiling_mode_name(TilingMode mode);

enum class RepOrder {
  interleaved,  // every group's first repetition, then every group's second ... (the machine's drift shared)
  blocked,      // each group times all its repetitions in its own turn, in two passes (before issue 44)
};

// "interleaved" | "blocked"; anything else throws gpuscale::Error (exit 2) naming --rep-order.
RepOrder parse_rep_order(std::string_view text);
std::string rep_order_name(RepOrder order);

enum class BurnKind {
  gemm,        // the GEMM benchmark's largest shape, back to back (compute, power, thermals)
  stream,      // STREAM triad (memory)
  all_reduce,  // all_reduce over every rank of the job (links, NICs)
  mix,         // the backend's data-parallel step: GEMMs with their gradients all-reduced (training)
};

std::string_view burn_kind_name(BurnKind kind);
// "gemm,mix" -> the kinds, in the order given. Throws gpuscale::Error (one line, exit 2) for an unknown
// or repeated kind or an empty item.
std::vector<BurnKind> parse_burn_kinds(std::string_view text);
// The kinds a burn-in runs: `given` (--burn), or mix when none was given.
inline std::vector<BurnKind> burn_kinds_or_default(const std::vector<BurnKind>& given) {
  return given.empty() ? std::vector<BurnKind>{BurnKind::mix} : given;
}
// The kind named `name` (as burn_kind_name writes it); throws gpuscale::Error otherwise.
BurnKind burn_kind_of(std::string_view name);

}  // namespace gpuscale
