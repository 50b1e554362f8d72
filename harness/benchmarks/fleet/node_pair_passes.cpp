#include "harness/benchmarks/fleet/node_pair_passes.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "harness/benchmarks/fleet/pair_confirm.h"
#include "harness/options/outlier_rule.h"
#include "harness/plan/plan.h"

namespace gpuscale::fleet {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Rail `rail`'s unmeasured nodes, said in the matrix: "" when every node has a GPU on it.
std::string missing_rail_note(const Placement& where, std::size_t rail) {
  std::vector<std::string> missing;
  for (std::size_t n = 0; n < where.ranks.size(); ++n)
    if (where.ranks[n].size() <= rail) missing.push_back(fmt::format("{} ({} GPU(s))", where.node_hosts[n], where.ranks[n].size()));
  if (missing.empty()) return "";
  return fmt::format("rail {}: not measured for {}: no local rank {} there, so no rail counterpart", rail,
                     fmt::join(missing, ", "), rail);
}

}  // namespace

NodePairPasses::NodePairPasses(const Benchmark& inner, const nlohmann::json& params, const Placement& where, bool by_rail,
                               RunContext& ctx, RankMeasurement& out)
    : inner_(inner), params_(params), where_(where), ctx_(ctx), out_(out), by_rail_(by_rail),
      m_(static_cast<std::size_t>(where.topo.nodes)), me_(ctx.group.world_rank()),
      my_node_(static_cast<std::size_t>(where.topo.node_of_rank[static_cast<std::size_t>(me_)])) {
  for (const auto& rs : where.ranks) rails_ = std::max(rails_, rs.size());
  matrices_ = by_rail ? rails_ : 1;
  // --tiling sequential: the pairs of a round take turns, and within a pair its rails, each alone,
  // as the tiled groups do: on a machine of more ranks than cores, concurrent pairs that finish
  // first leave a slow one every core, which hides a slow NIC's extra time, and two rails at once
  // share the cores (their two-rank exchanges spun 1.3-7.9 GB/s apart on 16 ranks / 2 cores, too
  // wide a spread to name a 10x NIC). Concurrent tiling runs every pair and rail of a round at once.
  in_turns_ = ctx.opts.tiling == TilingMode::sequential;
  rail_turns_ = in_turns_ && by_rail ? std::max<std::size_t>(1, rails_) : 1;
}

NodePairPasses::Seat NodePairPasses::seat_in(const PairRound& round) const {
  Seat s;
  for (std::size_t i = 0; i < round.pairs.size(); ++i) {
    const auto& np = round.pairs[i];
    if (static_cast<std::size_t>(np.a) != my_node_ && static_cast<std::size_t>(np.b) != my_node_) continue;
    s.a = static_cast<std::size_t>(np.a);
    s.b = static_cast<std::size_t>(np.b);
    s.pair = static_cast<int>(i);
    if (!by_rail_) {
      s.colour = static_cast<int>(i);
      continue;
    }
    for (const auto& g : rail_groups(where_.ranks[s.a], where_.ranks[s.b]))
      if (g.a == me_ || g.b == me_) {
        s.matrix = static_cast<std::size_t>(g.rail);
        s.colour = static_cast<int>(i * rails_ + s.matrix);
      }
  }
  return s;
}

std::vector<PairCells> NodePairPasses::pass(const std::vector<PairRound>& rounds) {
  // Each rank measures in at most one pair a round: one record a round.
  std::vector<double> mine;
  for (const auto& round : rounds) {
    const Seat seat = seat_in(round);
    PairResult r;
    double cell = kNaN;
    const std::size_t turns = in_turns_ ? round.pairs.size() * rail_turns_ : 1;
    for (std::size_t turn = 0; turn < turns; ++turn) {
      {
        const bool my_turn = !in_turns_ || (seat.pair == static_cast<int>(turn / rail_turns_) &&
                                            (rail_turns_ == 1 || seat.matrix == turn % rail_turns_));
        Group pair(ctx_.group, my_turn ? seat.colour : -1, ctx_.group.rank());
        PairComm made = open_pair(pair, ctx_);  // every rank: a split from the job's communicator
        if (pair.member()) {
          const auto& hosts = where_.node_hosts;
          const auto name = by_rail_ ? fmt::format("rail {} of pair {} + {}", seat.matrix, hosts[seat.a], hosts[seat.b])
                                     : fmt::format("pair {} + {}", hosts[seat.a], hosts[seat.b]);
          r = run_pair(inner_, params_, pair, made, ctx_, name, out_);
          cell = static_cast<double>((seat.matrix * m_ + seat.a) * m_ + seat.b);
          if (std::isfinite(r.value)) out_.reps.push_back(r.value);
        }
      }
      // The others wait for the turn asleep, not spinning in the next turn's split: their cores
      // are the measuring pair's (world/patient_wait.h).
      if (in_turns_) ctx_.group.turn_barrier();
    }
    add_record(mine, cell, r);
  }
  return gather_cells(ctx_.group, mine, matrices_, m_);
}

