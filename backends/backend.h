#pragma once
// A backend pairs a device (kernels/) with a collective transport (collectives/) and says what the
// run needs to know about the software under it. The harness only ever talks to this interface.
//   cpu:  OpenMP + BLAS on the host, MPI collectives over host buffers (always built)
//   cuda: CUDA kernels + cuBLASLt, NCCL collectives (built when nvcc is found)
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "collectives/communicator.h"
#include "backends/backend_options.h"
#include "peaks/peaks.h"
#include "world/world.h"
#include "kernels/device.h"
#include "training/dp_step.h"

namespace gpuscale {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "cpu", "cuda"
  virtual Device& device() = 0;
  // A communicator over the members of `group`, split from `parent`: the communicator of the group
  // `group` was split from (harness/ passes the wrapped one; unwrapped() gives the backend's own), or
  // nullptr for a group of the whole job (a GPU count's). Every rank of the parent calls it, together
  // (every world rank when `parent` is null), members of `group` or not; a rank outside `group` gets
  // nullptr. The new communicator must be freed before its parent. On CUDA every communicator is split
  // from one job-wide communicator with shared resources (collectives/nccl/nccl_plan.h); on the CPU
  // each is an MPI communicator of the group.
  virtual std::unique_ptr<Communicator> make_communicator(const Group& group, Communicator* parent) = 0;
  // What the memory plan counts per communicator (zero: communicators hold no device memory).
  virtual CommunicatorMemory communicator_memory() const { return {}; }
  // The most device memory this rank's communicators held since the last call, measured around each
  // creation (free memory before less after), then counted again from what they hold now; nullopt
  // where the backend does not measure it (the CPU backend: MPI holds host memory).
  virtual std::optional<std::uint64_t> take_communicator_memory_peak() { return std::nullopt; }
  // The collective transports a default plan compares, as the "transport" parameter of collective
  // rows (CUDA: "nccl", plus "mpi" when MPI is CUDA-aware). Empty: one transport, no such parameter.
  virtual std::vector<std::string> collective_transports() const { return {}; }
  // The data-parallel training step over `group`, communicating through `comm` (made by
  // make_communicator for the same group); called by members only, all together.
  virtual std::unique_ptr<DpStep> make_dp_step(const DpStepConfig& config, const Group& group, Communicator& comm,
                                               std::uint64_t seed) = 0;
  // Library versions: BLAS, driver, CUDA runtime, NCCL ... (null where not applicable).
  virtual nlohmann::json software() const = 0;
  // Expected per-device peaks (null when the backend has no table).
  virtual const PeakTable* peaks() const = 0;
  // The links collectives cross inside a node and between nodes (called on every rank, together).
  virtual LinkPeaks link_peaks(const World& world, const BackendOptions& opts) = 0;
};

// Backends compiled into this binary, e.g. {"cpu", "cuda"}.
std::vector<std::string> compiled_backends();

// Chooses and opens the backend: "cpu", "cuda", or "auto" (CUDA when a GPU is visible, else CPU).
// Throws gpuscale::Error (kExitNoDevice) when "cuda" is asked for and no GPU can be used.
std::unique_ptr<Backend> open_backend(const std::string& choice, const World& world, const BackendOptions& opts,
                                      std::string* why_chosen);

std::unique_ptr<Backend> make_cpu_backend(const World& world, const BackendOptions& opts);
// The CUDA backend, defined in its module (backends/cuda_module/cuda_module.h), which open_backend loads.
// Number of CUDA devices this process can use (0 with no driver or no GPU), with the reason when 0.
int cuda_visible_devices(std::string* why_none);
std::unique_ptr<Backend> make_cuda_backend(const World& world, const BackendOptions& opts);

}  // namespace gpuscale
