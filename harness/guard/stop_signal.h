#pragma once
// Stopping a run cleanly on a signal: SIGUSR1 (Slurm's time-limit warning, `#SBATCH --signal=B:USR1@120`
// forwarded by the job scripts), SIGTERM (scancel, the time limit itself) and SIGINT (Ctrl-C). The first
// signal only records a stop request; the runner checks it after each whole point (every GPU count of
// it), all ranks agree to stop after the same point, the partial result file is written (summary.complete false, summary.interrupted
// saying why) and gpuscale exits with kExitInterrupted. A second signal exits at once: every point
// finished before it is then in the result journal (appended as each point ends), which `gpuscale seal
// FILE` or `--resume FILE` reads.
#include <string>

namespace gpuscale {

// Installs the handlers. Safe to call again (e.g. after MPI_Init, in case the MPI library replaced them).
void install_stop_handlers();
// Whether a signal is announced with one line on stderr: on for rank 0 while it measures (so a job log
// gets one line), off otherwise: a launcher that ends the job after a rank failed a check sends SIGTERM
// to the others, which then exit as they were going to, without a misleading "stopping" line.
void set_stop_announce(bool on);

// Announcing while in scope (the runner's measuring loop), whatever way the scope is left.
class StopAnnouncement {
 public:
  explicit StopAnnouncement(bool on) { set_stop_announce(on); }
  ~StopAnnouncement() { set_stop_announce(false); }
  StopAnnouncement(const StopAnnouncement&) = delete;
  StopAnnouncement& operator=(const StopAnnouncement&) = delete;
};
// The first signal received since start (or the last reset), or 0.
int stop_requested();
// "interrupted by SIGUSR1"
std::string stop_reason(int signal);
// Forgets a recorded request (tests).
void reset_stop_request();

// Sockets that hear kInterruptNotice when a second signal ends this process at once: the sentinel's
// connections (harness/guard/sentinel.h), so that peers report this rank as interrupted rather than lost.
// The fds must stay open until cleared with set_interrupt_notice(nullptr, 0); the caller that set them
// clears them (a later set replaces an earlier one).
inline constexpr const char* kInterruptNotice = "{\"msg\":\"interrupted\"}\n";
void set_interrupt_notice(const int* fds, int count);
// Clears the sockets only when `fds` is the array set last (a sentinel clearing its own).
void clear_interrupt_notice(const int* fds);

}  // namespace gpuscale
