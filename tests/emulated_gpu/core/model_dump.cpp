// emulated-gpu-model KEY: prints the GPU model KEY (gpu_model.h) as JSON, every figure the
// performance model charges time with. The e2e tests compute their oracles from this output, so an
// expected figure comes from the model and never from gpuscale's own results.
#include <cstdio>
#include <exception>

#include <nlohmann/json.hpp>

#include "tests/emulated_gpu/core/gpu_model.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: emulated-gpu-model h100-sxm|h200|h100-pcie\n");
    return 2;
  }
  try {
    const gpuscale_emu::GpuModel& m = gpuscale_emu::gpu_model(argv[1]);
    nlohmann::json j = {{"key", m.key},
                        {"name", m.name},
                        {"cc", {m.cc_major, m.cc_minor}},
                        {"sm_count", m.sm_count},
                        {"memory_bytes", m.memory_bytes},
                        {"hbm_gbps", m.hbm_gbps},
                        {"hbm_efficiency", m.hbm_efficiency},
                        {"tflops", m.tflops},
                        {"gemm_efficiency", m.gemm_efficiency},
                        {"nvlink_gbps", m.nvlink_gbps},
                        {"pcie_gbps", m.pcie_gbps},
                        {"nic_gbps", m.nic_gbps},
                        {"nvlink_latency_us", m.nvlink_latency_us},
                        {"pcie_latency_us", m.pcie_latency_us},
                        {"nic_latency_us", m.nic_latency_us},
                        {"launch_overhead_us", m.launch_overhead_us},
                        {"link_efficiency", m.link_efficiency},
                        {"kernel_floor_us", m.kernel_floor_us},
                        {"collective_nvlink_efficiency", m.collective_nvlink_efficiency},
                        {"collective_nic_efficiency", m.collective_nic_efficiency},
                        {"collective_connect_us", m.collective_connect_us}};
    std::printf("%s\n", j.dump(1).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "emulated-gpu-model: %s\n", e.what());
    return 2;
  }
  return 0;
}
