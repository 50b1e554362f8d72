#include "harness/run/run_cost.h"

#include <fstream>
#include <sstream>
#include <string>

namespace gpuscale {

void RunCost::add(Part part, Clock::time_point start, Clock::time_point end) {
  seconds_[static_cast<int>(part)] += std::chrono::duration<double>(end - start).count();
  if (!first_ || start < *first_) first_ = start;
  if (!last_ || end > *last_) last_ = end;
}

nlohmann::json RunCost::to_json() const {
  const double bench = seconds_[0], gather = seconds_[1], build = seconds_[2];
  const double span = first_ && last_ ? std::chrono::duration<double>(*last_ - *first_).count() : 0.0;
  const double other = std::max(0.0, span - bench - gather - build);
  nlohmann::json j = {{"rows", rows_},       {"benchmark_s", bench}, {"gather_s", gather},
                      {"build_s", build},    {"other_s", other},     {"measuring_s", span}};
  j["per_row_overhead_s"] = rows_ > 0 ? nlohmann::json((gather + build + other) / static_cast<double>(rows_)) : nullptr;
  const auto rss = peak_rss_bytes();
  j["rank0_peak_rss_bytes"] = rss ? nlohmann::json(*rss) : nullptr;
  return j;
}

RunCost& run_cost() {
  static RunCost cost;
  return cost;
}

std::optional<long long> peak_rss_from_status(const std::string& status_text) {
  std::istringstream in(status_text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmHWM:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    long long kib = -1;
    std::string unit;
    if (!(fields >> kib >> unit) || kib < 0 || unit != "kB") return std::nullopt;
    return kib * 1024;
  }
  return std::nullopt;
}

std::optional<long long> peak_rss_bytes() {
  std::ifstream f("/proc/self/status");
  if (!f) return std::nullopt;
  std::stringstream text;
  text << f.rdbuf();
  return peak_rss_from_status(text.str());
}

}  // namespace gpuscale
