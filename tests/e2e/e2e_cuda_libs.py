#!/usr/bin/env python3
"""End-to-end tests of the CUDA backend's module and its libraries (backends/cuda_module), no GPU needed.

Cases (each skips, exit 77, in a build without the CUDA backend):
  linked   the gpuscale binary NEEDs no CUDA or NCCL library, and `--version` names the CUDA runtime,
           cuBLASLt and NCCL it would load (version and path) and the module, which loads;
  missing  the libraries hidden (GPUSCALE_CUDA_SEARCH_ROOT at an empty folder, no CUDA_HOME, no
           LD_LIBRARY_PATH): `--backend cuda` prints one line naming the missing library and exits 3
           (one process and 2 ranks), `--backend cpu` runs, `--backend auto` falls back and says why,
           `--version` says which library is missing;
  wheels   the libraries staged in a Python wheel layout (<site-packages>/nvidia/cu13/lib and
           nvidia/nccl/lib) under GPUSCALE_CUDA_SEARCH_ROOT: `--version` loads them from there;
  old_nccl the module's undefined NCCL symbols are all NCCL 2.18's (nm -D against tests/fake_nccl, which
           exports exactly those), and the module loads over that fake 2.18 staged as a wheel; a fake 2.17
           is refused with one line naming its version and the oldest supported, and `--backend cuda`
           exits 3 saying so;
  cuda12   only CUDA 12's libcudart.so.12 where CUDA 13's is looked for: the message says exactly that.
"""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile

import e2e_common
from e2e_common import fail, run

ARGS = None
SKIP = 77
LIBS = ["libcudart.so.13", "libcublasLt.so.13", "libnccl.so.2"]


def skip_unless_cuda_built():
    p = run([ARGS.gpuscale, "list", "--json"])
    if "cuda" not in json.loads(p.stdout)["compiled_backends"]:
        print("SKIP: built without the CUDA backend")
        sys.exit(SKIP)


def version_lines(env=None):
    p = run([ARGS.gpuscale, "--version"], env=env)
    if p.returncode != 0:
        fail(f"--version exited {p.returncode}: {p.stderr!r}")
    return p.stdout.splitlines()


def library_line(lines, soname):
    found = [l for l in lines if l.startswith(f"cuda backend: {soname} ")]
    if len(found) != 1:
        fail(f"--version has no single line for {soname}: {lines}")
    return found[0]


def loaded_path(line):
    """'cuda backend: libX 13.0 (/path)' -> '/path'; fails when not loaded or without a version."""
    m = re.fullmatch(r"cuda backend: (\S+) (\d+\.\d+(?:\.\d+)?) \((/\S+)\)", line)
    if not m:
        fail(f"not a loaded library with its version and path: {line!r}")
    if not os.path.exists(m.group(3)) or os.path.basename(m.group(3)).split(".so")[0] != m.group(1).split(".so")[0]:
        fail(f"{line!r}: the path is not the library's file")
    return m.group(3)


def hidden_env(root):
    env = dict(os.environ)
    for k in ("CUDA_HOME", "VIRTUAL_ENV", "CONDA_PREFIX", "GPUSCALE_CUDA_MODULE"):
        env.pop(k, None)
    env["LD_LIBRARY_PATH"] = ""
    env["GPUSCALE_CUDA_SEARCH_ROOT"] = root
    return env


def case_linked():
    skip_unless_cuda_built()
    readelf = shutil.which("readelf")  # binutils, which scripts/install-deps installs (build-essential)
    if not readelf:
        fail("no readelf: the NEEDED check cannot run (install binutils)")
    p = run([readelf, "-d", ARGS.gpuscale])
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", p.stdout)
    if not needed:
        fail(f"readelf found no NEEDED entry: {p.stdout[:400]}")
    cuda = [n for n in needed if re.match(r"lib(cuda|cudart|cublas|cublasLt|nccl|nvidia-ml)\b", n)]
    if cuda:
        fail(f"the gpuscale binary links CUDA libraries: {cuda}")
    lines = version_lines()
    if not lines[0].startswith("gpuscale ") or "backends: cpu, cuda" not in lines[0]:
        fail(f"--version first line: {lines[0]!r}")
    for soname in LIBS:
        loaded_path(library_line(lines, soname))
    places = [l for l in lines if l.startswith("cuda backend: searches ")]
    if not any("/usr/local/cuda/lib64" in l for l in places) or not any("wheels" in l for l in places):
        fail(f"--version does not list the places it searches: {lines}")
    module = [l for l in lines if l.startswith("cuda backend: module ")]
    if len(module) != 1 or " not " in module[0] or not module[0].endswith("libgpuscale-cuda.so"):
        fail(f"the CUDA module does not load: {module}")
    print("ok: no CUDA library linked; --version:\n" + "\n".join(lines))


