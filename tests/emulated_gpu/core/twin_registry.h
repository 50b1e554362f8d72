#pragma once
// Kernel twins added at run time (tests only): the emulated runtime looks a launched kernel's name up
// here first, then in the kernel twins library (kernels/kernel_twin.h, find_kernel_twin). A unit test
// of the runtime registers the twin of its own test kernel here, so the launch path is tested without
// the project's kernels.
#include "tests/emulated_gpu/kernels/kernel_twin.h"

namespace gpuscale_emu {

// `twin` must outlive its use; a later twin of the same name replaces the earlier.
void register_kernel_twin(const KernelTwin* twin);
// The registered twin named `mangled_name`, or nullptr.
const KernelTwin* find_registered_twin(const char* mangled_name);

}  // namespace gpuscale_emu
