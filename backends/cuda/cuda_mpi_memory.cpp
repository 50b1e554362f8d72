#include "backends/cuda/cuda_mpi_memory.h"

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif

#include "kernels/cuda/cuda_util.h"

namespace gpuscale {
namespace {

class CudaMpiMemory final : public MpiDeviceMemory {
 public:
  CudaMpiMemory(int ordinal, bool cuda_aware) : ordinal_(ordinal), cuda_aware_(cuda_aware) {}
  std::string transport() const override { return cuda_aware_ ? "mpi-cuda-aware" : "mpi-host-staged"; }
  bool mpi_reads_device() const override { return cuda_aware_; }
  void* allocate(std::uint64_t bytes) override {
    cuda::ScopedDevice on(ordinal_);
    void* p = nullptr;
    cuda::check(cudaMalloc(&p, bytes), "cudaMalloc");
    return p;
  }
  void release(void* device) override {
    cuda::ScopedDevice on(ordinal_);
    cudaFree(device);
  }
  void upload(void* device, const void* host, std::uint64_t bytes) override {
    cuda::check(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  void download(void* host, const void* device, std::uint64_t bytes) override {
    cuda::check(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  }

 private:
  int ordinal_;
  bool cuda_aware_;
};

}  // namespace

bool mpi_is_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

std::shared_ptr<MpiDeviceMemory> make_cuda_mpi_memory(int ordinal, bool cuda_aware) {
  return std::make_shared<CudaMpiMemory>(ordinal, cuda_aware);
}

}  // namespace gpuscale
