#include "world/activity.h"

#include <mutex>

namespace gpuscale {
namespace {

std::mutex g_mutex;
ActivitySnapshot g_now;

}  // namespace

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::idle: return "idle";
    case Phase::computing: return "computing";
    case Phase::collective: return "in collective";
    case Phase::waiting: return "waiting for peers";
  }
  return "unknown";
}

ActivitySnapshot current_activity() {
  ActivitySnapshot s;
  {
    std::lock_guard lock(g_mutex);
    s = g_now;
  }
  const auto p = current_progress();
  s.progress = p.steps;
  s.idle_s = p.idle_s;
  return s;
}

ActivityScope::ActivityScope(Phase phase, std::string doing) {
  std::lock_guard lock(g_mutex);
  saved_ = g_now;
  g_now = {phase, std::move(doing), 0, 0};
}

ActivityScope::~ActivityScope() {
  std::lock_guard lock(g_mutex);
  g_now = std::move(saved_);
}

}  // namespace gpuscale
