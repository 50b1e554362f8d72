#pragma once
// The core's process-wide state, shared by node.cpp (devices, memory) and clock.cpp (streams, time):
// one mutex guards it (thread safety: the runtime may be called from any host thread).
#include <memory>
#include <mutex>
#include <vector>

#include "tests/emulated_gpu/core/emu_core.h"

namespace gpuscale_emu {

struct NodeState {
  std::mutex mu;
  std::vector<Device> devices;                       // after CUDA_VISIBLE_DEVICES
  std::vector<std::unique_ptr<Stream>> legacy;       // each device's legacy default stream
  std::vector<Stream*> streams;                      // every live stream, legacy ones included
  int cuda_driver_version = 99990;                   // the scenario's, as the fake NVML reports it
};

// The node, built on first use from the environment (node.cpp).
NodeState& node();

}  // namespace gpuscale_emu
