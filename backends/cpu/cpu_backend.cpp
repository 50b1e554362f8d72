// The CPU backend: one rank = one "device" (its share of the node's cores), OpenMP kernels, BLAS GEMM,
// MPI collectives over host buffers. It measures CPU nodes for real and runs the whole pipeline on
// machines without a GPU.
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "backends/backend.h"
#include "backends/cpu/link_probe.h"
#include "collectives/mpi/mpi_communicator.h"
#include "kernels/cpu/cpu_device.h"
#include "training/cpu/cpu_dp_step.h"

namespace gpuscale {
namespace {

class CpuBackend final : public Backend {
 public:
  CpuBackend(const World& world, const BackendOptions& opts)
      : device_(make_cpu_device({opts.threads, world.local_size()})) {}

  std::string name() const override { return "cpu"; }
  Device& device() override { return *device_; }
  std::unique_ptr<Communicator> make_communicator(const Group& group, Communicator*) override {
    if (!group.member()) return nullptr;  // MPI_Comm_split already made the group; nothing to take part in
    return make_mpi_communicator(group.comm());
  }
  std::unique_ptr<DpStep> make_dp_step(const DpStepConfig& config, const Group& group, Communicator&,
                                       std::uint64_t seed) override {
    return make_cpu_dp_step(config, group.comm(), seed);
  }
  nlohmann::json software() const override {
    return {{"blas", blas_description()}, {"driver", nullptr}, {"cuda_runtime", nullptr}, {"nccl", nullptr}};
  }
  const PeakTable* peaks() const override { return nullptr; }
  LinkPeaks link_peaks(const World& world, const BackendOptions& opts) override {
    return cpu_link_peaks(world, opts);
  }

 private:
  std::unique_ptr<Device> device_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(const World& world, const BackendOptions& opts) {
  return std::make_unique<CpuBackend>(world, opts);
}

}  // namespace gpuscale
