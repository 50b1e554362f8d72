#include "analysis/outliers.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

#include "core/stats.h"
#include "text/number_text.h"

namespace gpuscale {
namespace {

bool measured(double v) { return std::isfinite(v) && v > 0; }
double nonneg(double v) { return std::isfinite(v) && v > 0 ? v : 0; }

// Small-sample consistency factor of the MAD (Croux and Rousseeuw, 1992): the MAD of few values
// underestimates the spread, so the band widens for small populations.
double small_sample_factor(std::size_t n) {
  constexpr double kFactor[] = {1, 1, 1.196, 1.495, 1.363, 1.206, 1.200, 1.140, 1.129, 1.107};
  if (n < std::size(kFactor)) return kFactor[n];
  return static_cast<double>(n) / (static_cast<double>(n) - 0.8);
}

std::string pct(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

}  // namespace

const char* outlier_kind_name(OutlierKind kind) {
  switch (kind) {
    case OutlierKind::gpu: return "gpu";
    case OutlierKind::node: return "node";
    case OutlierKind::pair: return "pair";
    case OutlierKind::group: return "group";
  }
  return "group";
}

OutlierFloor outlier_floor(const std::vector<OutlierSample>& samples, const OutlierRule& rule) {
  std::vector<double> values, downs;
  for (const auto& s : samples)
    if (measured(s.value)) {
      values.push_back(s.value);
      downs.push_back(nonneg(s.spread_down));
    }
  OutlierFloor f;
  if (values.size() < std::max<std::size_t>(rule.min_population, 1)) return f;
  f.population = values.size();
  f.median = median_of(values);
  std::vector<double> deviations;
  for (double v : values) deviations.push_back(std::abs(v - f.median));
  f.mad = median_of(deviations);
  f.typical_spread_down = median_of(downs);
  double margin = std::max({rule.fraction * f.median, kMadScale * small_sample_factor(f.population) * rule.mad_k * f.mad, f.typical_spread_down * f.median});
  // Figures near DBL_MAX can scale the MAD past the largest double: then no value is below the floor,
  // which stays finite (0) so that what is shown of it ("... below the median") is a number.
  if (!std::isfinite(margin)) margin = f.median;
  f.floor = std::max(0.0, f.median - margin);  // figures are not negative: a floor below 0 holds none
  return f;
}

std::vector<Outlier> find_outliers(OutlierKind kind, const std::vector<OutlierSample>& samples, const OutlierRule& rule) {
  std::vector<Outlier> out;
  const auto f = outlier_floor(samples, rule);
  if (f.population == 0 || !(f.median > 0)) return out;
  for (const auto& s : samples) {
    if (!measured(s.value)) continue;
    const double best = s.value * (1 + nonneg(s.spread_up));
    if (!(best < f.floor)) continue;
    out.push_back({kind, s.hosts, s.ranks, s.value, f.median, 1 - s.value / f.median,
                   fmt::format("{} below the median of {} {}s; its best repetition is {} below, beyond the noise floor "
                               "at {} below (--outlier {}, {} x MAD {}, typical repetition spread {})",
                               pct(1 - s.value / f.median), f.population, outlier_kind_name(kind),
                               pct(1 - best / f.median), pct(1 - f.floor / f.median), rule.fraction,
                               kMadScale * rule.mad_k, figure_text(f.mad), pct(f.typical_spread_down))});
  }
  return out;
}

std::vector<Outlier> matrix_outliers(const PairMatrix& m, OutlierKind member_kind, const OutlierRule& rule) {
  const std::size_t n = m.hosts.size();
  auto square = [n](const std::vector<std::vector<double>>& t, bool may_be_empty) {
    if (may_be_empty && t.empty()) return true;
    if (t.size() != n) return false;
    return std::all_of(t.begin(), t.end(), [n](const auto& row) { return row.size() == n; });
  };
  if (!square(m.values, false) || !square(m.spread_down, true) || !square(m.spread_up, true) ||
      (!m.ranks.empty() && m.ranks.size() != n))
    throw std::invalid_argument("matrix_outliers: values, spreads and ranks must match the hosts' count");
  auto ranks_of = [&](std::size_t i) { return m.ranks.empty() ? std::vector<int>{} : m.ranks[i]; };

  struct Cell {
    std::size_t i, j;
  };
  std::vector<Cell> cells;
  std::vector<OutlierSample> samples;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = m.directed ? 0 : i + 1; j < n; ++j) {
      if (i == j || !measured(m.values[i][j])) continue;
      cells.push_back({i, j});
      OutlierSample s;
      s.hosts = {m.hosts[i], m.hosts[j]};
      s.ranks = ranks_of(i);
      const auto rj = ranks_of(j);
      s.ranks.insert(s.ranks.end(), rj.begin(), rj.end());
      s.value = m.values[i][j];
      s.spread_down = m.spread_down.empty() ? 0 : m.spread_down[i][j];
      s.spread_up = m.spread_up.empty() ? 0 : m.spread_up[i][j];
      samples.push_back(std::move(s));
    }
  const auto f = outlier_floor(samples, rule);
  std::vector<Outlier> out;
  if (f.population == 0 || !(f.median > 0)) return out;

