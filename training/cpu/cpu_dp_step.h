#pragma once
// The CPU dp-step: BLAS GEMMs on the rank's threads, each gradient bucket all-reduced with
// MPI_Iallreduce as soon as its last dW is done, and MPI_Testall between the following GEMMs so the
// library progresses it while the rank computes (one MPI_Waitall at the end of the step).
#include <mpi.h>

#include <memory>

#include "training/dp_step.h"

namespace gpuscale {

// Collective over the members of `group` (it is duplicated).
std::unique_ptr<DpStep> make_cpu_dp_step(const DpStepConfig& config, MPI_Comm group, std::uint64_t seed);

}  // namespace gpuscale
