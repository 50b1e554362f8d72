#pragma once
// Stopping a run cleanly on a signal: SIGUSR1 (Slurm's time-limit warning, `#SBATCH --signal=B:USR1@120`
// forwarded by the job scripts), SIGTERM (scancel, the time limit itself) and SIGINT (Ctrl-C). The first
// signal only records a stop request; the runner checks it between result rows, all ranks agree to stop
// at the same row, the partial result file is written (summary.complete false, summary.interrupted
// saying why) and gpuscale exits with kExitInterrupted. A second signal exits at once: the file on
// disk then holds every benchmark point finished before it (it is rewritten after each one).
#include <string>

namespace gpuscale {

// Installs the handlers. Safe to call again (e.g. after MPI_Init, in case the MPI library replaced them).
// `announce`: print one line on stderr when a signal arrives (rank 0 only, so a job log gets one line).
void install_stop_handlers(bool announce);
// The first signal received since start (or the last reset), or 0.
int stop_requested();
// "interrupted by SIGUSR1"
std::string stop_reason(int signal);
// Forgets a recorded request (tests).
void reset_stop_request();

}  // namespace gpuscale
