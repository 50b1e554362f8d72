#!/usr/bin/env python3
"""End-to-end tests of the burn-in (`gpuscale run --duration`, docs/acceptance.md) on the CPU backend.

  throttle: 4 ranks as 2 test hosts, `--quick --duration 24s --window 3s --burn mix`, h1 throttled 3x after 6 s
    (GPUSCALE_TEST_FAULT=throttle-after:h1:6:3, time really spent in h1's GEMMs): 8 windows in time order,
    each with every rank's figure (its 20 slices) and checked; the drift per rank and for the fleet; and
    the `sustained` outliers are h1's two ranks and nothing else, as the rule (derived here from the rows,
    not from the program's verdict) says. With the fake NVML (telemetry:by-index): thermal slowdown on
    GPU 1 from window 4 (of 0-7) shows in those windows only and is the reason given for rank 3's
    outlier (none for rank 2's); GPU 0's energy counter reset makes window 2's energy unknown, the
    others' valid.
  kinds: 2 ranks, `--burn gemm,stream,all_reduce,mix`: the windows take the kinds in turn, every kind's
    work is checked, all_reduce has a busbw, mix its all_reduce's busbw as a metric.
  wrong: a planted wrong all_reduce value (the collective really returns it) makes the all_reduce and mix
    windows invalid and leaves gemm's ok: a wrong result is reported as wrong, not as a figure.
  flip_bit: 4 ranks as 2 hosts, `--burn gemm`, one bit of h1's second GPU's output flipped each window
    (GPUSCALE_TEST_FAULT=flip-bit:h1:1:1): that rank, and only it, disagrees with the other three every
    window, its windows are invalid (exit 1), and analysis.sdc names exactly its device; the others agree.
  killed: rank 0 SIGKILLed after 3 windows; `gpuscale seal` keeps every finished window.
  bad_input: below one window, beyond a week, fewer windows than kinds, an unknown kind, --burn or
    --window without --duration, --duration with other benchmarks, a burn benchmark without --duration:
    one line, exit 2.
  clean (by hand, --case clean; not in ctest: a timing verdict on a shared 2-core machine): three clean
    burn-ins of the issue's command (4 ranks as 2 hosts, --duration 2m --burn mix) name nothing.
"""
import json
import os
import signal
import statistics
import subprocess
import sys
import time

import e2e_common
from e2e_common import fail

ARGS = None
HOSTS4 = "h0,h0,h1,h1"


def load_valid(path):
    return e2e_common.load_valid(path, ARGS.schema, ARGS.gpuscale)


def run(np, args, env=None, hosts=HOSTS4):
    return e2e_common.mpirun(np, ["run", "--backend", "cpu"] + args, {"GPUSCALE_TEST_HOSTS": hosts, **(env or {})},
                             timeout=400)


def burn_rows(doc, benchmark=None):
    rows = [r for r in doc["results"] if r["benchmark"].startswith("burn.") and (benchmark is None or r["benchmark"] == benchmark)]
    return sorted(rows, key=lambda r: r["params"]["window"])


