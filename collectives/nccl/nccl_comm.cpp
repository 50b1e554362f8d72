#include "collectives/nccl/nccl_comm.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "collectives/communicator.h"
#include "collectives/nccl/nccl_plan.h"
#include "kernels/cuda/cuda_util.h"

namespace gpuscale::nccl {

int runtime_version() {
  int v = 0;
  return ncclGetVersion(&v) == ncclSuccess ? v : 0;
}

namespace {

// This process's NCCL log (nccl_plan.h's net_log_plan), set up once before NCCL first reads its
// environment (at the first communicator); the folder is removed when the process ends, unless a
// communicator failed (NetLogFolder: kept and named in the error).
struct NetLog {
  std::string dir, why_not;
};
NetLogFolder net_log_folder;  // for the exit handler and the errors

const NetLog& net_log() {
  static const NetLog log = [] {
    NetLog l;
    std::map<std::string, std::string> env;
    if (const char* v = std::getenv("NCCL_DEBUG")) env["NCCL_DEBUG"] = v;
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/gpuscale-nccl-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    const bool user_debug = env.count("NCCL_DEBUG") > 0;
    if (!user_debug && mkdtemp(buf.data()) != nullptr) l.dir = buf.data();
    const auto plan = net_log_plan(env, l.dir);
    l.why_not = plan.why_not;
    for (const auto& [k, v] : plan.set) ::setenv(k.c_str(), v.c_str(), 1);
    if (!l.dir.empty()) {
      net_log_folder = NetLogFolder(l.dir);
      std::atexit([] {
        std::error_code ec;
        if (net_log_folder.remove_at_exit()) std::filesystem::remove_all(net_log_folder.dir(), ec);
      });
    }
    return l;
  }();
  return log;
}

// What NCCL's log in `dir` says so far (the last 1 MiB of its one file).
nlohmann::json read_network(const NetLog& log) {
  if (log.dir.empty()) return {{"recorded", false}, {"why", log.why_not}};
  std::error_code ec;
  for (std::filesystem::directory_iterator it(log.dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::ifstream f(it->path(), std::ios::binary);
    f.seekg(0, std::ios::end);
    const auto size = static_cast<std::streamoff>(f.tellg());
    if (!f || size <= 0) continue;
    const std::streamoff keep = std::min<std::streamoff>(size, 1 << 20);
    f.seekg(size - keep);
    std::string text(static_cast<std::size_t>(keep), '\0');
    f.read(text.data(), keep);
    text.resize(static_cast<std::size_t>(std::max<std::streamsize>(f.gcount(), 0)));
    if (auto j = network_from_log(text); !j.is_null()) return j;
  }
  return {{"recorded", false}, {"why", "NCCL's log has no \"Using network\" line"}};
}

}  // namespace

void* find_late_symbol(const char* name) {
  // The loader opened libnccl.so.2 with RTLD_GLOBAL before this module, so the global scope has it.
  return dlsym(RTLD_DEFAULT, name);
}

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 24, 0)
// This NCCL predates the fp8 types: their rows name enumerators it lacks. nccl_plan's unsupported()
// refuses them first (the table's since-version), so these cases are never reached.
#define ncclFloat8e4m3 ncclNumTypes
#define ncclFloat8e5m2 ncclNumTypes
#endif

ncclDataType_t nccl_type(DType t) {
  switch (t) {
#define GPUSCALE_DTYPE_NCCL(id, nccl_enum, since_major, since_minor, what, reduce_min_cc) \
  case DType::id: return nccl_enum;
#include "core/dtype_table.def"
    default: throw Error(fmt::format("NCCL has no {} type", dtype_name(t)), kExitInvalidResult);
  }
}

Comm::Comm(MPI_Comm group, const CommOptions& o) : opts_(o) {
  MPI_Comm_dup(group, &mpi_);
  MPI_Comm_set_errhandler(mpi_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(mpi_, &rank_);
  MPI_Comm_size(mpi_, &size_);
  members_ = group_members(mpi_, o.world_hosts);
  cuda::check(cudaDeviceGetAttribute(&cc_major_, cudaDevAttrComputeCapabilityMajor, o.ordinal),
              "cudaDeviceGetAttribute");
  const std::string what = fmt::format("creating the NCCL communicator of {} ranks", size_);
  const NetLog& log = net_log();  // before NCCL reads its environment
  ncclUniqueId id{};
  if (rank_ == 0) call(ncclGetUniqueId(&id), "ncclGetUniqueId", what);
  MPI_Request req;
  MPI_Ibcast(&id, sizeof id, MPI_BYTE, 0, mpi_, &req);
  wait_mpi(req, what);
  cuda::ScopedDevice on(o.ordinal);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // returns at once; the watchdog below waits with a deadline
  const ncclResult_t rc = ncclCommInitRankConfig(&comm_, size_, id, rank_, &config);
  if (rc != ncclSuccess && rc != ncclInProgress) give_up(false, rc, what);
  watch(what, [] { return false; }, true);
  network_ = read_network(log);
}

static_assert(kSplitNoColor == NCCL_SPLIT_NOCOLOR, "nccl_plan.h's NCCL_SPLIT_NOCOLOR");

namespace {

// The config of a split: non-blocking (the watchdog waits with a deadline) and sharing the parent's
// resources (nccl.h: ncclConfig_t.splitShare, NCCL 2.18).
ncclConfig_t split_config() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  config.splitShare = 1;
  return config;
}

}  // namespace

Comm::Comm(Comm& parent, MPI_Comm group, const CommOptions& o) : opts_(o) {
  MPI_Comm_dup(group, &mpi_);
  MPI_Comm_set_errhandler(mpi_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(mpi_, &rank_);
  MPI_Comm_size(mpi_, &size_);
  members_ = group_members(mpi_, o.world_hosts);
  cc_major_ = parent.cc_major_;
  const std::string what = fmt::format("splitting the NCCL communicator of {} ranks from its parent's {}", size_, parent.size_);
  int first = 0;  // the world rank of the group's first member: the group's colour
  MPI_Comm_rank(MPI_COMM_WORLD, &first);
  MPI_Request req;
  MPI_Ibcast(&first, 1, MPI_INT, 0, mpi_, &req);
  wait_mpi(req, what);
  const SplitArgs args = split_args(true, first, rank_);
  cuda::ScopedDevice on(o.ordinal);
  ncclConfig_t config = split_config();
  const ncclResult_t rc = ncclCommSplit(parent.get(), args.colour, args.key, &comm_, &config);
  if (rc != ncclSuccess && rc != ncclInProgress) {
    comm_ = nullptr;
    give_up(false, rc, what);
  }
  if (comm_ == nullptr) give_up(false, ncclInternalError, what + ": ncclCommSplit gave no communicator");
  watch(what, [] { return false; }, true);
  network_ = parent.network_;  // the child's transport is its parent's
}

void Comm::split_none(Comm& parent) {
  const std::string what = fmt::format("the split of the NCCL communicator of {} ranks (this rank outside it)", parent.size_);
  cuda::ScopedDevice on(parent.opts_.ordinal);
  ncclConfig_t config = split_config();
  ncclComm_t none = nullptr;
  const SplitArgs args = split_args(false, -1, 0);
  parent.call(ncclCommSplit(parent.get(), args.colour, args.key, &none, &config), "ncclCommSplit", what);
}

Comm::~Comm() {
  if (comm_ != nullptr) {
    // Flush and release; a communicator that does not finish within the timeout is aborted instead.
    const ncclResult_t rc = ncclCommFinalize(comm_);
    bool clean = rc == ncclSuccess || rc == ncclInProgress;
    const auto start = std::chrono::steady_clock::now();
    ncclResult_t state = ncclInProgress;
    while (clean && state == ncclInProgress) {
      if (ncclCommGetAsyncError(comm_, &state) != ncclSuccess) clean = false;
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (opts_.timeout_s > 0 && s > opts_.timeout_s) clean = false;
      if (state == ncclInProgress) std::this_thread::yield();
    }
    if (clean && state == ncclSuccess)
      ncclCommDestroy(comm_);
    else
      ncclCommAbort(comm_);
  }
  if (mpi_ != MPI_COMM_NULL) MPI_Comm_free(&mpi_);
}

static_assert(kNcclSuccess == ncclSuccess && kNcclInProgress == ncclInProgress, "nccl_plan.h's codes");

void Comm::call(ncclResult_t rc, const char* call, const std::string& what) {
  if (rc == ncclSuccess) return;
  if (rc == ncclInProgress && comm_ != nullptr) {
    watch(what, [] { return false; }, true);  // issued once NCCL's state turns to success
    return;
  }
  if (comm_ != nullptr && error_action(rc, false, false) == ErrorAction::fail_row) {
    // Refused before anything was queued: this row fails, the communicator measures the next one.
    const char* last = ncclGetLastError(comm_);
    const auto& me = members_.at(static_cast<std::size_t>(rank_));
    throw Error(fmt::format("{} ({}) failed on rank {} ({}): {}{}{}", what, call, me.world_rank, me.host,
                            ncclGetErrorString(rc), last != nullptr && *last != '\0' ? fmt::format(": {}", last) : "",
                            net_log_folder.keep()),
                kExitInvalidResult);
  }
  give_up(false, rc, fmt::format("{} ({})", what, call));
}

void Comm::wait(cudaStream_t stream, const std::string& what) {
  watch(what, [&] {
    const cudaError_t rc = cudaStreamQuery(stream);
    if (rc == cudaErrorNotReady) return false;
    cuda::check(rc, "cudaStreamQuery");
    return true;
  });
}

void Comm::barrier(const std::string& what) {
  MPI_Request req;
  MPI_Ibarrier(mpi_, &req);
  wait_mpi(req, fmt::format("the barrier before {}", what));
}

void Comm::wait_mpi(MPI_Request& req, const std::string& what) {
  watch(what, [&] {
    int done = 0;
    if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      throw CommunicatorAborted(fmt::format("MPI failed while waiting for {}", what), true);
    return done != 0;
  });
}

void Comm::watch(const std::string& what, const std::function<bool()>& complete, bool init) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    ncclResult_t async = ncclSuccess;
    if (comm_ != nullptr && ncclCommGetAsyncError(comm_, &async) != ncclSuccess) async = ncclInternalError;
    bool done = false;
    try {
      done = init ? async == ncclSuccess : complete();
    } catch (const Error& e) {  // a CUDA error under the collective: the communicator cannot go on
      give_up(false, ncclUnhandledCudaError, fmt::format("{}: {}", what, e.what()));
    }
    const bool error = async != ncclSuccess && async != ncclInProgress;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    switch (wait_verdict(done, error, elapsed, opts_.timeout_s)) {
      case WaitVerdict::done: return;
      case WaitVerdict::wait: std::this_thread::yield(); break;
      case WaitVerdict::failed: give_up(false, async, what);
      case WaitVerdict::timed_out: give_up(true, ncclSuccess, what);
    }
  }
}

void Comm::give_up(bool timed_out, ncclResult_t error, const std::string& what) {
  std::string detail;
  if (comm_ != nullptr) {
    if (!timed_out) {
      const char* last = ncclGetLastError(comm_);
      if (last != nullptr && *last != '\0') detail = fmt::format(": {}", last);
    }
    ncclCommAbort(comm_);  // frees the GPU from kernels waiting for a peer
    comm_ = nullptr;
  }
  if (timed_out) {
    const auto r = report_hang(mpi_, members_, what, opts_.timeout_s, hang_grace_seconds(opts_.timeout_s));
    throw CommunicatorAborted(r.message + net_log_folder.keep(), r.report);
  }
  const auto& me = members_.at(static_cast<std::size_t>(rank_));
  throw CommunicatorAborted(fmt::format("{} failed on rank {} ({}): {}{}; the communicator was aborted{}", what,
                                        me.world_rank, me.host, ncclGetErrorString(error), detail,
                                        net_log_folder.keep()),
                            true);
}

}  // namespace gpuscale::nccl
