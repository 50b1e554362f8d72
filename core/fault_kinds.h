#pragma once
// The fault kinds, one enum for everyone, made from the one table of kinds (core/fault_kind_table.def):
// what the run plants (GPUSCALE_TEST_FAULT, core/fault_plan.h) and what the detection-power simulator
// plants in its synthetic fleets (tools/detection_power/) are the same kinds by the same names.
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gpuscale {

enum class FaultKind {
#define GPUSCALE_FAULT_KIND(id, ...) id,
#include "core/fault_kind_table.def"
};

// The field of a GPUSCALE_TEST_FAULT item between HOST and its number, which also says which ranks of
// HOST the item acts on: all of them, unless it names a GPU, a rail or a GPU pair.
enum class ItemField {
  none,          // name:HOST:NUMBER
  optional_gpu,  // name:HOST[:GPU]:NUMBER (without GPU: every GPU of HOST)
  gpu,           // name:HOST:GPU:NUMBER
  rail,          // name:HOST:RAIL:NUMBER (the NIC of local rank RAIL)
  gpu_pair,      // name:HOST:A-B:NUMBER (both ends)
  probability,   // name:HOST:P:NUMBER (each timed repetition drawn with probability P)
  seconds,       // name:HOST:SECONDS:NUMBER (from SECONDS after the run started)
};
// The item's last field: a factor F > 1 (the work takes F times as long), or a RATE in (0, 1].
enum class ItemNumber { factor, rate };

// The rule detection power judges a kind by (tools/detection_power/detection_power.h, Judge).
enum class DetectionRule {
  none,     // not simulated
  fleet,    // the fleet's outlier rule
  history,  // the history's regression rule, under its default window and with --since
};

// One row of the table (core/fault_kind_table.def says what each column means).
struct FaultKindInfo {
  FaultKind kind;
  std::string_view name;
  ItemField field;
  ItemNumber number;
  FaultKind planted_as;  // itself when the kind has an item of its own
  DetectionRule judged_by;
  std::string_view acts;
  bool has_item() const { return planted_as == kind; }
};

std::span<const FaultKindInfo> fault_kinds();  // every kind, in the table's order
const FaultKindInfo& fault_kind_info(FaultKind kind);
std::string_view fault_kind_name(FaultKind kind);                 // "slow-gpu"
std::optional<FaultKind> fault_kind_named(std::string_view name);  // nullopt for an unknown name
// Its GPUSCALE_TEST_FAULT item as the docs and messages write it ("slow-gpu:HOST[:GPU]:F"); "" for a
// kind without an item of its own.
std::string item_syntax(const FaultKindInfo& info);

}  // namespace gpuscale