def oracle(doc, fraction=0.10):
    """The ranks the sustained rule names (docs/acceptance.md), derived from the rows: each rank's start
    and end are the medians of its first and last quarter of windows; it is named when it fell more than
    `fraction` beyond the fleet's own fall with its end windows' median intervals all below its start
    windows', or when each of its last windows is more than `fraction` below that window's median over
    the ranks, interval included (3 or more ranks)."""
    named = set()
    for bench in sorted({r["benchmark"] for r in burn_rows(doc)} - {"burn.all_reduce"}):
        rows = burn_rows(doc, bench)
        n = len(rows)
        q = max(1, n // 4)
        cells = {}  # rank -> [(value, lo, hi) or None per window]
        for w, r in enumerate(rows):
            for e in e2e_common.rank_entries(r):
                ok = r["status"] == "ok" and e.get("valid", True) and e.get("value")
                stats = e.get("stats", {})  # --rank-stats: the interval of the median of its slices
                lo = stats.get("lo", e["value"]) if ok else None
                hi = stats.get("hi", e["value"]) if ok else None
                cells.setdefault(e["rank"], [None] * n)[w] = (e["value"], lo, hi) if ok else None
        fleet = []
        for w in range(n):
            v = [c[w][0] for c in cells.values() if c[w]]
            fleet.append(statistics.median(v) if v else None)
        med = lambda xs: statistics.median(xs) if xs else None  # noqa: E731
        fs, fe = med([x for x in fleet[:q] if x]), med([x for x in fleet[n - q:] if x])
        ratio = fe / fs if len(cells) >= 3 and fs and fe else 1.0
        for rank, c in cells.items():
            start, end = med([x[0] for x in c[:q] if x]), med([x[0] for x in c[n - q:] if x])
            if n < 2 or start is None or end is None:
                continue
            self_fall = end < (1 - fraction) * ratio * start and all(
                a[2] < b[1] for a in c[n - q:] if a for b in c[:q] if b)
            fleet_fall = len(cells) >= 3 and all(
                c[w] and fleet[w] and c[w][0] < (1 - fraction) * fleet[w] and c[w][2] < (1 - fraction) * fleet[w]
                for w in range(n - q, n))
            if self_fall or fleet_fall:
                named.add(rank)
    return named


def sustained(doc):
    return [o for o in doc["analysis"]["outliers"] if o["kind"] == "sustained"]


def check_windows(doc, kinds, window_s, np):
    rows = burn_rows(doc)
    if not rows:
        fail("no burn rows")
    for i, r in enumerate(rows):
        p = r["params"]
        if p["window"] != i or p["kind"] != kinds[i % len(kinds)] or p["window_s"] != window_s:
            fail(f"window {i}: {p}, expected kind {kinds[i % len(kinds)]} of {window_s} s")
        if abs(p["start_s"] - i * window_s) > 1e-9 or r["gpu_count"] != np:
            fail(f"window {i}: start {p['start_s']}, gpu_count {r['gpu_count']}")
        if not 1 <= r["spread"]["reps"] <= 20:
            fail(f"window {i}: {r['spread']['reps']} repetitions, expected its slices: 1 to 20")
        entries = e2e_common.rank_entries(r)
        if sorted(e["rank"] for e in entries) != list(range(np)):
            fail(f"window {i}: ranks {[e['rank'] for e in entries]}")
        for e in entries:
            m = e["metrics"]
            if not (window_s <= m["window_wall_s"] < window_s + 10):
                fail(f"window {i} rank {e['rank']}: wall {m['window_wall_s']} s for a {window_s} s window")
            if not m.get("window_start_utc", "").endswith("Z"):
                fail(f"window {i}: no start time: {m}")
    return rows


def case_throttle():
    path = e2e_common.out_path(ARGS.workdir, "burn_throttle.json")
    # The fake NVML watches each rank's "GPU" (by local rank): GPU 1 (ranks 1 and 3) reports thermal
    # slowdown from window 4 on, GPU 0's energy counter (ranks 0 and 2) restarts at the end of window 2.
    # No sample between a window's two readings (--telemetry-interval above the window), so the fake's
    # phases fall on known windows.
    p = run(4, ["--quick", "--duration", "24s", "--window", "3s", "--burn", "mix", "--rank-stats",
                "--telemetry-interval", "60s", "-o", path],
            {"GPUSCALE_TEST_FAULT": "throttle-after:h1:6:3,telemetry:by-index", "GPUSCALE_NVML_LIBRARY": ARGS.fake_lib,
             "GPUSCALE_FAKE_NVML_SCENARIO": os.path.join(ARGS.scenarios, "burn_thermal_reset.json")})
    if p.returncode != 0:
        fail(f"exit {p.returncode}\n{p.stderr[-3000:]}")
    doc = load_valid(path)
    rows = check_windows(doc, ["mix"], 3.0, 4)
    if len(rows) != 8:
        fail(f"{len(rows)} windows, expected 8")
    for r in rows:
        if r["status"] != "ok":
            fail(f"window {r['params']['window']}: {r['status']} {r['errors']}")
        for e in e2e_common.rank_entries(r):
            if e["metrics"]["wrong"] != 0 or e["metrics"]["all_reduce_wrong"] != 0 or e["metrics"]["all_reduce_busbw"] <= 0:
                fail(f"window {r['params']['window']} rank {e['rank']}: {e['metrics']}")
    burn = doc["analysis"]["burn"]
    if [b["benchmark"] for b in burn] != ["burn.mix"] or len(burn[0]["ranks"]) != 4 or burn[0]["windows"] != 8:
        fail(f"analysis.burn: {json.dumps(burn)[:800]}")
    drift = {x["rank"]: x["drift"] for x in burn[0]["ranks"]}
    if not (drift[2] < -0.4 and drift[3] < -0.4):
        fail(f"h1's ranks should have fallen by about two thirds: {drift}")
    want = oracle(doc)
    got = {o["ranks"][0] for o in sustained(doc)}
    if want != {2, 3} or got != want:
        fail(f"sustained outliers: the program named {sorted(got)}, the rule derived here {sorted(want)}, "
             f"the fault is on ranks 2 and 3")
    if any(o["hosts"] != ["h1"] for o in sustained(doc)):
        fail(f"sustained outliers not on h1: {sustained(doc)}")
    if doc["analysis"]["outlier_hosts"] != ["h1"]:
        fail(f"suspect hosts {doc['analysis']['outlier_hosts']}, expected h1")
    text = p.stdout + p.stderr
    if "burn-in drift" not in text or "suspect hosts: h1" not in text or text.count("sustained h1") != 2:
        fail(f"the summary does not show the drift and the outliers:\n{p.stdout[-2000:]}")
    check_throttle_windows(doc, rows, path)
    print(f"ok: drift {drift}, named {sorted(got)}")


def check_throttle_windows(doc, rows, path):
    """The fake NVML's events, each on its window (numbered from 0): thermal slowdown on GPU 1's ranks
    from window 4 (their telemetry, and the sustained outlier's reasons), the energy reset in window 2
    of GPU 0's."""
    for r in rows:
        w = r["params"]["window"]
        for e in e2e_common.rank_entries(r):
            t, m = e["metrics"]["telemetry"], e["metrics"]
            hot = e["rank"] in (1, 3) and w >= 4
            if t["throttled"] != hot or (hot and t["throttle_reasons"] != ["HW_THERMAL"]):
                fail(f"window {w} rank {e['rank']}: throttled {t['throttled']}, expected {hot}: {t}")
            reset = e["rank"] in (0, 2) and w == 2
            if ("energy_j" not in m) != reset:
                fail(f"window {w} rank {e['rank']}: energy {m.get('energy_j')}, reset expected: {reset}")
            if not reset and not (m["energy_j"] > 0 and 250 <= m["avg_power_w"] <= 500):
                fail(f"window {w} rank {e['rank']}: energy {m['energy_j']} J, {m['avg_power_w']} W")
        m = r["metrics"]
        if w == 2 and "went backwards" not in m.get("energy_invalid", ""):
            fail(f"window 2: the reset's reason is not the row's: {m}")
        if (m["energy_j"] is None) != (w == 2) or (w != 2 and m["work_per_j_unit"] != "TFLOP/J"):
            fail(f"window {w}: row energy {m.get('energy_j')} {m.get('energy_invalid')} {m.get('work_per_j_unit')}")
    # The capacity numbers: h1's GPUs fell, so the sustained figure is below the boost; the fake draws
    # 350 W per GPU, two GPUs per node (the counter's reset was in window 2, not in the last quarter).
    cap = doc["analysis"]["capacity"]
    if len(cap) != 1 or cap[0]["gpus"] != 4 or cap[0]["nodes"] != 2 or cap[0]["per"] != "gpu" \
            or not cap[0]["sustained"] < cap[0]["boost"] or not 300 <= cap[0]["power_per_gpu_w"] <= 400 \
            or not 600 <= cap[0]["power_per_node_w"]["max"] <= 800 or cap[0]["work_per_j_unit"] != "TFLOP/J":
        fail(f"analysis.capacity: {cap}")
    md = e2e_common.run([ARGS.gpuscale, "report", "--markdown", "-", path]).stdout
    if "### Burn-in: capacity" not in md or "| burn.mix |" not in md:
        fail(f"the Markdown report has no burn-in section:\n{md[-2000:]}")
    reasons = {o["ranks"][0]: o.get("throttle_reasons") for o in sustained(doc)}
    if reasons.get(3) != ["HW_THERMAL"] or reasons.get(2):
        fail(f"throttle reasons of the sustained outliers {reasons}: rank 3's GPU reported HW_THERMAL, rank 2's none")


def case_kinds():
    path = e2e_common.out_path(ARGS.workdir, "burn_kinds.json")
    kinds = ["gemm", "stream", "all_reduce", "mix"]
    p = run(2, ["--quick", "--duration", "8s", "--window", "2s", "--burn", ",".join(kinds), "-o", path], hosts="h0,h1")
    if p.returncode != 0:
        fail(f"exit {p.returncode}\n{p.stderr[-3000:]}")
    doc = load_valid(path)
    rows = check_windows(doc, kinds, 2.0, 2)
    units = {"burn.gemm": "TFLOP/s", "burn.stream": "GB/s", "burn.all_reduce": "GB/s", "burn.mix": "TFLOP/s"}
    for r in rows:
        if r["status"] != "ok" or r["unit"] != units[r["benchmark"]] or not r["aggregate"] > 0:
            fail(f"{r['benchmark']}: {r['status']} {r['unit']} {r['aggregate']} {r['errors']}")
        m = e2e_common.rank_entries(r)[0]["metrics"]
        checks = {"burn.gemm": ("wrong",), "burn.stream": ("wrong",), "burn.all_reduce": ("all_reduce_wrong",),
                  "burn.mix": ("wrong", "all_reduce_wrong")}[r["benchmark"]]
        if any(m.get(c) != 0 for c in checks) or ("checked" in checks and not m.get("checked")):
            fail(f"{r['benchmark']}: its checks {checks} in {m}")
        if r["benchmark"] in ("burn.gemm", "burn.mix") and any(
                e["metrics"].get("sdc") != "agrees" for e in e2e_common.rank_entries(r)):
            fail(f"{r['benchmark']}: the ranks' outputs do not agree bit for bit: "
                 f"{[e['metrics'].get('sdc') for e in e2e_common.rank_entries(r)]}")
        if r["benchmark"] == "burn.mix" and not m["all_reduce_busbw"] > 0:
            fail(f"mix without its all_reduce's busbw: {m}")
    if sorted(b["benchmark"] for b in doc["analysis"]["burn"]) != sorted(units):
        fail(f"analysis.burn: {doc['analysis']['burn']}")
    print("ok: 4 kinds in turn, each checked")


def case_wrong():
    path = e2e_common.out_path(ARGS.workdir, "burn_wrong.json")
    p = run(2, ["--quick", "--duration", "6s", "--window", "2s", "--burn", "gemm,all_reduce,mix", "-o", path],
            {"GPUSCALE_TEST_FAULT": "wrong:all_reduce"}, hosts="h0,h1")
    if p.returncode != 1:
        fail(f"exit {p.returncode} with a wrong all_reduce, expected 1 (an invalid result)\n{p.stderr[-2000:]}")
    doc = load_valid(path)
    status = {r["benchmark"]: r["status"] for r in burn_rows(doc)}
    if status != {"burn.gemm": "ok", "burn.all_reduce": "invalid", "burn.mix": "invalid"}:
        fail(f"statuses {status}")
    for r in burn_rows(doc):
        if r["status"] == "invalid" and "wrong all_reduce values" not in " ".join(r["errors"]):
            fail(f"{r['benchmark']}: {r['errors']}")
    print(f"ok: {status}")


def case_flip_bit():
    path = e2e_common.out_path(ARGS.workdir, "burn_flip.json")
    p = run(4, ["--quick", "--duration", "6s", "--window", "2s", "--burn", "gemm", "-o", path],
            {"GPUSCALE_TEST_FAULT": "flip-bit:h1:1:1"})
    if p.returncode != 1:
        fail(f"exit {p.returncode} with a corrupted output, expected 1\n{p.stderr[-2000:]}")
    doc = load_valid(path)
    rows = burn_rows(doc)
    if len(rows) != 3:
        fail(f"{len(rows)} windows, expected 3")
    for r in rows:
        sdc = {e["rank"]: e["metrics"].get("sdc") for e in e2e_common.rank_entries(r)}
        if sdc != {0: "agrees", 1: "agrees", 2: "agrees", 3: "disagrees"} or r["status"] != "invalid":
            fail(f"window {r['params']['window']}: {r['status']}, sdc {sdc}")
        bad = [e for e in e2e_common.rank_entries(r) if e["rank"] == 3][0]
        if "silent data corruption" not in bad["error"] or bad["metrics"]["sdc_agreeing"] != 3:
            fail(f"rank 3's window: {bad['error']} {bad['metrics']}")
        # Narrowed to one element inside the first differing block; its place in C (n x n, column-major).
        m, n = bad["metrics"], r["params"]["n"]
        lo, hi = m["sdc_elements"]
        if not lo <= m["sdc_element"] < hi or m["sdc_at"] != [m["sdc_element"] % n, m["sdc_element"] // n] \
                or f"first at element {m['sdc_element']} (C[{m['sdc_at'][0]},{m['sdc_at'][1]}]" not in bad["error"]:
            fail(f"rank 3's first differing element: {m} {bad['error']}")
    named = {(e["rank"], e["host"], e["local_rank"]) for e in doc["analysis"]["sdc"]}
    if named != {(3, "h1", 1)} or len(doc["analysis"]["sdc"]) != 3 or doc["analysis"]["outlier_hosts"] != ["h1"]:
        fail(f"analysis.sdc {doc['analysis']['sdc']}, suspects {doc['analysis']['outlier_hosts']}")
    if any("element" not in e or "at" not in e for e in doc["analysis"]["sdc"]):
        fail(f"analysis.sdc without the first differing element: {doc['analysis']['sdc']}")
    if "silent data corruption: rank 3 (h1, device 0, local rank 1)" not in p.stdout + p.stderr:
        fail(f"the summary does not name the corruption:\n{p.stdout[-1500:]}")
    print("ok: rank 3 (h1, GPU 1) named in 3 of 3 windows, no other")


def case_killed():
    path = e2e_common.out_path(ARGS.workdir, "burn_killed.json")
    cmd = [ARGS.mpiexec, "--oversubscribe", "-np", "2", ARGS.gpuscale, "run", "--backend", "cpu", "--quick", "--duration", "60s",
           "--window", "2s", "--burn", "gemm", "-o", path]
    env = {**os.environ, "GPUSCALE_TEST_HOSTS": "h0,h1"}
    print("+", " ".join(cmd), flush=True)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + 120
    while len(e2e_common.journal_rows(path)) < 3:
        if p.poll() is not None:
            fail(f"the burn-in ended before 3 windows: {p.communicate()}")
        if time.time() > deadline:
            p.kill()
            fail("3 windows not journalled within 120 s")
        time.sleep(0.05)
    os.kill(e2e_common.read_doc(path)["ranks"][0]["pid"], signal.SIGKILL)
    try:
        p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("the job did not end within 120 s of rank 0's kill")
    before = e2e_common.journal_rows(path)
    r = e2e_common.gs("seal", path)
    if r.returncode != 0:
        fail(f"seal: exit {r.returncode}: {r.stdout} {r.stderr}")
    doc = load_valid(path)
    windows = [x["params"]["window"] for x in burn_rows(doc)]
    if len(windows) < 3 or windows != list(range(len(windows))) or len(windows) != len(before) or len(windows) >= 30:
        fail(f"sealed windows {windows}, journal held {len(before)}")
    if doc["summary"]["complete"]:
        fail("a killed burn-in sealed as complete")
    print(f"ok: {len(windows)} finished windows kept")


def case_bad_input():
    out = os.path.join(ARGS.workdir, "burn_bad.json")

    def one_line(args, text):
        """Exit 2 and one error line of gpuscale's (the line naming the backend aside; mpirun's own
        report of the exit is not ours)."""
        p = e2e_common.gs("run", "--backend", "cpu", *args, "-o", out)  # one process: no launcher needed
        lines = [l for l in p.stderr.splitlines() if l.startswith("gpuscale:") and "backend (" not in l]
        if p.returncode != 2 or len(lines) != 1 or text not in lines[0]:
            fail(f"{args}: exit {p.returncode}, lines {lines}: expected 2 and one line with {text!r}")
        if os.path.exists(out):
            fail(f"{args}: a refused run left {out}")

    one_line(["--duration", "5s"], "--duration 5s is below one --window of 10s")
    one_line(["--duration", "8d"], "beyond a week")
    one_line(["--duration", "1m", "--window", "2m"], "below one --window of 2m")
    one_line(["--duration", "10s", "--window", "5s", "--burn", "gemm,stream,mix"], "fewer than the 3 --burn kinds")
    one_line(["--duration", "1m", "--burn", "gpu-fryer"], "unknown --burn kind 'gpu-fryer'")
    one_line(["--duration", "1m", "--burn", "gemm,gemm"], "--burn names gemm twice")
    one_line(["--duration", "0"], "invalid --duration '0'")
    one_line(["--burn", "gemm"], "--burn shapes a burn-in: give --duration too")
    one_line(["--window", "5s"], "--window shapes a burn-in: give --duration too")
    one_line(["--benchmarks", "stream", "--duration", "1m"], "leave out --benchmarks stream")
    one_line(["--benchmarks", "burn"], "burn.gemm is a burn-in window: run it with --duration")


def case_clean():
    for i in range(3):
        path = e2e_common.out_path(ARGS.workdir, f"burn_clean{i}.json")
        p = run(4, ["--duration", "2m", "--burn", "mix", "--rank-stats", "-o", path])
        if p.returncode != 0:
            fail(f"exit {p.returncode}\n{p.stderr[-3000:]}")
        doc = load_valid(path)
        got = {o["ranks"][0] for o in sustained(doc)}
        drift = {x["rank"]: round(x["drift"], 3) for x in doc["analysis"]["burn"][0]["ranks"]}
        print(f"run {i}: drift {drift}, fleet {doc['analysis']['burn'][0]['fleet']['drift']:.3f}, named {sorted(got)}, "
              f"rule here {sorted(oracle(doc))}")
        if got or oracle(doc):
            fail(f"clean run {i} named {sorted(got)}")


def parse():
    global ARGS
    ARGS = e2e_common.parse_args("--mpiexec", "--fake-lib", "--scenarios")
    return ARGS


def main():
    cores = e2e_common.CORES
    cases = {
        "throttle": (case_throttle, cores),
        "kinds": (case_kinds, cores),
        "wrong": (case_wrong, cores),
        "flip_bit": (case_flip_bit, cores),
        "killed": (case_killed, cores),
        "bad_input": (case_bad_input, {}),
    }
    if sys.argv[1:] != ["--cmake"]:  # by hand only (the module's docstring says why)
        cases["clean"] = (case_clean, {})
    e2e_common.run_case("e2e_burn_", {"TIMEOUT": 400, "LABELS": "e2e;burn"}, cases, parse)


if __name__ == "__main__":
    main()
