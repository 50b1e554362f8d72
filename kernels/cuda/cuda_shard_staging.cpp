// The checkpoint shard in GPU memory (kernels/device.h, ShardStaging): the shard in device memory, one
// chunk of pinned host memory (cudaMallocHost: page-aligned, so O_DIRECT takes it), and each chunk copied
// between them on the device's stream, synchronously: the copy is part of the timed write or read.
#include "kernels/cuda/cuda_internal.h"

namespace gpuscale::cuda {
namespace {

class CudaShardStaging final : public ShardStaging {
 public:
  CudaShardStaging(CudaContext& ctx, std::uint64_t shard_bytes, std::uint64_t chunk_bytes)
      : ctx_(ctx), device_(ctx.ordinal, shard_bytes), host_(chunk_bytes) {}

  std::string path() const override { return "pinned_staging"; }
  unsigned char* host() override { return host_.as<unsigned char>(); }

  void to_host(std::uint64_t offset, std::uint64_t bytes) override {
    check(cudaMemcpyAsync(host_.get(), device_.as<unsigned char>() + offset, bytes, cudaMemcpyDeviceToHost, ctx_.stream.get()),
          "cudaMemcpyAsync (checkpoint shard to host)");
    ctx_.stream.synchronize();
  }
  void from_host(std::uint64_t offset, std::uint64_t bytes) override {
    check(cudaMemcpyAsync(device_.as<unsigned char>() + offset, host_.get(), bytes, cudaMemcpyHostToDevice, ctx_.stream.get()),
          "cudaMemcpyAsync (checkpoint shard from host)");
    ctx_.stream.synchronize();
  }

 private:
  CudaContext& ctx_;
  DeviceMemory device_;
  PinnedMemory host_;
};

}  // namespace

std::unique_ptr<ShardStaging> make_cuda_shard_staging(CudaContext& ctx, std::uint64_t shard_bytes, std::uint64_t chunk_bytes) {
  require_memory("a checkpoint shard", shard_bytes, ctx.ordinal);
  return std::make_unique<CudaShardStaging>(ctx, shard_bytes, chunk_bytes);
}

}  // namespace gpuscale::cuda
