#include "backends/cuda/cuda_collectives.h"

#include <fmt/format.h>

#include "collectives/nccl/nccl_plan.h"
#include "kernels/cuda/cuda_util.h"

namespace gpuscale {

CudaCollectives::CudaCollectives(MPI_Comm group, const nccl::CommOptions& nccl,
                                 std::shared_ptr<nccl::BufferPool> buffers, std::shared_ptr<MpiDeviceMemory> mpi_memory)
    : group_(group), nccl_opts_(nccl), buffers_(std::move(buffers)), mpi_memory_(std::move(mpi_memory)) {
  MPI_Comm_rank(group, &rank_);
  MPI_Comm_size(group, &size_);
  cuda::check(cudaDeviceGetAttribute(&cc_major_, cudaDevAttrComputeCapabilityMajor, nccl.ordinal),
              "cudaDeviceGetAttribute");
}

std::optional<std::string> CudaCollectives::unsupported(const CollectiveCase& c) const {
  if (c.transport.empty() || c.transport == "nccl") return nccl::unsupported(c, nccl::runtime_version(), cc_major_);
  if (c.transport == "mpi") return mpi_unsupported(c, size_);
  return fmt::format("unknown collective transport '{}' (nccl, mpi)", c.transport);
}

std::unique_ptr<CollectiveRunner> CudaCollectives::prepare(const CollectiveCase& c) {
  return c.transport == "mpi" ? mpi().prepare(c) : nccl().prepare(c);
}

nccl::NcclCommunicator& CudaCollectives::nccl() {
  if (!nccl_) nccl_ = nccl::make_nccl_communicator(group_, nccl_opts_, buffers_);
  return *nccl_;
}

Communicator& CudaCollectives::mpi() {
  if (!mpi_) mpi_ = make_mpi_communicator(group_, mpi_memory_);
  return *mpi_;
}

}  // namespace gpuscale
