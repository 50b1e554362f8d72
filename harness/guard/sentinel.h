#pragma once
// The sentinel: an out-of-band TCP connection from every rank to its node's leader and from every
// leader to rank 0 (a two-level tree, world/node_tree.h: rank 0 holds O(nodes) links, not O(ranks)),
// watched by one small thread per hub and link, so that a rank that dies is noticed within a bounded
// time although MPI cannot say so (Open MPI 4.1 has no fault tolerance; the survivors sit blocked in a
// collective with the dead rank). When a process dies its kernel closes its socket and its hub sees the
// end of the stream at once; a node that stops answering is noticed by TCP keepalive within
// kNodeSilenceSeconds (its leader's link to rank 0 goes with it: rank 0 reports the leader lost). A
// leader relays what its node's hub sees to rank 0, which seals the result file naming the lost rank and
// orders every rank to exit (the leaders pass the order on); a rank that loses its hub exits too. The
// same connections carry the watchdog's question "what are you doing?" while MPI is blocked.
//
// Protocol: one JSON object per line. rank -> hub: hello {token, rank, pid, host}, state {id, phase,
// doing} (an answer to ask), bye. hub -> rank: ask {id}, exit {code}, done. Either way: interrupted (sent
// by the signal handler when a second stop signal ends the process at once, harness/guard/stop_signal.h, so
// the peer reports an interruption, not a loss). A leader relays its node up: peer {rank, host, pid} (a
// member's hello), state {id, rank, phase, doing} (a member's answer), lost {rank, how, interrupted};
// and ask, exit and interrupted down. docs/reliability.md.
//
// Files: sentinel_net.* (sockets), sentinel_hub.cpp (a hub: rank 0's, or a node leader's that relays),
// sentinel.cpp (a rank's link to its hub, and the MPI glue).
//
// SentinelHub and SentinelLink need no MPI, so tests run hubs and links in one process;
// start_sentinel() is the MPI glue that exchanges the hubs' addresses and agrees whether every rank got
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
  // Other ranks: rank 0 asked what this rank is doing (so it is alive and judging the point). Optional.
  std::function<void()> asked;
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
  // From now on a connection that ends without goodbye is a lost rank. Stops accepting. `notice`: the
  // ranks' sockets hear a second stop signal (stop_signal.h; a leader sets its own, link and hub together).
  void arm(bool notice = true);
  // The ranks' sockets once armed (for a leader's combined interrupt notice).
  std::vector<int> armed_fds() const;
  // A node leader's hub: what its ranks say goes to `up` (the leader's link to rank 0) instead of the
  // handlers: hellos as peer, answers as state with the rank, a loss as lost. Set before ranks connect.
  void relay_to(std::function<void(const nlohmann::json&)> up);
  // A message from rank 0 for every rank of this node (ask, exit or interrupted).
  void forward(const nlohmann::json& msg);
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
    std::vector<int> relayed;  // a leader's: the ranks of its node that said hello through it
  };
  void loop();
  void on_line(Conn& c, const std::string& line);
  void on_relayed(Conn& c, const std::string& kind, const nlohmann::json& msg);
  void on_closed(Conn& c, const std::string& how);
  void report_lost(int rank, const std::string& how, bool interrupted);
  bool joined(int rank) const;
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
  std::function<void(const nlohmann::json&)> up_;  // a node leader's hub: where its ranks' news goes
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

  // From now on the hub's connection ending without done is its rank lost. `notice`: as SentinelHub::arm.
  void arm(bool notice = true);
  int fd() const { return fd_; }
  // A node leader's link: ask, exit and interrupted from rank 0 are passed on to the node's hub (set
  // before arming; the hub outlives the link's thread: stop it first with halt()).
  void relay_from(SentinelHub* node_hub);
  // Sends a line to the hub (a leader relaying its node's news).
  void send(const nlohmann::json& msg);
  // The run ended normally: says goodbye and stops watching.
  void finish();
  // Stops watching without a word (the sentinel is being taken down).
  void halt() { stop_thread(); }

 private:
  void loop();
  void stop_thread();

  PeerIdentity self_;
  SentinelHandlers handlers_;
  SentinelHub* node_hub_ = nullptr;
  int fd_ = -1, wake_[2] = {-1, -1};
  std::mutex mutex_, send_mutex_;
  bool armed_ = false, done_ = false, stop_ = false, interrupted_ = false;
  std::thread thread_;
};

// The sentinel of one rank: the hub on rank 0 (for its node's ranks and the other leaders), a link to
// rank 0 and a hub for its node on another node's leader, a link to the leader elsewhere; or nothing
// (one rank, or a rank that could not reach its hub: then no rank watches and problem() says why, the
// same on every rank).
class Sentinel {
 public:
  // Collective over the world (main thread, every rank).
  static std::unique_ptr<Sentinel> start(const World& world, SentinelHandlers handlers);
  ~Sentinel();

  bool active() const { return hub_ || link_; }
  const std::string& problem() const { return problem_; }
  SentinelHub* hub() { return hub_.get(); }  // rank 0's only
  void finish();

 private:
  void take_down();
  std::unique_ptr<SentinelHub> hub_;       // rank 0
  std::unique_ptr<SentinelHub> node_hub_;  // another node's leader: its node's ranks
  std::unique_ptr<SentinelLink> link_;     // to rank 0 (leaders) or to the node's leader
  std::vector<int> notice_fds_;            // a leader's interrupt notice: its link and its node's ranks
  std::string problem_;
};

}  // namespace gpuscale
