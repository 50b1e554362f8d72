#!/usr/bin/env python3
"""End-to-end tests of the CUDA backend's behaviour that need no GPU, and of gpuscale-kernels.

Cases: list (the CUDA benchmarks and their backends), no_device (`--backend cuda` exits 3 with one
line, `--backend auto` falls back to the CPU and says why; skipped where a GPU is visible), peaks
(--peaks FILE: malformed files are one line and exit 2, a valid one is recorded), kernels_cpu
(gpuscale-kernels on the CPU device: Google Benchmark JSON with the rate counters, no error),
kernels_no_device (gpuscale-kernels --backend=cuda without a GPU).
"""
import argparse
import json
import os
import subprocess
import sys

import e2e_common
from e2e_common import fail, run

ARGS = None
SKIP = 77  # ctest SKIP_RETURN_CODE


def our_lines(stderr, prefix):
    return [l for l in stderr.splitlines() if l.startswith(prefix)]


def cuda_built():
    p = run([ARGS.gpuscale, "list", "--json"])
    return "cuda" in json.loads(p.stdout)["compiled_backends"]


def gpu_visible():
    try:
        p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
        return p.returncode == 0 and "GPU " in p.stdout
    except (OSError, subprocess.TimeoutExpired):
        return False


def skip_unless_cuda_without_gpu():
    """The no-device cases need a CUDA build on a machine without a GPU; elsewhere they skip."""
    if not cuda_built():
        print("SKIP: built without the CUDA backend")
        sys.exit(SKIP)
    if gpu_visible():
        print("SKIP: a GPU is visible here")
        sys.exit(SKIP)


def out_path(name):
    os.makedirs(ARGS.workdir, exist_ok=True)
    path = os.path.join(ARGS.workdir, name)
    if os.path.exists(path):
        os.remove(path)
    return path


def case_list():
    p = run([ARGS.gpuscale, "list", "--json"])
    listed = {b["key"]: b for b in json.loads(p.stdout)["benchmarks"]}
    for key in ["copy.h2d", "copy.d2h", "copy.bidir", "copy.d2d", "copy.p2p_ce", "copy.p2p_sm"]:
        if key not in listed or listed[key]["backends"] != ["cuda"] or listed[key]["unit"] != "GB/s":
            fail(f"list --json: {key} missing or not a CUDA GB/s benchmark: {listed.get(key)}")
    for key in ["stream.read", "stream.write", "gemm"]:
        if "cuda" not in listed[key]["backends"]:
            fail(f"{key} does not list the cuda backend")
    if "fp8_e4m3" not in " ".join(p["description"] for p in listed["gemm"]["parameters"]):
        fail("gemm parameters do not mention fp8_e4m3")
    for key in ["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv", "dp-step"]:
        if key not in listed or listed[key]["backends"] != ["cpu", "cuda"]:
            fail(f"list --json: {key} missing or not on both backends: {listed.get(key)}")
    if "transport" not in [p["name"] for p in listed["all_reduce"]["parameters"]]:
        fail("all_reduce does not list its transport parameter")
    if listed["dp-step"]["unit"] != "samples/s" or listed["dp-step"]["group"] != "training":
        fail(f"dp-step listed as {listed['dp-step']}")
    p = run([ARGS.gpuscale, "list"])
    if "[copy]" not in p.stdout or "backends: cuda" not in p.stdout:
        fail(f"list (text) does not show the copy group with its backend:\n{p.stdout}")
    if cuda_built() and "backends built into this binary: cpu, cuda" not in p.stdout:
        fail("a CUDA build does not say so in gpuscale list")


def case_no_device():
    skip_unless_cuda_without_gpu()
    for cmd in ([ARGS.gpuscale], [ARGS.mpiexec, "--oversubscribe", "-np", "2", ARGS.gpuscale]):
        p = run(cmd + ["run", "--backend", "cuda", "--quick", "-o", out_path("cuda.json")])
        lines = our_lines(p.stderr, "gpuscale:")
        if p.returncode != 3:
            fail(f"{cmd}: --backend cuda without a GPU exited {p.returncode}: {p.stderr!r}")
        if len(lines) != 1 or not lines[0].startswith("gpuscale: no CUDA device: ") or len(lines[0]) < 30:
            fail(f"{cmd}: expected one line 'gpuscale: no CUDA device: <reason>', got {p.stderr!r}")
        if os.path.exists(out_path("cuda.json")):
            fail("a result file was written although nothing could run")
    # A variable that hides every GPU is named in the reason.
    p = run([ARGS.gpuscale, "run", "--backend", "cuda", "--quick"], {"CUDA_VISIBLE_DEVICES": "-1"})
    if p.returncode != 3 or "no CUDA device" not in p.stderr:
        fail(f"CUDA_VISIBLE_DEVICES=-1: exit {p.returncode}, {p.stderr!r}")
    path = out_path("auto.json")
    p = run([ARGS.gpuscale, "run", "--backend", "auto", "--quick", "--benchmarks", "stream.triad", "-o", path])
    if p.returncode != 0:
        fail(f"--backend auto without a GPU: exit {p.returncode}: {p.stderr}")
    said = [l for l in our_lines(p.stderr, "gpuscale: cpu backend (auto: no CUDA device (") if "using the CPU backend" in l]
    if len(said) != 1:
        fail(f"--backend auto does not say why it fell back to the CPU: {p.stderr!r}")
    with open(path) as f:
        doc = json.load(f)
    if doc["backend"] != "cpu" or not doc["summary"]["valid"]:
        fail(f"auto fallback run: backend {doc['backend']}, summary {doc['summary']}")


