#include "harness/guard/sentinel_net.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace gpuscale {

std::vector<std::string> LineBuffer::feed(const char* data, std::size_t n) {
  std::vector<std::string> out;
  pending_.append(data, n);
  std::size_t start = 0;
  for (std::size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1)
    out.push_back(pending_.substr(start, nl - start));
  pending_.erase(0, start);
  if (pending_.size() > kMaxLine) throw std::length_error("sentinel line longer than 64 KiB");
  return out;
}

namespace sentinel_net {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

void tune(int fd) {
  int on = 1, idle = 10, interval = 5, count = 4;
  unsigned timeout_ms = kNodeSilenceSeconds * 1000;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &timeout_ms, sizeof timeout_ms);
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  timeval send_timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout);
}

bool send_line(int fd, const nlohmann::json& msg) {
  const std::string text = msg.dump() + "\n";
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::send(fd, p, left, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

std::string closed_how(ssize_t n, int err) {
  if (n == 0) return "its process ended (connection closed)";
  if (err == ETIMEDOUT)
    return fmt::format("its node stopped answering (no reply to TCP keepalive within {} s)", kNodeSilenceSeconds);
  if (err == ECONNRESET) return "its connection was reset (the process or its node ended)";
  return fmt::format("its connection failed ({})", errno_text(err));
}

int listen_any(bool* v6, int* port) {
  *v6 = false;
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    int off = 0;
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) *v6 = true;
    else close_fd(fd);
  }
  if (fd < 0) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error("socket: " + errno_text(errno));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      const int err = errno;
      close_fd(fd);
      throw std::runtime_error("bind: " + errno_text(err));
    }
  }
  if (::listen(fd, SOMAXCONN) != 0) {
    const int err = errno;
    close_fd(fd);
    throw std::runtime_error("listen: " + errno_text(err));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  *port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return fd;
}

int connect_to(const std::string& address, int port, int timeout_ms, std::string* why) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (const int rc = ::getaddrinfo(address.c_str(), std::to_string(port).c_str(), &hints, &res); rc != 0) {
    *why = ::gai_strerror(rc);
    return -1;
  }
  int fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *why = errno_text(errno);
    ::freeaddrinfo(res);
    return -1;
  }
  int rc = ::connect(fd, res->ai_addr, res->ai_addrlen);
  ::freeaddrinfo(res);
  int err = rc == 0 ? 0 : errno;
  if (err == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, timeout_ms) == 0) {
      err = ETIMEDOUT;
    } else {
      socklen_t len = sizeof err;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    }
  }
  if (err != 0) {
    *why = err == ETIMEDOUT ? "timed out" : errno_text(err);
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

std::vector<std::string> local_addresses(bool with_v6) {
  std::vector<std::string> v4, v6, loop;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) == 0) {
    for (ifaddrs* i = list; i; i = i->ifa_next) {
      if (!i->ifa_addr || !(i->ifa_flags & IFF_UP)) continue;
      char buf[INET6_ADDRSTRLEN] = {};
      if (i->ifa_addr->sa_family == AF_INET) {
        ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof buf);
        (i->ifa_flags & IFF_LOOPBACK ? loop : v4).push_back(buf);
      } else if (i->ifa_addr->sa_family == AF_INET6 && with_v6) {
        const auto* a = &reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr;
        if (IN6_IS_ADDR_LINKLOCAL(a) || IN6_IS_ADDR_LOOPBACK(a)) continue;  // link-local needs a scope
        ::inet_ntop(AF_INET6, a, buf, sizeof buf);
        v6.push_back(buf);
      }
    }
    ::freeifaddrs(list);
  }
  if (loop.empty()) loop.push_back("127.0.0.1");
  v4.insert(v4.end(), v6.begin(), v6.end());
  v4.insert(v4.end(), loop.begin(), loop.end());
  return v4;
}

void make_pipe(int fds[2]) {
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("pipe: " + errno_text(errno));
}

void wake(int fd) {
  const char c = 1;
  const ssize_t ignored = ::write(fd, &c, 1);
  (void)ignored;
}

void drain(int fd) {
  char buf[64];
  while (::read(fd, buf, sizeof buf) > 0) {
  }
}

void stop_poll_thread(std::mutex& mutex, bool& stop, int wake_fd, std::thread& thread) {
  {
    std::lock_guard lock(mutex);
    stop = true;
  }
  if (wake_fd >= 0) wake(wake_fd);
  if (thread.joinable() && thread.get_id() != std::this_thread::get_id()) thread.join();
}

}  // namespace sentinel_net
}  // namespace gpuscale
