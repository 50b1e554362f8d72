#include "harness/progress.h"

#include <cstdio>

#include <fmt/format.h>

namespace gpuscale {

std::string format_duration(double seconds) {
  auto s = static_cast<long long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

Progress::Progress(std::size_t total, bool enabled)
    : total_(total), enabled_(enabled), start_(std::chrono::steady_clock::now()), last_(start_) {}

void Progress::step(const std::string& what) {
  ++done_;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (done_ != total_ && now - last_ < std::chrono::seconds(1)) return;
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double eta = elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_);
  fmt::print(stderr, "gpuscale: [{}/{}] {} (elapsed {}, ETA {})\n", done_, total_, what, format_duration(elapsed),
             format_duration(eta));
  std::fflush(stderr);
}

}  // namespace gpuscale
