#pragma once
// The CUDA dp-step: cuBLASLt GEMMs on a compute stream, the gradient buckets all-reduced with NCCL on
// a communication stream that waits for each bucket's last dW through a CUDA event, and the compute
// stream waiting for the last all-reduce at the end of the step (the next step's dW overwrites the
// gradients). No host synchronisation inside the timed steps: one wait after the last.
#include <memory>

#include "collectives/nccl/nccl_comm.h"
#include "training/dp_step.h"

namespace gpuscale {

std::unique_ptr<DpStep> make_cuda_dp_step(const DpStepConfig& config, nccl::Comm& comm, std::uint64_t seed);

}  // namespace gpuscale
