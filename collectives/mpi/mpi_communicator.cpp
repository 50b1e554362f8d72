#include "collectives/mpi/mpi_communicator.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "collectives/collective_table.h"
#include "core/element_codec.h"
#include "core/error.h"
#include "core/fault.h"
#include "core/step_progress.h"

namespace gpuscale {
namespace {

void mpi_check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw Error(fmt::format("{} failed: {}", call, std::string(msg, static_cast<std::size_t>(len))), 1);
}

// The MPI datatype that carries a dtype; reductions need arithmetic MPI knows.
std::optional<MPI_Datatype> mpi_type(DType t, bool reduces) {
  switch (t) {
#define GPUSCALE_DTYPE_MPI(id, mpi_datatype, mpi_reduces) \
  case DType::id: return reduces && !(mpi_reduces) ? std::nullopt : std::optional<MPI_Datatype>(mpi_datatype);
#include "core/dtype_table.def"
    default: return std::nullopt;
  }
}

std::optional<MPI_Op> mpi_op(RedOp op) {
  switch (op) {
    case RedOp::sum: return MPI_SUM;
    case RedOp::prod: return MPI_PROD;
    case RedOp::min: return MPI_MIN;
    case RedOp::max: return MPI_MAX;
    case RedOp::avg: return std::nullopt;
  }
  return std::nullopt;
}

// A buffer in device memory, mirroring a host vector of the same size.
class DeviceBuffer {
 public:
  DeviceBuffer(MpiDeviceMemory* mem, std::uint64_t bytes) : mem_(mem), p_(mem && bytes ? mem->allocate(bytes) : nullptr) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (p_) mem_->release(p_);
  }
  void* get() const { return p_; }

 private:
  MpiDeviceMemory* mem_;
  void* p_;
};

// How much slower than the fastest operation timed in a point one operation may be and still have
// its whole time planted on (MpiRunner::time): noise under load stays within it, compounding does not.
constexpr double kPlantedBasisCap = 4;

