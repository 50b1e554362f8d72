// A rank's link to its hub (harness/guard/sentinel.h: rank 0's, or its node leader's; a leader's link to rank 0
// passes rank 0's messages on to its node) and the MPI glue that builds the tree at start.
#include "harness/guard/sentinel.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "core/term_text.h"
#include "harness/guard/stop_signal.h"

namespace gpuscale {
namespace {

using nlohmann::json;
using namespace sentinel_net;

constexpr int kConnectTimeoutMs = 3000;  // per address
// How long a leader told to exit waits for its node's ranks to take the order (their connections
// close) before it goes itself; within rank 0's own wait for the leaders (run_guard.cpp).
constexpr double kRelayExitWaitSeconds = 3;

// The offer a hub's ranks connect with: its address, port and the token every hello must carry.
json offer_of(const SentinelHub& hub, const std::string& token) {
  return {{"token", token}, {"port", hub.port()}, {"addresses", hub.addresses()}};
}

// Connects to the hub of `offer` (loopback first when `same_host`). Throws std::runtime_error.
std::unique_ptr<SentinelLink> link_to(const json& offer, bool same_host, const PeerIdentity& self,
                                      const SentinelHandlers& handlers) {
  auto addresses = offer["addresses"].get<std::vector<std::string>>();
  if (same_host) {
    auto it = std::find(addresses.begin(), addresses.end(), "127.0.0.1");
    if (it != addresses.end()) std::rotate(addresses.begin(), it, it + 1);
  }
  return std::make_unique<SentinelLink>(addresses, offer["port"].get<int>(), offer["token"].get<std::string>(), self,
                                        handlers);
}

}  // namespace

std::string lost_rank_message(const PeerIdentity& lost, const std::string& how) {
  return lost.pid > 0 ? fmt::format("rank {} ({}, pid {}) was lost: {}", lost.rank, terminal_safe(lost.host), lost.pid, how)
                      : fmt::format("rank {} ({}) was lost: {}", lost.rank, terminal_safe(lost.host), how);
}

// ---- SentinelLink ----------------------------------------------------------------------------------

SentinelLink::SentinelLink(const std::vector<std::string>& addresses, int port, const std::string& token,
                           PeerIdentity self, SentinelHandlers handlers)
    : self_(std::move(self)), handlers_(std::move(handlers)) {
  if (!handlers_.activity) handlers_.activity = current_activity;
  std::string tried;
  for (const auto& a : addresses) {
    std::string why;
    fd_ = connect_to(a, port, kConnectTimeoutMs, &why);
    if (fd_ >= 0) break;
    tried += fmt::format("{}{}:{} {}", tried.empty() ? "" : ", ", a, port, why);
  }
  if (fd_ < 0) throw std::runtime_error(fmt::format("cannot reach rank 0 ({})", tried));
  tune(fd_);
  if (!send_line(fd_, {{"msg", "hello"}, {"token", token}, {"rank", self_.rank}, {"pid", self_.pid}, {"host", self_.host}})) {
    const int err = errno;
    close_fd(fd_);
    throw std::runtime_error(fmt::format("cannot say hello to rank 0: {}", std::strerror(err)));
  }
  make_pipe(wake_);
  thread_ = std::thread([this] { loop(); });
}

SentinelLink::~SentinelLink() {
  stop_thread();
  clear_interrupt_notice(&fd_);
  close_fd(fd_);
  close_fd(wake_[0]);
  close_fd(wake_[1]);
}

void SentinelLink::arm(bool notice) {
  std::lock_guard lock(mutex_);
  armed_ = true;
  if (notice) set_interrupt_notice(&fd_, 1);
}

void SentinelLink::relay_from(SentinelHub* node_hub) {
  std::lock_guard lock(mutex_);
  node_hub_ = node_hub;
}

void SentinelLink::send(const json& msg) {
  std::lock_guard lock(send_mutex_);
  send_line(fd_, msg);
}

void SentinelLink::finish() {
  {
    std::lock_guard lock(mutex_);
    if (done_) return;
    done_ = true;
  }
  send({{"msg", "bye"}});
  stop_thread();
}

void SentinelLink::stop_thread() { stop_poll_thread(mutex_, stop_, wake_[1], thread_); }

void SentinelLink::loop() {
  LineBuffer lines;
  for (;;) {
    pollfd fds[2] = {{wake_[0], POLLIN, 0}, {fd_, POLLIN, 0}};
    const int n = ::poll(fds, 2, -1);
    if (n < 0 && errno != EINTR) return;
    {
      std::lock_guard lock(mutex_);
      if (stop_) return;
    }
    if (fds[0].revents) drain(wake_[0]);
    if (!fds[1].revents) continue;
    char buf[4096];
    const ssize_t got = ::recv(fd_, buf, sizeof buf, 0);
    const int err = errno;
    if (got < 0 && err == EINTR) continue;
    std::vector<std::string> received;
    std::string how;
    if (got <= 0) {
      how = closed_how(got, err);
    } else {
      try {
        received = lines.feed(buf, static_cast<std::size_t>(got));
      } catch (const std::exception& e) {
        how = e.what();
      }
    }
    SentinelHub* node = nullptr;  // a leader's: its node hears what rank 0 says to every rank
    {
      std::lock_guard lock(mutex_);
      node = node_hub_;
    }
    for (const auto& line : received) {
      json msg = json::parse(line, nullptr, false);
      if (!msg.is_object()) continue;
      const auto kind = msg.value("msg", std::string());
      if (kind == "ask") {
        const auto a = handlers_.activity();
        send({{"msg", "state"}, {"id", msg.value("id", 0)}, {"phase", phase_name(a.phase)}, {"doing", a.doing},
              {"progress", a.progress}, {"idle_s", a.idle_s}});
        if (handlers_.asked) handlers_.asked();
        if (node) node->forward(msg);
      } else if (kind == "exit") {
        {
          std::lock_guard lock(mutex_);
          done_ = true;
        }
        if (node) node->order_exit(msg.value("code", 1), kRelayExitWaitSeconds);
        if (handlers_.exit_ordered) handlers_.exit_ordered(msg.value("code", 1));
      } else if (kind == "interrupted") {
        {
          std::lock_guard lock(mutex_);
          interrupted_ = true;
        }
        if (node) node->forward(msg);  // before this rank goes too: its node reports an interruption
      } else if (kind == "done") {
        std::lock_guard lock(mutex_);
        done_ = true;
        return;  // rank 0 finished: nothing left to watch
      }
    }
    if (!how.empty()) {
      bool report = false, interrupted = false;
      {
        std::lock_guard lock(mutex_);
        report = armed_ && !done_ && !stop_;
        interrupted = interrupted_;
        done_ = true;
      }
      if (report && handlers_.root_lost) handlers_.root_lost(how, interrupted);
      return;
    }
  }
}

// ---- Sentinel (MPI glue) ---------------------------------------------------------------------------

std::unique_ptr<Sentinel> Sentinel::start(const World& world, SentinelHandlers handlers) {
  auto s = std::unique_ptr<Sentinel>(new Sentinel());
  if (world.size() == 1) {
    s->problem_ = "one rank: no other rank to watch";
    return s;
  }
  const PeerIdentity self{world.rank(), world.host(), static_cast<long long>(::getpid())};
  const bool leader = world.is_node_leader();
  // Rank 0 listens and sends its address, port and a token every hello must carry.
  std::string offer;
  if (world.rank() == 0) {
    try {
      std::random_device rd;
      const std::string token = fmt::format("{:08x}{:08x}{:08x}", rd(), rd(), rd());
      s->hub_ = std::make_unique<SentinelHub>(world.size(), token, self, handlers);
      offer = offer_of(*s->hub_, token).dump();
    } catch (const std::exception& e) {
      offer = json{{"error", e.what()}}.dump();
    }
  }
  const json o = json::parse(world.broadcast_from_root(offer));
  std::string mine;  // this rank's failure, if any
  // The other leaders link to rank 0 and listen for their node; a node's ranks learn their hub from
  // their leader (rank 0's node: rank 0's hub).
  json node_offer = o;
  if (o.contains("error")) {
    mine = "rank 0 cannot listen: " + o["error"].get<std::string>();
  } else if (leader && world.rank() != 0) {
    try {
      s->link_ = link_to(o, world.host() == world.hosts()[0], self, handlers);
      const std::string token = o["token"].get<std::string>();
      s->node_hub_ = std::make_unique<SentinelHub>(world.size(), token, self, handlers);
      SentinelLink* up = s->link_.get();
      s->node_hub_->relay_to([up](const json& msg) { up->send(msg); });
      s->link_->relay_from(s->node_hub_.get());
      node_offer = offer_of(*s->node_hub_, token);
    } catch (const std::exception& e) {
      mine = e.what();
      s->take_down();
      node_offer = json{{"error", fmt::format("its node's leader (rank {}) failed: {}", world.rank(), e.what())}};
    }
  }
  const json n = json::parse(world.broadcast_from_node_leader(leader ? node_offer.dump() : std::string()));
  if (!leader && mine.empty()) {
    if (n.contains("error")) {
      mine = n["error"].get<std::string>();
    } else {
      try {
        s->link_ = link_to(n, true, self, handlers);  // the leader is on this node
      } catch (const std::exception& e) {
        mine = e.what();
      }
    }
  }
  // Every rank's outcome to rank 0, which waits for the hellos of the ranks that connected (its
  // node's directly, the others' through their leaders).
  const auto outcomes = world.gather_to_root(mine);
  std::string verdict;
  if (world.rank() == 0) {
    std::vector<std::string> failures;
    std::vector<int> expect;
    for (std::size_t r = 0; r < outcomes.size(); ++r) {
      if (!outcomes[r].empty()) failures.push_back(fmt::format("rank {} ({}): {}", r, world.hosts()[r], outcomes[r]));
      else if (r != 0) expect.push_back(static_cast<int>(r));
    }
    if (s->hub_ && failures.empty())
      for (int r : s->hub_->wait_for_hello(expect, 10.0))
        failures.push_back(fmt::format("rank {} ({}): connected but never said hello", r, world.hosts()[r]));
    for (std::size_t i = 0; i < failures.size() && i < 3; ++i) verdict += (i ? "; " : "") + failures[i];
    if (failures.size() > 3) verdict += fmt::format("; and {} more", failures.size() - 3);
  }
  s->problem_ = world.broadcast_from_root(verdict);
  if (!s->problem_.empty()) {  // nobody watches, everyone knows why
    s->take_down();
    return s;
  }
  if (s->hub_) s->hub_->arm();
  if (s->node_hub_) {
    // A leader: a second signal is heard by rank 0 and by its node's ranks alike.
    s->node_hub_->arm(false);
    s->link_->arm(false);
    s->notice_fds_ = s->node_hub_->armed_fds();
    s->notice_fds_.push_back(s->link_->fd());
    set_interrupt_notice(s->notice_fds_.data(), static_cast<int>(s->notice_fds_.size()));
  } else if (s->link_) {
    s->link_->arm();
  }
  return s;
}

// The link's thread stops first (it calls into the node's hub), then the hub (whose thread sends on the
// link's socket), then the link.
void Sentinel::take_down() {
  if (!notice_fds_.empty()) clear_interrupt_notice(notice_fds_.data());
  if (link_) link_->halt();
  node_hub_.reset();
  link_.reset();
  hub_.reset();
}

Sentinel::~Sentinel() { take_down(); }

void Sentinel::finish() {
  if (hub_) hub_->finish();
  if (link_) link_->finish();  // a leader: goodbye to rank 0 first, then done to its node
  if (node_hub_) node_hub_->finish();
}

}  // namespace gpuscale
