#pragma once
// The CUDA backend's communicator: NCCL, the default transport, and for comparison MPI on the same kind
// of GPU buffers (CUDA-aware MPI, or host-staged copies when asked for), chosen per case by its
// "transport". Each transport's communicator is created on its first case, by all members together
// (they measure the same points in the same order).
#include <memory>

#include "collectives/mpi/mpi_communicator.h"
#include "collectives/nccl/nccl_communicator.h"

namespace gpuscale {

class CudaCollectives final : public Communicator {
 public:
  CudaCollectives(MPI_Comm group, const nccl::CommOptions& nccl, std::shared_ptr<nccl::BufferPool> buffers,
                  std::shared_ptr<MpiDeviceMemory> mpi_memory);

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string transport() const override { return "nccl"; }
  std::optional<std::string> unsupported(const CollectiveCase& c) const override;
  std::unique_ptr<CollectiveRunner> prepare(const CollectiveCase& c) override;

  nccl::Comm& nccl_comm() { return nccl().comm(); }

 private:
  nccl::NcclCommunicator& nccl();
  Communicator& mpi();

  MPI_Comm group_;
  nccl::CommOptions nccl_opts_;
  std::shared_ptr<nccl::BufferPool> buffers_;
  std::shared_ptr<MpiDeviceMemory> mpi_memory_;
  std::unique_ptr<nccl::NcclCommunicator> nccl_;
  std::unique_ptr<Communicator> mpi_;
  int rank_ = 0, size_ = 1, cc_major_ = 0;
};

}  // namespace gpuscale
