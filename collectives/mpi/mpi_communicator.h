#pragma once
// Collectives through MPI: the CPU backend's communicator (host buffers), and the CUDA backend's until
// NCCL arrives (issue 5): its buffers live in GPU memory, which MPI reads directly when the library is
// CUDA-aware, or through host copies around every operation when it is not ("mpi-host-staged": the
// copies are part of the timed operation, since that is what the transport costs).
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>

#include "collectives/communicator.h"

namespace gpuscale {

// Where the collective's buffers live when they are not plain host memory (implemented by the CUDA
// backend, so this library stays free of CUDA).
class MpiDeviceMemory {
 public:
  virtual ~MpiDeviceMemory() = default;
  virtual std::string transport() const = 0;  // "mpi-cuda-aware" or "mpi-host-staged"
  virtual bool mpi_reads_device() const = 0;  // true: MPI gets device pointers (CUDA-aware MPI)
  virtual void* allocate(std::uint64_t bytes) = 0;
  virtual void release(void* device) = 0;
  virtual void upload(void* device, const void* host, std::uint64_t bytes) = 0;
  virtual void download(void* host, const void* device, std::uint64_t bytes) = 0;
};

// Why MPI cannot run the case on `nranks` ranks (a reduction on a type MPI has no arithmetic for, avg,
// counts beyond MPI's int); nullopt when it can.
std::optional<std::string> mpi_unsupported(const CollectiveCase& c, int nranks);

// Duplicates `group` so collective traffic never mixes with the harness's control messages. With
// `device`, the buffers live in its memory (see above); without, on the host.
std::unique_ptr<Communicator> make_mpi_communicator(MPI_Comm group, std::shared_ptr<MpiDeviceMemory> device = nullptr);

}  // namespace gpuscale
