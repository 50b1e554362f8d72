#include "collectives/nccl/nccl_communicator.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "collectives/collective_table.h"
#include "collectives/nccl/collective_kernels.cuh"
#include "collectives/nccl/nccl_plan.h"
#include "core/fault.h"
#include "core/units.h"
#include "kernels/cuda/cuda_plan.h"
#include "kernels/cuda/cuda_util.h"
#include "kernels/cuda/host_clock.h"

extern char** environ;

namespace gpuscale::nccl {
namespace {

ncclRedOp_t nccl_op(RedOp op) {
  switch (op) {
    case RedOp::sum: return ncclSum;
    case RedOp::prod: return ncclProd;
    case RedOp::min: return ncclMin;
    case RedOp::max: return ncclMax;
    case RedOp::avg: return ncclAvg;
  }
  return ncclSum;
}

std::map<std::string, std::string> nccl_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos && kv.rfind("NCCL_", 0) == 0) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

}  // namespace

// Zeroed once when (re)allocated.
class BufferPool {
 public:
  cuda::DeviceMemory send, recv;
  void reserve(int ordinal, std::uint64_t bytes, cudaStream_t s) {
    if (send.get() != nullptr && send.bytes() >= bytes) return;
    send = cuda::DeviceMemory();
    recv = cuda::DeviceMemory();
    std::size_t free = 0, total = 0;
    {
      cuda::ScopedDevice on(ordinal);
      cuda::check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    }
    if (auto why = cuda::memory_shortfall(fmt::format("NCCL send and receive buffers of {} each", format_size(bytes)),
                                          cuda::saturating_mul(bytes, 2), free, ordinal))
      throw Error(*why, kExitInvalidResult);
    send = cuda::DeviceMemory(ordinal, bytes);
    recv = cuda::DeviceMemory(ordinal, bytes);
    cuda::check(cudaMemsetAsync(send.get(), 0, bytes, s), "cudaMemsetAsync");
    cuda::check(cudaMemsetAsync(recv.get(), 0, bytes, s), "cudaMemsetAsync");
  }
};

std::shared_ptr<BufferPool> make_buffer_pool() { return std::make_shared<BufferPool>(); }

namespace {

class NcclRunner final : public CollectiveRunner {
 public:
  NcclRunner(Comm& comm, BufferPool& buffers, cudaStream_t stream, unsigned long long* wrong_counter,
             const CollectiveCase& c)
      : comm_(comm), buf_(buffers), stream_(stream), wrong_(wrong_counter), c_(c) {
    const auto& spec = collective_spec(c.coll);
    es_ = dtype_size(c.dtype);
    counts_ = collective_counts(spec, c.size_bytes, es_, comm.size(), c.skew);
    if (c.coll == Collective::alltoallv) layout_ = alltoallv_layout(counts_, es_, comm.rank(), comm.size());
    op_bytes_ = collective_size_bytes(counts_, es_);
    span_ = std::max(c.span_bytes, op_bytes_);
    type_ = nccl_type(c.dtype);
    op_ = nccl_op(c.op);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
    alltoall_ = late_symbol<decltype(&ncclAlltoAll)>("ncclAlltoAll");
#endif
    native_alltoall_ = native_alltoall(NCCL_VERSION_CODE, runtime_version(), alltoall_ != nullptr);
    check_case_ = {c.coll, c.dtype, c.op, comm.size(), c.root, counts_, c.seed};
    what_ = fmt::format("{} {}{} {} {} on {} ranks (NCCL)", spec.name, dtype_name(c.dtype),
                        spec.reduces ? fmt::format(" {}", redop_name(c.op)) : "", format_size(op_bytes_),
                        c.in_place ? "in-place" : "out-of-place", comm.size());
    grid_.blocks = cuda::grid_blocks(sm_count(), 8, grid_.threads, std::max<std::uint64_t>(counts_.send, counts_.recv), 1);
    buf_.reserve(comm.ordinal(), std::max<std::uint64_t>(span_, 16), stream_);
    load_inputs();
    comm_.wait(stream_, what_);
  }

