#pragma once
// Collectives through NCCL on GPU memory, with nccl-tests' semantics: the counts, in-place offsets and
// per-iteration buffer offsets of its tests, the calls it makes (ncclAlltoAll when the library has
// it, grouped ncclSend/ncclRecv otherwise; sendrecv as a grouped ring pair), host wall-clock timing
// around `iters` launches after a barrier with one stream synchronisation at the end, and an exact
// check on the device. Buffers are kept between cases and grown to the sweep's largest size, as
// nccl-tests allocates them once.
#include <memory>
#include <string>
#include <vector>

#include <mpi.h>

#include "collectives/communicator.h"
#include "collectives/nccl/nccl_comm.h"

namespace gpuscale::nccl {

class NcclCommunicator : public Communicator {
 public:
  virtual Comm& comm() = 0;  // the NCCL communicator itself, for other workloads (dp-step)
};

// Send and receive buffers shared by every NCCL communicator of a rank (one per GPU count), grown to
// the largest span asked for: the rank runs one case at a time, and GPU memory holds one pair, not one
// per GPU count.
class BufferPool;
std::shared_ptr<BufferPool> make_buffer_pool();

// Collective over the members of `group`, from a new unique id (the job's one communicator of its own).
std::unique_ptr<NcclCommunicator> make_nccl_communicator(MPI_Comm group, const CommOptions& opts,
                                                         std::shared_ptr<BufferPool> buffers);

// Split from `parent` with shared resources (Comm's split constructor): every rank of `parent` calls
// it, together; a rank outside the group (`group` is MPI_COMM_NULL there) takes part and gets nullptr.
// The new communicator must be freed before its parent.
std::unique_ptr<NcclCommunicator> split_nccl_communicator(Comm& parent, MPI_Comm group, const CommOptions& opts,
                                                          std::shared_ptr<BufferPool> buffers);

}  // namespace gpuscale::nccl
