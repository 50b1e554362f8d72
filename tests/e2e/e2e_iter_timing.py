#!/usr/bin/env python3
"""Per-iteration timing of collectives and the nccl-tests JSON export (issue 45; docs/usage.md,
docs/results.md): 4 ranks acting as hosts n0..n3 (GPUSCALE_TEST_HOSTS), one host planted 3x slow
(GPUSCALE_TEST_FAULT=slow-host:HOST:3, drawn at random per launch, seeded).

  iter_straggler:   GPUSCALE_ITER_LAUNCHES launches (3 unless set; issue 45 asks 10 of 10 by hand) of
                    `run --benchmarks all_reduce`: every 4-rank row carries iter_p50_us <= iter_p99_us <=
                    iter_max_us and the pass's series, most of them name the planted rank as
                    iter_straggler_rank, and the run summary's per-iteration stragglers and the file's
                    analysis.iteration_stragglers open with that rank and its host.
  nccl_tests_json:  `report --nccl-tests-json` of such a run against the layout nccl-tests 2.19.6's -J
                    writes (src/util.cu: key names, nesting, order, types), the -I summary recomputed from
                    times_us, times_us the max over per_process_max_times_us (what analyze_perf_json.py's
                    consistency line checks), the slowest process by mean (its straggler section's rule)
                    the planted rank in most lines; and its refusals, one line each.
  analyze_perf_json: registered only when CMake is given -DGPUSCALE_ANALYZE_PERF_JSON=PATH (nccl-tests'
                    tools/analyze_perf_json.py, never in this repository): `--all` on the export exits 0,
                    its consistency line says PASS and every size's straggler line names the planted rank.
"""
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common  # noqa: E402
from result_rows import fail  # noqa: E402

ARGS = None
HOSTS = ["n0", "n1", "n2", "n3"]
ITERS = 20
CLEAN = ("GPUSCALE_TEST_FAULT", "GPUSCALE_TEST_HOSTS")
RUN = ["--benchmarks", "all_reduce", "-b", "1K", "-e", "64K", "-f", "8", "-n", str(ITERS), "--reps", "3",
       "-w", "2", "--seed", "7"]


def launch(name, planted):
    """One 4-rank run with `planted` (an index into HOSTS) 3x slow: (its result document, rank 0's output)."""
    out = e2e_common.work(name, fresh=True)
    env = {"GPUSCALE_TEST_HOSTS": ",".join(HOSTS), "GPUSCALE_TEST_FAULT": f"slow-host:{HOSTS[planted]}:3"}
    p = e2e_common.mpirun(4, ["run"] + RUN + ["-o", out], env, timeout=500, env_drop=CLEAN,
                          export=tuple(env), on_timeout="mpirun -np 4 did not finish within 500 s")
    if p.returncode != 0:
        fail(f"run exited {p.returncode}:\n{p.stderr[-2000:]}")
    return e2e_common.load_valid(out, ARGS.schema, ARGS.gpuscale), p.stdout, out


def four_rank_rows(doc):
    rows = [r for r in doc["results"] if r["benchmark"] == "all_reduce" and r["gpu_count"] == 4 and r["status"] == "ok"]
    if not rows:
        fail("no ok all_reduce rows at 4 GPUs")
    return rows


def case_iter_straggler():
    rng = e2e_common.seeded_rng("iter_straggler")
    launches = int(os.environ.get("GPUSCALE_ITER_LAUNCHES", "3"))
    named = 0
    for i in range(launches):
        planted = rng.randrange(4)
        doc, stdout, _ = launch(f"iter_{i}.json", planted)
        rows = four_rank_rows(doc)
        naming = 0
        for r in rows:
            m, what = r["metrics"], f"launch {i}, {r['params']}"
            if not (0 < m["iter_p50_us"] <= m["iter_p99_us"] <= m["iter_max_us"]):
                fail(f"{what}: p50 {m['iter_p50_us']}, p99 {m['iter_p99_us']}, max {m['iter_max_us']} out of order")
            if len(m["iter_times_us"]) != ITERS or max(m["iter_times_us"]) != m["iter_max_us"]:
                fail(f"{what}: iter_times_us {m['iter_times_us']} is not {ITERS} iterations ending at the max")
            naming += m["iter_straggler_rank"] == planted
        # A row whose operations take a scheduler's time slice (4 ranks on 2 shared cores: ~10 ms where
        # the planted sleep adds at most 4x the fastest operation) may name anyone: most rows must name
        # the planted rank, and the run's summary, which counts the rows, must open with it.
        if naming * 2 <= len(rows):
            fail(f"launch {i}: {naming} of {len(rows)} 4-rank rows name the planted rank {planted} ({HOSTS[planted]}): "
                 + ", ".join(str(r["metrics"]["iter_straggler_rank"]) for r in rows))
        lines = stdout.splitlines()
        at = next((k for k, l in enumerate(lines) if l.startswith("per-iteration stragglers")), None)
        if at is None:
            fail(f"launch {i}: the run summary has no per-iteration stragglers:\n{stdout[-2000:]}")
        # The heading (wrapped to the terminal's width), the table's header, then its first line.
        first = next((l.split() for l in lines[at + 1:] if l.split() and l.split()[0].isdigit()), [])
        if first[:2] != [str(planted), HOSTS[planted]]:
            fail(f"launch {i}: the summary names {first[:2]}, planted rank {planted} on {HOSTS[planted]}:\n"
                 + "\n".join(lines[at:at + 6]))
        first_kept = (doc.get("analysis", {}).get("iteration_stragglers") or [{}])[0]
        if (first_kept.get("rank"), first_kept.get("host")) != (planted, HOSTS[planted]):
            fail(f"launch {i}: analysis.iteration_stragglers opens with {first_kept}, planted rank {planted} "
                 f"on {HOSTS[planted]}")
        named += 1
        print(f"launch {i}: planted {HOSTS[planted]} (rank {planted}): named in {naming} of {len(rows)} 4-rank rows, "
              "first in the summary and in analysis.iteration_stragglers")
    print(f"ok: the planted rank named in {named} of {launches} launches")


