#pragma once
// What this rank is doing right now, for the watchdog's and the sentinel's reports: when a point stalls,
// the rank stuck in its own work says so, and the ranks blocked in a collective or a harness barrier
// say they are waiting for peers. The run loop and the MPI seam mark their phases with ActivityScope;
// another thread (watchdog, sentinel) reads a consistent snapshot. Cheap: one uncontended mutex per
// mark, never inside a timed region.
// A snapshot also carries the rank's progress (core/step_progress.h), which the watchdog judges.
#include <cstdint>
#include <string>

#include "core/step_progress.h"

namespace gpuscale {

enum class Phase {
  idle,        // between points (planning, writing, agreeing)
  computing,   // in this rank's own work: kernels, GEMMs, allocation, verification
  collective,  // inside a measured collective: waiting for peers or moving data
  waiting,     // in a harness barrier, gather or agreement: waiting for peers
};
const char* phase_name(Phase p);  // "idle", "computing", "in collective", "waiting for peers"

struct ActivitySnapshot {
  Phase phase = Phase::idle;
  std::string doing;  // "STREAM arrays", "all_reduce", "gather of the point's results"
  std::uint64_t progress = 0;  // steps completed since the process started (core/step_progress.h)
  double idle_s = 0;           // seconds since the last step (or since the process started, before any)
};

ActivitySnapshot current_activity();

// Marks a phase while in scope; restores the previous one when left (scopes nest).
class ActivityScope {
 public:
  ActivityScope(Phase phase, std::string doing);
  ~ActivityScope();
  ActivityScope(const ActivityScope&) = delete;
  ActivityScope& operator=(const ActivityScope&) = delete;

 private:
  ActivitySnapshot saved_;
};

}  // namespace gpuscale
