#include "core/step_progress.h"

#include <atomic>
#include <chrono>

namespace gpuscale {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::atomic<std::uint64_t> g_steps{0};
std::atomic<std::int64_t> g_last_ns{now_ns()};  // the process's start until the first step

}  // namespace

void note_progress() {
  g_last_ns.store(now_ns(), std::memory_order_relaxed);
  g_steps.fetch_add(1, std::memory_order_relaxed);
}

ProgressReading current_progress() {
  ProgressReading r;
  r.steps = g_steps.load(std::memory_order_relaxed);
  const std::int64_t idle_ns = now_ns() - g_last_ns.load(std::memory_order_relaxed);
  r.idle_s = idle_ns > 0 ? static_cast<double>(idle_ns) * 1e-9 : 0.0;
  return r;
}

}  // namespace gpuscale
