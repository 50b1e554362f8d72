#pragma once
// Progress lines on stderr during long sweeps: what is being measured, done/total and an ETA. At most
// one line a second (plus the last), so logs stay readable.
#include <chrono>
#include <cstddef>
#include <string>

namespace gpuscale {

class Progress {
 public:
  Progress(std::size_t total, bool enabled);
  void step(const std::string& what);  // one point finished

 private:
  std::size_t total_, done_ = 0;
  bool enabled_;
  std::chrono::steady_clock::time_point start_, last_;
};

// "1:05" / "1:02:03"
std::string format_duration(double seconds);

}  // namespace gpuscale