  std::vector<bool> slow(cells.size());
  std::vector<int> pairs_of(n, 0), slow_of(n, 0);
  std::vector<std::vector<double>> values_of(n), down_of(n), up_of(n);
  for (std::size_t c = 0; c < cells.size(); ++c) {
    const auto& s = samples[c];
    slow[c] = s.value * (1 + nonneg(s.spread_up)) < f.floor;
    for (std::size_t member : {cells[c].i, cells[c].j}) {
      ++pairs_of[member];
      slow_of[member] += slow[c] ? 1 : 0;
      values_of[member].push_back(s.value);
      down_of[member].push_back(nonneg(s.spread_down));
      up_of[member].push_back(nonneg(s.spread_up));
    }
  }
  // The members' own figures: the median of each one's pairs. Their spread is much smaller than the
  // pairs' (each is a median of many), so a member whose pairs are all somewhat slow stands out here
  // even where single pairs drown in the noise.
  std::vector<OutlierSample> members(n);
  for (std::size_t i = 0; i < n; ++i)
    if (pairs_of[i] >= 2)
      members[i] = {{m.hosts[i]}, ranks_of(i), median_of(values_of[i]), median_of(down_of[i]), median_of(up_of[i])};
  const auto mf = outlier_floor(members, rule);
  std::vector<bool> suspect(n, false);
  const char* member = outlier_kind_name(member_kind);
  const std::string subject = m.member_name.empty() ? std::string(member) : m.member_name;
  for (std::size_t i = 0; i < n; ++i) {
    const bool most_slow = slow_of[i] >= 2 && 2 * slow_of[i] > pairs_of[i];
    const bool median_slow = mf.population > 0 && measured(members[i].value) &&
                             members[i].value * (1 + members[i].spread_up) < mf.floor;
    if (!most_slow && !median_slow) continue;
    suspect[i] = true;
    const double v = median_of(values_of[i]);
    out.push_back({member_kind, {m.hosts[i]}, ranks_of(i), v, f.median, 1 - v / f.median,
                   most_slow ? fmt::format("{} of its {} measured pairs are below the noise floor at {} below the median "
                                           "of {} pairs: the {} is suspect, not its links",
                                           slow_of[i], pairs_of[i], pct(1 - f.floor / f.median), f.population, subject)
                             : fmt::format("the median of its {} pairs is {} below the median of the {} {}s' medians, "
                                           "beyond their noise floor at {} below: the {} is suspect, not its links",
                                           pairs_of[i], pct(1 - v / mf.median), mf.population, member,
                                           pct(1 - mf.floor / mf.median), subject)});
  }
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (!slow[c] || suspect[cells[c].i] || suspect[cells[c].j]) continue;
    auto o = samples[c];
    out.push_back({OutlierKind::pair, o.hosts, o.ranks, o.value, f.median, 1 - o.value / f.median,
                   fmt::format("{} below the median of {} pairs, beyond the noise floor at {} below, while neither "
                               "{} is slow in most of its pairs: the link between them is suspect",
                               pct(1 - o.value / f.median), f.population, pct(1 - f.floor / f.median), subject)});
  }
  return out;
}

nlohmann::json outlier_json(const Outlier& o) {
  return {{"kind", outlier_kind_name(o.kind)}, {"hosts", o.hosts}, {"ranks", o.ranks}, {"value", o.value},
          {"median", o.median}, {"deficit", o.deficit}, {"reason", o.reason}};
}

}  // namespace gpuscale
