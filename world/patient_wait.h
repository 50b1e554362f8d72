#pragma once
// How a rank waits its turn without taking a core: the pauses between polls of a barrier that only
// hands the cores over (sequential tiling's turns, the node pairs' turns; World::turn_barrier).
// MPI_Barrier spins (Open MPI polls, or yields and polls again when oversubscribed), so ranks that
// wait take the cores that the measuring group needs: on 16 ranks sharing 2 cores, 14 spinning ranks
// put time-correlated noise into every turn; on a GPU node, they take the host cores that drive the
// GPUs being measured. Pure: unit-tested without MPI (tests/unit/world/test_patient_wait.cpp).
#include <algorithm>
#include <chrono>

namespace gpuscale {

// The first pause is short, so a turn that ends at once costs the waiters little; each pause doubles
// up to the cap, so a long turn costs them one wake-up per cap. The cap bounds what waiting adds to a
// turn's hand-over: at most one cap beyond the turn itself, never inside a timed region.
struct PatientWait {
  std::chrono::microseconds first{20};
  std::chrono::microseconds cap{2000};
};

// The pause after `polls` unanswered polls (0 for the first): first x 2^polls, at most the cap.
inline std::chrono::microseconds patient_pause(const PatientWait& w, int polls) {
  auto p = w.first;
  for (int i = 0; i < polls && p < w.cap; ++i) p *= 2;
  return std::min(p, w.cap);
}

}  // namespace gpuscale
