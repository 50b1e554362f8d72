#pragma once
// One emulated NCCL communicator (tests only): nccl.h's opaque `struct ncclComm`, its shared-memory
// segment (shm_layout.h) and the operations it has issued but not finished.
//
// Progress is driven by the calling thread, never by a thread of the library: a blocking communicator
// polls inside the call; a non-blocking one (config.blocking = 0) returns ncclInProgress and moves on
// each time ncclCommGetAsyncError is asked ("Communicator Creation and Management", non-blocking
// communicators: the call may return ncclInProgress, and the application polls ncclCommGetAsyncError
// until the state leaves ncclInProgress). Every wait without progress is bounded (emu_environment.h).
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tests/emulated_gpu/nccl/collective_model.h"
#include "tests/emulated_gpu/nccl/shm_layout.h"

namespace gpuscale_emu {
struct Stream;
}

namespace emu_nccl {

// One call made inside a group or issued alone.
struct OpCall {
  OpKind kind = OpKind::all_reduce;  // p2p: a send (to `peer`) or a receive (from `peer`)
  bool is_send = false;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  ncclDataType_t type = ncclFloat32;
  ncclRedOp_t op = ncclSum;
  int root = 0, peer = 0;
  void* stream_handle = nullptr;
  bool control = false;  // the library's own exchange (ncclCommSplit's colors): no stream, no clock
};

// A resumable exchange: step() does what it can without blocking.
class Exchange {
 public:
  enum class State { waiting, progressed, done };
  virtual ~Exchange() = default;
  virtual State step() = 0;
};

}  // namespace emu_nccl

struct ncclComm {
  std::string shm_name;
  void* base = nullptr;
  emu_nccl::Layout layout;
  int rank = 0, nranks = 1, device = 0;
  bool blocking = true;
  std::uint64_t charged = 0;  // bytes charged to the device (released at destroy and abort)

  // Init: joined once every rank has attached.
  bool joined = false;
  std::vector<std::string> hosts;  // every rank's host, once joined
  std::vector<int> devices;

  // Operations.
  std::uint64_t coll_seq = 0;  // collective chunks completed (the same sequence on every rank)
  bool connected = false;      // the lazy connection has been paid
  int splits = 0;              // ncclCommSplit calls so far (names the children's segments)
  std::vector<emu_nccl::OpCall> group;  // calls inside the current group
  std::vector<std::unique_ptr<emu_nccl::Exchange>> pending;  // issued, in order, not finished
  std::chrono::steady_clock::time_point last_progress;

  ncclResult_t async_error = ncclSuccess;  // sticky once an error is set
  std::string last_error;
  std::atomic<bool> abort_requested{false};
  std::atomic<int> in_call{0};  // threads inside a call that polls (abort waits for them)
};

namespace emu_nccl {

// Records an error on the communicator (sticky) and as the thread's last error; returns it.
ncclResult_t fail(ncclComm* c, ncclResult_t rc, const std::string& why);
const std::string& thread_last_error();

// Attaches to the segment `name` as `rank` of `nranks` on the current device. Charges the
// communicator's device memory first; ncclSystemError when it does not fit.
ncclResult_t attach(ncclComm* c, const std::string& name, int nranks, int rank, bool blocking, bool split_share);
// Moves init or the pending operations on. ncclSuccess when nothing is left, ncclInProgress while
// something waits, or the communicator's error (a bound passed, a peer aborted, abort requested).
ncclResult_t progress(ncclComm* c);
// Polls progress() until it leaves ncclInProgress (the blocking path).
ncclResult_t progress_until_done(ncclComm* c);
// Unmaps and releases what the communicator holds; marks the segment aborted when `abort`.
void detach(ncclComm* c, bool abort);

// Makes the exchange of a run of calls issued together (one call, or a group's calls on this communicator).
void issue(ncclComm* c, std::vector<OpCall> calls);
// The exchanges (collective_exchange.cpp, p2p_exchange.cpp).
std::unique_ptr<Exchange> make_collective(ncclComm* c, const OpCall& call, bool hang);
std::unique_ptr<Exchange> make_p2p_group(ncclComm* c, std::vector<OpCall> calls, bool hang);

}  // namespace emu_nccl
