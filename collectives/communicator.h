#pragma once
// The collective half of the backend interface: a communicator over the ranks of one GPU count, on
// which the drivers in harness/benchmarks time collectives and check them exactly. Implementations:
// collectives/mpi (MPI over host buffers, the CPU backend) and collectives/nccl (NCCL over GPU memory).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "collectives/collective_table.h"
#include "core/dtype.h"

namespace gpuscale {

struct CollectiveCase {
  Collective coll = Collective::all_reduce;
  DType dtype = DType::fp32;
  RedOp op = RedOp::sum;
  int root = 0;
  bool in_place = false;
  std::uint64_t size_bytes = 0;  // requested; the counts round it as nccl-tests does
  std::uint64_t seed = 0;
};

class CollectiveRunner {
 public:
  virtual ~CollectiveRunner() = default;
  virtual const CollCounts& counts() const = 0;
  // Seconds per operation over `iters` back-to-back operations, timed like nccl-tests: all ranks
  // synchronised, host clock started, `iters` operations issued, completion awaited, clock stopped.
  virtual double time(int iters) = 0;
  // Loads fresh check inputs, runs one operation and returns how many received values are wrong.
  virtual std::uint64_t check() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string transport() const = 0;  // "mpi", "nccl"
  // Why this communicator cannot run the case (an MPI reduction on bf16, say); nullopt when it can.
  virtual std::optional<std::string> unsupported(const CollectiveCase& c) const = 0;
  virtual std::unique_ptr<CollectiveRunner> prepare(const CollectiveCase& c) = 0;
  // Called from another thread when the run ends abnormally (a watchdog expired, a rank was lost) while
  // a collective may be blocked on this communicator: must return promptly (NCCL: ncclCommAbort).
  // The default does nothing: MPI has no per-communicator abort, and the process exit ends it.
  virtual void abort() {}
};

}  // namespace gpuscale
