#pragma once
// The host clock the CUDA path times device work with, where it times on the host as nccl-tests does
// (barrier, host clock, launches, a wait, host clock): a collective's repetitions, dp-step's steps.
// On a GPU it is the steady clock, read after the wait. On the emulated GPU node (tests/emulated_gpu,
// docs/cuda.md) the work lasts simulated time, not host time, so the emulated runtime exports its
// simulated host clock under a name no CUDA runtime has (gpuscale_emulated_host_clock_us), and this
// clock reads it where the loaded runtime has it. Timeouts and watchdogs keep the real clock.
namespace gpuscale::cuda {

// Seconds since an arbitrary epoch, for differences only.
double host_clock_s();

}  // namespace gpuscale::cuda
