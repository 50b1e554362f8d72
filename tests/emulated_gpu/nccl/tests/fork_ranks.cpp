#include "tests/emulated_gpu/nccl/tests/fork_ranks.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace emu_nccl_test {

std::string run_ranks(int nranks, int deadline_s, const std::function<int(int rank)>& fn) {
  std::vector<pid_t> pids;
  for (int r = 0; r < nranks; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      alarm(static_cast<unsigned>(deadline_s));
      setenv("OMPI_COMM_WORLD_RANK", std::to_string(r).c_str(), 1);
      std::_Exit(fn(r));
    }
    pids.push_back(pid);
  }
  std::string problems;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(deadline_s + 5);
  for (int r = 0; r < nranks; ++r) {
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(pids[static_cast<std::size_t>(r)], &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (done == 0) {
      kill(pids[static_cast<std::size_t>(r)], SIGKILL);
      waitpid(pids[static_cast<std::size_t>(r)], &status, 0);
      problems += "rank " + std::to_string(r) + " passed the deadline; ";
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      problems += "rank " + std::to_string(r) + (WIFEXITED(status) ? " exited " + std::to_string(WEXITSTATUS(status))
                                                                  : " died of signal " + std::to_string(WTERMSIG(status))) + "; ";
    }
  }
  return problems;
}

}  // namespace emu_nccl_test
