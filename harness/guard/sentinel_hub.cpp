// A hub of the sentinel (harness/guard/sentinel.h): rank 0's, which accepts its node's ranks and the other
// nodes' leaders (and hears their nodes through them), notices a connection that ends without goodbye,
// asks every rank what it is doing and orders every rank to exit; or a node leader's, which does the same
// for its node's ranks and relays what it sees to rank 0.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "harness/guard/sentinel.h"
#include "harness/guard/stop_signal.h"

namespace gpuscale {
namespace {

using nlohmann::json;
using namespace sentinel_net;

RankState state_from(const PeerIdentity& p) {
  RankState s;
  s.rank = p.rank;
  s.host = p.host;
  s.pid = p.pid;
  return s;
}

Phase parse_phase(const std::string& s) {
  for (Phase p : {Phase::idle, Phase::computing, Phase::collective, Phase::waiting})
    if (s == phase_name(p)) return p;
  return Phase::idle;
}

// An answer's phase, doing, steps and idle seconds (a malformed field reads as none: the answer still
// names the rank; idle is then +infinity, no progress, so a garbled answer never keeps a stall alive).
void read_answer(RankState& s, const json& msg) {
  s.answered = true;
  s.phase = parse_phase(msg.value("phase", std::string()));
  s.doing = msg.value("doing", std::string());
  const auto p = msg.find("progress");
  s.progress = p != msg.end() && p->is_number_unsigned() ? p->get<std::uint64_t>() : 0;
  const auto i = msg.find("idle_s");
  s.idle_s = i != msg.end() && i->is_number() ? i->get<double>() : std::numeric_limits<double>::infinity();
}

}  // namespace

SentinelHub::SentinelHub(int world_size, std::string token, PeerIdentity self, SentinelHandlers handlers)
    : world_size_(world_size), token_(std::move(token)), self_(std::move(self)), handlers_(std::move(handlers)) {
  if (!handlers_.activity) handlers_.activity = current_activity;
  peers_.resize(static_cast<std::size_t>(world_size_));
  for (int r = 0; r < world_size_; ++r) peers_[static_cast<std::size_t>(r)].rank = r;
  peers_[static_cast<std::size_t>(self_.rank)] = self_;
  listen_fd_ = listen_any(&v6_, &port_);
  make_pipe(wake_);
  thread_ = std::thread([this] { loop(); });
}

SentinelHub::~SentinelHub() {
  stop_thread();
  clear_interrupt_notice(armed_fds_.data());
  for (auto& c : conns_)
    if (std::find(armed_fds_.begin(), armed_fds_.end(), c.fd) == armed_fds_.end()) close_fd(c.fd);
  for (int& fd : armed_fds_) close_fd(fd);
  close_fd(listen_fd_);
  close_fd(wake_[0]);
  close_fd(wake_[1]);
}

std::vector<std::string> SentinelHub::addresses() const { return local_addresses(v6_); }

bool SentinelHub::joined(int rank) const {
  return std::any_of(conns_.begin(), conns_.end(), [&](const Conn& c) {
    return c.rank == rank || std::find(c.relayed.begin(), c.relayed.end(), rank) != c.relayed.end();
  });
}

std::vector<int> SentinelHub::wait_for_hello(const std::vector<int>& ranks, double timeout_s) {
  std::unique_lock lock(mutex_);
  auto missing = [&] {
    std::vector<int> out;
    for (int r : ranks)
      if (!joined(r)) out.push_back(r);
    return out;
  };
  cv_.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] { return missing().empty(); });
  return missing();
}

void SentinelHub::arm(bool notice) {
  {
    std::lock_guard lock(mutex_);
    armed_ = true;
    for (const auto& c : conns_)
      if (c.rank >= 0) armed_fds_.push_back(c.fd);
    if (notice) set_interrupt_notice(armed_fds_.data(), static_cast<int>(armed_fds_.size()));
  }
  wake(wake_[1]);
}

std::vector<int> SentinelHub::armed_fds() const {
  std::lock_guard lock(mutex_);
  return armed_fds_;
}

void SentinelHub::relay_to(std::function<void(const json&)> up) {
  std::lock_guard lock(mutex_);
  up_ = std::move(up);
}

void SentinelHub::forward(const json& msg) {
  if (msg.value("msg", std::string()) == "ask") {
    std::lock_guard lock(mutex_);
    ask_id_ = msg.value("id", 0);  // the node's answers go up with rank 0's question's id
  }
  send_all(msg);
}

