#!/usr/bin/env python3
"""End-to-end tests of the CUDA backend on the emulated GPU node (tests/emulated_gpu; docs/cuda.md,
"The emulated GPU node"): the real gpuscale, its real CUDA module and loader, over the emulated
libcudart.so.13, libcublasLt.so.13 and libnccl.so.2 found first on LD_LIBRARY_PATH, and the fake NVML
reporting the same GPUs. Every figure is checked against an oracle computed here from the GPU model
(`emulated-gpu-model KEY` prints its figures), never from gpuscale's output.

Cases (label cuda-emulated; each needs a CUDA build, and CI has one, so none skips there):
  stream_1rank  every STREAM kernel at every dtype on one emulated H100 SXM: every row valid, GB/s
                within 1% of bytes / (bytes / (HBM peak x efficiency) + the kernel floor), % of peak
                from the H100 SXM's 3350 GB/s.
"""
import argparse
import json
import os
import sys

import e2e_common
from e2e_common import fail

ARGS = None
SKIP = 77
TOLERANCE = 0.01  # the bar: every figure within 1% of the model's oracle


def model(key="h100-sxm"):
    p = e2e_common.run([ARGS.model_tool, key], env_extra=lib_env(), echo=False)
    if p.returncode != 0:
        fail(f"emulated-gpu-model {key}: exit {p.returncode}: {p.stderr}")
    return json.loads(p.stdout)


def lib_env():
    return {"LD_LIBRARY_PATH": ARGS.emu_libs}


def scenario(name, gpus):
    """A fake NVML scenario of `gpus` default GPUs (or the given list), written to the workdir."""
    path = e2e_common.work(f"{name}.scenario.json", fresh=True)
    with open(path, "w") as f:
        json.dump({"description": f"emulated node {name}", "gpus": gpus if isinstance(gpus, list) else [{}] * gpus}, f)
    return path


def emulated_env(scenario_path, gpu="h100-sxm", extra=None):
    """The environment of a run on the emulated node: its libraries first on the loader's path, where
    the CUDA module's loader looks first (docs/cuda.md, "CUDA libraries at run time"), and the fake
    NVML with the same GPUs. run_gpuscale checks that --version names them."""
    env = {**lib_env(), "GPUSCALE_NVML_LIBRARY": ARGS.fake_nvml,
           "GPUSCALE_FAKE_NVML_SCENARIO": scenario_path, "GPUSCALE_EMU_GPU": gpu}
    env.update(extra or {})
    return env


DROP = ("CUDA_HOME", "CUDA_VISIBLE_DEVICES", "GPUSCALE_EMU_FAULTS", "GPUSCALE_EMU_NOISE", "GPUSCALE_TEST_FAULT")


def check_libraries(env):
    """The three CUDA libraries gpuscale loads are the emulated ones (never a real CUDA install's)."""
    p = e2e_common.run([ARGS.gpuscale, "--version"], env, env_drop=DROP, echo=False)
    for lib in ("libcudart.so.13", "libcublasLt.so.13", "libnccl.so.2"):
        want = os.path.join(ARGS.emu_libs, lib)
        if not any(lib in l and want in l for l in p.stdout.splitlines()):
            fail(f"gpuscale --version does not load {lib} from {ARGS.emu_libs}:\n{p.stdout}")


def run_gpuscale(name, ranks, args, env, timeout=600):
    check_libraries(env)
    out = e2e_common.work(f"{name}.json", fresh=True)
    drop = DROP
    if ranks == 1:
        p = e2e_common.run([ARGS.gpuscale, "run", "--backend", "cuda", "-o", out] + args, env, timeout=timeout,
                           env_drop=drop)
    else:
        p = e2e_common.mpirun(ranks, ["run", "--backend", "cuda", "-o", out] + args, env, timeout=timeout,
                              env_drop=drop, export=list(env))
    if p.returncode != 0:
        fail(f"{name}: exit {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    with open(out) as f:
        return json.load(f)


def within(name, got, want):
    if got is None or abs(got - want) > TOLERANCE * want:
        fail(f"{name}: {got} against the model's {want:.6g} (more than {TOLERANCE:.0%} apart)")


# STREAM's byte counts (kernels/stream_table.h, as BabelStream counts them): arrays read + written.
STREAM_ARRAYS = {"copy": 2, "scale": 2, "add": 3, "triad": 3, "dot": 2, "read": 1, "write": 1}
DTYPE_BYTES = {"fp64": 8, "fp32": 4}


def stream_oracle_gbps(m, kernel, elements, dtype):
    """GB/s of one STREAM kernel as gpuscale times it on the model. The kernel lasts its bytes over HBM
    at peak x efficiency plus the kernel floor (core/cost.h). gpuscale times each kernel between two
    events recorded after a synchronise (kernels/cuda/cuda_stream.cpp, as BabelStream does), so the
    interval also holds the one launch's host overhead: the start event completes on the idle stream
    at once, the kernel reaches the GPU a launch later (core/emu_core.h), as on a GPU."""
    nbytes = STREAM_ARRAYS[kernel] * elements * DTYPE_BYTES[dtype]
    seconds = (nbytes / (m["hbm_gbps"] * m["hbm_efficiency"] * 1e9) +
               (m["kernel_floor_us"] + m["launch_overhead_us"]) * 1e-6)
    return nbytes / seconds / 1e9


def case_stream_1rank():
    m = model()
    doc = run_gpuscale("stream_1rank", 1, ["--quick", "--benchmarks", "stream", "--dtypes", "fp64,fp32"],
                       emulated_env(scenario("one", 1)))
    rows = [r for r in doc["results"] if r["benchmark"].startswith("stream.")]
    if not rows:
        fail("no stream rows")
    for r in rows:
        label = f"{r['benchmark']} {r['params']}"
        if r["status"] != "ok":
            fail(f"{label}: status {r['status']}: {r.get('errors')}")
        kernel = r["benchmark"].split(".", 1)[1]
        want = stream_oracle_gbps(m, kernel, r["params"]["elements"], r["params"]["dtype"])
        within(label, r["aggregate"], want)
        within(f"{label} % of peak", r["fraction_of_peak"], want / m["hbm_gbps"])
    print(f"ok: {len(rows)} STREAM rows within {TOLERANCE:.0%} of the model")


def parse():
    global ARGS
    ap = argparse.ArgumentParser()
    for a in ("--gpuscale", "--mpiexec", "--workdir", "--case", "--emu-libs", "--model-tool", "--fake-nvml"):
        ap.add_argument(a, required=True)
    ARGS = ap.parse_args()
    e2e_common.ARGS = ARGS
    os.makedirs(ARGS.workdir, exist_ok=True)
    return ARGS


def main():
    cases = {
        "stream_1rank": (case_stream_1rank, e2e_common.CORES),
    }
    e2e_common.run_case("e2e_cuda_emulated_", {"TIMEOUT": 600, "LABELS": "e2e;cuda-emulated"}, cases, parse)


if __name__ == "__main__":
    sys.exit(main())
