#include "analysis/outliers.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

#include <boost/math/distributions/students_t.hpp>
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

// What set the bar, for the reasons: "3.9 x the robust spread 1.2%, false-alarm 0.01 over 48 judged;
// typical repetition spread 0.8%; --min-effect 3.0%" (and "--outlier 10.0%" when one is set).
std::string bar_terms(const OutlierFloor& f, const OutlierRule& rule) {
  std::string out = fmt::format("{:.1f} x the robust spread {}, false-alarm {} over {} judged; typical repetition "
                                "spread {}; --min-effect {}",
                                f.z, pct(f.sigma), rule.false_alarm, std::max(f.population, rule.judged),
                                pct(f.typical_spread_down), pct(rule.min_effect));
  if (rule.fraction > 0) out += "; --outlier " + pct(rule.fraction);
  return out;
}

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

constexpr std::size_t kMinOneSided = 16;

double mad_degrees_of_freedom(std::size_t population) {
  return std::max(1.0, kMadEfficiency * (static_cast<double>(population) - 1));
}

double outlier_cut(std::size_t population, std::size_t judged, double false_alarm) {
  const double members = static_cast<double>(std::max(population, judged));
  const double df = mad_degrees_of_freedom(population);
  const double p = std::clamp(false_alarm / std::max(members, 1.0), 1e-300, 0.5);
  return boost::math::quantile(boost::math::complement(boost::math::students_t(df), p));
}


double detectable_slowdown(std::size_t population, double bar, double sigma, double typical_spread_up,
                           double spread_up_sigma) {
  // A prediction interval: one more member's draw, its spread known only from the population's MAD.
  const double q = boost::math::quantile(boost::math::students_t(mad_degrees_of_freedom(population)), 0.95) *
                   std::sqrt(1 + 1 / static_cast<double>(std::max<std::size_t>(population, 1)));
  const double reach = (1 + typical_spread_up) * std::exp(q * std::hypot(sigma, spread_up_sigma));
  return std::clamp(1 - (1 - std::clamp(bar, 0.0, 1.0)) / reach, 0.0, 1.0);
}

OutlierFloor outlier_floor(const std::vector<OutlierSample>& samples, const OutlierRule& rule) {
  std::vector<double> values, downs, ups;
  for (const auto& s : samples)
    if (measured(s.value)) {
      values.push_back(s.value);
      downs.push_back(nonneg(s.spread_down));
      ups.push_back(nonneg(s.spread_up));
    }
  OutlierFloor f;
  if (values.size() < std::max<std::size_t>(rule.min_population, 1)) return f;
  f.population = values.size();
  f.median = median_of(values);
  // The MAD, or the median deviation below the median where that is wider: the rule judges the slow
  // side, and a population whose slow side is longer than its fast side (a pair is as fast as its
  // slower member; throttling only slows) would hide its slow tail in a two-sided MAD. For symmetric
  // noise both are the same. The side alone breaks down sooner (at a quarter of its values: a sick
  // node's pairs are 2/n of a matrix's), so it may widen the MAD to twice at most, and only with 6
  // values or more below (a population of about 32).
  std::vector<double> deviations, below;
  for (double v : values) {
    deviations.push_back(std::abs(v - f.median));
    if (v < f.median) below.push_back(f.median - v);
  }
  f.mad = median_of(deviations);
  if (below.size() >= kMinOneSided) f.mad = std::clamp(median_of(below), f.mad, 2 * f.mad);
  f.typical_spread_down = median_of(downs);
  f.typical_spread_up = median_of(ups);
  for (auto& u : ups) u = std::abs(u - f.typical_spread_up);
  f.spread_up_sigma = kMadScale * median_of(ups);
  f.sigma = kMadScale * small_sample_factor(f.population) * f.mad / f.median;
  // Figures near DBL_MAX can scale the MAD past the largest double: then the bar is the whole median,
  // and the floor stays finite (0) so that what is shown of it ("... below the median") is a number.
  if (!std::isfinite(f.sigma)) f.sigma = 1;
  f.sigma = std::max(f.sigma, nonneg(rule.min_sigma));
  // A fixed floor (--outlier) is the fixed rule: the band of kFixedMadK robust deviations with no
  // false-alarm correction, as before the noise-aware rule (docs/fleet.md says how the two differ).
  f.z = rule.fraction > 0 ? kFixedMadK : outlier_cut(f.population, std::max(f.population, rule.judged), rule.false_alarm);
  f.bar = std::min(1.0, std::max({f.z * f.sigma, f.typical_spread_down, nonneg(rule.min_effect), nonneg(rule.fraction)}));
  f.floor = f.median * (1 - f.bar);  // figures are not negative: a bar of 1 holds none
  f.detectable = detectable_slowdown(f.population, f.bar, f.sigma, f.typical_spread_up, f.spread_up_sigma);
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
                   fmt::format("{} below the median of {} {}s; its best repetition is {} below, beyond the bar at {} "
                               "below ({})",
                               pct(1 - s.value / f.median), f.population, outlier_kind_name(kind),
                               pct(1 - best / f.median), pct(f.bar), bar_terms(f, rule))});
  }
  return out;
}

std::size_t matrix_judged(const PairMatrix& m) {
  const std::size_t n = m.hosts.size();
  std::size_t pairs = 0;
  std::vector<int> pairs_of(n, 0);
  for (std::size_t i = 0; i < n && i < m.values.size(); ++i)
    for (std::size_t j = m.directed ? 0 : i + 1; j < n && j < m.values[i].size(); ++j)
      if (i != j && measured(m.values[i][j])) {
        ++pairs;
        ++pairs_of[i];
        ++pairs_of[j];
      }
  return pairs + static_cast<std::size_t>(std::count_if(pairs_of.begin(), pairs_of.end(), [](int c) { return c >= 2; }));
}

std::vector<Outlier> matrix_outliers(const PairMatrix& m, OutlierKind member_kind, const OutlierRule& rule,
                                     MatrixFloors* floors) {
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
  if (floors) floors->pairs = f;
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
  OutlierRule member_rule = rule;
  member_rule.min_sigma = std::max(rule.min_sigma, f.sigma);
  const auto mf = outlier_floor(members, member_rule);
  if (floors) floors->members = mf;
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
  // A member slow in several of its pairs but not beyond its peers is the slow end of the fleet's own
  // spread (a pair is as fast as its slower member, so every pair of the slowest healthy member sits at
  // its speed): those pairs are its, not links'. A sick link is slow in one pair of each member.
  // Counted without the pairs a suspect member explains.
  std::vector<int> slow_apart(n, 0);
  for (std::size_t c = 0; c < cells.size(); ++c)
    if (slow[c] && !suspect[cells[c].i] && !suspect[cells[c].j]) {
      ++slow_apart[cells[c].i];
      ++slow_apart[cells[c].j];
    }
  auto explained = [&](std::size_t i) { return suspect[i] || slow_apart[i] >= 2; };
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (!slow[c] || explained(cells[c].i) || explained(cells[c].j)) continue;
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
