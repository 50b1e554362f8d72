#pragma once
// What the launcher (mpirun, srun) says about this process before MPI starts. Used to print an error
// found while parsing the command line once per job, not once per rank.
namespace gpuscale {

// The launcher's rank of this process, or -1 when not launched by one. Open MPI's and PMIx's
// variables come first: under mpirun inside a Slurm job, SLURM_PROCID is inherited and wrong.
int launcher_rank();

}  // namespace gpuscale
