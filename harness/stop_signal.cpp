#include "harness/stop_signal.h"

#include <unistd.h>

#include <csignal>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"

namespace gpuscale {
namespace {

volatile std::sig_atomic_t g_signal = 0;
volatile std::sig_atomic_t g_announce = 0;

constexpr int kStopSignals[] = {SIGUSR1, SIGTERM, SIGINT};

// Only async-signal-safe calls here: write(2) and _exit(2).
void say(const char* text) {
  if (g_announce) {
    const ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));
    (void)ignored;
  }
}

extern "C" void on_stop_signal(int sig) {
  if (g_signal != 0) {
    say("gpuscale: second signal: exiting now (the result file holds every point finished so far)\n");
    _exit(kExitInterrupted);
  }
  g_signal = sig;
  switch (sig) {
    case SIGUSR1: say("gpuscale: SIGUSR1 received (time limit near): stopping after the current benchmark point\n"); break;
    case SIGTERM: say("gpuscale: SIGTERM received: stopping after the current benchmark point\n"); break;
    default: say("gpuscale: interrupt received: stopping after the current benchmark point (again to stop at once)\n");
  }
}

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // a signal must not make a blocking call (MPI, file I/O) fail half-way
  for (int sig : kStopSignals) sigaction(sig, &sa, nullptr);
}

void set_stop_announce(bool on) { g_announce = on ? 1 : 0; }

int stop_requested() { return g_signal; }

std::string stop_reason(int signal) {
  const char* name = signal == SIGUSR1 ? "SIGUSR1" : signal == SIGTERM ? "SIGTERM" : signal == SIGINT ? "SIGINT" : nullptr;
  return name ? fmt::format("interrupted by {}", name) : fmt::format("interrupted by signal {}", signal);
}

void reset_stop_request() { g_signal = 0; }

}  // namespace gpuscale