PairCells NodePairPasses::node_cells(const std::vector<PairCells>& cells) const {
  return by_rail_ ? slowest_rail(cells) : cells.front();
}

std::vector<std::vector<int>> NodePairPasses::rail_ranks(std::size_t rail) const {
  std::vector<std::vector<int>> out;
  for (const auto& rs : where_.ranks) out.push_back(rail < rs.size() ? std::vector<int>{rs[rail]} : std::vector<int>{});
  return out;
}

// The run's own outlier rule on the node-pair matrix, then on each rail's.
bool NodePairPasses::suspects_in(const std::vector<PairCells>& cells) const {
  bool any = pass_has_suspects(node_cells(cells), where_.node_hosts, where_.ranks, outlier_rule_of(ctx_.opts));
  for (std::size_t r = 0; by_rail_ && !any && r < rails_; ++r)
    any = pass_has_suspects(cells[r], where_.node_hosts, rail_ranks(r), outlier_rule_of(ctx_.opts));
  return any;
}

std::vector<NodePair> NodePairPasses::suspects_of(const std::vector<PairCells>& cells) const {
  auto pairs = suspect_pairs(node_cells(cells), where_.node_hosts, where_.ranks, outlier_rule_of(ctx_.opts));
  for (std::size_t r = 0; by_rail_ && r < rails_; ++r)
    for (const auto& np : suspect_pairs(cells[r], where_.node_hosts, rail_ranks(r), outlier_rule_of(ctx_.opts))) pairs.push_back(np);
  return pairs;
}

// When the first pass shows a suspect in the node-pair matrix or in any rail's (the run's own outlier
// rule), every pair is measured again under the same schedule and load, and each cell of each rail
// keeps its better pass (best of N, as STREAM reports). A sick node, NIC or link is slow in both; a
// process starved for a moment (16 ranks on 2 cores, a noisy neighbour) is slow in one. The pairs
// behind what is still suspect then run once more, each alone: a third pass of their own, at most
// twice the schedule's rounds (two odd nodes' pairs; more is not a few odd nodes or links, and is left
// as it stands).
int NodePairPasses::confirm(std::vector<PairCells>& cells, const std::vector<PairRound>& schedule) {
  if (!suspects_in(cells)) return 1;
  // The second pass takes the rounds backward, as blocked tiled groups' second pass does: a cell
  // measured early in the first pass comes late in the second, so a slow stretch of the machine that
  // lasts some rounds does not fall on the same cells twice. A pair's repetitions themselves stay in
  // its turn (rep_order "blocked"): spreading them over the rounds would keep every round's
  // communicators alive at once, or make one per repetition (0.5-2 s each at scale, against a 6 ms
  // repetition, docs/fleet.md "What a full matrix costs").
  const auto second = pass(std::vector<PairRound>(schedule.rbegin(), schedule.rend()));
  for (std::size_t r = 0; r < matrices_; ++r) cells[r] = best_cells(cells[r], second[r]);
  const auto again = third_pass_pairs(suspects_of(cells), schedule.size());
  if (again.empty()) return 2;
  const auto third = pass(rounds_of(again));
  for (std::size_t r = 0; r < matrices_; ++r) cells[r] = best_cells(cells[r], third[r]);
  return 3;
}

nlohmann::json NodePairPasses::matrices_json(const std::vector<PairCells>& cells) const {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& rs : where_.ranks) ranks.push_back(rs);
  auto list = nlohmann::json::array({matrix_json("node", where_.node_hosts, where_.node_hosts, ranks, node_cells(cells))});
  if (!by_rail_) return list;
  list[0]["note"] = "each pair's slowest rail";
  for (std::size_t r = 0; r < rails_; ++r) {
    auto e = matrix_json("rail", where_.node_hosts, where_.node_hosts, rail_ranks(r), cells[r]);
    e["rail"] = r;
    if (const auto note = missing_rail_note(where_, r); !note.empty()) e["note"] = note;
    list.push_back(std::move(e));
  }
  return list;
}

}  // namespace gpuscale::fleet
