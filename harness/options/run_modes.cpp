#include "harness/options/run_modes.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "core/units.h"

namespace gpuscale {
namespace {

constexpr std::array kKinds = {BurnKind::gemm, BurnKind::stream, BurnKind::all_reduce, BurnKind::mix};

}  // namespace

TilingMode parse_tiling_mode(std::string_view text) {
  if (text == "concurrent") return TilingMode::concurrent;
  if (text == "sequential") return TilingMode::sequential;
  if (text == "first") return TilingMode::first;
  throw Error(fmt::format("invalid --tiling '{}': use concurrent, sequential or first", text));
}

std::string tiling_mode_name(TilingMode mode) {
  switch (mode) {
    case TilingMode::concurrent: return "concurrent";
    case TilingMode::sequential: return "sequential";
    case TilingMode::first: return "first";
  }
  return "concurrent";
}

RepOrder parse_rep_order(std::string_view text) {
  if (text == "interleaved") return RepOrder::interleaved;
  if (text == "blocked") return RepOrder::blocked;
  throw Error(fmt::format("invalid --rep-order '{}': use interleaved or blocked", text));
}

std::string rep_order_name(RepOrder order) { return order == RepOrder::blocked ? "blocked" : "interleaved"; }

std::string_view burn_kind_name(BurnKind kind) {
  switch (kind) {
    case BurnKind::gemm: return "gemm";
    case BurnKind::stream: return "stream";
    case BurnKind::all_reduce: return "all_reduce";
    case BurnKind::mix: return "mix";
  }
  return "?";
}

BurnKind burn_kind_of(std::string_view name) {
  for (BurnKind k : kKinds)
    if (burn_kind_name(k) == name) return k;
  throw Error(fmt::format("unknown --burn kind '{}': expected gemm, stream, all_reduce or mix", terminal_quote(name)));
}

std::vector<BurnKind> parse_burn_kinds(std::string_view text) {
  std::vector<BurnKind> out;
  for (const auto& item : split_list(text, "--burn")) {
    const BurnKind k = burn_kind_of(item);
    if (std::find(out.begin(), out.end(), k) != out.end())
      throw Error(fmt::format("--burn names {} twice", burn_kind_name(k)));
    out.push_back(k);
  }
  return out;
}

}  // namespace gpuscale