def case_missing():
    skip_unless_cuda_built()
    with tempfile.TemporaryDirectory() as root:
        env = hidden_env(root)
        lines = version_lines(env)
        line = library_line(lines, LIBS[0])
        if "(the CUDA runtime) not found in " not in line:
            fail(f"--version with the CUDA runtime hidden: {line!r}")
        for cmd in ([ARGS.gpuscale], [ARGS.mpiexec, "--oversubscribe", "-np", "2", ARGS.gpuscale]):
            out = os.path.join(root, "cuda.json")
            p = run(cmd + ["run", "--backend", "cuda", "--quick", "-o", out], env=env)
            ours = [l for l in p.stderr.splitlines() if l.startswith("gpuscale:")]
            if p.returncode != 3:
                fail(f"{cmd}: --backend cuda without the libraries exited {p.returncode}: {p.stderr!r}")
            if len(ours) != 1 or not ours[0].startswith("gpuscale: no CUDA device: libcudart.so.13 ") \
                    or "not found" not in ours[0]:
                fail(f"{cmd}: expected one line naming libcudart.so.13, got {p.stderr!r}")
            if os.path.exists(out):
                fail("a result file was written although nothing could run")
        for backend in ("cpu", "auto"):
            out = os.path.join(root, f"{backend}.json")
            p = run([ARGS.gpuscale, "run", "--backend", backend, "--quick", "--benchmarks", "stream.triad", "-o", out], env=env)
            if p.returncode != 0:
                fail(f"--backend {backend} without the CUDA libraries: exit {p.returncode}: {p.stderr}")
            with open(out) as f:
                doc = json.load(f)
            if doc["backend"] != "cpu" or not doc["summary"]["valid"]:
                fail(f"--backend {backend}: backend {doc['backend']}, summary {doc['summary']}")
            if backend == "auto" and not any("auto: no CUDA device (libcudart.so.13" in l and "using the CPU backend" in l
                                             for l in p.stderr.splitlines()):
                fail(f"--backend auto does not say which library is missing: {p.stderr!r}")
    print("ok: missing libraries named, CPU runs unaffected")


def case_wheels():
    skip_unless_cuda_built()
    real = {s: loaded_path(library_line(version_lines(), s)) for s in LIBS}
    with tempfile.TemporaryDirectory() as root:
        site = os.path.join(root, "usr/lib/python3.11/site-packages/nvidia")
        where = {"libcudart.so.13": "cu13/lib", "libcublasLt.so.13": "cu13/lib", "libnccl.so.2": "nccl/lib"}
        for soname, sub in where.items():
            os.makedirs(os.path.join(site, sub), exist_ok=True)
            os.symlink(os.path.realpath(real[soname]), os.path.join(site, sub, soname))
        lines = version_lines(hidden_env(root))
        for soname, sub in where.items():
            path = loaded_path(library_line(lines, soname))
            if path != os.path.join(site, sub, soname):
                fail(f"{soname} loaded from {path}, not the staged wheel {os.path.join(site, sub, soname)}")
        module = [l for l in lines if l.startswith("cuda backend: module ")]
        if len(module) != 1 or " not " in module[0]:
            fail(f"the module does not load over the wheels' libraries: {module}")
    print("ok: libraries found in the Python wheel layout")


def nccl_symbols(path, which):
    """NCCL's function names in a shared library's dynamic symbols: `which` is --undefined-only or --defined-only."""
    nm = shutil.which("nm")  # binutils, which scripts/install-deps installs (build-essential)
    if not nm:
        fail("no nm: the module's NCCL symbols cannot be read (install binutils)")
    p = run([nm, "-D", which, path])
    if p.returncode != 0:
        fail(f"nm -D {which} {path}: exit {p.returncode}: {p.stderr}")
    return {l.split()[-1] for l in p.stdout.splitlines() if l.split() and re.fullmatch(r"p?nccl[A-Z]\w*", l.split()[-1])}


def module_file(lines):
    module = [l for l in lines if l.startswith("cuda backend: module ")]
    if len(module) != 1:
        fail(f"--version has no single module line: {lines}")
    return module[0]