# nccl-tests 2.19.6's -J layout (src/util.cu): the keys of each object in the order it writes them.
TOP = ["version", "start_time", "args", "env", "nccl_version", "config", "results", "out_of_bounds",
       "average_bus_bandwidth", "errors", "end_time"]
CONFIG = ["nthreads", "ngpus", "minimum_bytes", "maximum_bytes", "step_factor", "warmup_iters", "iterations",
          "aggregated_iterations", "validation", "graph", "blocking_collectives", "per_iter_timing", "per_iter_skip",
          "parallel_init", "devices"]
DEVICE = ["rank", "group", "pid", "hostname", "device", "device_hex", "device_info"]
LINE = ["size", "count", "type", "redop", "root", "out_of_place", "out_of_place_per_iter", "in_place",
        "in_place_per_iter", "actual_iterations", "experiment_name"]
BODY = ["time", "alg_bw", "bus_bw", "nwrong"]
PER_ITER = ["skipped_iterations", "min_us", "max_us", "avg_us", "p50_us", "p95_us", "p99_us", "stdev_us", "cv_pct",
            "times_us", "per_process_max_times_us"]


def keys(obj, want, what):
    if list(obj) != want:
        fail(f"{what}: keys {list(obj)}, nccl-tests writes {want}")


def number(v, what):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        fail(f"{what}: {v!r} is not a number")
    return v


