#include "harness/plan/rep_order_plan.h"

namespace gpuscale {

std::vector<RepTurn> repetition_turns(std::size_t rounds, int reps, RepOrder order) {
  std::vector<RepTurn> out;
  const std::size_t n = reps > 0 ? static_cast<std::size_t>(reps) : 0;
  out.reserve(rounds * n);
  if (order == RepOrder::blocked) {
    for (std::size_t q = 0; q < rounds; ++q)
      for (int r = 0; r < static_cast<int>(n); ++r) out.push_back({q, r});
    return out;
  }
  for (int r = 0; r < static_cast<int>(n); ++r)
    for (std::size_t i = 0; i < rounds; ++i) out.push_back({r % 2 == 0 ? i : rounds - 1 - i, r});
  return out;
}

std::vector<std::size_t> turns_of_round(const std::vector<RepTurn>& turns, std::size_t round) {
  std::vector<std::size_t> out;
  for (std::size_t t = 0; t < turns.size(); ++t)
    if (turns[t].round == round) {
      const auto rep = static_cast<std::size_t>(turns[t].rep);
      if (out.size() <= rep) out.resize(rep + 1);
      out[rep] = t;
    }
  return out;
}

RowOrder row_order(std::size_t rounds, RepOrder asked, std::optional<int> gated_reps) {
  if (rounds <= 1) return RowOrder::concurrent;
  if (asked == RepOrder::interleaved && gated_reps && *gated_reps > 0) return RowOrder::interleaved;
  return RowOrder::blocked;
}

std::string_view row_order_name(RowOrder order) {
  switch (order) {
    case RowOrder::concurrent: return "concurrent";
    case RowOrder::blocked: return "blocked";
    case RowOrder::interleaved: return "interleaved";
  }
  return "blocked";
}

}  // namespace gpuscale