def stage_wheels(root, nccl):
    """The real CUDA runtime and cuBLASLt, and `nccl` as libnccl.so.2, in a wheel layout under root."""
    real = {s: loaded_path(library_line(version_lines(), s)) for s in LIBS[:2]}
    site = os.path.join(root, "usr/lib/python3.11/site-packages/nvidia")
    for soname, sub, target in [(LIBS[0], "cu13/lib", real[LIBS[0]]), (LIBS[1], "cu13/lib", real[LIBS[1]]),
                                (LIBS[2], "nccl/lib", nccl)]:
        os.makedirs(os.path.join(site, sub), exist_ok=True)
        os.symlink(os.path.realpath(target), os.path.join(site, sub, soname))
    return os.path.join(site, "nccl/lib", LIBS[2])


def case_old_nccl():
    skip_unless_cuda_built()
    if not ARGS.fake_nccl:
        fail("a CUDA build without --fake-nccl: tests/e2e/CMakeLists.txt passes it")
    module = module_file(version_lines())
    if " not " in module:
        fail(f"the module does not load over this machine's own NCCL: {module}")
    module_path = module.split("cuda backend: module ", 1)[1]
    needs = nccl_symbols(module_path, "--undefined-only")
    has = nccl_symbols(ARGS.fake_nccl, "--defined-only")
    if "ncclAllReduce" not in needs or "ncclGetVersion" not in has:
        fail(f"nm read no NCCL symbols: module needs {sorted(needs)}, the fake has {sorted(has)}")
    if needs - has:
        fail(f"the module calls NCCL functions newer than 2.18 directly: {sorted(needs - has)}")
    with tempfile.TemporaryDirectory() as root:
        staged = stage_wheels(root, ARGS.fake_nccl)
        env = hidden_env(root)
        line = library_line(version_lines(env), LIBS[2])
        if loaded_path(line) != staged or " 2.18.5 " not in line:
            fail(f"the fake NCCL 2.18.5 is not the one loaded: {line!r}")
        module = module_file(version_lines(env))
        if " not " in module:
            fail(f"the module does not load over NCCL 2.18: {module}")
        env["FAKE_NCCL_VERSION"] = "21705"
        lines = version_lines(env)
        line = library_line(lines, LIBS[2])
        if f"libnccl.so.2 (NCCL) 2.17.5 at {staged} is older than 2.18.0" not in line:
            fail(f"NCCL 2.17 is not refused by name: {line!r}")
        if " not loaded " not in module_file(lines):
            fail(f"the module was loaded over a refused NCCL: {module_file(lines)}")
        p = run([ARGS.gpuscale, "run", "--backend", "cuda", "--quick", "-o", os.path.join(root, "x.json")], env=env)
        ours = [l for l in p.stderr.splitlines() if l.startswith("gpuscale:")]
        if p.returncode != 3 or len(ours) != 1 or "older than 2.18.0" not in ours[0]:
            fail(f"--backend cuda over NCCL 2.17: exit {p.returncode}, {p.stderr!r}")
    print(f"ok: the module needs {len(needs)} NCCL functions, all in 2.18; it loads over a fake 2.18, "
          "a fake 2.17 is refused by name")


def case_cuda12():
    skip_unless_cuda_built()
    with tempfile.TemporaryDirectory() as root:
        lib64 = os.path.join(root, "usr/local/cuda/lib64")
        os.makedirs(lib64)
        old = os.path.join(lib64, "libcudart.so.12")
        with open(old, "w") as f:
            f.write("not loaded: only its name is looked for")
        line = library_line(version_lines(hidden_env(root)), LIBS[0])
        want = f"cuda backend: libcudart.so.13 (the CUDA runtime) not found; only libcudart.so.12 is there ({old}): " \
               "this gpuscale was built with CUDA 13"
        if not line.startswith(want):
            fail(f"CUDA 12's runtime alone is not named as such: {line!r}")
    print("ok: CUDA 12's runtime alone is named")


def parse():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuscale", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--fake-nccl", default="", help="tests/fake_nccl's libnccl.so.2 (CUDA builds)")
    ARGS = ap.parse_args()
    return ARGS


def main():
    cases = {"linked": (case_linked, {}), "missing": (case_missing, e2e_common.CORES), "wheels": (case_wheels, {}),
             "old_nccl": (case_old_nccl, {}), "cuda12": (case_cuda12, {})}
    e2e_common.run_case("e2e_cuda_libs_", {"TIMEOUT": 300, "LABELS": "e2e", "SKIP_RETURN_CODE": 77}, cases, parse)


if __name__ == "__main__":
    main()
