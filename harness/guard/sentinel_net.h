#pragma once
// The sentinel's socket plumbing (harness/guard/sentinel.h): the options that make a dead node noticed, whole
// lines over a stream socket, connecting with a timeout, the self-pipe that wakes a poll loop (and
// stops its thread), and the words for why a connection ended. POSIX sockets; no MPI.
#include <sys/types.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuscale {

inline constexpr int kNodeSilenceSeconds = 30;  // keepalive: idle 10 s, then 4 probes 5 s apart

// Bytes to lines, for a stream socket: at most kMaxLine bytes per line (a longer one is an error).
class LineBuffer {
 public:
  static constexpr std::size_t kMaxLine = 64 * 1024;
  // Appends bytes; returns the complete lines now available. Throws std::length_error on a line too long.
  std::vector<std::string> feed(const char* data, std::size_t n);

 private:
  std::string pending_;
};

namespace sentinel_net {

void close_fd(int& fd);
// Keepalive and a user timeout (a peer whose node is gone is noticed within kNodeSilenceSeconds), no
// Nagle delay, and a bounded send (a peer that stops reading never blocks the sender for long).
void tune(int fd);
// Writes the message as one line (MSG_NOSIGNAL: a closed peer is an error, not SIGPIPE). False on failure.
bool send_line(int fd, const nlohmann::json& msg);
// Why a read that returned `n` with errno `err` ended the connection, in words.
std::string closed_how(ssize_t n, int err);
// A socket listening on every interface, an ephemeral port: dual-stack IPv6 (which reaches IPv4 peers
// too; *v6 true) or, on an IPv4-only host, IPv4. Throws std::runtime_error.
int listen_any(bool* v6, int* port);
// A connected blocking socket to address:port within timeout_ms, or -1 with `why`.
int connect_to(const std::string& address, int port, int timeout_ms, std::string* why);
// This host's addresses in the order peers should try them: IPv4, then IPv6 (when `with_v6`; no
// link-local), loopback last.
std::vector<std::string> local_addresses(bool with_v6);

// A self-pipe: wake() makes the read end readable, drain() empties it. Throws std::runtime_error.
void make_pipe(int fds[2]);
void wake(int fd);
void drain(int fd);
// Stops a poll loop's thread: sets `stop` under `mutex`, wakes the loop through `wake_fd`, and joins
// the thread (unless called from it).
void stop_poll_thread(std::mutex& mutex, bool& stop, int wake_fd, std::thread& thread);

}  // namespace sentinel_net
}  // namespace gpuscale
