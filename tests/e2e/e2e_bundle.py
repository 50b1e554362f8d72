#!/usr/bin/env python3
"""Install, packages and the portable bundle (docs/install.md), one --case each:
  install      cmake --install into a fresh prefix, the tree moved elsewhere, and there: the layout,
               RUNPATH $ORIGIN/../lib, a --backend cpu --quick run (valid result), the Slurm scripts
               finding the installed gpuscale, the Tcl modulefile finding the moved tree
  cpack        cpack makes the .tar.gz and the .deb; the .deb's Depends name the Debian runtime
               packages and no CUDA/NVIDIA package; both hold the binaries and the modulefiles
  bundle       scripts/bundle OUT.tar.gz: under 60 MiB, unpacks to gpuscale/, Open MPI's pieces in,
               no C runtime or NVIDIA library carried (fixture bundle_tarball)
  root         a Debian minbase root (debootstrap --variant=minbase from this machine's own Debian
               mirror), made once per build folder and reused (fixture bundle_root)
  chroot       the bundle unpacked in that root and run there: --version, list, a --quick CPU run as
               one process and with the bundle's mpirun -np 2, and --backend cuda (one line, exit 3)
  device_plan  scripts/device-check --plan: every step time-boxed, the total at most 6:00; the CUDA
               libraries' folders on the library path before the first step (issue 25, item 7)
  device_table scripts/device_check_table.py (device-check's last table) on result files of every
               backend and rank count: a 1- and a 2-rank CPU run, and a 1-rank CUDA-shaped file (the
               1-rank run as a CUDA run records it), whose collective rows are ok with a null algbw:
               every table prints, "-" where a figure is null, exit 0 (issue 25, item 2)
The root and chroot cases need root and debootstrap: without them they skip (exit 77) saying why."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

import e2e_common
from e2e_common import fail, load_valid, parser

SKIP = 77
LIMIT_MIB = 60
NVIDIA = re.compile(r"^lib(cuda|cudart|cublas|cublasLt|nccl|nvidia-[a-z-]+|nvrtc|nvJitLink)\.so")
C_RUNTIME = re.compile(r"^(ld-linux.*|lib(c|m|pthread|dl|rt|stdc\+\+|gcc_s))\.so")


def run(cmd, ok=(0,), timeout=300, **kw):  # not echoed, 300 s; fails unless the exit code is one of `ok`
    p = e2e_common.run(cmd, timeout=timeout, echo=False, **kw)
    if p.returncode not in ok:
        fail(f"{' '.join(cmd)} exited {p.returncode}: {p.stdout[-2000:]} {p.stderr[-2000:]}")
    return p


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def case_install(args):
    work = fresh(os.path.join(args.workdir, "install"))
    first = os.path.join(work, "prefix")
    run(["cmake", "--install", args.build, "--prefix", first])
    prefix = os.path.join(work, "moved", "gpuscale")  # relocatable: it must work after a move
    os.makedirs(os.path.dirname(prefix))
    shutil.move(first, prefix)
    share = os.path.join(prefix, "share", "gpuscale")
    for rel in ["bin/gpuscale", "bin/gpuscale-kernels", "share/gpuscale/slurm/gpuscale.sbatch",
                "share/gpuscale/slurm/gpuscale-job.sh", "share/gpuscale/slurm/health.sbatch",
                "share/gpuscale/k8s/mpijob.yaml", "share/gpuscale/schema/result-v1.schema.json",
                "share/gpuscale/schema/result-defs.schema.json", "share/gpuscale/schema/result-v2.bundled.schema.json",
                "share/gpuscale/k8s/continuous-validation.yaml",
                "share/gpuscale/data/peaks/gpus.json", "share/gpuscale/data/health-thresholds/default.json",
                "share/gpuscale/docs/install.md"]:
        if not os.path.isfile(os.path.join(prefix, rel)):
            fail(f"cmake --install put no {rel}")
    for exe in ["gpuscale", "gpuscale-kernels"]:
        dyn = run(["readelf", "-d", os.path.join(prefix, "bin", exe)]).stdout
        if not re.search(r"\(RUNPATH\)\s+Library runpath: \[\$ORIGIN/\.\./lib\]", dyn):
            fail(f"bin/{exe} has no RUNPATH $ORIGIN/../lib: {[l for l in dyn.splitlines() if 'PATH' in l]}")
        if os.path.realpath(args.build) in dyn:
            fail(f"bin/{exe} still names the build tree in its dynamic section")
    gpuscale = os.path.join(prefix, "bin", "gpuscale")
    out = os.path.join(work, "quick.json")
    run([gpuscale, "run", "--backend", "cpu", "--quick", "-o", out], timeout=240)
    doc = load_valid(out, args.schema, gpuscale)
    if not doc["results"] or any(r["status"] != "ok" for r in doc["results"]):
        fail(f"the installed gpuscale's quick run: {doc['summary']}")
    # The Slurm scripts, installed, find the gpuscale next to them (PATH holds no gpuscale here).
    env = {"PATH": "/usr/bin:/bin", "HOME": work}
    found = run(["bash", "-c", f'. "{share}/slurm/gpuscale-job.sh"; gs_dir="{share}/slurm"; gs_find_gpuscale'],
                env=env).stdout.strip()
    if os.path.realpath(found) != os.path.realpath(gpuscale):
        fail(f"the installed Slurm scripts found '{found}', not {gpuscale}")
    # The Tcl modulefile, run by tclsh with the two Modules commands it uses, finds the moved tree.
    tcl = glob.glob(os.path.join(share, "modulefiles", "tcl", "gpuscale", "*"))
    lua = glob.glob(os.path.join(share, "modulefiles", "lmod", "gpuscale", "*.lua"))
    if len(tcl) != 1 or len(lua) != 1 or not os.path.basename(lua[0]).startswith(doc["tool"]["version"]):
        fail(f"modulefiles: tcl {tcl}, lmod {lua} (version {doc['tool']['version']})")
    # tclsh is a test dependency (scripts/install-deps --test installs tcl): without it the check fails,
    # it is not dropped.
    if not shutil.which("tclsh"):
        fail("no tclsh: the Tcl modulefile cannot be checked (install tcl: scripts/install-deps --test)")
    script = ('proc prepend-path {v p} { puts "$v=$p" }\nproc setenv {v p} { puts "$v=$p" }\n'
              'proc module-whatis {t} {}\n'
              f'set ModulesCurrentModulefile "{tcl[0]}"\nsource "{tcl[0]}"\n')
    got = run(["tclsh"], input=script).stdout
    if f"PATH={prefix}/bin" not in got or f"GPUSCALE_SLURM_DIR={share}/slurm" not in got:
        fail(f"the Tcl modulefile set {got!r}, not the moved tree {prefix}")
    print(f"install: {prefix} runs (quick run {doc['summary']['rows']} rows ok), Slurm scripts and modulefile find it")


def case_cpack(args):
    out = fresh(os.path.join(args.workdir, "cpack"))
    run(["cpack", "-G", "TGZ;DEB", "-B", out], cwd=args.build, timeout=600)
    debs, tgzs = glob.glob(os.path.join(out, "*.deb")), glob.glob(os.path.join(out, "*.tar.gz"))
    if len(debs) != 1 or len(tgzs) != 1:
        fail(f"cpack made {os.listdir(out)}, not one .deb and one .tar.gz")
    info = run(["dpkg-deb", "-f", debs[0], "Depends"]).stdout.strip()
    for need in ["libopenmpi", "openmpi-bin", "libopenblas", "libfmt", "libgomp1"]:
        if need not in info:
            fail(f"the .deb's Depends lack {need}: {info}")
    if re.search(r"cuda|nccl|nvidia|cublas", info, re.I):
        fail(f"the .deb depends on the NVIDIA stack: {info}")
    files = run(["dpkg-deb", "-c", debs[0]]).stdout
    for rel in ["./usr/bin/gpuscale", "./usr/bin/gpuscale-kernels", "./usr/share/gpuscale/slurm/gpuscale.sbatch",
                "./usr/share/gpuscale/modulefiles/lmod/gpuscale/", "./usr/share/gpuscale/modulefiles/tcl/gpuscale/"]:
        if rel not in files:
            fail(f"the .deb holds no {rel}")
    with tarfile.open(tgzs[0]) as t:
        names = t.getnames()
    for tail in ["/bin/gpuscale", "/bin/gpuscale-kernels", "/share/gpuscale/slurm/gpuscale-job.sh"]:
        if not any(n.endswith(tail) for n in names):
            fail(f"the .tar.gz holds no {tail}")
    print(f"cpack: {os.path.basename(debs[0])} (Depends: {info}), {os.path.basename(tgzs[0])} ({len(names)} entries)")


def bundle_path(args):
    return os.path.join(args.workdir, "gpuscale-bundle.tar.gz")


def case_bundle(args):
    os.makedirs(args.workdir, exist_ok=True)
    out = bundle_path(args)
    if os.path.exists(out):
        os.remove(out)
    p = run([os.path.join(args.source, "scripts", "bundle"), "--build", args.build, out], timeout=600)
    size = os.path.getsize(out)
    if size >= LIMIT_MIB << 20:
        fail(f"the bundle is {size >> 20} MiB, not under {LIMIT_MIB} MiB")
    with tarfile.open(out) as t:
        names = t.getnames()
    if any(not (n == "gpuscale" or n.startswith("gpuscale/")) for n in names):
        fail(f"the bundle does not unpack to gpuscale/ alone: {[n for n in names if not n.startswith('gpuscale')][:5]}")
    for rel in ["bin/gpuscale", "bin/gpuscale-kernels", "bin/mpirun", "bin/orted", "libexec/gpuscale",
                "etc/openmpi-mca-params.conf", "share/gpuscale/slurm/gpuscale.sbatch", "MANIFEST"]:
        if f"gpuscale/{rel}" not in names:
            fail(f"the bundle holds no {rel}")
    plugins = [n for n in names if re.match(r"gpuscale/lib/openmpi/mca_\w+\.so$", n)]
    helps = [n for n in names if re.match(r"gpuscale/share/openmpi/help-.*\.txt$", n)]
    if len(plugins) < 20 or len(helps) < 20:
        fail(f"the bundle holds {len(plugins)} Open MPI plugins and {len(helps)} help files")
    libs = [os.path.basename(n) for n in names if re.search(r"\.so(\.\d+)*$", n)]
    bad = [l for l in libs if NVIDIA.match(l) or C_RUNTIME.match(l)]
    if bad:
        fail(f"the bundle carries C runtime or NVIDIA libraries: {bad}")
    for need in ["libmpi.so.40", "libfmt.so.9", "libopenblas.so.0", "libgomp.so.1"]:
        if not any(l.startswith(need.split(".so")[0] + ".so") for l in libs):
            fail(f"the bundle carries no {need}")
    # With libibverbs come the RDMA providers of its own ABI (NCCL's IB transport needs one per NIC kind).
    if "libibverbs.so.1" in libs and not any(re.match(r"libmlx5-rdmav\d+\.so$", l) for l in libs):
        fail(f"the bundle carries libibverbs without its mlx5 provider: {sorted(l for l in libs if 'rdmav' in l)}")
    check_c_runtime_floor(out)
    print(p.stdout.strip().splitlines()[-1])
    print(f"bundle: {size / 2**20:.1f} MiB, {len(names)} entries, {len(plugins)} Open MPI plugins, "
          f"{len(libs)} libraries")


def check_c_runtime_floor(bundle):
    """The bundle states the glibc and libstdc++ it needs (MANIFEST) and its wrappers refuse an older
    machine with one line naming both versions, exit 2: an older glibc and a libstdc++ without the
    version are faked by a getconf and an ldconfig first on PATH."""
    with tempfile.TemporaryDirectory() as d:
        with tarfile.open(bundle) as t:
            t.extractall(d)
        gs = os.path.join(d, "gpuscale", "bin", "gpuscale")
        m = re.search(r"^needs: glibc >= (\d+\.\d+), libstdc\+\+ with GLIBCXX_(3\.4\.\d+) ",
                      open(os.path.join(d, "gpuscale", "MANIFEST")).read(), re.M)
        if not m:
            fail("the MANIFEST does not state the glibc and libstdc++ the bundle needs")
        fake = os.path.join(d, "fake")
        os.makedirs(fake)
        stdcxx = os.path.join(d, "libstdc++.so.6")
        with open(stdcxx, "w") as f:
            f.write("GLIBCXX_3.4 GLIBCXX_3.4.1")  # an old one: none of the versions a GCC 12 build needs
        scripts = {"getconf": "#!/bin/sh\necho 'glibc 2.17'\n",
                   "ldconfig": f"#!/bin/sh\necho '\tlibstdc++.so.6 (libc6,x86-64) => {stdcxx}'\n"}
        for name, ok_text in (("getconf", f"needs glibc >= {m.group(1)}"),
                              ("ldconfig", f"needs libstdc++ with GLIBCXX_{m.group(2)}")):
            for f in os.listdir(fake):
                os.remove(os.path.join(fake, f))
            with open(os.path.join(fake, name), "w") as f:
                f.write(scripts[name])
            os.chmod(os.path.join(fake, name), 0o755)
            p = run([gs, "--version"], ok=(0, 2), env_extra={"PATH": fake + ":" + os.environ["PATH"]})
            if p.returncode != 2 or ok_text not in p.stderr or len(p.stderr.strip().splitlines()) != 1 \
                    or "found 2.17" not in p.stderr and name == "getconf":
                fail(f"an old {'glibc' if name == 'getconf' else 'libstdc++'}: exit {p.returncode}, {p.stderr!r}")
        if run([gs, "--version"]).returncode != 0:
            fail("the bundle's gpuscale --version fails on the machine that made it")
    print(f"bundle: needs glibc >= {m.group(1)} and GLIBCXX_{m.group(2)}; an older one is refused by name")


def need_root():
    if os.geteuid() != 0:
        print("skipped: the minbase root needs root (debootstrap, chroot)")
        sys.exit(SKIP)
    if not shutil.which("debootstrap"):
        print("skipped: debootstrap is not installed (scripts/install-deps --test)")
        sys.exit(SKIP)


def debian_mirror():
    """(mirror URI, suite) of this machine's main Debian source (apt's sources.list and .sources)."""
    entries = []
    for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
        for line in open(path) if os.path.exists(path) else []:
            m = re.match(r"^\s*deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+(\S+)", line)
            if m:
                entries.append((m.group(1), m.group(2)))
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        for stanza in open(path).read().split("\n\n"):
            f = dict(re.findall(r"^([A-Za-z-]+):\s*(.*)$", stanza, re.M))
            if "deb" in f.get("Types", "").split() and f.get("URIs") and f.get("Suites"):
                entries.append((f["URIs"].split()[0], f["Suites"].split()[0]))
    for uri, suite in entries:
        if "security" not in uri and "-" not in suite and "/debian" in uri:
            return uri, suite
    fail(f"no Debian mirror among this machine's apt sources: {entries}")


def root_dir(args):
    return os.path.join(args.build, "bundle-root")


def case_root(args):
    need_root()
    root = root_dir(args)
    ready = os.path.join(root, ".gpuscale-root-ready")
    if os.path.exists(ready):
        print(f"root: reusing {root} ({open(ready).read().strip()})")
        return
    uri, suite = debian_mirror()
    shutil.rmtree(root, ignore_errors=True)
    run(["debootstrap", "--variant=minbase", suite, root, uri], timeout=900)
    for lib in ["libmpi.so.40", "libopenblas.so.0", "libfmt.so.9", "libgomp.so.1"]:
        if glob.glob(os.path.join(root, "usr", "lib", "*", lib)):
            fail(f"the minbase root already has {lib}: it would not prove the bundle")
    with open(ready, "w") as f:
        f.write(f"debootstrap --variant=minbase {suite} {uri}\n")
    print(f"root: {root} from {uri} {suite}")


def case_chroot(args):
    need_root()
    root = root_dir(args)
    if not os.path.exists(os.path.join(root, ".gpuscale-root-ready")):
        fail(f"no minbase root at {root}: run the bundle_root case first")
    rel = "/opt/gpuscale-test"
    target = root + rel
    fresh(target)
    with tarfile.open(bundle_path(args)) as t:
        t.extractall(target)
    has_module = bool(glob.glob(os.path.join(target, "gpuscale", "lib", "gpuscale", "*.so")))
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "OMPI_ALLOW_RUN_AS_ROOT": "1",
           "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_rmaps_base_oversubscribe": "1"}
    gs = f"{rel}/gpuscale/bin/gpuscale"
    mounts = [os.path.join(root, "proc"), os.path.join(root, "sys")]  # mpirun and hwloc read them
    subprocess.run(["mount", "-t", "proc", "proc", mounts[0]], check=True)
    try:
        subprocess.run(["mount", "-t", "sysfs", "sysfs", mounts[1]], check=True)
        def inside(cmd, ok=(0,), timeout=240):
            return run(["chroot", root] + cmd, ok=ok, timeout=timeout, env=env)

        # No rdma-core in the root (no /etc/libibverbs.d): the wrappers name the carried RDMA providers.
        env_file = f"{rel}/gpuscale/libexec/gpuscale-bundle-env"
        drivers = inside(["bash", "-c", f'. {env_file}; echo "$RDMAV_DRIVERS"']).stdout.strip()
        if os.path.exists(os.path.join(target, "gpuscale", "lib", "libibverbs.so.1")) and "mlx5" not in drivers.split(":"):
            fail(f"RDMAV_DRIVERS in a root without rdma-core: {drivers!r}")
        version = inside([gs, "--version"]).stdout
        if "gpuscale" not in version:
            fail(f"gpuscale --version printed {version!r}")
        listing = inside([gs, "list"]).stdout
        for bench in ["stream.triad", "gemm", "all_reduce"]:
            if bench not in listing:
                fail(f"gpuscale list names no {bench}: {listing[:400]}")
        for name, cmd in [("single", [gs]), ("mpirun", [f"{rel}/gpuscale/bin/mpirun", "-np", "2", gs])]:
            out = f"{rel}/{name}.json"
            inside(cmd + ["run", "--backend", "cpu", "--quick", "-o", out])
            doc = load_valid(root + out, args.schema, args.gpuscale)
            ranks = len(doc["ranks"])
            if ranks != (1 if name == "single" else 2) or any(r["status"] != "ok" for r in doc["results"]):
                fail(f"the bundle's {name} quick run: {ranks} ranks, {doc['summary']}")
            print(f"chroot: {name} quick run ok ({ranks} rank(s), {doc['summary']['rows']} rows)")
        p = inside([gs, "run", "--backend", "cuda", "--quick", "-o", f"{rel}/cuda.json"], ok=(3,))
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        if len(lines) != 1:
            fail(f"--backend cuda printed {len(lines)} lines on stderr, not one: {lines}")
        if has_module:  # the CUDA backend module is in the bundle: the missing library must be named
            if not re.search(r"lib(cudart|cublasLt|cublas|nccl|cuda)\.so", lines[0]):
                fail(f"--backend cuda (CUDA module bundled) does not name the missing library: {lines[0]}")
            print(f"chroot: --backend cuda with the CUDA module, no CUDA libraries: exit 3, {lines[0]!r}")
        else:
            if "built without the CUDA backend" not in lines[0]:
                fail(f"--backend cuda (CUDA-off build) does not say the backend is not built: {lines[0]}")
            print(f"chroot: --backend cuda from a CUDA-off build: exit 3, {lines[0]!r}")
    finally:
        for m in reversed(mounts):
            subprocess.run(["umount", "-l", m], capture_output=True)
        shutil.rmtree(target, ignore_errors=True)


def case_device_plan(args):
    p = run([os.path.join(args.source, "scripts", "device-check"), "--plan"], timeout=60)
    lines = p.stdout.strip().splitlines()
    m = re.fullmatch(r"total (\d+):(\d\d)", lines[-1].strip()) if lines else None
    if not m:
        fail(f"device-check --plan's last line is not 'total M:SS': {lines[-1:]}")
    total = int(m.group(1)) * 60 + int(m.group(2))
    boxes = [int(a) * 60 + int(b) for a, b in re.findall(r"^\s*(\d+):(\d\d)\s+\S", "\n".join(lines[:-1]), re.M)]
    if len(boxes) < 8 or sum(boxes) != total:
        fail(f"device-check --plan: {len(boxes)} time-boxed steps adding to {sum(boxes)} s, total says {total} s")
    if total > 360:
        fail(f"device-check --plan: total {lines[-1]} is over 6:00")
    # Every step runs with the CUDA libraries' folders on the library path: it is exported before the
    # first step (unpack's `gpuscale --version` reports the libraries it finds).
    with open(os.path.join(args.source, "scripts", "device-check")) as f:
        script = f.read()
    export, first_step = script.find("export LD_LIBRARY_PATH="), script.find("\nstep ")
    if export < 0 or first_step < 0 or export > first_step:
        fail(f"device-check exports LD_LIBRARY_PATH at {export}, after its first step at {first_step}")
    print(f"device_plan: {len(boxes)} steps, {lines[-1]}, the library path set before the first step")


def case_device_table(args):
    work = fresh(os.path.join(args.workdir, "device-table"))
    env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    plan = ["run", "--backend", "cpu", "--quick", "--benchmarks", "stream.copy,stream.triad,all_reduce,all_gather",
            "-e", "1M", "--threads", "1"]
    one, two, cuda = (os.path.join(work, n) for n in ("one.json", "two.json", "cuda.json"))
    run([args.gpuscale] + plan + ["-o", one], env_extra=env, timeout=240)
    run([args.mpiexec, "--oversubscribe", "-np", "2", args.gpuscale] + plan + ["-o", two], env_extra=env, timeout=240)
    doc = load_valid(one, args.schema, args.gpuscale)
    # What a CUDA run on one GPU records where the CPU run differs: the device, and NCCL as the transport.
    doc["ranks"][0]["device"].update({"name": "NVIDIA H200", "backend": "cuda"})
    doc["ranks"][0]["device"]["details"] = {"compute_capability": "9.0", "sm_count": 132}
    for r in doc["results"]:
        if r["scope"] == "collective":
            r["params"]["transport"] = "nccl"
    # fp8 GEMM rows in both accumulation modes, as the CUDA run writes them: a peak only with fast accumulation.
    base = next(r for r in doc["results"] if r["benchmark"] == "stream.copy")
    for fast, value, peak in ((False, 1100.5, None), (True, 1500.25, 1979.0)):
        r = json.loads(json.dumps(base))
        r.update({"benchmark": "gemm", "unit": "TFLOP/s", "aggregate": value, "expected_peak": peak,
                  "fraction_of_peak": None if peak is None else value / peak,
                  "params": {"dtype": "fp8_e4m3", "m": 8192, "n": 8192, "k": 8192, "layout": "TN", "fast_accum": fast}})
        doc["results"].append(r)
    with open(cuda, "w") as f:
        json.dump(doc, f)
    nulls = [r for r in doc["results"] if r["scope"] == "collective" and r["status"] == "ok"
             and r["metrics"].get("algbw") is None]
    if not nulls:
        fail("the 1-rank run has no ok collective row with a null algbw: the case tests nothing")
    table = os.path.join(args.source, "scripts", "device_check_table.py")
    for result in (one, two, cuda):
        p = run(["python3", table, "--result", result, "--collectives", one, two, cuda], timeout=60)
        out = p.stdout
        if "Traceback" in p.stderr or "rows:" not in out or out.count("\ncollectives (") != 3:
            fail(f"device_check_table.py --result {os.path.basename(result)}: {out[-2000:]} {p.stderr[-2000:]}")
        for name in ("one.json", "two.json", "cuda.json"):
            block = out.split(f"collectives ({name})", 1)[1].split("\ncollectives (", 1)[0]
            lines = [l for l in block.splitlines() if "algbw" in l]
            # One GPU: no bandwidth, "-"; two: a number.
            for gpus in ((1, 2) if name == "two.json" else (1,)):
                at = [l for l in lines if f" {gpus} GPU(s) " in l]
                shown = [re.search(r"algbw +(\S+) GB/s$", l).group(1) for l in at]
                if not at or any((v == "-") != (gpus == 1) for v in shown):
                    fail(f"{name} at {gpus} GPU(s): algbw {shown} in {lines}, expected {'-' if gpus == 1 else 'numbers'}")
    out = run(["python3", table, "--result", cuda], timeout=60).stdout
    if "GPU: NVIDIA H200 (9.0, 132 SMs)" not in out:
        fail("the CUDA-shaped file's device line is missing")
    # Each fp8 mode has its own line: the figure, and a % of peak only where the peak matches the mode.
    exact = [l for l in out.splitlines() if l.startswith("gemm fp8_e4m3 8192^3 | _scaled_mm ")]
    fast = [l for l in out.splitlines() if l.startswith("gemm fp8_e4m3 fast-accum | fast ")]
    if len(exact) != 1 or "1,100.5 TFLOP/s" not in exact[0] or "%" in exact[0]:
        fail(f"the fp8 row without fast accumulation: {exact}")
    if len(fast) != 1 or "1,500.2 TFLOP/s" not in fast[0] or "75.8%" not in fast[0]:
        fail(f"the fp8 row with fast accumulation: {fast}")
    if "[met] fp8 8192^3 fast accumulation >= 70% of its dense peak" not in out:
        fail(f"the fp8 target is not judged on the fast-accumulation row:\n{out}")
    print(f"device_table: 3 result files, {len(nulls)} ok collective rows with a null algbw shown as '-'")


def main():
    def parse():
        ap = parser()
        ap.add_argument("--build", required=True)
        ap.add_argument("--source", required=True)
        ap.add_argument("--mpiexec", required=True)
        args = ap.parse_args()
        args.workdir = os.path.abspath(args.workdir)
        return args

    args = None

    def with_args(case):
        def run():
            case(args)
        return run

    # The minbase root (debootstrap, made once per build folder under <build>/bundle-root) and the chroot
    # runs need root; the chroot reuses the bundle and the root the fixtures made.
    cases = {"install": (with_args(case_install), {"RESOURCE_LOCK": "cpu_cores"}),
             "cpack": (with_args(case_cpack), {}),
             "bundle": (with_args(case_bundle), {"FIXTURES_SETUP": "bundle_tarball"}),
             "root": (with_args(case_root), {"FIXTURES_SETUP": "bundle_root", "TIMEOUT": 900}),
             "chroot": (with_args(case_chroot), {"FIXTURES_REQUIRED": "bundle_tarball;bundle_root",
                                                 "RESOURCE_LOCK": "cpu_cores"}),
             "device_plan": (with_args(case_device_plan), {}),
             "device_table": (with_args(case_device_table), {"RESOURCE_LOCK": "cpu_cores"})}

    def parse_and_keep():
        nonlocal args
        args = parse()
        return args

    e2e_common.run_case("bundle_", {"TIMEOUT": 300, "LABELS": "e2e;bundle", "SKIP_RETURN_CODE": 77}, cases,
                        parse_and_keep)


if __name__ == "__main__":
    main()
