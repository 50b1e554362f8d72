// world/patient_wait.h: the pauses of a rank waiting its turn (World::turn_barrier).
#include <gtest/gtest.h>

#include <chrono>

#include "world/patient_wait.h"

namespace gpuscale {
namespace {

using std::chrono::microseconds;

TEST(PatientWait, PausesDoubleFromTheFirstUpToTheCap) {
  const PatientWait w;
  EXPECT_EQ(patient_pause(w, 0), w.first);
  EXPECT_EQ(patient_pause(w, 1), 2 * w.first);
  EXPECT_EQ(patient_pause(w, 2), 4 * w.first);
  microseconds waited{0};
  int polls = 0;
  for (; patient_pause(w, polls) < w.cap; ++polls) {
    EXPECT_GT(patient_pause(w, polls + 1), patient_pause(w, polls));
    waited += patient_pause(w, polls);
  }
  // A turn that ends at once costs the first pause; the cap is reached within a few polls (before
  // ~2 caps of waiting), and then holds however long the turn lasts.
  EXPECT_LT(waited, 2 * w.cap);
  for (const int p : {polls, polls + 1, 1000, 1 << 30}) EXPECT_EQ(patient_pause(w, p), w.cap) << p;
}

TEST(PatientWait, ACapBelowTheFirstPauseIsTheCap) {
  EXPECT_EQ(patient_pause({microseconds{500}, microseconds{100}}, 0), microseconds{100});
  EXPECT_EQ(patient_pause({microseconds{3}, microseconds{10}}, 2), microseconds{10});
}

}  // namespace
}  // namespace gpuscale
