#!/usr/bin/env python3
"""End-to-end tests of nccl-tests users' habits on `gpuscale run` (docs/usage.md "Coming from
nccl-tests") and of the exports (report --openmetrics, the Grafana dashboard in share/grafana).

-o - prints the result JSON on stdout and everything else on stderr; -o sum is refused; -d float -c 1
work; --quiet prints no progress and no summary. The OpenMetrics text of a real CPU run parses with
prometheus_client (both its Prometheus and its OpenMetrics parser), ends with # EOF, carries base
units in its names and a run label, and the dashboard names only metrics it holds.
"""
import json
import os
import re
import shutil

import e2e_common
from e2e_common import gs, mpirun, run

ARGS = None
fail = e2e_common.fail
QUICK = ["run", "--backend", "cpu", "--quick", "--cluster", "e2ecli"]


def out_path(name):
    return e2e_common.out_path(ARGS.workdir, name)


def expect(p, code, what):
    if p.returncode != code:
        fail(f"{what}: exit {p.returncode}, expected {code}\nstdout: {p.stdout[-2000:]}\nstderr: {p.stderr[-2000:]}")


def one_line(p, needle, what):
    expect(p, 2, what)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    if len(lines) != 1 or needle not in lines[0]:
        fail(f"{what}: expected one line naming {needle!r}, got {p.stderr!r}")


