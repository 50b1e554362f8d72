#pragma once
// One outside program run to its end under a deadline: `gpuscale health --dcgm` runs `dcgmi diag` this
// way. The thin seam around fork/exec: stdout kept up to a byte limit (more kills the program), the
// tail of stderr kept for the message, the whole process group killed at the deadline, so a hung tool
// never hangs the check. What the outcome means is decided elsewhere (health/dcgm/dcgm_verdict.h, pure).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpuscale::health {

struct ProgramRun {
  bool started = false;
  std::string why_not_started;  // exec failed (set with started == false)
  bool timed_out = false;       // killed at the deadline
  bool too_much_output = false; // killed: stdout passed the byte limit
  std::optional<int> exit_status;  // its exit status when it exited (0-255)
  std::optional<int> signal;       // the signal that ended it otherwise
  std::string out;                 // stdout (at most the limit)
  std::string err_tail;            // the last 4 KiB of stderr
  double seconds = 0;
};

// `name` as the shell would find it: a path with '/' as given when it is an executable file, else
// the first executable of that name in $PATH. nullopt when there is none.
std::optional<std::string> find_program(const std::string& name);

// Runs argv[0] (a path) with argv, stdin from /dev/null, in its own process group.
ProgramRun run_program(const std::vector<std::string>& argv, double timeout_s, std::size_t max_out_bytes);

}  // namespace gpuscale::health
