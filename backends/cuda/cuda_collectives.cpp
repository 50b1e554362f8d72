#include "backends/cuda/cuda_collectives.h"

#include <fmt/format.h>

#include "collectives/nccl/nccl_plan.h"
#include "kernels/cuda/cuda_util.h"

namespace gpuscale {

CudaCollectives::CudaCollectives(MPI_Comm group, std::unique_ptr<nccl::NcclCommunicator> nccl,
                                 std::shared_ptr<MpiDeviceMemory> mpi_memory, std::shared_ptr<nccl::MemoryLedger> ledger,
                                 int ledger_entry)
    : group_(group), mpi_memory_(std::move(mpi_memory)), nccl_(std::move(nccl)), ledger_(std::move(ledger)),
      ledger_entry_(ledger_entry) {
  MPI_Comm_rank(group, &rank_);
  MPI_Comm_size(group, &size_);
  cc_major_ = nccl_->comm().cc_major();
}

CudaCollectives::~CudaCollectives() {
  mpi_.reset();
  nccl_.reset();  // NCCL's device memory goes back with it
  if (ledger_) ledger_->remove(ledger_entry_);
}

std::optional<std::string> CudaCollectives::unsupported(const CollectiveCase& c) const {
  if (c.transport.empty() || c.transport == "nccl") return nccl::unsupported(c, nccl::runtime_version(), cc_major_);
  if (c.transport == "mpi") return mpi_unsupported(c, size_);
  return fmt::format("unknown collective transport '{}' (nccl, mpi)", c.transport);
}

std::unique_ptr<CollectiveRunner> CudaCollectives::prepare(const CollectiveCase& c) {
  return c.transport == "mpi" ? mpi().prepare(c) : nccl_->prepare(c);
}

Communicator& CudaCollectives::mpi() {
  if (!mpi_) mpi_ = make_mpi_communicator(group_, mpi_memory_);
  return *mpi_;
}

}  // namespace gpuscale
