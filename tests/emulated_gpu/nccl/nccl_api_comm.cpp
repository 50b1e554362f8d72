// The emulated libnccl.so.2's communicator functions (tests only): ids, init, split, finalize,
// destroy, abort, asynchronous errors, versions and error strings. Signatures are nccl.h's own.
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

#include "tests/emulated_gpu/nccl/emu_comm.h"
#include "tests/emulated_gpu/nccl/emu_environment.h"

#define EMU_NCCL_API extern "C" __attribute__((visibility("default")))

using emu_nccl::fail;

namespace {

// config == NULL or blocking left undefined: blocking, NCCL's default (nccl.h, ncclConfig_t.blocking;
// "Communicator Creation and Management").
bool is_blocking(const ncclConfig_t* config) {
  return config == nullptr || config->blocking == NCCL_CONFIG_UNDEF_INT || config->blocking != 0;
}

ncclResult_t init(ncclComm_t* out, int nranks, const std::string& name, int rank, const ncclConfig_t* config, bool share) {
  if (out == nullptr) return fail(nullptr, ncclInvalidArgument, "comm is NULL");
  *out = nullptr;
  // ncclCommInitRank: "rank must be between 0 and nranks-1" ("Communicator Creation and Management").
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return fail(nullptr, ncclInvalidArgument, "rank " + std::to_string(rank) + " of " + std::to_string(nranks) + " ranks");
  auto* c = new ncclComm;
  const ncclResult_t rc = emu_nccl::attach(c, name, nranks, rank, is_blocking(config), share);
  if (rc != ncclSuccess) {
    emu_nccl::detach(c, false);
    delete c;
    return rc;
  }
  *out = c;
  if (c->blocking) return emu_nccl::progress_until_done(c);
  return emu_nccl::progress(c);  // ncclInProgress until every rank has joined
}

}  // namespace

EMU_NCCL_API ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return ncclInvalidArgument;
  *version = emu_nccl::reported_version();
  return ncclSuccess;
}

// The strings of NCCL's src/misc/utils.cc ncclGetErrorString, so a message reads as NCCL's would.
EMU_NCCL_API const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

// nccl.h: "Returns a human-readable message of the last error that occurred"; comm may be NULL.
EMU_NCCL_API const char* ncclGetLastError(ncclComm_t comm) {
  if (comm != nullptr && !comm->last_error.empty()) return comm->last_error.c_str();
  return emu_nccl::thread_last_error().c_str();
}

// The id names the communicator's shared-memory segment: this process, a counter and 64 random bits,
// so ids made at once by different processes or calls never collide.
EMU_NCCL_API ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  if (uniqueId == nullptr) return fail(nullptr, ncclInvalidArgument, "uniqueId is NULL");
  static std::atomic<unsigned> counter{0};
  std::random_device rd;
  const unsigned long long r = (static_cast<unsigned long long>(rd()) << 32) ^ rd();
  std::memset(uniqueId->internal, 0, sizeof uniqueId->internal);
  std::snprintf(uniqueId->internal, sizeof uniqueId->internal, "/gpuscale-emu-nccl-%d-%u-%016llx", static_cast<int>(getpid()),
                counter.fetch_add(1), r);
  return ncclSuccess;
}

EMU_NCCL_API ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                                 ncclConfig_t* config) {
  commId.internal[NCCL_UNIQUE_ID_BYTES - 1] = '\0';
  if (commId.internal[0] != '/') return fail(nullptr, ncclInvalidArgument, "the unique id was not made by ncclGetUniqueId");
  return init(comm, nranks, commId.internal, rank, config, false);
}

EMU_NCCL_API ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return ncclCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

// ncclCommSplit ("Communicator Creation and Management"): collective over the parent; ranks of one
// color form a communicator, ordered by key then by parent rank; NCCL_SPLIT_NOCOLOR gives NULL. With
// config.splitShare = 1 the child shares the parent's resources (attach charges little).
EMU_NCCL_API ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  if (comm == nullptr || newcomm == nullptr) return fail(nullptr, ncclInvalidArgument, "comm or newcomm is NULL");
  *newcomm = nullptr;
  if (color < 0 && color != NCCL_SPLIT_NOCOLOR) return fail(comm, ncclInvalidArgument, "color must be >= 0 or NCCL_SPLIT_NOCOLOR");
  if (comm->async_error != ncclSuccess) return comm->async_error;
  std::vector<std::int32_t> mine{color, key}, all(2 * static_cast<std::size_t>(comm->nranks));
  emu_nccl::OpCall call;
  call.kind = emu_nccl::OpKind::all_gather;
  call.send = mine.data();
  call.recv = all.data();
  call.count = 2;
  call.type = ncclInt32;
  call.control = true;
  comm->pending.push_back(emu_nccl::make_collective(comm, call, false));
  if (const ncclResult_t rc = emu_nccl::progress_until_done(comm); rc != ncclSuccess) return rc;
  const int splits = comm->splits++;
  if (color == NCCL_SPLIT_NOCOLOR) return ncclSuccess;
  std::vector<std::pair<std::int32_t, int>> members;  // (key, parent rank)
  for (int r = 0; r < comm->nranks; ++r)
    if (all[2 * static_cast<std::size_t>(r)] == color) members.emplace_back(all[2 * static_cast<std::size_t>(r) + 1], r);
  std::sort(members.begin(), members.end());
  const int new_rank = static_cast<int>(std::find(members.begin(), members.end(), std::make_pair(key, comm->rank)) - members.begin());
  const std::string name = comm->shm_name + "-s" + std::to_string(splits) + "c" + std::to_string(color);
  const bool share = config != nullptr && config->splitShare == 1;
  return init(newcomm, static_cast<int>(members.size()), name, new_rank, config, share);
}

EMU_NCCL_API ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  if (comm == nullptr) return fail(nullptr, ncclInvalidArgument, "comm is NULL");
  return comm->blocking ? emu_nccl::progress_until_done(comm) : emu_nccl::progress(comm);
}

EMU_NCCL_API ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  emu_nccl::detach(comm, false);
  delete comm;
  return ncclSuccess;
}

// ncclCommAbort ("Communicator Creation and Management"): frees the communicator and ends what is
// outstanding on it. A thread polling inside a blocking call sees the request and returns first.
EMU_NCCL_API ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  comm->abort_requested.store(true);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (comm->in_call.load() > 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  emu_nccl::detach(comm, true);
  if (comm->in_call.load() == 0) delete comm;  // otherwise leaked rather than freed under a running call
  return ncclSuccess;
}

EMU_NCCL_API ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  if (comm == nullptr || asyncError == nullptr) return fail(nullptr, ncclInvalidArgument, "comm or asyncError is NULL");
  comm->in_call.fetch_add(1);
  *asyncError = emu_nccl::progress(comm);
  comm->in_call.fetch_sub(1);
  return ncclSuccess;
}

EMU_NCCL_API ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (comm == nullptr || count == nullptr) return ncclInvalidArgument;
  *count = comm->nranks;
  return ncclSuccess;
}

EMU_NCCL_API ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (comm == nullptr || device == nullptr) return ncclInvalidArgument;
  *device = comm->device;
  return ncclSuccess;
}

EMU_NCCL_API ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (comm == nullptr || rank == nullptr) return ncclInvalidArgument;
  *rank = comm->rank;
  return ncclSuccess;
}
