#pragma once
// One NCCL communicator over the members of an MPI group, with nccl-tests' -T watchdog: created
// non-blocking (config.blocking = 0), every wait (its init, a stream, an MPI barrier) polls for
// completion, NCCL's asynchronous error and a deadline; on an error or after the timeout the
// communicator is aborted (ncclCommAbort) and CommunicatorAborted names what hung and which peers never
// arrived (collectives/hang_report.h). The NCCL unique id travels over MPI from group rank 0.
// Used by the NCCL collectives and by the CUDA dp-step.
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <functional>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collectives/hang_report.h"
#include "core/dtype.h"

namespace gpuscale::nccl {

struct CommOptions {
  int ordinal = 0;         // the CUDA device of this rank
  double timeout_s = 300;  // <= 0: wait forever (nccl-tests' -T 0)
  std::vector<std::string> world_hosts;  // host of every world rank, to name peers
};

// The linked library's version (ncclGetVersion).
int runtime_version();
// A function newer than the oldest NCCL gpuscale runs with (nccl_plan.h's kOldestMajor/Minor), looked up
// in the NCCL already loaded, so the module has no undefined reference to it; nullptr where that NCCL
// lacks it. `Fn` is decltype(&theFunction).
void* find_late_symbol(const char* name);
template <class Fn>
Fn late_symbol(const char* name) {
  return reinterpret_cast<Fn>(find_late_symbol(name));
}
// NCCL's type for a dtype (throws gpuscale::Error for one it lacks).
ncclDataType_t nccl_type(DType t);

class Comm {
 public:
  // Collective over the members of `group`: a communicator of its own, from a new unique id
  // (ncclCommInitRankConfig). gpuscale makes one such per job (the CUDA backend's); the others are split.
  Comm(MPI_Comm group, const CommOptions& o);
  // Split from `parent` with config.splitShare = 1 (nccl_plan.h's split_args): every rank of `parent`
  // calls, together; the members of `group` make this communicator, each other rank calls split_none.
  Comm(Comm& parent, MPI_Comm group, const CommOptions& o);
  // A parent rank outside the group being split (NCCL_SPLIT_NOCOLOR): takes part in the split, gets nothing.
  static void split_none(Comm& parent);
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  ncclComm_t get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int ordinal() const { return opts_.ordinal; }
  int cc_major() const { return cc_major_; }
  // Which network NCCL chose for this communicator, from its log (nccl_plan.h's network_from_log), or
  // {"recorded": false, "why": ...}.
  const nlohmann::json& network() const { return network_; }
  MPI_Comm mpi() const { return mpi_; }  // the communicator's own MPI duplicate (control messages only)

  // The return code of an NCCL call: success returns; ncclInProgress (a non-blocking communicator
  // still issuing the work) waits until it is issued; an error NCCL returns from the call itself
  // throws gpuscale::Error (the row fails, the communicator goes on: nccl_plan.h's error_action), while
  // an asynchronous error or a timeout aborts. `what` names the operation.
  void call(ncclResult_t rc, const char* call, const std::string& what);
  // Waits for everything queued on `stream`.
  void wait(cudaStream_t stream, const std::string& what);
  // A barrier over the members (MPI_Ibarrier under the watchdog).
  void barrier(const std::string& what);
  // Waits for a non-blocking MPI operation on mpi() under the watchdog.
  void wait_mpi(MPI_Request& req, const std::string& what);

 private:
  // Polls `complete` (and NCCL's asynchronous error once the communicator exists) until it returns
  // true, the error appears or the timeout passes.
  void watch(const std::string& what, const std::function<bool()>& complete, bool init = false);
  [[noreturn]] void give_up(bool timed_out, ncclResult_t error, const std::string& what);

  CommOptions opts_;
  MPI_Comm mpi_ = MPI_COMM_NULL;
  std::vector<GroupMember> members_;
  ncclComm_t comm_ = nullptr;
  int rank_ = 0, size_ = 1, cc_major_ = 0;
  nlohmann::json network_;
};

}  // namespace gpuscale::nccl