class MpiRunner final : public CollectiveRunner {
 public:
  MpiRunner(MPI_Comm comm, const CollectiveCase& c, MpiDeviceMemory* device) : comm_(comm), c_(c), device_(device) {
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &size_);
    const auto& spec = collective_spec(c.coll);
    es_ = dtype_size(c.dtype);
    counts_ = collective_counts(spec, c.size_bytes, es_, size_, c.skew);
    if (c.coll == Collective::alltoallv) {
      const auto l = alltoallv_layout(counts_, es_, rank_, size_);
      const auto ints = [](const std::vector<std::uint64_t>& v) { return std::vector<int>(v.begin(), v.end()); };
      sendcounts_ = ints(l.send_counts), sdispls_ = ints(l.send_displs);
      recvcounts_ = ints(l.recv_counts), rdispls_ = ints(l.recv_displs);
    }
    type_ = *mpi_type(c.dtype, spec.reduces);
    if (spec.reduces) op_ = *mpi_op(c.op);
    // In place the send data lives inside the receive buffer; MPI's in-place reduce_scatter reads the
    // whole buffer, so the receive buffer then holds the full send count.
    const std::uint64_t recv_elems = c.in_place ? std::max(counts_.recv, counts_.send) : counts_.recv;
    recv_.assign(std::max<std::uint64_t>(recv_elems, 1) * es_, std::byte{0});
    if (!c.in_place) send_.assign(std::max<std::uint64_t>(counts_.send, 1) * es_, std::byte{0});
    check_case_ = {c.coll, c.dtype, c.op, size_, c.root, counts_, c.seed};
    if (device_) {
      dsend_ = std::make_unique<DeviceBuffer>(device_, send_.size());
      drecv_ = std::make_unique<DeviceBuffer>(device_, recv_.size());
    }
    load_inputs();
  }

  const CollCounts& counts() const override { return counts_; }
  std::string transport() const override { return device_ ? device_->transport() : "mpi"; }

  double time(int iters) override {
    mpi_check(MPI_Barrier(comm_), "MPI_Barrier");
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) timed_once();
    const double t1 = MPI_Wtime();
    return (t1 - t0) / iters;
  }

  std::vector<double> time_each(int iters) override {
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(std::max(iters, 0)));
    for (int i = 0; i < iters; ++i) {
      mpi_check(MPI_Barrier(comm_), "MPI_Barrier");
      const double t0 = MPI_Wtime();
      timed_once();
      out.push_back(MPI_Wtime() - t0);
    }
    return out;
  }

  // One timed operation and a planted fault's share of it.
  void timed_once() {
    const double op0 = MPI_Wtime();
    run_once();
    // A planted NIC or link fault (core/fault.h) really spends F-1 times the operation's own time, so
    // the others wait. An operation's time includes its wait for peers, and where two planted ranks
    // share a collective (a slow host's ranks) each one's wait holds the other's planted time:
    // planting on all of it would compound by F with every operation (minutes per operation within
    // a few), which no slow NIC does. So the time planted on is at most kPlantedBasisCap times the
    // fastest operation timed here: ordinary noise keeps the operation's own time (a rank planted
    // alone is F times slower, as before), and the compounding stops.
    const double op_s = MPI_Wtime() - op0;
    fastest_op_s_ = std::min(fastest_op_s_, op_s);
    spend_planted(FaultSite::comm, std::min(op_s, kPlantedBasisCap * fastest_op_s_));
    note_progress();  // each operation a step (core/step_progress.h): a slow peer's batch still shows progress
  }

  std::uint64_t check() override {
    std::fill(recv_.begin(), recv_.end(), std::byte{0});
    load_inputs();
    run_once();
    if (device_) {  // the results as the device holds them
      download(recv_, *drecv_);
      download(send_, *dsend_);
    }
    if (fault_injected(fmt::format("wrong:{}", collective_spec(c_.coll).name)) && !recv_.empty())
      // A value that is certainly wrong and still in range for every dtype (int8 included).
      store_element(c_.dtype, recv_.data(), 0, load_element(c_.dtype, recv_.data(), 0) > 0 ? -1 : 1);
    const std::uint64_t n = collective_result_count(check_case_, rank_);
    // MPI's in-place reduce_scatter leaves the rank's block at the start of the buffer; an
    // out-of-place broadcast root keeps its data in its send buffer (MPI_Bcast has one buffer).
    const bool root_keeps = c_.coll == Collective::broadcast && !c_.in_place && rank_ == c_.root;
    const std::byte* result = root_keeps ? send_.data() : recv_.data();
    const CollCheckPlan plan = collective_check_plan(check_case_, rank_);
    std::uint64_t wrong = 0;
    for (std::uint64_t i = 0; i < n; ++i)
      if (coll_sampled(plan, i) && !coll_value_ok(load_element(c_.dtype, result, i), coll_expected(plan, i))) ++wrong;
    return wrong;
  }

 private:
  // Random check inputs into the send region (inside the receive buffer when in place).
  void load_inputs() {
    const std::int64_t range = collective_input_range(c_.dtype, c_.op, size_);
    const int contributors = collective_contributors(c_.dtype, c_.op, size_);
    std::byte* dst = send_ptr();
    const std::uint64_t n = collective_input_count(check_case_, rank_);
    for (std::uint64_t i = 0; i < n; ++i)
      store_element(c_.dtype, dst, i, collective_input(c_.seed, c_.op, range, rank_, i, size_, contributors));
    if (device_) {
      upload(*dsend_, send_);
      upload(*drecv_, recv_);
    }
  }

  void upload(const DeviceBuffer& d, const std::vector<std::byte>& h) {
    if (!h.empty()) device_->upload(d.get(), h.data(), h.size());
  }
  void download(std::vector<std::byte>& h, const DeviceBuffer& d) {
    if (!h.empty()) device_->download(h.data(), d.get(), h.size());
  }
  bool device_pointers() const { return device_ && device_->mpi_reads_device(); }

  std::byte* send_ptr() {
    if (!c_.in_place) return send_.data();
    if (c_.coll == Collective::all_gather) return recv_.data() + counts_.send_inplace_offset * es_ * rank_;
    return recv_.data();
  }

  // Host-staged device buffers: the operation's inputs come down from the device before MPI runs and
  // its outputs go back up after, inside the timed operation.
  void run_once() {
    const bool staged = device_ && !device_->mpi_reads_device();
    if (staged) c_.in_place ? download(recv_, *drecv_) : download(send_, *dsend_);
    run_mpi();
    if (staged) upload(*drecv_, recv_);
  }

  void run_mpi() {
    const auto cnt = [](std::uint64_t v) { return static_cast<int>(v); };
    void* recv = device_pointers() ? drecv_->get() : recv_.data();
    void* send_buf = device_pointers() ? dsend_->get() : send_.data();
    void* send = c_.in_place ? MPI_IN_PLACE : send_buf;
    switch (c_.coll) {
      case Collective::all_reduce:
        mpi_check(MPI_Allreduce(send, recv, cnt(counts_.param), type_, op_, comm_), "MPI_Allreduce");
        break;
      case Collective::all_gather:
        mpi_check(MPI_Allgather(send, c_.in_place ? 0 : cnt(counts_.param), type_, recv, cnt(counts_.param), type_, comm_),
                  "MPI_Allgather");
        break;
      case Collective::reduce_scatter:
        mpi_check(MPI_Reduce_scatter_block(send, recv, cnt(counts_.param), type_, op_, comm_), "MPI_Reduce_scatter_block");
        break;
      case Collective::broadcast:
        // The root sends from its send buffer; the others receive into their receive buffers.
        mpi_check(MPI_Bcast(c_.in_place || rank_ != c_.root ? recv : send_buf, cnt(counts_.param), type_, c_.root, comm_),
                  "MPI_Bcast");
        break;
      case Collective::reduce: {
        void* s = c_.in_place ? (rank_ == c_.root ? MPI_IN_PLACE : recv) : send;
        mpi_check(MPI_Reduce(s, recv, cnt(counts_.param), type_, op_, c_.root, comm_), "MPI_Reduce");
        break;
      }
      case Collective::alltoall:
        mpi_check(MPI_Alltoall(send, cnt(counts_.param), type_, recv, cnt(counts_.param), type_, comm_), "MPI_Alltoall");
        break;
      case Collective::alltoallv:
        mpi_check(MPI_Alltoallv(send, sendcounts_.data(), sdispls_.data(), type_, recv, recvcounts_.data(),
                                rdispls_.data(), type_, comm_),
                  "MPI_Alltoallv");
        break;
      case Collective::sendrecv: {
        const int next = (rank_ + 1) % size_, prev = (rank_ - 1 + size_) % size_;
        if (c_.in_place)
          mpi_check(MPI_Sendrecv_replace(recv, cnt(counts_.param), type_, next, 0, prev, 0, comm_, MPI_STATUS_IGNORE),
                    "MPI_Sendrecv_replace");
        else
          mpi_check(MPI_Sendrecv(send, cnt(counts_.param), type_, next, 0, recv, cnt(counts_.param), type_, prev, 0,
                                 comm_, MPI_STATUS_IGNORE),
                    "MPI_Sendrecv");
        break;
      }
    }
  }

  MPI_Comm comm_;
  CollectiveCase c_;
  int rank_ = 0, size_ = 1;
  std::uint64_t es_ = 1;
  CollCounts counts_;
  CollCheckCase check_case_{};
  MPI_Datatype type_ = MPI_BYTE;
  MPI_Op op_ = MPI_SUM;
  std::vector<int> sendcounts_, sdispls_, recvcounts_, rdispls_;  // alltoallv's layout (alltoallv_plan.h)
  std::vector<std::byte> send_, recv_;  // the buffers (host), or the host copies of the device buffers
  MpiDeviceMemory* device_;
  std::unique_ptr<DeviceBuffer> dsend_, drecv_;
  double fastest_op_s_ = std::numeric_limits<double>::infinity();  // of this rank's timed operations here
};

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MPI_Comm group, std::shared_ptr<MpiDeviceMemory> device) : device_(std::move(device)) {
    mpi_check(MPI_Comm_dup(group, &comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~MpiCommunicator() override { MPI_Comm_free(&comm_); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string transport() const override { return device_ ? device_->transport() : "mpi"; }

  std::optional<std::string> unsupported(const CollectiveCase& c) const override { return mpi_unsupported(c, size_); }

  std::unique_ptr<CollectiveRunner> prepare(const CollectiveCase& c) override {
    return std::make_unique<MpiRunner>(comm_, c, device_.get());
  }

 private:
  std::shared_ptr<MpiDeviceMemory> device_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::optional<std::string> mpi_unsupported(const CollectiveCase& c, int nranks) {
  const auto& spec = collective_spec(c.coll);
  if (!mpi_type(c.dtype, spec.reduces))
    return fmt::format("MPI has no {} for {}", spec.reduces ? "reduction" : "datatype", dtype_name(c.dtype));
  if (spec.reduces && !mpi_op(c.op)) return fmt::format("MPI has no '{}' reduction", redop_name(c.op));
  if (c.in_place && !spec.in_place) return fmt::format("{} has no in-place variant", spec.name);
  const auto counts = collective_counts(spec, c.size_bytes, dtype_size(c.dtype), nranks, c.skew);
  if (std::max(counts.send, counts.recv) > static_cast<std::uint64_t>(INT32_MAX))
    return fmt::format("{} elements exceed MPI's int count", std::max(counts.send, counts.recv));
  return std::nullopt;
}


std::unique_ptr<Communicator> make_mpi_communicator(MPI_Comm group, std::shared_ptr<MpiDeviceMemory> device) {
  return std::make_unique<MpiCommunicator>(group, std::move(device));
}

}  // namespace gpuscale
