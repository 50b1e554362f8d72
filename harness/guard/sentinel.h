#pragma once
// The sentinel: an out-of-band TCP connection from every rank to rank 0, watched by one small thread on
// each side, so that a rank that dies is noticed within a bounded time although MPI cannot say so
// (Open MPI 4.1 has no fault tolerance; the survivors sit blocked in a collective with the dead rank).
// When a process dies its kernel closes its socket and rank 0 sees the end of the stream at once; a node
// that stops answering is noticed by TCP keepalive within kNodeSilenceSeconds. Rank 0 then seals the
// result file naming the lost rank and orders every other rank to exit; a rank that loses rank 0 exits
// too. The same connections carry the watchdog's question "what are you doing?" while MPI is blocked.
//
// Protocol: one JSON object per line. rank -> 0: hello {token, rank, pid, host}, state {id, phase,
// doing} (an answer to ask), bye. 0 -> rank: ask {id}, exit {code}, done. Either way: interrupted (sent
// by the signal handler when a second stop signal ends the process at once, harness/guard/stop_signal.h, so
// the peer reports an interruption, not a loss). docs/reliability.md.
//
// Files: sentinel_net.* (sockets), sentinel_hub.cpp (rank 0's side), sentinel.cpp (the other ranks'
// side and the MPI glue).
//
// SentinelHub (rank 0) and SentinelLink (the others) need no MPI, so tests run both in one process;
// start_sentinel() is the MPI glue that exchanges rank 0's address and agrees whether every rank got
// through (if one cannot, nobody watches and every rank knows why).
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "world/activity.h"
#include "harness/guard/sentinel_net.h"
#include "harness/guard/watchdog.h"
#include "world/world.h"

namespace gpuscale {

struct PeerIdentity {
  int rank = 0;
  std::string host;
  long long pid = 0;
};

struct SentinelHandlers {
  // Rank 0: a rank's connection ended without goodbye. `how`: "its process ended", "its node stopped
  // answering (no TCP keepalive reply for 30 s)", ...; `interrupted`: it said a second stop signal ended
  // it. Runs on the sentinel's thread.
  std::function<void(const PeerIdentity& lost, const std::string& how, bool interrupted)> rank_lost;
  // Other ranks: rank 0's connection ended without goodbye (`interrupted`: as above).
  std::function<void(const std::string& how, bool interrupted)> root_lost;
  // Other ranks: rank 0 ends the run with `code` (it has reported why).
  std::function<void(int code)> exit_ordered;
  // What this rank is doing, for ask (default: current_activity()).
  std::function<ActivitySnapshot()> activity;
};

// "rank 2 (node-a, pid 1234) was lost: its process ended"
std::string lost_rank_message(const PeerIdentity& lost, const std::string& how);

class SentinelHub {
 public:
  // Listens on every interface (an ephemeral port) and starts the thread. Throws std::runtime_error.
  SentinelHub(int world_size, std::string token, PeerIdentity self, SentinelHandlers handlers);
  ~SentinelHub();
  SentinelHub(const SentinelHub&) = delete;
  SentinelHub& operator=(const SentinelHub&) = delete;

  int port() const { return port_; }
  // This host's addresses in the order ranks should try them (loopback last).
  std::vector<std::string> addresses() const;
  // Start-up: waits until every rank in `ranks` said hello; returns the ones that did not.
  std::vector<int> wait_for_hello(const std::vector<int>& ranks, double timeout_s);
  // From now on a connection that ends without goodbye is a lost rank. Stops accepting.
  void arm();
  // Asks every connected rank what it is doing; states of every rank (this one included), by rank.
  std::vector<RankState> ask_states(double timeout_s);
  // Tells every rank to exit with `code`; waits up to wait_s for their connections to close.
  void order_exit(int code, double wait_s);
  // The run ended normally: says done to every rank and stops watching.
  void finish();
  // Every rank's identity as it said hello (this rank's own at its rank), by rank.
  std::vector<PeerIdentity> peers() const;

 private:
  struct Conn {
    int fd = -1;
    int rank = -1;  // -1 until hello
    bool bye = false;
    bool interrupted = false;
    LineBuffer lines;
  };
  void loop();
  void on_line(Conn& c, const std::string& line);
  void on_closed(Conn& c, const std::string& how);
  void send_all(const nlohmann::json& msg);
  void stop_thread();

  int world_size_;
  std::string token_;
  PeerIdentity self_;
  SentinelHandlers handlers_;
  int listen_fd_ = -1, port_ = 0, wake_[2] = {-1, -1};
  bool v6_ = false;
  // The ranks' sockets once armed: told "interrupted" by a second signal (stop_signal.h), and so kept
  // open until the hub is destroyed, although a connection that ended is no longer polled.
  std::vector<int> armed_fds_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Conn> conns_;
  std::vector<PeerIdentity> peers_;
  std::map<int, RankState> answers_;
  int ask_id_ = 0;
  bool armed_ = false, finished_ = false, stop_ = false;
  std::mutex send_mutex_;
  std::thread thread_;
};

class SentinelLink {
 public:
  // Connects to rank 0 (trying `addresses` in order, each for a few seconds) and says hello; starts
  // the thread. Throws std::runtime_error with every address's failure.
  SentinelLink(const std::vector<std::string>& addresses, int port, const std::string& token, PeerIdentity self,
               SentinelHandlers handlers);
  ~SentinelLink();
  SentinelLink(const SentinelLink&) = delete;
  SentinelLink& operator=(const SentinelLink&) = delete;

  // From now on rank 0's connection ending without done is rank 0 lost.
  void arm();
  // The run ended normally: says goodbye and stops watching.
  void finish();

 private:
  void loop();
  void send(const nlohmann::json& msg);
  void stop_thread();

  PeerIdentity self_;
  SentinelHandlers handlers_;
  int fd_ = -1, wake_[2] = {-1, -1};
  std::mutex mutex_, send_mutex_;
  bool armed_ = false, done_ = false, stop_ = false, interrupted_ = false;
  std::thread thread_;
};

// The sentinel of one rank: the hub on rank 0, a link elsewhere, or nothing (one rank, or a rank that
// could not reach rank 0: then no rank watches and problem() says why, the same on every rank).
class Sentinel {
 public:
  // Collective over the world (main thread, every rank).
  static std::unique_ptr<Sentinel> start(const World& world, SentinelHandlers handlers);
  ~Sentinel();

  bool active() const { return hub_ || link_; }
  const std::string& problem() const { return problem_; }
  SentinelHub* hub() { return hub_.get(); }
  void finish();

 private:
  std::unique_ptr<SentinelHub> hub_;
  std::unique_ptr<SentinelLink> link_;
  std::string problem_;
};

}  // namespace gpuscale
