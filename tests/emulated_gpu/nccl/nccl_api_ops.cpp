// The emulated libnccl.so.2's operations (tests only): collectives, point-to-point and group calls.
// Each call is checked as NCCL checks its arguments, then issued at once or, inside a group, at the
// outermost ncclGroupEnd ("Group Calls").
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "tests/emulated_gpu/nccl/emu_comm.h"
#include "tests/emulated_gpu/nccl/emu_environment.h"
#include "tests/emulated_gpu/nccl/reductions.h"

#define EMU_NCCL_API extern "C" __attribute__((visibility("default")))

using emu_nccl::fail;
using emu_nccl::OpCall;
using emu_nccl::OpKind;

namespace emu_nccl {

namespace {
// "Group Calls": group state is per thread, and groups nest (only the outermost ncclGroupEnd issues).
thread_local int group_depth = 0;
thread_local std::vector<ncclComm*> group_comms;

// Counts this process's operations (collectives and point-to-point groups) for hang-collective.
bool next_hangs(const ncclComm* c) {
  static long operations = 0;
  ++operations;
  const int me = world_rank() >= 0 ? world_rank() : c->rank;
  const auto& hangs = emu_faults().hangs;
  return std::any_of(hangs.begin(), hangs.end(), [&](const HangFault& h) { return h.world_rank == me && h.nth == operations; });
}
}  // namespace

void issue(ncclComm* c, std::vector<OpCall> calls) {
  // A wait is bounded from when it begins: an idle communicator's clock of progress restarts here.
  if (c->pending.empty()) c->last_progress = std::chrono::steady_clock::now();
  std::vector<OpCall> p2p;
  for (const auto& call : calls) {
    if (call.kind == OpKind::p2p)
      p2p.push_back(call);
    else
      c->pending.push_back(make_collective(c, call, next_hangs(c)));
  }
  // A group's sends and receives go as one exchange after its collectives (a model choice: NCCL
  // schedules a group's operations together; their order inside the group is not specified).
  if (!p2p.empty()) c->pending.push_back(make_p2p_group(c, std::move(p2p), next_hangs(c)));
}

namespace {

ncclResult_t submit(ncclComm* c, const OpCall& call) {
  if (c->async_error != ncclSuccess) return c->async_error;
  if (group_depth > 0) {
    if (std::find(group_comms.begin(), group_comms.end(), c) == group_comms.end()) group_comms.push_back(c);
    c->group.push_back(call);
    return ncclSuccess;
  }
  issue(c, {call});
  return c->blocking ? progress_until_done(c) : progress(c);
}

// The argument checks NCCL makes before anything is queued (its src/enqueue.cc ArgsCheck): a valid
// type and built-in op, a root or peer inside the communicator, non-NULL buffers where data moves.
ncclResult_t checked(ncclComm* c, OpCall call) {
  if (c == nullptr) return fail(nullptr, ncclInvalidArgument, "comm is NULL");
  if (type_size(call.type) == 0) return fail(c, ncclInvalidArgument, "invalid type " + std::to_string(call.type));
  if (call.kind != OpKind::p2p && call.kind != OpKind::all_gather && call.kind != OpKind::broadcast && !builtin_op(call.op))
    return fail(c, ncclInvalidArgument, "invalid reduction op " + std::to_string(call.op));
  if ((call.kind == OpKind::broadcast || call.kind == OpKind::reduce) && (call.root < 0 || call.root >= c->nranks))
    return fail(c, ncclInvalidArgument, "invalid root " + std::to_string(call.root));
  if (call.kind == OpKind::p2p && (call.peer < 0 || call.peer >= c->nranks))
    return fail(c, ncclInvalidArgument, "invalid peer " + std::to_string(call.peer));
  const bool needs_send = call.count > 0 && !(call.kind == OpKind::p2p && !call.is_send) &&
                          !(call.kind == OpKind::broadcast && call.root != c->rank);
  const bool needs_recv = call.count > 0 && !(call.kind == OpKind::p2p && call.is_send) &&
                          !(call.kind == OpKind::reduce && call.root != c->rank);
  if ((needs_send && call.send == nullptr) || (needs_recv && call.recv == nullptr))
    return fail(c, ncclInvalidArgument, "a buffer is NULL");
  return submit(c, call);
}

OpCall make(OpKind kind, const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op, int root,
            cudaStream_t stream) {
  OpCall call;
  call.kind = kind;
  call.send = send;
  call.recv = recv;
  call.count = count;
  call.type = type;
  call.op = op;
  call.root = root;
  call.stream_handle = stream;
  return call;
}

}  // namespace
}  // namespace emu_nccl