  const CollCounts& counts() const override { return counts_; }
  std::string transport() const override { return "nccl"; }

  nlohmann::json details() const override {
    auto j = row_details(collective_spec(c_.coll), comm_.size(), comm_.cc_major(), nccl_environment());
    j["nccl_version"] = version_text(runtime_version());
    if (c_.coll == Collective::alltoall)
      j["nccl_call"] = native_alltoall_ ? "ncclAlltoAll" : "grouped ncclSend/ncclRecv";
    j["buffer_span_bytes"] = span_;
    j["nccl_network"] = comm_.network();
    return j;
  }

  // nccl-tests' timing: barrier, host clock, `iters` launches (each at its own offset), one wait. The
  // host clock is cuda::host_clock_s (the emulated node's simulated one there); a planted test fault's
  // own sleep is measured on the steady clock, the time it really spends.
  double time(int iters) override {
    comm_.barrier(what_);
    const double t0 = cuda::host_clock_s();
    if (planted_at(FaultSite::comm)) {  // test fault (core/fault.h): each operation waited for, then its extra slept
      for (int i = 0; i < iters; ++i) {
        const auto op0 = std::chrono::steady_clock::now();
        launch(static_cast<std::uint64_t>(i));
        comm_.wait(stream_, what_);
        spend_planted(FaultSite::comm, std::chrono::duration<double>(std::chrono::steady_clock::now() - op0).count());
      }
    } else {
      for (int i = 0; i < iters; ++i) launch(static_cast<std::uint64_t>(i));
    }
    comm_.wait(stream_, what_);
    return (cuda::host_clock_s() - t0) / iters;
  }

  // nccl-tests' -I 1 with -z 3: before each operation the ranks meet (a barrier), then CUDA events on
  // the stream around it, waited for. A planted test fault sleeps on the host after the operation
  // completes (see time()), where the events cannot see it: its seconds are added to the iteration's.
  std::vector<double> time_each(int iters) override {
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(std::max(iters, 0)));
    const bool planted = planted_at(FaultSite::comm);
    cuda::Event start, stop;
    for (int i = 0; i < iters; ++i) {
      comm_.barrier(what_);
      const auto op0 = std::chrono::steady_clock::now();
      start.record(stream_);
      launch(static_cast<std::uint64_t>(i));
      stop.record(stream_);
      comm_.wait(stream_, what_);
      double t = cuda::elapsed_seconds(start, stop);
      if (planted)
        t += spend_planted(FaultSite::comm, std::chrono::duration<double>(std::chrono::steady_clock::now() - op0).count());
      out.push_back(t);
    }
    return out;
  }

  std::uint64_t check() override {
    load_inputs();
    launch(0);
    const int rank = comm_.rank();
    const std::uint64_t n = collective_result_count(check_case_, rank);
    // In place, reduce_scatter leaves the rank's block at its in-place offset.
    const std::uint64_t at = c_.in_place ? counts_.recv_inplace_offset * static_cast<std::uint64_t>(rank) : 0;
    std::byte* result = recv_base() + at * es_;
    if (fault_injected(fmt::format("wrong:{}", collective_spec(c_.coll).name)) && n > 0)
      cuda::check(corrupt_first(c_.dtype, result, stream_), "corrupt_first launch");
    cuda::check(cudaMemsetAsync(wrong_, 0, sizeof(unsigned long long), stream_), "cudaMemsetAsync");
    cuda::check(count_wrong(c_.dtype, result, n, collective_check_plan(check_case_, rank), wrong_, grid_, stream_),
                "count_wrong launch");
    unsigned long long wrong = 0;
    cuda::check(cudaMemcpyAsync(&wrong, wrong_, sizeof wrong, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync");
    comm_.wait(stream_, what_);
    return wrong;
  }

 private:
  int sm_count() const {
    int sms = 1;
    cuda::check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, comm_.ordinal()), "cudaDeviceGetAttribute");
    return sms;
  }
  std::byte* send_base() const { return static_cast<std::byte*>(buf_.send.get()); }
  std::byte* recv_base() const { return static_cast<std::byte*>(buf_.recv.get()); }

