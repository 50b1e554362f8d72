#pragma once
// The NCCL transport's host-side decisions, as pure functions (no NCCL or CUDA header here), so they
// are unit-tested on machines without a GPU: version codes, which dtype/op pairs the linked NCCL runs,
// which alltoall nccl-tests would call, where each timed iteration's buffers start, what the watchdog
// does with what it sees, and what a row records about NCCL's algorithm choice.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "collectives/communicator.h"

namespace gpuscale::nccl {

// NCCL's version encoding (NCCL_VERSION(X, Y, Z) in nccl.h): X*1000 + Y*100 + Z up to 2.8,
// X*10000 + Y*100 + Z from 2.9 on. ncclGetVersion returns the linked library's code.
int version_code(int major, int minor, int patch);
std::string version_text(int code);  // 22809 -> "2.28.9"

// Why the linked NCCL (version `code`) on a GPU of compute capability major `cc_major` (0: unknown)
// cannot run the case; nullopt when it can. bfloat16 and avg came with 2.10, fp8 with 2.24; NCCL builds
// its fp8 reduction kernels for compute capability 9.0 and newer only. In-place sendrecv is refused:
// nccl-tests runs it on one buffer for both directions and does not check it (the result is undefined),
// and gpuscale times only what it checks.
std::optional<std::string> unsupported(const CollectiveCase& c, int code, int cc_major);

// The oldest NCCL gpuscale runs with (docs/cuda.md); the loader refuses an older one by name
// (backends/cuda_module/cuda_library_plan.h). The module may call directly only what this version
// exports; a newer function (ncclAlltoAll, 2.28) is looked up at run time, so the module loads over the
// NCCL a PyTorch wheel or a cluster ships. e2e_cuda_libs' old_nccl case checks the built module.
inline constexpr int kOldestMajor = 2, kOldestMinor = 18;

// nccl-tests (2.19) calls ncclAlltoAll when both the headers it was built with and the library it runs
// with are 2.28 or newer, and grouped ncclSend/ncclRecv pairs otherwise; gpuscale does the same, and
// also falls back when the library does not export the function (`found`: the run-time lookup).
bool native_alltoall(int compiled_code, int runtime_code, bool found);

// Byte offset of iteration `iter` in buffers of `span_bytes`: each iteration moves on by the
// operation's size (nccl-tests' -e sets the span), so caches do not carry data between iterations.
std::uint64_t iteration_shift(std::uint64_t op_bytes, std::uint64_t span_bytes, std::uint64_t iter);

// What the watchdog does after one look at the work it waits for (a stream, a communicator's init).
enum class WaitVerdict { done, wait, failed, timed_out };
// `complete`: the work finished; `async_error`: NCCL reports an error (neither success nor in
// progress). An error wins over completion (the results cannot be trusted); timeout_s <= 0 never
// times out (nccl-tests' -T 0).
WaitVerdict wait_verdict(bool complete, bool async_error, double elapsed_s, double timeout_s);

// What an NCCL error ends. A call's own return code is synchronous: NCCL refused the call (e.g.
// ncclInvalidArgument for a dtype/op pair) before queueing any work, so the communicator is intact and
// only that row fails. An asynchronous error (ncclCommGetAsyncError, a CUDA error under queued work) or
// a timeout leaves work in flight that may never finish: the communicator is aborted and the run ends.
// `nccl_result` is the ncclResult_t; success and ncclInProgress are no error.
inline constexpr int kNcclSuccess = 0;     // ncclSuccess (nccl_comm.cpp checks the values)
inline constexpr int kNcclInProgress = 7;  // ncclInProgress
enum class ErrorAction { none, fail_row, abort };
ErrorAction error_action(int nccl_result, bool async, bool timed_out);

// What a row records about NCCL's choices: the algorithm and protocol (NCCL's API does not say which
// it picked; NCCL_ALGO / NCCL_PROTO when the user fixed them) and, for reductions across ranks on
// GPUs where NCCL may use NVLink SHARP (NVLS, compute capability 9.0+), that busbw is then not a wire
// figure. `env`: the NCCL_* environment.
nlohmann::json row_details(const CollectiveSpec& spec, int nranks, int cc_major,
                           const std::map<std::string, std::string>& env);

// Which network NCCL chose (its IB or socket transport, or a plugin's) is said only in its INFO log.
// Unless the user set NCCL_DEBUG, each process sends the INIT and NET lines to a file of its own
// (NCCL_DEBUG_FILE under `dir`), read after every communicator's init; a run over sockets between
// nodes, where RDMA was expected, is then visible in the row (details.nccl_network).
struct NetLogPlan {
  std::map<std::string, std::string> set;  // variables to set before NCCL starts (empty: none)
  std::string path;                        // the log NCCL will write (%h, %p expanded by NCCL)
  std::string why_not;                     // why the network is not recorded (the user's NCCL_DEBUG)
};
NetLogPlan net_log_plan(const std::map<std::string, std::string>& nccl_env, const std::string& dir);

// The folder of that log: removed when the process ends after clean communicators; a communicator that
// failed keeps it (what NCCL said is the first thing to read) and its error names it.
class NetLogFolder {
 public:
  explicit NetLogFolder(std::string dir = {}) : dir_(std::move(dir)) {}
  // A communicator failed: the folder is kept. The words its error ends with ("" without a folder).
  std::string keep();
  bool remove_at_exit() const;
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  bool kept_ = false;
};

// What a log of NCCL's says about its network: {"network": "IB" | "Socket" | a plugin's name,
// "devices": the NIC list NCCL printed, "sockets": true when it is the socket transport}; null when the
// log has no "Using network" line. The last communicator's lines win.
nlohmann::json network_from_log(std::string_view log);

}  // namespace gpuscale::nccl

