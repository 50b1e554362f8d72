// The CUDA backend: one GPU per rank (backends/cuda/device_binding.h decides which), the CUDA device of
// kernels/cuda, expected peaks from the GPU peak table (peaks/gpu_peaks.h), collectives through NCCL
// and, for comparison, MPI over GPU buffers (CUDA-aware MPI; host-staged copies when asked for), and
// the dp-step on cuBLASLt + NCCL.
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "backends/cpu/link_probe.h"
#include "backends/cuda/cuda_collectives.h"
#include "backends/cuda/cuda_mpi_memory.h"
#include "collectives/nccl/nccl_plan.h"
#include "backends/cuda/device_binding.h"
#include "core/error.h"
#include "peaks/gpu_peaks.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_util.h"
#include "training/cuda/cuda_dp_step.h"

namespace gpuscale {
namespace {

std::optional<std::string> visible_devices_env() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  return v ? std::optional<std::string>(v) : std::nullopt;
}

// Every rank reports the GPUs it sees; all ranks then make the same assignment (or the same error).
GpuAssignment bind(const World& world) {
  nlohmann::json mine = {{"host", world.host()}, {"local_rank", world.local_rank()}};
  if (auto v = visible_devices_env()) mine["visible"] = *v;
  try {
    mine["uuids"] = cuda_device_uuids();
  } catch (const Error& e) {
    mine["error"] = e.what();
  }
  std::vector<RankGpus> ranks;
  const auto all = world.allgather(mine.dump());
  for (std::size_t r = 0; r < all.size(); ++r) {
    const auto j = nlohmann::json::parse(all[r]);
    if (j.contains("error"))
      throw Error(fmt::format("rank {} ({}) cannot list its GPUs: {}", r, j["host"].get<std::string>(),
                              j["error"].get<std::string>()),
                  kExitNoDevice);
    RankGpus g;
    g.rank = static_cast<int>(r);
    g.host = j["host"].get<std::string>();
    g.local_rank = j["local_rank"].get<int>();
    g.uuids = j["uuids"].get<std::vector<std::string>>();
    if (j.contains("visible")) g.visible_devices = j["visible"].get<std::string>();
    ranks.push_back(std::move(g));
  }
  return assign_gpus(ranks)[static_cast<std::size_t>(world.rank())];
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(const World& world, const BackendOptions& opts) {
    const auto assignment = bind(world);
    const auto rule = opts.mig_binding.empty() ? assignment.rule : opts.mig_binding + "; " + assignment.rule;
    device_ = make_cuda_device({assignment.ordinal, rule});
    peaks_ = make_gpu_peak_table(opts.peaks_file);
    mpi_memory_ = make_cuda_mpi_memory(assignment.ordinal, mpi_is_cuda_aware());
    nccl_.ordinal = assignment.ordinal;
    nccl_.timeout_s = opts.timeout_s;
    nccl_.world_hosts = world.hosts();
  }

  std::string name() const override { return "cuda"; }
  Device& device() override { return *device_; }
  std::unique_ptr<Communicator> make_communicator(const Group& group, Communicator* parent) override {
    nccl::Comm* from = nullptr;
    if (parent != nullptr) {
      auto* p = dynamic_cast<CudaCollectives*>(&parent->unwrapped());
      if (p == nullptr) throw Error("a CUDA communicator splits only from the CUDA backend's", kExitInvalidResult);
      from = &p->nccl_comm();
    } else {
      from = &job_comm();  // every world rank is here
    }
    const std::uint64_t before = free_device_memory();
    auto split = nccl::split_nccl_communicator(*from, group.member() ? group.comm() : MPI_COMM_NULL, nccl_, nccl_buffers_);
    if (!split) return nullptr;
    const std::uint64_t after = free_device_memory();
    const int entry = ledger_->add(before > after ? before - after : 0);
    return std::make_unique<CudaCollectives>(group.comm(), std::move(split), mpi_memory_, ledger_, entry);
  }
  CommunicatorMemory communicator_memory() const override {
    return {nccl::kCommDeviceBytes, nccl::kSplitCommDeviceBytes,
            "NCCL: the job's communicator about 1.6 GB (NVIDIA/nccl issues 864, 986), each split with shared resources "
            "64 MiB at most"};
  }
  std::optional<std::uint64_t> take_communicator_memory_peak() override { return ledger_->take_peak(); }
  std::vector<std::string> collective_transports() const override {
    if (mpi_memory_->mpi_reads_device()) return {"nccl", "mpi"};
    return {"nccl"};
  }
  std::unique_ptr<DpStep> make_dp_step(const DpStepConfig& config, const Group&, Communicator& comm,
                                       std::uint64_t seed) override {
    auto* collectives = dynamic_cast<CudaCollectives*>(&comm.unwrapped());
    if (collectives == nullptr) throw Error("dp-step needs the CUDA backend's communicator", kExitInvalidResult);
    return make_cuda_dp_step(config, collectives->nccl_comm(), seed);
  }
  nlohmann::json software() const override {
    const auto v = cuda_versions();
    return {{"driver", v.driver},
            {"cuda_runtime", v.runtime},
            {"cublaslt", v.cublaslt},
            {"nccl", nccl::version_text(nccl::runtime_version())},
            {"blas", nullptr},
            {"collective_transport", "nccl"},
            {"mpi_gpu_buffers", mpi_memory_->transport()}};
  }
  const PeakTable* peaks() const override { return peaks_.get(); }
  LinkPeaks link_peaks(const World& world, const BackendOptions& opts) override {
    LinkPeaks p;
    p.inter_node = network_link_peak(world, opts);
    if (opts.link_peak) {
      p.intra_node = {*opts.link_peak, "--link-peak"};
    } else {
      p.intra_node = peaks_->link_bandwidth(device_->info(), LinkKind::peer);
      p.intra_node.source = fmt::format("the GPUs' peer link, per direction ({})", p.intra_node.source);
    }
    return p;
  }

 private:
  std::unique_ptr<Device> device_;
  std::unique_ptr<GpuPeakTable> peaks_;
  std::shared_ptr<MpiDeviceMemory> mpi_memory_;
  nccl::CommOptions nccl_;
  std::shared_ptr<nccl::BufferPool> nccl_buffers_ = nccl::make_buffer_pool();
  std::shared_ptr<nccl::MemoryLedger> ledger_ = std::make_shared<nccl::MemoryLedger>();
  // The job's one communicator of its own (ncclCommInitRankConfig over the world), made when the first
  // communicator is split from it; every other communicator shares its resources. Freed last.
  std::unique_ptr<nccl::Comm> job_;

  nccl::Comm& job_comm() {
    if (!job_) {
      const std::uint64_t before = free_device_memory();
      job_ = std::make_unique<nccl::Comm>(MPI_COMM_WORLD, nccl_);
      const std::uint64_t after = free_device_memory();
      ledger_->add(before > after ? before - after : 0);  // held until the end of the run
    }
    return *job_;
  }
  std::uint64_t free_device_memory() const {
    cuda::ScopedDevice on(nccl_.ordinal);
    std::size_t free = 0, total = 0;
    cuda::check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return free;
  }
};

}  // namespace

int cuda_visible_devices(std::string* why_none) {
  std::string why;
  const int n = cuda_device_count(&why);
  if (n == 0 && why_none) *why_none = no_device_reason(why, visible_devices_env());
  return n;
}

std::unique_ptr<Backend> make_cuda_backend(const World& world, const BackendOptions& opts) {
  return std::make_unique<CudaBackend>(world, opts);
}

}  // namespace gpuscale