  // Zeroed receive buffer, random inputs where the operation reads them (inside the receive buffer
  // in place), at offset 0: where launch(0) runs.
  void load_inputs() {
    const int rank = comm_.rank();
    const std::uint64_t recv_elems = c_.in_place ? std::max(counts_.recv, counts_.send) : counts_.recv;
    cuda::check(cudaMemsetAsync(recv_base(), 0, std::max<std::uint64_t>(recv_elems, 1) * es_, stream_), "cudaMemsetAsync");
    std::byte* dst = c_.in_place ? recv_base() + counts_.send_inplace_offset * static_cast<std::uint64_t>(rank) * es_
                                 : send_base();
    const std::uint64_t n = collective_input_count(check_case_, rank);
    const auto range = collective_input_range(c_.dtype, c_.op, comm_.size());
    const int contributors = collective_contributors(c_.dtype, c_.op, comm_.size());
    cuda::check(fill_inputs(c_.dtype, dst, n, c_.seed, c_.op, range, rank, comm_.size(), contributors, grid_, stream_),
                "fill_inputs launch");
  }

  // One operation at iteration `iter`'s offset, exactly the calls nccl-tests makes.
  void launch(std::uint64_t iter) {
    const std::uint64_t shift = iteration_shift(op_bytes_, span_, iter);
    const int rank = comm_.rank(), n = comm_.size();
    const auto r = static_cast<std::uint64_t>(rank);
    std::byte* recvbuff = recv_base() + shift;
    std::byte* sendbuff = send_base() + shift;
    const void* send = c_.in_place ? recvbuff + counts_.send_inplace_offset * r * es_ : sendbuff;
    void* recv = c_.in_place ? recvbuff + counts_.recv_inplace_offset * r * es_ : recvbuff;
    const std::uint64_t count = counts_.param;
    ncclComm_t comm = comm_.get();
    switch (c_.coll) {
      case Collective::all_reduce:
        return comm_.call(ncclAllReduce(send, recv, count, type_, op_, comm, stream_), "ncclAllReduce", what_);
      case Collective::all_gather:
        return comm_.call(ncclAllGather(send, recv, count, type_, comm, stream_), "ncclAllGather", what_);
      case Collective::reduce_scatter:
        return comm_.call(ncclReduceScatter(send, recv, count, type_, op_, comm, stream_), "ncclReduceScatter", what_);
      case Collective::broadcast:
        return comm_.call(ncclBroadcast(send, recv, count, type_, c_.root, comm, stream_), "ncclBroadcast", what_);
      case Collective::reduce:
        return comm_.call(ncclReduce(send, recv, count, type_, op_, c_.root, comm, stream_), "ncclReduce", what_);
      case Collective::alltoall: {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
        if (native_alltoall_)
          return comm_.call(alltoall_(send, recv, count, type_, comm, stream_), "ncclAlltoAll", what_);
#endif
        const std::uint64_t block = count * es_;
        return grouped([&] {
          for (int peer = 0; peer < n; ++peer) {
            const auto p = static_cast<std::uint64_t>(peer);
            comm_.call(ncclSend(static_cast<const std::byte*>(send) + p * block, count, type_, peer, comm, stream_),
                       "ncclSend", what_);
            comm_.call(ncclRecv(static_cast<std::byte*>(recv) + p * block, count, type_, peer, comm, stream_),
                       "ncclRecv", what_);
          }
        });
      }
      case Collective::alltoallv:  // grouped send/recv, as nccl-tests; a peer with nothing to exchange is skipped
        return grouped([&] {
          for (int peer = 0; peer < n; ++peer) {
            const auto p = static_cast<std::size_t>(peer);
            if (layout_.send_counts[p] > 0)
              comm_.call(ncclSend(static_cast<const std::byte*>(send) + layout_.send_displs[p] * es_, layout_.send_counts[p],
                                  type_, peer, comm, stream_),
                         "ncclSend", what_);
            if (layout_.recv_counts[p] > 0)
              comm_.call(ncclRecv(static_cast<std::byte*>(recv) + layout_.recv_displs[p] * es_, layout_.recv_counts[p],
                                  type_, peer, comm, stream_),
                         "ncclRecv", what_);
          }
        });
      case Collective::sendrecv:
        return grouped([&] {
          comm_.call(ncclSend(send, count, type_, (rank + 1) % n, comm, stream_), "ncclSend", what_);
          comm_.call(ncclRecv(recv, count, type_, (rank - 1 + n) % n, comm, stream_), "ncclRecv", what_);
        });
    }
  }

