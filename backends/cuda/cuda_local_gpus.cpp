// The CUDA backend's GPUs for `gpuscale health`: every GPU this process sees, opened one at a time
// through the CUDA device (kernels/cuda), with the GPU peak table (peaks/gpu_peaks.h) and the CUDA
// versions for the driver check.
#include <fmt/format.h>

#include "backends/local_gpus.h"
#include "kernels/cuda/cuda_device.h"
#include "peaks/gpu_peaks.h"

namespace gpuscale {
namespace {

class CudaGpus final : public health::LocalGpus {
 public:
  CudaGpus(std::vector<std::string> uuids, const std::string& peaks_file)
      : uuids_(std::move(uuids)), peaks_(make_gpu_peak_table(peaks_file)) {}

  std::vector<std::string> uuids() const override { return uuids_; }
  std::unique_ptr<Device> open(int ordinal) override {
    return make_cuda_device({ordinal, fmt::format("gpuscale health: GPU {} of {}", ordinal, uuids_.size())});
  }
  const PeakTable* peaks() const override { return peaks_.get(); }
  nlohmann::json software() const override {
    const auto v = cuda_versions();
    return {{"driver", v.driver}, {"cuda_runtime", v.runtime}, {"cublaslt", v.cublaslt}, {"nccl", nullptr}};
  }

 private:
  std::vector<std::string> uuids_;
  std::unique_ptr<GpuPeakTable> peaks_;
};

}  // namespace

std::unique_ptr<health::LocalGpus> open_cuda_local_gpus(const std::string& peaks_file, std::string* why_none) {
  // No GPU visible still leaves the runtime's versions: a driver too old for the runtime is exactly
  // the case where the CUDA runtime sees nothing (cudaErrorInsufficientDriver).
  std::string why;
  const bool any = cuda_device_count(&why) > 0;
  if (!any) *why_none = "the CUDA runtime sees no GPU: " + why;
  // A malformed --peaks file is bad input (thrown), not a missing GPU.
  return std::make_unique<CudaGpus>(any ? cuda_device_uuids() : std::vector<std::string>{}, peaks_file);
}

}  // namespace gpuscale
