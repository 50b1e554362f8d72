#include "harness/guard/stop_signal.h"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"

namespace gpuscale {
namespace {

volatile std::sig_atomic_t g_signal = 0;
volatile std::sig_atomic_t g_announce = 0;

constexpr int kStopSignals[] = {SIGUSR1, SIGTERM, SIGINT};

// The interrupt notice's sockets (lock-free atomics: read in the signal handler).
std::atomic<const int*> g_notice_fds{nullptr};
std::atomic<int> g_notice_count{0};
static_assert(std::atomic<const int*>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

void send_interrupt_notice() {
  const int n = g_notice_count.load();
  const int* fds = g_notice_fds.load();
  if (fds == nullptr) return;
  const std::size_t len = std::strlen(kInterruptNotice);
  for (int i = 0; i < n; ++i) {
    // Non-blocking, no SIGPIPE: a peer that is gone or not reading must not delay the exit.
    const ssize_t ignored = ::send(fds[i], kInterruptNotice, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)ignored;
  }
}

// Only async-signal-safe calls here: write(2), send(2), strlen and _exit(2).
void say(const char* text) {
  if (g_announce) {
    const ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));
    (void)ignored;
  }
}

extern "C" void on_stop_signal(int sig) {
  if (g_signal != 0) {
    say("gpuscale: second signal: exiting now (every point finished so far is in the result journal: gpuscale seal FILE)\n");
    send_interrupt_notice();
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

void set_interrupt_notice(const int* fds, int count) {
  g_notice_count = 0;  // never a count larger than the array the handler may see
  g_notice_fds = fds;
  g_notice_count = fds ? count : 0;
}

void clear_interrupt_notice(const int* fds) {
  if (g_notice_fds.load() != fds) return;
  g_notice_count = 0;
  g_notice_fds = nullptr;
}

}  // namespace gpuscale