def case_stdout():
    tmp = os.path.join(ARGS.workdir, "stdout-tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    p = mpirun(2, QUICK + ["--benchmarks", "stream.triad,all_reduce", "-o", "-"], {"TMPDIR": tmp})
    expect(p, 0, "run -o -")
    path = out_path("stdout.json")
    with open(path, "w") as f:
        f.write(p.stdout)
    doc = e2e_common.load_valid(path, ARGS.schema, ARGS.gpuscale)  # stdout is the JSON and only it
    if not doc["summary"]["complete"] or not doc["results"]:
        fail(f"the JSON on stdout is not a complete run: {doc['summary']}")
    if "results:" not in p.stderr or "stream.triad" not in p.stderr:
        fail(f"the summary did not go to stderr: {p.stderr[-1000:]}")
    if os.listdir(tmp):
        fail(f"-o - left {os.listdir(tmp)} in TMPDIR")
    if os.path.exists("-") or os.path.exists(os.path.join(ARGS.workdir, "-")):
        fail("-o - made a file named -")
    one_line(gs("run", "--quick", "--resume", path, "-o", "-"), "--resume with -o -", "--resume with -o -")


def case_habits():
    cwd = os.path.join(ARGS.workdir, "habits")
    os.makedirs(cwd, exist_ok=True)
    for op in ("sum", "max"):
        one_line(gs("run", "--quick", "-o", op, cwd=cwd), f"--ops {op}", f"-o {op}")
        if os.path.exists(os.path.join(cwd, op)):
            fail(f"-o {op} made a file named {op}")
    one_line(gs("run", "--quick", "-z", "1"), "-z is nccl-tests'", "-z 1")
    one_line(gs("run", "--quick", "-G", "1"), "-G is nccl-tests'", "-G 1")
    one_line(gs("run", "--quick", "-c", "2"), "use 1 or 0", "-c 2")
    p = gs("run", "--quick", "--no-such-flag", "7", "--other")
    expect(p, 2, "unknown flags")
    if "--no-such-flag 7 --other" not in p.stderr:
        fail(f"the unexpected arguments are not in their order: {p.stderr!r}")
    path = out_path("habits.json")
    p = mpirun(2, QUICK + ["--benchmarks", "all_reduce,stream.triad", "-d", "float", "-c", "1", "-o", path])
    expect(p, 0, "-d float -c 1")
    doc = e2e_common.load_valid(path, ARGS.schema, ARGS.gpuscale)
    types = {r["params"].get("dtype") for r in doc["results"]}
    if types != {"fp32"} or not doc["summary"]["valid"]:
        fail(f"-d float gave dtypes {types}, valid {doc['summary']['valid']}")
    if "note" in p.stderr:
        fail(f"-c 1 left a note: {p.stderr}")
    path = out_path("habits-c0.json")
    p = mpirun(1, QUICK + ["--benchmarks", "all_reduce", "-d", "half", "-c", "0", "-o", path])
    expect(p, 0, "-d half -c 0")
    if p.stderr.count("checks every measurement") != 1:
        fail(f"-c 0 did not say once that gpuscale checks anyway: {p.stderr}")
    if {r["params"]["dtype"] for r in e2e_common.load_valid(path, ARGS.schema, ARGS.gpuscale)["results"]} != {"fp16"}:
        fail("-d half did not measure fp16")


def case_empty_values():
    """An empty value reads as "not given" (the default plan ran, -o '' wrote the default file, --resume ''
    measured the full plan): every value option refuses it in one line, exit 2, writing nothing."""
    cwd = os.path.join(ARGS.workdir, "empty")
    shutil.rmtree(cwd, ignore_errors=True)
    os.makedirs(cwd)
    for flag in ("--benchmarks", "--ops", "-d", "--dtypes", "--array-size", "-o", "--resume", "--cluster", "--store",
                 "--backend", "--reps"):
        one_line(gs("run", "--quick", flag, "", cwd=cwd), "an empty value", f"run {flag} ''")
    if os.listdir(cwd):
        fail(f"a refused run wrote {os.listdir(cwd)}")


def case_max_time():
    """A plan past --max-time (default 24 h) is refused before anything is measured, in one line, exit 2:
    --reps 1000000000 (it was taken, then failed its first row with bad_alloc); --max-time 0 lifts the
    limit (the samples' memory still counts). A plan within it says its estimate at the start."""
    cwd = os.path.join(ARGS.workdir, "max-time")
    shutil.rmtree(cwd, ignore_errors=True)
    os.makedirs(cwd)
    # The refusal comes after the line naming the backend, which every run prints first.
    for args, needle in ((["--reps", "1000000000"], "more than --max-time 24:00:00"),
                         (["--array-size", "64M", "--reps", "1000", "--max-time", "1s"], "more than --max-time 0:01")):
        p = gs("run", "--backend", "cpu", "--benchmarks", "stream.triad", *args, cwd=cwd, timeout=60)
        expect(p, 2, " ".join(args))
        lines = [l for l in p.stderr.splitlines() if l.strip() and not l.startswith("gpuscale: cpu backend (")]
        if len(lines) != 1 or needle not in lines[0]:
            fail(f"{args}: expected one line naming {needle!r}, got {p.stderr!r}")
    one_line(gs("run", "--quick", "--max-time", "soon", cwd=cwd), "invalid --max-time 'soon'", "--max-time soon")
    written = [os.path.join(d, f) for d, _, files in os.walk(cwd) for f in files]  # (the default results/ folder is made first)
    if written:
        fail(f"a refused run wrote {written}")
    p = gs("run", *QUICK[1:], "--benchmarks", "stream.triad", "-o", out_path("max-time.json"))
    expect(p, 0, "a quick run")
    said = [l for l in p.stderr.splitlines() if l.startswith("gpuscale: the plan: ")]
    if len(said) != 1 or not re.search(r"rows, estimated \d+:\d\d on a typical device \(--max-time 24:00:00\)$", said[0]):
        fail(f"the run did not say its estimate at the start: {p.stderr[-1500:]!r}")
    print(f"ok: {said[0]}")


def case_quiet():
    path = out_path("quiet.json")
    p = mpirun(2, QUICK + ["--benchmarks", "stream.triad,all_reduce", "--quiet", "-o", path])
    expect(p, 0, "run --quiet")
    if p.stdout.strip() or p.stderr.strip():
        fail(f"--quiet printed: stdout {p.stdout!r} stderr {p.stderr!r}")
    e2e_common.load_valid(path, ARGS.schema, ARGS.gpuscale)
    one_line(gs("run", "--quiet", "--quick", "-o", "sum"), "--ops sum", "an error under --quiet")
    # No colour or other escape codes, on a terminal or not (there are none to switch off with NO_COLOR).
    p = mpirun(1, QUICK + ["--benchmarks", "stream.triad", "-o", out_path("plain.json")], {"NO_COLOR": "1"})
    if "\x1b" in p.stdout + p.stderr:
        fail("an escape code reached the output")
    if not re.search(r"\[\d+/\d+\] .*ETA \d+:\d\d", p.stderr):
        fail(f"no progress line with an ETA: {p.stderr}")
    # The CPU backend's ranks are processes, not GPUs: its progress says "on 1 rank", as its tables do.
    steps = re.findall(r"\[\d+/\d+\] .*", p.stderr)
    if not steps or any(" on 1 rank " not in l or "GPU" in l for l in steps):
        fail(f"the CPU backend's progress lines do not say 'on 1 rank': {steps}")


def families(text, openmetrics):
    if openmetrics:
        from prometheus_client.openmetrics.parser import text_string_to_metric_families
    else:
        from prometheus_client.parser import text_string_to_metric_families
    return {f.name: f for f in text_string_to_metric_families(text)}


def dashboard_metrics(path):
    with open(path) as f:
        dash = json.load(f)
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    exprs += [v["query"]["query"] if isinstance(v.get("query"), dict) else str(v.get("query", ""))
              for v in dash["templating"]["list"]]
    return {m for e in exprs for m in re.findall(r"\bgpuscale_[a-z0-9_]+", e)}, len(dash["panels"])


def case_openmetrics():
    a, b = out_path("om-a.json"), out_path("om-b.json")
    for path in (a, b):  # two runs of one cluster
        p = mpirun(2, QUICK + ["--benchmarks", "stream.triad,gemm,all_reduce,dp-step", "-o", path])
        expect(p, 0, "the run to export")
    p = gs("report", a, "--openmetrics", "-")
    expect(p, 0, "report --openmetrics")
    text = p.stdout
    if not text.endswith("# EOF\n"):
        fail(f"the OpenMetrics text does not end with # EOF: {text[-200:]!r}")
    fams = families(text, False)
    if families(text, True).keys() != fams.keys():
        fail("the OpenMetrics and Prometheus parsers read different families")
    for name in ("gpuscale_run_info", "gpuscale_bandwidth_bytes_per_second", "gpuscale_flops_per_second",
                 "gpuscale_samples_per_second", "gpuscale_scaling_efficiency_ratio", "gpuscale_valid",
                 "gpuscale_rank_bandwidth_bytes_per_second"):
        if name not in fams:
            fail(f"{name} missing from the export: {sorted(fams)}")
    doc = json.load(open(a))
    for f in fams.values():
        for s in f.samples:
            if "unit" in s.labels or "gpu" in s.labels:
                fail(f"{s.name} has a unit or gpu label on the CPU backend: {s.labels}")
            if s.labels.get("run") != doc["run_id"]:
                fail(f"{s.name} does not name its run: {s.labels}")
    triad = next(r for r in doc["results"] if r["benchmark"] == "stream.triad" and r["gpu_count"] == 2)
    got = [s.value for s in fams["gpuscale_bandwidth_bytes_per_second"].samples
           if s.labels["benchmark"] == "stream.triad" and s.labels["gpu_count"] == "2"]
    if len(got) != 1 or abs(got[0] - triad["aggregate"] * 1e9) > 1e-6 * got[0]:
        fail(f"stream.triad at 2 GPUs: exported {got}, the row's {triad['aggregate']} GB/s")
    ranks = {s.labels["rank"] for s in fams["gpuscale_rank_bandwidth_bytes_per_second"].samples}
    if ranks != {"0", "1"}:
        fail(f"per-rank series name ranks {ranks}")
    p = gs("report", a, b, "--openmetrics", "-")
    expect(p, 0, "two runs of one cluster")
    runs = {s.labels["run"] for s in families(p.stdout, True)["gpuscale_run_info"].samples}
    if len(runs) != 2:
        fail(f"two runs exported as {runs}")
    # The dashboard names only metrics the exporter wrote for this run.
    dash = os.path.join(ARGS.source, "share", "grafana", "gpuscale-dashboard.json")
    names, panels = dashboard_metrics(dash)
    if panels < 5 or not names:
        fail(f"the dashboard has {panels} panels naming {names}")
    if names - fams.keys():
        fail(f"the dashboard names metrics the exporter does not write: {sorted(names - fams.keys())}")
    print(f"ok: {len(fams)} families; the dashboard's {panels} panels use {sorted(names)}")


def parse():
    global ARGS
    ARGS = e2e_common.parse_args("--mpiexec", "--source")
    return ARGS


def main():
    cores = e2e_common.CORES
    cases = {
        "stdout": (case_stdout, cores),
        "habits": (case_habits, cores),
        "quiet": (case_quiet, cores),
        "empty_values": (case_empty_values, cores),
        "max_time": (case_max_time, cores),
        "openmetrics": (case_openmetrics, cores),
    }
    e2e_common.run_case("e2e_cli_", {"TIMEOUT": 300, "LABELS": "e2e;cpu"}, cases, parse)


if __name__ == "__main__":
    main()