  // Calls between ncclGroupStart and ncclGroupEnd. One NCCL refuses (the row fails, Comm::call) still
  // closes the group, so the next operation does not join a broken one; an aborted communicator has
  // nothing left to close.
  void grouped(const std::function<void()>& calls) {
    comm_.call(ncclGroupStart(), "ncclGroupStart", what_);
    try {
      calls();
    } catch (const CommunicatorAborted&) {
      throw;
    } catch (...) {
      ncclGroupEnd();
      throw;
    }
    comm_.call(ncclGroupEnd(), "ncclGroupEnd", what_);
  }

  Comm& comm_;
  BufferPool& buf_;
  cudaStream_t stream_;
  unsigned long long* wrong_;
  CollectiveCase c_;
  std::uint64_t es_ = 1, op_bytes_ = 0, span_ = 0;
  CollCounts counts_;
  AlltoallvLayout layout_;  // alltoallv's counts and displacements (collectives/alltoallv_plan.h)
  CollCheckCase check_case_{};
  ncclDataType_t type_ = ncclFloat32;
  ncclRedOp_t op_ = ncclSum;
  bool native_alltoall_ = false;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  decltype(&ncclAlltoAll) alltoall_ = nullptr;  // looked up at run time: NCCL 2.18 to 2.27 lack it
#else
  void* alltoall_ = nullptr;
#endif
  KernelGrid grid_;
  std::string what_;
};

class NcclCollectives final : public NcclCommunicator {
 public:
  NcclCollectives(MPI_Comm group, const CommOptions& opts, std::shared_ptr<BufferPool> buffers)
      : comm_(group, opts), wrong_(opts.ordinal, sizeof(unsigned long long)), buffers_(std::move(buffers)) {}
  NcclCollectives(Comm& parent, MPI_Comm group, const CommOptions& opts, std::shared_ptr<BufferPool> buffers)
      : comm_(parent, group, opts), wrong_(opts.ordinal, sizeof(unsigned long long)), buffers_(std::move(buffers)) {}

  int rank() const override { return comm_.rank(); }
  int size() const override { return comm_.size(); }
  std::string transport() const override { return "nccl"; }
  Comm& comm() override { return comm_; }

  std::optional<std::string> unsupported(const CollectiveCase& c) const override {
    return nccl::unsupported(c, runtime_version(), comm_.cc_major());
  }

  std::unique_ptr<CollectiveRunner> prepare(const CollectiveCase& c) override {
    cuda::ScopedDevice on(comm_.ordinal());
    return std::make_unique<NcclRunner>(comm_, *buffers_, stream_.get(), wrong_.as<unsigned long long>(), c);
  }

 private:
  Comm comm_;
  cuda::Stream stream_;
  cuda::DeviceMemory wrong_;
  std::shared_ptr<BufferPool> buffers_;
};

}  // namespace

std::unique_ptr<NcclCommunicator> make_nccl_communicator(MPI_Comm group, const CommOptions& opts,
                                                         std::shared_ptr<BufferPool> buffers) {
  cuda::ScopedDevice on(opts.ordinal);
  return std::make_unique<NcclCollectives>(group, opts, std::move(buffers));
}

std::unique_ptr<NcclCommunicator> split_nccl_communicator(Comm& parent, MPI_Comm group, const CommOptions& opts,
                                                          std::shared_ptr<BufferPool> buffers) {
  cuda::ScopedDevice on(opts.ordinal);
  if (group == MPI_COMM_NULL) {
    Comm::split_none(parent);
    return nullptr;
  }
  return std::make_unique<NcclCollectives>(parent, group, opts, std::move(buffers));
}

}  // namespace gpuscale::nccl