std::vector<PeerIdentity> SentinelHub::peers() const {
  std::lock_guard lock(mutex_);
  return peers_;
}

void SentinelHub::send_all(const json& msg) {
  std::vector<int> fds;
  {
    std::lock_guard lock(mutex_);
    for (const auto& c : conns_)
      if (c.rank >= 0 && c.fd >= 0 && !c.bye) fds.push_back(c.fd);
  }
  std::lock_guard lock(send_mutex_);
  for (int fd : fds) send_line(fd, msg);  // a rank that cannot be told is lost anyway
}

std::vector<RankState> SentinelHub::ask_states(double timeout_s) {
  int id = 0;
  std::vector<int> asked;
  {
    std::lock_guard lock(mutex_);
    id = ++ask_id_;
    answers_.clear();
    for (const auto& c : conns_) {
      if (c.rank < 0 || c.fd < 0 || c.bye) continue;
      asked.push_back(c.rank);
      asked.insert(asked.end(), c.relayed.begin(), c.relayed.end());  // a leader answers for its node
    }
  }
  send_all({{"msg", "ask"}, {"id", id}});
  std::unique_lock lock(mutex_);
  cv_.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] {
    return std::all_of(asked.begin(), asked.end(), [&](int r) { return answers_.count(r) > 0; });
  });
  std::vector<RankState> out;
  for (const auto& p : peers_) {
    RankState s = state_from(p);
    if (p.rank == self_.rank) {
      const auto a = handlers_.activity();
      s.answered = true;
      s.phase = a.phase;
      s.doing = a.doing;
      s.progress = a.progress;
      s.idle_s = a.idle_s;
    } else if (auto it = answers_.find(p.rank); it != answers_.end()) {
      s = it->second;
    }
    out.push_back(std::move(s));
  }
  return out;
}

void SentinelHub::order_exit(int code, double wait_s) {
  {
    std::lock_guard lock(mutex_);
    finished_ = true;  // the connections closing now are the exits ordered, not losses
  }
  send_all({{"msg", "exit"}, {"code", code}});
  std::unique_lock lock(mutex_);
  cv_.wait_for(lock, std::chrono::duration<double>(wait_s), [&] {
    return std::none_of(conns_.begin(), conns_.end(), [](const Conn& c) { return c.fd >= 0 && c.rank >= 0; });
  });
}

void SentinelHub::finish() {
  {
    std::lock_guard lock(mutex_);
    if (finished_) return;
    finished_ = true;
  }
  send_all({{"msg", "done"}});
  stop_thread();
}

void SentinelHub::stop_thread() { stop_poll_thread(mutex_, stop_, wake_[1], thread_); }

void SentinelHub::on_line(Conn& c, const std::string& line) {
  json msg;
  try {
    msg = json::parse(line);
  } catch (const json::exception&) {
    throw std::invalid_argument("not a sentinel message");
  }
  if (!msg.is_object() || !msg.contains("msg") || !msg["msg"].is_string()) throw std::invalid_argument("not a sentinel message");
  const auto kind = msg["msg"].get<std::string>();
  if (c.rank < 0) {  // the first line must be a hello with the token and a rank not yet taken
    if (kind != "hello" || msg.value("token", std::string()) != token_) throw std::invalid_argument("bad hello");
    const int rank = msg.value("rank", -1);
    if (rank <= 0 || rank >= world_size_ || rank == self_.rank) throw std::invalid_argument("bad rank");
    if (joined(rank)) throw std::invalid_argument("rank already connected");
    c.rank = rank;
    peers_[static_cast<std::size_t>(rank)] = {rank, msg.value("host", std::string("?")), msg.value("pid", 0LL)};
    tune(c.fd);
    const PeerIdentity& p = peers_[static_cast<std::size_t>(rank)];
    if (up_) up_({{"msg", "peer"}, {"rank", rank}, {"host", p.host}, {"pid", p.pid}});  // rank 0 learns who it is
    cv_.notify_all();
    return;
  }
  if (kind == "peer" || kind == "lost" || (kind == "state" && msg.contains("rank"))) {
    on_relayed(c, kind, msg);
  } else if (kind == "bye") {
    c.bye = true;
  } else if (kind == "interrupted") {
    c.interrupted = true;
  } else if (kind == "state" && msg.value("id", -1) == ask_id_) {
    if (up_) {  // a leader's node: the answer goes up with the rank that gave it
      json up = msg;
      up["id"] = ask_id_;
      up["rank"] = c.rank;
      up_(up);
      return;
    }
    RankState s = state_from(peers_[static_cast<std::size_t>(c.rank)]);
    read_answer(s, msg);
    answers_[c.rank] = std::move(s);
    cv_.notify_all();
  }
}