using emu_nccl::checked;
using emu_nccl::make;

EMU_NCCL_API ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                        ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return checked(comm, make(OpKind::all_reduce, sendbuff, recvbuff, count, datatype, op, 0, stream));
}

EMU_NCCL_API ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                                        ncclComm_t comm, cudaStream_t stream) {
  return checked(comm, make(OpKind::broadcast, sendbuff, recvbuff, count, datatype, ncclSum, root, stream));
}

EMU_NCCL_API ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                     ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return checked(comm, make(OpKind::reduce, sendbuff, recvbuff, count, datatype, op, root, stream));
}

// sendcount elements from each rank; recvbuff holds nranks x sendcount (nccl.h, ncclAllGather).
EMU_NCCL_API ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                                        ncclComm_t comm, cudaStream_t stream) {
  return checked(comm, make(OpKind::all_gather, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0, stream));
}

// recvcount elements to each rank; sendbuff holds nranks x recvcount (nccl.h, ncclReduceScatter).
EMU_NCCL_API ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                                            ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return checked(comm, make(OpKind::reduce_scatter, sendbuff, recvbuff, recvcount, datatype, op, 0, stream));
}

EMU_NCCL_API ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                                   cudaStream_t stream) {
  OpCall call = make(OpKind::p2p, sendbuff, nullptr, count, datatype, ncclSum, 0, stream);
  call.is_send = true;
  call.peer = peer;
  return checked(comm, call);
}

EMU_NCCL_API ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                                   cudaStream_t stream) {
  OpCall call = make(OpKind::p2p, nullptr, recvbuff, count, datatype, ncclSum, 0, stream);
  call.peer = peer;
  return checked(comm, call);
}

EMU_NCCL_API ncclResult_t ncclGroupStart() {
  ++emu_nccl::group_depth;
  return ncclSuccess;
}

// The outermost ncclGroupEnd issues every communicator's calls. All blocking: it returns once they are
// done. A non-blocking communicator among them: ncclInProgress while any is in flight, and each
// communicator's ncclCommGetAsyncError tells when it is done ("Group Calls", "Communicator Creation and
// Management": non-blocking group operations).
EMU_NCCL_API ncclResult_t ncclGroupEnd() {
  if (emu_nccl::group_depth == 0) return fail(nullptr, ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  if (--emu_nccl::group_depth > 0) return ncclSuccess;
  std::vector<ncclComm*> comms;
  comms.swap(emu_nccl::group_comms);
  bool all_blocking = true;
  for (ncclComm* c : comms) {
    emu_nccl::issue(c, std::move(c->group));
    c->group.clear();
    all_blocking = all_blocking && c->blocking;
  }
  for (;;) {
    ncclResult_t worst = ncclSuccess;
    for (ncclComm* c : comms) {
      c->in_call.fetch_add(1);
      const ncclResult_t rc = emu_nccl::progress(c);
      c->in_call.fetch_sub(1);
      if (rc != ncclSuccess && rc != ncclInProgress) return rc;
      if (rc == ncclInProgress) worst = ncclInProgress;
    }
    if (worst == ncclSuccess || !all_blocking) return worst;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}
