// The GPU models (gpu_model.h). Peaks are peaks/gpus.json's figures for the same GPU, each with the
// "source" string that file gives; the efficiencies are stated assumptions, each with its reason.
#include "tests/emulated_gpu/core/gpu_model.h"

#include <stdexcept>

namespace gpuscale_emu {
namespace {

// Efficiencies shared by the three models (stated assumptions, not measurements of this project):
// - hbm_efficiency 0.9: BabelStream's triad on an H100 SXM reaches about 90% of 3.35 TB/s (the
//   figure docs/cuda.md's device-check targets hold: triad >= 88% of the HBM peak on an H200).
// - gemm_efficiency 0.75: cuBLAS's large square GEMMs reach about 70-80% of the dense tensor-core
//   peak on H100 (the middle of that range; docs/cuda.md's target for fp8 is >= 70%).
// - link_efficiency 0.9: a copy-engine copy over PCIe Gen5 x16 or NVLink4 reaches about 90% of the
//   per-direction line rate (nvbandwidth's host and peer copies); an assumption, as the brief states.
void common(GpuModel& m) {
  m.cc_major = 9;
  m.cc_minor = 0;  // peaks/gpus.json: "compute_capability": "9.0" for all three
  m.hbm_efficiency = 0.9;
  m.gemm_efficiency = 0.75;
  m.link_efficiency = 0.9;
  // PCIe Gen5 x16: 63 GB/s per direction (peaks/gpus.json, every H100/H200 entry)
  m.pcie_gbps = 63;
  m.l2_bytes = 50 << 20;  // NVIDIA H100 Tensor Core GPU Architecture whitepaper: 50 MB L2 (H100 and H200)
}

GpuModel h100_sxm() {
  GpuModel m;
  common(m);
  m.key = "h100-sxm";
  m.name = "NVIDIA H100 80GB HBM3";  // peaks/gpus.json "H100 SXM5 80GB" names
  m.sm_count = 132;                  // peaks/gpus.json "sm_count": 132
  m.memory_bytes = 85520809984ULL;   // the fake NVML's default memory_total (tests/fake_nvml/fake_nvml.cpp)
  m.hbm_gbps = 3350;                 // "NVIDIA H100 datasheet: 3.35 TB/s HBM3 (H100 SXM)"
  m.tflops = {
      {"fp64", 67},        // "NVIDIA H100 datasheet (SXM): FP64 Tensor Core 67 TFLOPS"
      {"fp32", 67},        // "NVIDIA H100 datasheet (SXM): FP32 67 TFLOPS"
      {"tf32", 494.5},     // "TF32 Tensor Core 989 TFLOPS with sparsity, halved to dense"
      {"bf16", 989.5},     // "BF16 Tensor Core 1979 TFLOPS with sparsity, halved to dense"
      {"fp16", 989.5},     // "FP16 Tensor Core 1979 TFLOPS with sparsity, halved to dense"
      {"fp8_e4m3", 1979},  // "FP8 Tensor Core 3958 TFLOPS with sparsity, halved to dense"
      {"fp8_e5m2", 1979},  // the datasheet's one FP8 figure holds for both FP8 formats
      {"int8", 1979},      // "INT8 Tensor Core 3958 TOPS with sparsity, halved to dense"
  };
  m.nvlink_gbps = 450;  // "NVLink4: 900 GB/s total, 450 GB/s per direction"
  // nvidia-smi -q of an H100 SXM: max clocks 1980 MHz (SM), 2619 MHz (memory), the fake NVML's defaults;
  // 5120-bit HBM3 bus (H100 whitepaper: five HBM3 stacks, 10 512-bit controllers).
  m.sm_clock_mhz = 1980;
  m.mem_clock_mhz = 2619;
  m.memory_bus_width = 5120;
  return m;
}

GpuModel h200() {
  GpuModel m = h100_sxm();  // "same compute as H100 SXM": peaks/gpus.json "H200 SXM 141GB" compute block
  m.key = "h200";
  m.name = "NVIDIA H200";  // peaks/gpus.json "H200 SXM 141GB" names
  // 141 GB on the datasheet; the driver reports 143771 MiB (nvidia-smi on an H200 SXM).
  m.memory_bytes = 143771ULL << 20;
  m.hbm_gbps = 4800;    // "NVIDIA H200 datasheet: 4.8 TB/s HBM3e (H200 SXM)"
  m.nvlink_gbps = 450;  // "NVLink4: 900 GB/s total, 450 GB/s per direction"
  m.mem_clock_mhz = 3201;      // nvidia-smi -q of an H200: max memory clock 3201 MHz
  m.memory_bus_width = 6144;   // six HBM3e stacks (H200 datasheet)
  return m;
}

GpuModel h100_pcie() {
  GpuModel m;
  common(m);
  m.key = "h100-pcie";
  m.name = "NVIDIA H100 PCIe";      // peaks/gpus.json "H100 PCIe 80GB" names
  m.sm_count = 114;                 // peaks/gpus.json "sm_count": 114
  m.memory_bytes = 85520809984ULL;  // 81559 MiB, as the SXM part (nvidia-smi reports 81559MiB on both)
  m.hbm_gbps = 2000;                // "NVIDIA H100 datasheet: 2 TB/s HBM2e (H100 PCIe)"
  m.tflops = {
      {"fp64", 51},        // "NVIDIA H100 datasheet (PCIe): FP64 Tensor Core 51 TFLOPS"
      {"fp32", 51},        // "NVIDIA H100 datasheet (PCIe): FP32 51 TFLOPS"
      {"tf32", 378},       // "TF32 Tensor Core 756 TFLOPS with sparsity, halved to dense"
      {"bf16", 756.5},     // "BF16 Tensor Core 1513 TFLOPS with sparsity, halved to dense"
      {"fp16", 756.5},     // "FP16 Tensor Core 1513 TFLOPS with sparsity, halved to dense"
      {"fp8_e4m3", 1513},  // "FP8 Tensor Core 3026 TFLOPS with sparsity, halved to dense"
      {"fp8_e5m2", 1513},  // the datasheet's one FP8 figure holds for both FP8 formats
      {"int8", 1513},      // "INT8 Tensor Core 3026 TOPS with sparsity, halved to dense"
  };
  // peaks/gpus.json: "NVLink4 bridge: 600 GB/s total" with "nvlink_bridge": true. A bridge is
  // optional hardware, so the model has none: peers talk over PCIe.
  m.nvlink_gbps = 0;
  m.sm_clock_mhz = 1755;      // nvidia-smi -q of an H100 PCIe: max SM clock 1755 MHz
  m.mem_clock_mhz = 1593;     // max memory clock 1593 MHz (HBM2e)
  m.memory_bus_width = 5120;  // five HBM2e stacks
  return m;
}

}  // namespace

const GpuModel& gpu_model(const std::string& key) {
  static const GpuModel models[] = {h100_sxm(), h200(), h100_pcie()};
  for (const auto& m : models)
    if (m.key == key) return m;
  throw std::invalid_argument("unknown emulated GPU model '" + key + "' (GPUSCALE_EMU_GPU): known models are " +
                              "h100-sxm, h200, h100-pcie");
}

}  // namespace gpuscale_emu