BAD_PEAKS = [
    ("{", "not valid JSON"),
    ('{"format": "gpuscale-peaks", "version": 1, "models": [{"model": "M", "names": ["A10"]}]}',
     "models[0] ('M'): 'memory_bandwidth' is missing"),
    ('{"format": "gpuscale-peaks", "version": 3, "models": []}', '"version" must be 1'),
]


def case_peaks():
    for i, (text, needle) in enumerate(BAD_PEAKS):
        path = out_path(f"bad-peaks-{i}.json")
        with open(path, "w") as f:
            f.write(text)
        for cmd in ([ARGS.gpuscale], [ARGS.mpiexec, "--oversubscribe", "-np", "2", ARGS.gpuscale]):
            p = run(cmd + ["run", "--backend", "cpu", "--quick", "--peaks", path, "-o", out_path("x.json")])
            lines = our_lines(p.stderr, "gpuscale:")
            if p.returncode != 2 or len(lines) != 1 or f"peaks file {path}: " not in lines[0] or needle not in lines[0]:
                fail(f"--peaks {text!r}: expected exit 2 and one line with {needle!r}; got {p.returncode} {p.stderr!r}")
    p = run([ARGS.gpuscale, "run", "--quick", "--peaks", "/no/such/peaks.json"])
    if p.returncode != 2 or "peaks file /no/such/peaks.json: cannot be read" not in p.stderr:
        fail(f"missing --peaks file: {p.returncode} {p.stderr!r}")
    good = out_path("peaks.json")
    with open(good, "w") as f:
        json.dump({"format": "gpuscale-peaks", "version": 1, "models": [
            {"model": "Lab GPU", "names": ["NVIDIA Lab GPU"],
             "memory_bandwidth": {"value": 1000, "source": "our measurement"}, "compute": {},
             "nvlink": {"value": None, "source": "none"}, "pcie": {"value": 63, "source": "Gen5"}}]}, f)
    path = out_path("with-peaks.json")
    p = run([ARGS.gpuscale, "run", "--backend", "cpu", "--quick", "--benchmarks", "stream.copy", "--peaks", good,
             "-o", path])
    if p.returncode != 0:
        fail(f"a valid --peaks file was refused: {p.stderr}")
    with open(path) as f:
        if json.load(f)["plan"]["options"]["peaks_file"] != good:
            fail("the --peaks file is not recorded in plan.options")


def kernels_json(args):
    path = out_path("kernels.json")
    p = run([ARGS.kernels] + args + ["--benchmark_out=" + path, "--benchmark_out_format=json"])
    if p.returncode != 0:
        fail(f"gpuscale-kernels {args}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    with open(path) as f:
        return json.load(f)


def case_kernels_cpu():
    doc = kernels_json(["--backend=cpu", "--array-size=4M", "--gemm-shapes=128", "--dtypes=fp64",
                        "--benchmark_filter=stream.triad|stream.dot|gemm", "--benchmark_min_time=0.01"])
    runs = {b["name"]: b for b in doc["benchmarks"]}
    for name, counter in [("stream.triad/fp64/4M/manual_time", "bytes/s"), ("stream.dot/fp64/4M/manual_time", "bytes/s"),
                          ("gemm/fp64/128x128x128:NN/manual_time", "FLOP/s")]:
        b = runs.get(name)
        if b is None:
            fail(f"{name} missing from {sorted(runs)}")
        if b.get("error_occurred") or not b.get(counter, 0) > 0 or b["iterations"] < 1:
            fail(f"{name}: no valid {counter}: {b}")
        if "real_time" not in b or not b["real_time"] > 0:
            fail(f"{name}: no manual time")
    if "gpuscale.seed" not in doc["context"] or "(cpu)" not in doc["context"].get("gpuscale.device", ""):
        fail(f"context lacks the device or seed: {doc['context']}")
    # Bad own flags are one line and exit 2.
    p = run([ARGS.kernels, "--array-size=12Q"])
    if p.returncode != 2 or "gpuscale-kernels: invalid --array-size '12Q'" not in p.stderr:
        fail(f"bad --array-size: {p.returncode} {p.stderr!r}")


def case_kernels_no_device():
    skip_unless_cuda_without_gpu()
    p = run([ARGS.kernels, "--backend=cuda"])
    if p.returncode != 3 or not p.stderr.startswith("gpuscale-kernels: no CUDA device: "):
        fail(f"gpuscale-kernels --backend=cuda without a GPU: {p.returncode} {p.stderr!r}")


def parse():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuscale", required=True)
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--case", required=True)
    ARGS = ap.parse_args()
    return ARGS


def main():
    cores = e2e_common.CORES
    cases = {
        "list": (case_list, {}),
        "no_device": (case_no_device, cores),
        "peaks": (case_peaks, cores),
        "kernels_cpu": (case_kernels_cpu, cores),
        "kernels_no_device": (case_kernels_no_device, {}),
    }
    # Cases that need a CUDA build without a GPU skip (77) elsewhere.
    e2e_common.run_case("e2e_cuda_", {"TIMEOUT": 300, "LABELS": "e2e", "SKIP_RETURN_CODE": 77}, cases, parse)


if __name__ == "__main__":
    main()
