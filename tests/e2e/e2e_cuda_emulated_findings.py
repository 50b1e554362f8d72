#!/usr/bin/env python3
"""The third review's findings (issue 46, section 3) on the emulated GPU node: each case runs the real
gpuscale over the emulated CUDA libraries (e2e_cuda_emulated.py's environment and oracles) and asserts
what the fix changed, so it fails on the code before the fix. Every expected value comes from the
GPU model or the scenario (the fake NVML's GPUs), never from gpuscale's output.

Cases (label cuda-emulated):
  burn_layouts  finding 4: a burn-in's GEMM windows in fp8 (e4m3) and int8 at 2 ranks on the emulated H100
                (compute capability 9.0, where the emulated cuBLASLt's heuristic refuses fp8 and int8 unless
                A is transposed, as cuBLASLt's documentation says): every window valid and within 1% of the
                model's rate for its type. Before the fix the burn-in built NN products, so every window
                failed.
"""
import sys

import e2e_common
import e2e_cuda_emulated as emu
from e2e_common import fail  # noqa: F401 (the cases' one way to fail)


def case_burn_layouts():
    m = emu.model()
    for dtype in ("fp8_e4m3", "int8"):
        doc = emu.run_gpuscale(f"burn_{dtype}", 2, ["--quick", "--duration", "4s", "--window", "2s", "--burn", "gemm",
                                                   "-d", dtype], emu.emulated_env(emu.scenario("two", 2)))
        rows = emu.all_valid(doc, f"burn_{dtype}")
        if len(rows) != 2 or any(r["benchmark"] != "burn.gemm" or r["params"]["dtype"] != dtype for r in rows):
            fail(f"burn-in {dtype}: windows {[(r['benchmark'], r['params']) for r in rows]}, expected 2 burn.gemm in {dtype}")
        for r in rows:
            emu.within(f"burn.gemm {r['params']}", r["aggregate"], emu.gemm_oracle_tflops(m, dtype) * r["gpu_count"])
    print("ok: fp8 and int8 burn-in windows valid (TN, the layout cuBLASLt needs on compute capability 9.0) and within 1%")


def main():
    cases = {
        "burn_layouts": (case_burn_layouts, e2e_common.CORES),
    }
    e2e_common.run_case("e2e_cuda_emulated_", {"TIMEOUT": 600, "LABELS": "e2e;cuda-emulated"}, cases, emu.parse)


if __name__ == "__main__":
    sys.exit(main())
