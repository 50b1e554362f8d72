#include "core/fault_kinds.h"

#include <stdexcept>

namespace gpuscale {
namespace {

constexpr FaultKindInfo kTable[] = {
#define GPUSCALE_FAULT_KIND(id, name, field, number, planted_as, judged_by, acts) \
  {FaultKind::id, name, ItemField::field, ItemNumber::number, FaultKind::planted_as, DetectionRule::judged_by, acts},
#include "core/fault_kind_table.def"
};

// Each row sits at its enumerator's index, so fault_kind_info is an index (the enum is made from the
// same rows in the same order).
constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < std::size(kTable); ++i)
    if (static_cast<std::size_t>(kTable[i].kind) != i) return false;
  return true;
}
static_assert(rows_in_enum_order());

std::string_view field_text(ItemField field) {
  switch (field) {
    case ItemField::none: return "";
    case ItemField::optional_gpu: return "[:GPU]";
    case ItemField::gpu: return ":GPU";
    case ItemField::rail: return ":RAIL";
    case ItemField::gpu_pair: return ":A-B";
    case ItemField::probability: return ":P";
    case ItemField::seconds: return ":SECONDS";
  }
  return "";
}

}  // namespace

std::span<const FaultKindInfo> fault_kinds() { return kTable; }

const FaultKindInfo& fault_kind_info(FaultKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  if (i >= std::size(kTable)) throw std::logic_error("fault_kind_info: not a FaultKind");
  return kTable[i];
}

std::string_view fault_kind_name(FaultKind kind) { return fault_kind_info(kind).name; }

std::optional<FaultKind> fault_kind_named(std::string_view name) {
  for (const auto& k : kTable)
    if (k.name == name) return k.kind;
  return std::nullopt;
}

std::string item_syntax(const FaultKindInfo& info) {
  if (!info.has_item()) return "";
  return std::string(info.name) + ":HOST" + std::string(field_text(info.field)) +
         (info.number == ItemNumber::factor ? ":F" : ":RATE");
}

}  // namespace gpuscale
