#pragma once
// The CUDA backend's communicator: NCCL, the default transport, and for comparison MPI on the same kind
// of GPU buffers (CUDA-aware MPI, or host-staged copies when asked for), chosen per case by its
// "transport". The NCCL communicator is split when this one is made (the backend's make_communicator:
// a split is collective over its parent, so it cannot wait for a first case that only the members
// reach); MPI's is created on its first case, by all members together (they measure the same points in
// the same order). The device memory the NCCL communicator took is in the backend's ledger while it lives.
#include <memory>

#include "collectives/mpi/mpi_communicator.h"
#include "collectives/nccl/nccl_communicator.h"
#include "collectives/nccl/nccl_plan.h"

namespace gpuscale {

class CudaCollectives final : public Communicator {
 public:
  CudaCollectives(MPI_Comm group, std::unique_ptr<nccl::NcclCommunicator> nccl, std::shared_ptr<MpiDeviceMemory> mpi_memory,
                  std::shared_ptr<nccl::MemoryLedger> ledger, int ledger_entry);
  ~CudaCollectives() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string transport() const override { return "nccl"; }
  std::optional<std::string> unsupported(const CollectiveCase& c) const override;
  std::unique_ptr<CollectiveRunner> prepare(const CollectiveCase& c) override;

  nccl::Comm& nccl_comm() { return nccl_->comm(); }

 private:
  Communicator& mpi();

  MPI_Comm group_;
  std::shared_ptr<MpiDeviceMemory> mpi_memory_;
  std::unique_ptr<nccl::NcclCommunicator> nccl_;
  std::unique_ptr<Communicator> mpi_;
  std::shared_ptr<nccl::MemoryLedger> ledger_;
  int ledger_entry_ = -1;
  int rank_ = 0, size_ = 1, cc_major_ = 0;
};

}  // namespace gpuscale
