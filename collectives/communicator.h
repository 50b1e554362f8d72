#pragma once
// The collective half of the backend interface: a communicator over the ranks of one GPU count, on
// which the drivers in harness/benchmarks time collectives and check them exactly. Implementations:
// collectives/mpi (MPI over host buffers, the CPU backend) and collectives/nccl (NCCL over GPU memory).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collectives/collective_table.h"
#include "core/dtype.h"
#include "core/error.h"

namespace gpuscale {

struct CollectiveCase {
  Collective coll = Collective::all_reduce;
  DType dtype = DType::fp32;
  RedOp op = RedOp::sum;
  int root = 0;
  bool in_place = false;
  std::uint64_t size_bytes = 0;  // requested; the counts round it as nccl-tests does
  std::uint64_t seed = 0;
  AlltoallvSkew skew;  // alltoallv: how its counts spread (alltoallv_plan.h)
  // Bytes the buffers span (nccl-tests' -e: the sweep's largest size). Transports that follow
  // nccl-tests' per-iteration offsets move each iteration through it; 0: the operation's own size.
  std::uint64_t span_bytes = 0;
  // Which transport of a backend that offers several ("nccl", "mpi"); empty: the backend's only one.
  std::string transport;
};

class CollectiveRunner {
 public:
  virtual ~CollectiveRunner() = default;
  virtual const CollCounts& counts() const = 0;
  // Seconds per operation over `iters` back-to-back operations, timed like nccl-tests: all ranks
  // synchronised, host clock started, `iters` operations issued, completion awaited, clock stopped.
  virtual double time(int iters) = 0;
  // Each of `iters` operations timed on its own (per-iteration timing, nccl-tests' -I 1 with -z 3):
  // before each one the ranks synchronise, and this rank's clock runs from its start to its completion
  // here, so a rank that is slow in its own part of an iteration shows its own longer time rather than
  // passing its delay to the others' next wait (back-to-back, the rank arriving last times the shortest).
  // Seconds, one per operation.
  virtual std::vector<double> time_each(int iters) = 0;
  // Loads fresh check inputs, runs one operation and returns how many received values are wrong.
  virtual std::uint64_t check() = 0;
  virtual std::string transport() const = 0;  // "mpi", "nccl", "mpi-cuda-aware", ...
  // Figures the row records about how the transport ran (library version, algorithm, notes).
  virtual nlohmann::json details() const { return nlohmann::json::object(); }
};

// A transport that had to abort its communicator (a peer never arrived within the timeout, or the
// transport failed under a collective) throws this: the group cannot measure again, so the run ends
// (the harness keeps what was measured and exits non-zero). `report` is false on ranks that leave the
// one message to a lower rank that saw the same failure.
class CommunicatorAborted : public Error {
 public:
  CommunicatorAborted(const std::string& what, bool report) : Error(what, kExitInvalidResult), report_(report) {}
  bool report() const { return report_; }

 private:
  bool report_;
};

// The device memory a transport's communicators hold per rank, as the memory plan counts them
// (harness/plan/memory_plan.h): the job's first communicator, which holds the buffers, and each one split
// from it. Zero for a transport over host memory (MPI).
struct CommunicatorMemory {
  std::uint64_t first_bytes = 0;
  std::uint64_t split_bytes = 0;
  std::string source;  // where the figures come from, for a refusal
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string transport() const = 0;  // "mpi", "nccl"
  // Why this communicator cannot run the case (an MPI reduction on bf16, say); nullopt when it can.
  // Decided once, by the caller (harness/benchmarks/collectives.cpp skips such a point), from the case
  // alone, so every rank decides alike.
  virtual std::optional<std::string> unsupported(const CollectiveCase& c) const = 0;
  // Buffers and the transport's setup for a case unsupported() accepted (prepare does not ask again).
  virtual std::unique_ptr<CollectiveRunner> prepare(const CollectiveCase& c) = 0;
  // The transport's own communicator when this one wraps it (the harness wraps every communicator to
  // mark what each rank is doing, harness/guard/run_guard.h): a backend that needs its own type asks for it.
  virtual Communicator& unwrapped() { return *this; }
};

}  // namespace gpuscale
