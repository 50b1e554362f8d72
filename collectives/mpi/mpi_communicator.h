#pragma once
// Collectives through MPI on host buffers: the CPU backend's communicator.
#include <mpi.h>

#include <memory>

#include "collectives/communicator.h"

namespace gpuscale {

// Duplicates `group` so collective traffic never mixes with the harness's control messages.
std::unique_ptr<Communicator> make_mpi_communicator(MPI_Comm group);

}  // namespace gpuscale