def check_per_iter(p, what, planted):
    keys(p, PER_ITER, what)
    times = [number(t, what) for t in p["times_us"]]
    rows = p["per_process_max_times_us"]
    if len(times) != ITERS or len(rows) != 4 or any(len(r) != ITERS for r in rows):
        fail(f"{what}: {len(times)} times and {len(rows)} process rows, expected {ITERS} and 4 of {ITERS}")
    if any(abs(t - max(r[i] for r in rows)) >= 0.001 for i, t in enumerate(times)):
        fail(f"{what}: times_us is not the max over per_process_max_times_us")
    s = sorted(times[p["skipped_iterations"]:])
    n = len(s)
    avg = sum(s) / n
    expect = {"min_us": s[0], "max_us": s[-1], "avg_us": avg, "p50_us": s[n // 2],
              "p95_us": s[min(n - 1, (n * 95 + 99) // 100 - 1)], "p99_us": s[min(n - 1, (n * 99 + 99) // 100 - 1)],
              "stdev_us": math.sqrt(sum((t - avg) ** 2 for t in s) / n)}
    for k, v in expect.items():
        if not math.isclose(number(p[k], what), v, rel_tol=1e-9, abs_tol=1e-9):
            fail(f"{what}: {k} {p[k]}, nccl-tests' rule gives {v} from times_us")
    return max(range(4), key=lambda r: sum(rows[r]) / ITERS)  # the slowest process by mean


def export(path, out):
    p = e2e_common.gs("report", path, "--nccl-tests-json", out, "--force")
    if p.returncode != 0:
        fail(f"report --nccl-tests-json exited {p.returncode}:\n{p.stderr[-1500:]}")
    with open(out) as f:
        return json.load(f)


def case_nccl_tests_json():
    rng = e2e_common.seeded_rng("nccl_tests_json")
    planted = rng.randrange(4)
    doc, _, path = launch("export_run.json", planted)
    j = export(path, e2e_common.work("export.nccl.json", fresh=True))
    keys(j, TOP, "top level")
    if type(j["out_of_bounds"]["count"]) is not int:
        fail(f"out_of_bounds.count: {j['out_of_bounds']['count']!r} is not an integer")
    if j["version"] != 3 or j["env"] != [] or j["errors"] != [] or j["args"] != doc["command_line"]:
        fail(f"top level: version {j['version']}, env {j['env']}, errors {j['errors']}, args {j['args']}")
    keys(j["config"], CONFIG, "config")
    if j["config"]["iterations"] != ITERS or j["config"]["per_iter_timing"] is not True:
        fail(f"config: {j['config']}")
    devices = j["config"]["devices"]
    for d in devices:
        keys(d, DEVICE, "config.devices[]")
    if [(d["rank"], d["hostname"]) for d in devices] != list(enumerate(HOSTS)):
        fail(f"devices {[(d['rank'], d['hostname']) for d in devices]}, expected ranks 0..3 on {HOSTS}")
    rows = four_rank_rows(doc)
    if len(j["results"]) * 2 != len(rows):
        fail(f"{len(j['results'])} results for {len(rows)} 4-rank rows (two placements a line)")
    slowest = []
    for line in j["results"]:
        what = f"results[size {line.get('size')}]"
        keys(line, LINE, what)
        if line["type"] != "float" or line["redop"] != "sum" or line["root"] != "    -1" \
                or line["experiment_name"] != "all_reduce_perf":
            fail(f"{what}: type {line['type']}, redop {line['redop']}, root {line['root']!r}, "
                 f"experiment {line['experiment_name']}")
        for placement in ("out_of_place", "in_place"):
            keys(line[placement], BODY, f"{what}.{placement}")
            if type(line[placement]["nwrong"]) is not int:  # nccl-tests writes a count
                fail(f"{what}.{placement}.nwrong: {line[placement]['nwrong']!r} is not an integer")
            slowest.append(check_per_iter(line[placement + "_per_iter"], f"{what}.{placement}_per_iter", planted))
    # As in iter_straggler: a line whose operations take a scheduler's time slice may name anyone.
    if sum(s == planted for s in slowest) * 2 <= len(slowest):
        fail(f"the slowest process by mean is the planted {planted} in only {sum(s == planted for s in slowest)} of "
             f"{len(slowest)} lines and placements: {slowest}")
    print(f"ok: {len(j['results'])} lines in nccl-tests' layout, the planted process {planted} slowest by mean in "
          f"{sum(s == planted for s in slowest)} of {len(slowest)} lines and placements")
    # Refusals: one line each, exit 2, nothing written.
    out = e2e_common.work("refused.nccl.json", fresh=True)
    for args, needle in (([path, path], "one result file"),):
        p = e2e_common.gs("report", *args, "--nccl-tests-json", out)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        if p.returncode != 2 or len(lines) != 1 or needle not in lines[0] or os.path.exists(out):
            fail(f"{args}: exit {p.returncode}, expected 2 and one line with '{needle}':\n{p.stderr[-800:]}")
    print("ok: two files refused, one line, exit 2")


def case_analyze_perf_json():
    rng = e2e_common.seeded_rng("analyze_perf_json")
    planted = rng.randrange(4)
    _, _, path = launch("analyze_run.json", planted)
    out = e2e_common.work("analyze.nccl.json", fresh=True)
    export(path, out)
    p = subprocess.run([sys.executable, ARGS.analyze, out, "--all"], capture_output=True, text=True, timeout=120)
    print(p.stdout)
    if p.returncode != 0:
        fail(f"analyze_perf_json.py --all exited {p.returncode}:\n{p.stderr[-1500:]}")
    if "Consistency (times_us == max over process rows, OOP): PASS" not in p.stdout:
        fail("its consistency line does not say PASS")
    named = [l for l in p.stdout.splitlines() if "slowest=process" in l]
    if not named or any(f"slowest=process {planted:2d} " not in l for l in named):
        fail(f"its straggler lines do not all name process {planted}:\n" + "\n".join(named))
    print(f"ok: analyze_perf_json.py --all read the export; {len(named)} sizes name process {planted}")


def parse():
    global ARGS
    ap = e2e_common.parser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--analyze", help="nccl-tests' tools/analyze_perf_json.py")
    ARGS = ap.parse_args()
    e2e_common.ARGS = ARGS
    os.makedirs(ARGS.workdir, exist_ok=True)
    return ARGS


def main():
    cores = e2e_common.CORES
    cases = {"iter_straggler": (case_iter_straggler, cores), "nccl_tests_json": (case_nccl_tests_json, cores)}
    # Not listed for --cmake: tests/e2e/CMakeLists.txt registers it only when given the script's path.
    if sys.argv[1:] != ["--cmake"]:
        cases["analyze_perf_json"] = (case_analyze_perf_json, cores)
    e2e_common.run_case("e2e_iter_timing_", {"TIMEOUT": 900, "LABELS": "e2e;cpu"}, cases, parse)


if __name__ == "__main__":
    main()