// What a leader says of its node's ranks: a hello (peer), an answer (state), a loss (lost).
void SentinelHub::on_relayed(Conn& c, const std::string& kind, const json& msg) {
  const int rank = msg.value("rank", -1);
  if (rank <= 0 || rank >= world_size_ || rank == self_.rank) throw std::invalid_argument("bad relayed rank");
  const bool mine = std::find(c.relayed.begin(), c.relayed.end(), rank) != c.relayed.end();
  if (kind == "peer") {
    if (joined(rank)) throw std::invalid_argument("relayed rank already connected");
    c.relayed.push_back(rank);
    peers_[static_cast<std::size_t>(rank)] = {rank, msg.value("host", std::string("?")), msg.value("pid", 0LL)};
    cv_.notify_all();
    return;
  }
  if (!mine) throw std::invalid_argument("a rank of another node");
  if (c.bye) return;  // the leader said goodbye: its node ended normally
  if (kind == "lost") {
    report_lost(rank, msg.value("how", std::string("its connection to its node's leader ended")),
                msg.value("interrupted", false));
  } else if (msg.value("id", -1) == ask_id_) {
    RankState s = state_from(peers_[static_cast<std::size_t>(rank)]);
    read_answer(s, msg);
    answers_[rank] = std::move(s);
    cv_.notify_all();
  }
}

void SentinelHub::loop() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (armed_ && listen_fd_ >= 0) close_fd(listen_fd_);  // every rank is in: nobody else may join
    std::vector<pollfd> fds = {{wake_[0], POLLIN, 0}};
    if (listen_fd_ >= 0) fds.push_back({listen_fd_, POLLIN, 0});
    const std::size_t first_conn = fds.size();
    for (const auto& c : conns_) fds.push_back({c.fd, POLLIN, 0});
    lock.unlock();
    const int n = ::poll(fds.data(), fds.size(), -1);
    lock.lock();
    if (n < 0 && errno != EINTR) break;
    if (fds[0].revents) drain(wake_[0]);
    if (stop_) break;
    if (listen_fd_ >= 0 && fds[1].revents & POLLIN) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) conns_.push_back({fd, -1, false, false, {}, {}});
    }
    // Connections, newest last; a closed one is removed after its handler ran.
    for (std::size_t i = first_conn; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      auto it = std::find_if(conns_.begin(), conns_.end(), [&](const Conn& c) { return c.fd == fds[i].fd; });
      if (it == conns_.end()) continue;
      char buf[4096];
      const ssize_t got = ::recv(it->fd, buf, sizeof buf, MSG_DONTWAIT);
      const int err = errno;
      if (got < 0 && (err == EAGAIN || err == EINTR)) continue;
      std::string how;
      if (got <= 0) {
        how = closed_how(got, err);
      } else {
        try {
          for (const auto& line : it->lines.feed(buf, static_cast<std::size_t>(got))) on_line(*it, line);
        } catch (const std::exception& e) {
          how = fmt::format("it sent something that is not the sentinel protocol ({})", e.what());
        }
      }
      if (!how.empty()) {
        Conn closed = std::move(*it);
        conns_.erase(it);
        on_closed(closed, how);
        // An armed rank's socket stays open (the interrupt notice may still write to it); others close.
        if (std::find(armed_fds_.begin(), armed_fds_.end(), closed.fd) == armed_fds_.end()) close_fd(closed.fd);
        cv_.notify_all();
      }
    }
  }
}

void SentinelHub::on_closed(Conn& c, const std::string& how) {
  if (c.rank < 0 || c.bye) return;
  report_lost(c.rank, how, c.interrupted);  // a leader's: its whole node's links went with it
}

void SentinelHub::report_lost(int rank, const std::string& how, bool interrupted) {
  if (!armed_ || finished_ || stop_) return;
  finished_ = true;  // one loss ends the run: the handler (or rank 0, for a leader's hub) reports it
  const PeerIdentity lost = peers_[static_cast<std::size_t>(rank)];
  const auto up = up_;
  mutex_.unlock();  // the handler asks the hub for nothing under its lock, but may take minutes
  if (up) up({{"msg", "lost"}, {"rank", lost.rank}, {"how", how}, {"interrupted", interrupted}});
  else if (handlers_.rank_lost) handlers_.rank_lost(lost, how, interrupted);
  mutex_.lock();
}

}  // namespace gpuscale
