#include "kernels/cpu/cpu_device.h"

#include <algorithm>

#include <cblas.h>
#include <omp.h>

#include "kernels/cpu/cpu_kernels.h"

namespace gpuscale {
namespace {

class CpuDevice final : public Device {
 public:
  explicit CpuDevice(const CpuDeviceOptions& opts) : topo_(read_cpu_topology()) {
    threads_ = opts.threads > 0 ? opts.threads : default_threads_per_rank(topo_, opts.ranks_on_node);
    omp_set_num_threads(threads_);
#ifdef OPENBLAS_VERSION  // OpenBLAS's own threads, separate from OpenMP's
    openblas_set_num_threads(threads_);
#endif
    bool capped = false;
    stream_bytes_ = default_cpu_stream_array_bytes(topo_, opts.ranks_on_node, &capped);
    info_.backend = "cpu";
    info_.name = topo_.model;
    info_.index = 0;
    info_.memory_bytes = topo_.memory_bytes;
    info_.free_memory_bytes = topo_.available_bytes;  // MemAvailable
    info_.ranks_sharing_memory = std::max(opts.ranks_on_node, 1);
    info_.memory_owner = "the host";
    info_.memory_unread = topo_.memory_unread;
    info_.details = {
        {"threads", threads_},
        {"online_cores", topo_.online_cores},
        {"affinity_cores", topo_.affinity_cores},
        {"ranks_on_node", opts.ranks_on_node},
        {"last_level_cache_bytes", topo_.llc_bytes},
        {"last_level_cache", topo_.llc_name},
        {"default_stream_array_bytes", stream_bytes_},
        {"stream_array_capped_by_memory", capped},
        {"memory_unread", topo_.memory_unread.empty() ? nlohmann::json(nullptr) : nlohmann::json(topo_.memory_unread)},
        // A CUDA rank records the NIC nearest its GPU (kernels/cuda/nic_plan.h); a CPU rank has none of its own.
        {"nic", nullptr},
        {"nic_note", "the CPU backend's traffic goes through MPI, over whatever interface MPI picks: no NIC per rank"},
    };
  }

  const DeviceInfo& info() const override { return info_; }

  std::vector<StreamOp> stream_ops() const override {
    return cpu_stream_ops();
  }
  std::vector<DType> stream_dtypes() const override { return dtypes_for(kForStream); }
  std::uint64_t default_stream_array_bytes() const override { return stream_bytes_; }
  std::unique_ptr<StreamArrays> make_stream(DType type, std::uint64_t elements, std::uint64_t seed) override {
    return make_cpu_stream(type, elements, seed);
  }

  std::vector<DType> gemm_dtypes() const override { return {DType::fp64, DType::fp32}; }
  std::optional<std::string> gemm_unsupported(DType type) const override {
    if (type == DType::fp64 || type == DType::fp32) return std::nullopt;
    return fmt::format("the CPU backend's BLAS has no {} GEMM", dtype_name(type));
  }
  std::unique_ptr<GemmProblem> make_gemm(DType type, const GemmShape& shape, std::uint64_t seed) override {
    return make_cpu_gemm(type, shape, seed);
  }

 private:
  CpuTopology topo_;
  int threads_ = 1;
  std::uint64_t stream_bytes_ = 0;
  DeviceInfo info_;
};

}  // namespace

std::unique_ptr<Device> make_cpu_device(const CpuDeviceOptions& opts) { return std::make_unique<CpuDevice>(opts); }

std::string blas_description() {
#ifdef OPENBLAS_VERSION
  std::string version = OPENBLAS_VERSION;  // " OpenBLAS 0.3.21 "
  version.erase(0, version.find_first_not_of(' '));
  version.erase(version.find_last_not_of(' ') + 1);
  return version + " (" + openblas_get_config() + ")";
#else
  return "BLAS through cblas.h (implementation unknown)";
#endif
}

}  // namespace gpuscale
