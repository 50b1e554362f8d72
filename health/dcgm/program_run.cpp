#include "health/dcgm/program_run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace gpuscale::health {
namespace {

constexpr std::size_t kErrTailBytes = 4096;

bool executable_file(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// Reads what is there; false at end of file or on an error.
bool drain(int fd, std::string& into) {
  char buf[65536];
  const ssize_t n = read(fd, buf, sizeof buf);
  if (n > 0) {
    into.append(buf, static_cast<std::size_t>(n));
    return true;
  }
  return n < 0 && (errno == EINTR || errno == EAGAIN);
}

}  // namespace

std::optional<std::string> find_program(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) return executable_file(name) ? std::optional<std::string>(name) : std::nullopt;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = end > start ? dirs.substr(start, end - start) : std::string(".");
    if (executable_file(dir + "/" + name)) return dir + "/" + name;
    start = end + 1;
  }
  return std::nullopt;
}

ProgramRun run_program(const std::vector<std::string>& argv, double timeout_s, std::size_t max_out_bytes) {
  ProgramRun r;
  const auto started = std::chrono::steady_clock::now();
  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    r.why_not_started = std::strerror(errno);
    return r;
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0 || pipe2(exec_pipe, O_CLOEXEC) != 0) {
    r.why_not_started = std::strerror(errno);
    close(out_pipe[0]);
    close(out_pipe[1]);
    return r;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {  // the child: only async-signal-safe calls until exec
    setpgid(0, 0);
    const int null_in = open("/dev/null", O_RDONLY);
    if (null_in >= 0) dup2(null_in, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    execv(args[0], args.data());
    const int e = errno;
    (void)!write(exec_pipe[1], &e, sizeof e);
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(exec_pipe[1]);
  if (pid < 0) {
    r.why_not_started = std::strerror(errno);
    close(out_pipe[0]);
    close(err_pipe[0]);
    close(exec_pipe[0]);
    return r;
  }
  setpgid(pid, pid);  // also here, so the group exists before any kill below
  int exec_errno = 0;
  const bool exec_failed = read(exec_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno;
  close(exec_pipe[0]);
  r.started = !exec_failed;
  if (exec_failed) r.why_not_started = std::strerror(exec_errno);

  const auto deadline = started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                      std::chrono::duration<double>(timeout_s));
  std::string err;
  bool out_open = true, err_open = true;
  while (r.started && (out_open || err_open)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      break;
    }
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    if (!out_open) fds[0].fd = -1;
    if (!err_open) fds[1].fd = -1;
    const int n = poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) out_open = drain(out_pipe[0], r.out);
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      err_open = drain(err_pipe[0], err);
      if (err.size() > 2 * kErrTailBytes) err.erase(0, err.size() - kErrTailBytes);
    }
    if (r.out.size() > max_out_bytes) {
      r.too_much_output = true;
      r.out.resize(max_out_bytes);
      break;
    }
  }
  close(out_pipe[0]);
  close(err_pipe[0]);
  // A program that closed its output may still run: it, too, has until the deadline.
  int status = 0;
  while (!r.timed_out && !r.too_much_output) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() >= deadline) r.timed_out = true;
    else usleep(10000);
  }
  if (r.timed_out || r.too_much_output) {
    kill(-pid, SIGKILL);  // the whole group: a tool's own children too
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (WIFEXITED(status)) r.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.err_tail = err.size() > kErrTailBytes ? err.substr(err.size() - kErrTailBytes) : err;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return r;
}

}  // namespace gpuscale::health