namespace gpuscale::nccl {

// How communicators are made (issue 46, finding 5). One communicator per job is made from a unique id
// (ncclCommInitRankConfig) when the first one is needed; every other (each GPU count's group, each
// train-step dimension, each fleet pair) is split from it, or from the communicator of the group it was
// split from, with ncclCommSplit and config.splitShare = 1, so it shares its parent's buffers instead of
// holding its own (NVIDIA/nccl issues 864 and 986: about 1.6 GB of GPU memory each otherwise).
// ncclCommSplit is collective over the parent: every parent rank calls it, a rank outside the new
// group with NCCL_SPLIT_NOCOLOR ("Communicator Creation and Management").
inline constexpr int kSplitNoColor = -1;  // NCCL_SPLIT_NOCOLOR (nccl_comm.cpp checks the value)
struct SplitArgs {
  int colour = kSplitNoColor;
  int key = 0;
};
// This rank's colour and key: a member gives the world rank of its group's first member (the same on
// every member, different between disjoint groups; never negative) and its rank in the group, so its
// NCCL rank is its MPI rank in the group; a rank outside the group (`member` false) gives no colour.
SplitArgs split_args(bool member, int first_member_world_rank, int group_rank);

// The device memory the memory plan counts for communicators, per rank: the job's communicator, which
// holds the buffers (the issues' figure), and each communicator split from it with splitShare, which
// holds little beside its own state (an estimate that errs large; the rows record what was measured).
inline constexpr std::uint64_t kCommDeviceBytes = 1600ULL * 1000 * 1000;
inline constexpr std::uint64_t kSplitCommDeviceBytes = 64ULL << 20;

// The device memory a rank's communicators hold, as measured around each one's creation (free memory
// before less free memory after): what the live ones hold now, and the most they held since the last
// take_peak().
class MemoryLedger {
 public:
  // A communicator made, holding `bytes`: its entry.
  int add(std::uint64_t bytes);
  // That communicator freed (an unknown entry changes nothing).
  void remove(int entry);
  std::uint64_t held() const { return held_; }
  // The most held since the last call (or since the ledger began), then the peak starts again from
  // what is held now.
  std::uint64_t take_peak();

 private:
  std::map<int, std::uint64_t> entries_;
  int next_ = 0;
  std::uint64_t held_ = 0, peak_ = 0;
};

}  // namespace gpuscale::nccl
