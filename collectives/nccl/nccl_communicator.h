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

// Collective over the members of `group`.
std::unique_ptr<NcclCommunicator> make_nccl_communicator(MPI_Comm group, const CommOptions& opts);

}  // namespace gpuscale::nccl
