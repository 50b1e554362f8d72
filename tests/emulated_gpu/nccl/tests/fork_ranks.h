#pragma once
// Runs one function as N processes (fork), each told its rank, and reports whether every one exited 0
// within a deadline; a process past it is killed, so a test never hangs (tests only).
#include <functional>
#include <string>

namespace emu_nccl_test {

// fn(rank) returns the process's exit code. Each child also gets OMPI_COMM_WORLD_RANK=rank and an
// alarm at the deadline. Returns "" when all exit 0, else what went wrong.
std::string run_ranks(int nranks, int deadline_s, const std::function<int(int rank)>& fn);

// Prints a failed expectation on stderr with the rank and counts it; a rank exits with the count.
#define EMU_EXPECT(rank, cond, ...)                                                              \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      std::fprintf(stderr, "rank %d: %s:%d: expected %s: ", rank, __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                                         \
      std::fprintf(stderr, "\n");                                                                \
      ++failures;                                                                                \
    }                                                                                            \
  } while (0)

}  // namespace emu_nccl_test
