#pragma once
// GPU memory for the MPI communicator of the CUDA backend (collectives/mpi/mpi_communicator.h): MPI
// works on it directly when the MPI library is CUDA-aware, else through host copies ("mpi-host-staged").
#include <memory>

#include "collectives/mpi/mpi_communicator.h"

namespace gpuscale {

// Whether this MPI library takes GPU pointers (Open MPI's MPIX_Query_cuda_support; false when unknown).
bool mpi_is_cuda_aware();
std::shared_ptr<MpiDeviceMemory> make_cuda_mpi_memory(int ordinal, bool cuda_aware);

}  // namespace gpuscale
