#pragma once
// User-facing errors. Anything thrown as gpuscale::Error reaches the user as one line
// ("gpuscale: <message>") and the exit code it carries; see docs/reliability.md for the codes.
#include <stdexcept>
#include <string>

namespace gpuscale {

// Process exit codes. Kept stable: scripts and Slurm epilogs test them.
enum ExitCode : int {
  kExitOk = 0,
  kExitInvalidResult = 1,  // a measurement failed verification or a benchmark failed
  kExitUsage = 2,          // bad flags, bad input files, bad environment
  kExitNoDevice = 3,       // the requested backend has no usable device
  kExitInterrupted = 4,    // stopped by a signal (SIGUSR1 time-limit warning, SIGTERM, SIGINT): partial results
  kExitWatchdog = 5,       // a benchmark point made no progress for its watchdog budget: partial results
  kExitRankLost = 6,       // a rank died or its node stopped answering: partial results
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, int exit_code = kExitUsage)
      : std::runtime_error(what), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace gpuscale
