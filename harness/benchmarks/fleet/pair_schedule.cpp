#include "harness/benchmarks/fleet/pair_schedule.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "core/random.h"

namespace gpuscale {
namespace {

// Circle method over `labels` (label[i] is the node at position i): position 0 stays, the others turn
// one step per round. An odd count gets a phantom position whose partner has the bye.
std::vector<PairRound> circle(const std::vector<int>& labels, int max_rounds) {
  const int n = static_cast<int>(labels.size());
  std::vector<PairRound> rounds;
  if (n < 2) return rounds;
  const int m = n + (n % 2);  // even: positions 0..m-1, position m-1 is the phantom when n is odd
  const int turning = m - 1;
  const int count = std::min(turning, max_rounds);
  rounds.resize(static_cast<std::size_t>(count));
  for (int r = 0; r < count; ++r) {
    auto& round = rounds[static_cast<std::size_t>(r)];
    round.pairs.reserve(static_cast<std::size_t>(m / 2));
    // Position p (p >= 1) holds turning-slot (p - 1 + r) mod turning, i.e. position 1 + that slot.
    auto at = [&](int p) { return p == 0 ? 0 : 1 + (p - 1 + r) % turning; };
    for (int i = 0; i < m / 2; ++i) {
      const int x = at(i), y = at(m - 1 - i);
      if (x >= n || y >= n) {  // the phantom: the other one has the bye
        round.bye = labels[static_cast<std::size_t>(x >= n ? y : x)];
        continue;
      }
      const int a = labels[static_cast<std::size_t>(x)], b = labels[static_cast<std::size_t>(y)];
      round.pairs.push_back({std::min(a, b), std::max(a, b)});
    }
  }
  return rounds;
}

}  // namespace

std::vector<PairRound> round_robin(int nodes) {
  std::vector<int> labels(static_cast<std::size_t>(std::max(nodes, 0)));
  std::iota(labels.begin(), labels.end(), 0);
  return circle(labels, std::numeric_limits<int>::max());
}

std::vector<PairRound> sampled_rounds(int nodes, int rounds, std::uint64_t seed) {
  if (rounds < 1) throw std::invalid_argument("sampled_rounds: rounds must be at least 1");
  std::vector<int> labels(static_cast<std::size_t>(std::max(nodes, 0)));
  std::iota(labels.begin(), labels.end(), 0);
  // Fisher-Yates with the counter-based generator: the same seed gives the same order on every rank.
  constexpr std::uint64_t kStream = 0x7061697273ULL;  // "pairs"
  for (std::size_t i = labels.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(random_int(seed, kStream, i, 0, static_cast<std::int64_t>(i - 1)));
    std::swap(labels[i - 1], labels[j]);
  }
  return circle(labels, rounds);
}

std::vector<RailGroup> rail_groups(const std::vector<int>& ranks_a, const std::vector<int>& ranks_b) {
  std::vector<RailGroup> out;
  const std::size_t rails = std::min(ranks_a.size(), ranks_b.size());
  for (std::size_t i = 0; i < rails; ++i) out.push_back({static_cast<int>(i), ranks_a[i], ranks_b[i]});
  return out;
}

std::vector<GpuPair> gpu_pair_schedule(int gpus, bool ordered) {
  std::vector<GpuPair> out;
  for (int s = 0; s < gpus; ++s)
    for (int d = ordered ? 0 : s + 1; d < gpus; ++d)
      if (s != d) out.push_back({s, d});
  return out;
}

}  // namespace gpuscale
