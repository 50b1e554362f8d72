#!/usr/bin/env python3
"""End-to-end tests of train-step (docs/training.md) on the CPU backend under mpirun.

  layouts: 8 ranks as 4 test hosts of 2, `--quick --benchmarks train-step,alltoallv`: the dense preset at dp,
    fsdp, tp=2 and pp=2, the MoE preset at ep=4 and ep=8, measured and verified at every GPU count the
    layout divides and skipped with the reason at the others; each row's phases hold its layout's
    patterns and nothing else; alltoallv rows at uniform and zipf:1.2.
  strong: 4 ranks as 2 hosts, `--scaling strong` at dp and pp=2: each count runs the global batch of the layout's largest count
    (gradient accumulation), so tokens per step are the same at every count, and the report's strong series
    follows the same rule (derived here) as the weak ones.
  wrong: a planted wrong all_reduce value (the collective really returns it) makes the rows whose step
    all-reduces invalid, and those whose step does not stay ok.
  slow_nic (by hand, --case slow_nic; not in ctest: 16 ranks on 2 cores for 80 s, a timing verdict): 16
    ranks as 8 test hosts of 2, sequential tiling, the MoE preset at tp=2 and ep=4, h1's NICs (both rails)
    10x slow: the ep=4 group holding h1 at 4 GPUs is named, no single-node tp=2 row is, and nothing is
    named that does not hold h1. With 8 ranks as 4 hosts an EP layout has at most 2 groups at a count,
    and the outlier rule names nothing in a population under 3 (docs/fleet.md).
  bad_input: a layout that does not divide the launch, TP beyond a node, experts that do not divide
    over EP, a model that does not fit memory, a model file of the wrong shape, an unknown --scaling: one
    line, exit 2.
"""
import json
import math
import os
import re
import sys

import e2e_common
from e2e_common import fail

ARGS = None
HOSTS = "h0,h0,h1,h1,h2,h2,h3,h3"
COMMS = {"tp_comm", "fsdp_comm", "pp_comm", "ep_comm", "dp_comm"}


def load_valid(path):
    return e2e_common.load_valid(path, ARGS.schema, ARGS.gpuscale)


def run8(args, env=None):
    return e2e_common.mpirun(8, ["run", "--backend", "cpu"] + args, {"GPUSCALE_TEST_HOSTS": HOSTS, **(env or {})},
                             timeout=600)


def allowed(layout, n):
    """The GPU counts a layout runs on, from docs/training.md: tp, pp fixed; ep must divide dp x fsdp = n / (tp pp)."""
    fixed = {"tp=2": 2, "pp=2": 2}.get(layout, 1)
    ep = {"ep=4": 4, "ep=8": 8}.get(layout, 1)
    return n % fixed == 0 and (n // fixed) % ep == 0


def expected_patterns(layout, n):
    """The communication phases a layout has at n GPUs (docs/training.md): each dimension of more than one rank."""
    tp, pp = (2 if layout == "tp=2" else 1), (2 if layout == "pp=2" else 1)
    fsdp, dp = (n, 1) if layout == "fsdp" else (1, n // (tp * pp))
    ep = {"ep=4": 4, "ep=8": 8}.get(layout, 1)
    return {k for k, on in (("tp_comm", tp > 1), ("pp_comm", pp > 1), ("fsdp_comm", fsdp > 1), ("ep_comm", ep > 1),
                            ("dp_comm", dp > 1)) if on}


def case_layouts():
    path = e2e_common.out_path(ARGS.workdir, "train_layouts.json")
    p = run8(["--quick", "--benchmarks", "train-step,alltoallv", "-o", path])
    if p.returncode != 0:
        fail(f"exit {p.returncode}\n{p.stderr[-3000:]}")
    doc = load_valid(path)
    counts = doc["plan"]["gpu_counts"]
    rows = {(r["params"]["name"], r["params"]["layout"], r["gpu_count"]): r
            for r in doc["results"] if r["benchmark"] == "train-step"}
    want = [("llama3-8b", l) for l in ("dp", "fsdp", "tp=2", "pp=2")] + [("mixtral-8x7b", l) for l in ("ep=4", "ep=8")]
    for name, layout in want:
        for n in counts:
            r = rows.get((name, layout, n))
            if r is None:
                fail(f"no train-step row for {name} {layout} at {n} GPUs: {sorted(rows)}")
            if not allowed(layout, n):
                if r["status"] != "skipped" or "runs on multiples of" not in " ".join(r["errors"]):
                    fail(f"{name} {layout} at {n}: {r['status']} {r['errors']}, expected skipped")
                continue
            m = r["metrics"]
            if r["status"] != "ok" or m["wrong"] != 0 or r["aggregate"] is None or r["aggregate"] <= 0:
                fail(f"{name} {layout} at {n}: {r['status']} {r['errors']} value {r['aggregate']}")
            checked = r["ranks"]["metrics"]["checked"]  # one value when every rank's is the same
            if any(c <= 0 for c in (checked if isinstance(checked, list) else [checked])):
                fail(f"{name} {layout} at {n}: a rank checked nothing")
            phases = m["phase_us"]
            if phases["compute"] <= 0:
                fail(f"{name} {layout} at {n}: no compute time: {phases}")
            expect = expected_patterns(layout, n)
            seen = {k for k in COMMS if phases[k] > 0}
            if seen != expect:
                fail(f"{name} {layout} at {n}: communication in {sorted(seen)}, expected {sorted(expect)}: {phases}")
            if layout == "pp=2" and not phases["bubble"] > 0:
                fail(f"{name} pp=2 at {n}: no bubble: {phases}")
            tokens = m["tokens_per_step"]
            if abs(r["aggregate"] - tokens / (m["step_time_us"] * 1e-6)) > 1e-6 * r["aggregate"]:
                fail(f"{name} {layout} at {n}: tokens/s {r['aggregate']} is not tokens {tokens} / step {m['step_time_us']} us")
        print(f"ok: {name} {layout}: " + ", ".join(
            f"{n}: {rows[(name, layout, n)]['aggregate']:.0f} tokens/s" for n in counts if allowed(layout, n)))
    a2av = {(r["params"]["skew"], r["gpu_count"]) for r in doc["results"]
            if r["benchmark"] == "alltoallv" and r["status"] == "ok" and r["metrics"]["wrong"] == 0}
    if not all((s, n) in a2av for s in ("uniform", "zipf:1.2") for n in counts):
        fail(f"alltoallv rows: {sorted(a2av)}")
    check_report(path, doc)


def max_useful_oracle(points):
    """The max-useful-GPUs verdict of docs/training.md, derived here from the rows: [(n, tokens/s, step us,
    spread down, spread up)], ascending. Returns (kind, number): ("measured", n), ("projected", n), ("beyond",
    None), ("flat", None), ("undecided", None) or ("unfitted", None)."""
    n0, d0, u0 = points[0][0], points[0][3], points[0][4]
    eff = [(n, t / n / (points[0][1] / n0), d, u) for n, t, _, d, u in points]
    noisy = False
    for i in range(1, len(eff)):
        n, e, d, u = eff[i]
        if e < 0.8:
            high = e * (1 + u) / (1 - d0) if d0 < 1 else math.inf  # the repetition band's top
            if high < 0.8:
                return "measured", eff[i - 1][0]
            noisy = True
    if noisy:
        return "undecided", None
    if len(points) < 3:
        return "unfitted", None
    # GPU time per token c = n / (tokens/s) = a + b log2(n / n0), least squares on relative residuals
    # (weights 1 / c^2).
    xs = [math.log2(n / n0) for n, *_ in points]
    ys = [n / t for n, t, *_ in points]
    ws = [1 / (y * y) for y in ys]
    sw, sx, sy = sum(ws), sum(w * x for w, x in zip(ws, xs)), sum(w * y for w, y in zip(ws, ys))
    sxx, sxy = sum(w * x * x for w, x in zip(ws, xs)), sum(w * x * y for w, x, y in zip(ws, xs, ys))
    b = (sw * sxy - sx * sy) / (sw * sxx - sx * sx)
    a = (sy - b * sx) / sw
    rms = math.sqrt(sum(((a + b * x - y) / y) ** 2 for x, y in zip(xs, ys)) / len(ys))
    if rms > 0.25 or a <= 0:
        return "unfitted", None
    if b <= 0:
        return "flat", None
    limit = n0 * 2 ** min(a / (4 * b), 60)
    if limit > 2 ** 20:
        return "beyond", None
    n = n0
    while n * 2 <= limit * (1 + 1e-9):
        n *= 2
    return "projected", max(n, points[-1][0])


def check_report(path, doc):
    """The report's training section: per layout, its phases at every measured count (a stacked bar in HTML)
    and the max-useful-GPUs line, which agrees with the rule derived here from the JSON."""
    series = {}
    for r in doc["results"]:
        if r["benchmark"] == "train-step" and r["status"] == "ok":
            key = (r["params"]["name"], r["params"]["layout"], r["params"].get("scaling", "weak"))
            spread = r.get("spread") or {}
            series.setdefault(key, []).append((r["gpu_count"], r["aggregate"], r["metrics"]["step_time_us"],
                                               min(max(spread.get("down", 0), 0), 1), max(spread.get("up", 0), 0)))
    p = e2e_common.gs("report", path)
    if os.path.exists(path + ".html"):
        os.remove(path + ".html")  # an earlier run's
    h = e2e_common.gs("report", path, "--html", path + ".html")
    if p.returncode != 0 or h.returncode != 0:
        fail(f"report: exit {p.returncode} / --html {h.returncode}: {p.stderr} {h.stderr}")
    text = p.stdout[p.stdout.find("TRAINING STEP SCALING"):]
    with open(path + ".html") as f:
        html = f.read()
    charts = re.findall(r'<svg[^>]*data-chart="train-phases"[^>]*>.*?</svg>', html, re.S)
    if len(charts) != len(series):
        fail(f"{len(charts)} phase charts in the HTML report for {len(series)} train-step series")
    for (name, layout, scaling), pts in sorted(series.items()):
        pts.sort()
        block = re.search(rf"\n  {re.escape(name)} {re.escape(layout)} {scaling} \(.*?\n(.*?)\n  (?:PROJECTED )?max useful GPUs[^\n]*",
                          text, re.S)
        if not block:
            fail(f"report: no training section for {name} {layout}:\n{text[:3000]}")
        line = block.group(0).splitlines()[-1].strip()
        shown = [int(l.split()[0]) for l in block.group(1).splitlines() if re.match(r"\s+\d+\s", l)]
        if shown != [n for n, *_ in pts]:
            fail(f"report: {name} {layout} shows counts {shown}, the file has {[n for n, *_ in pts]}")
        kind, number = max_useful_oracle(pts)
        expect = {"measured": f"max useful GPUs {number} (measured", "projected": f"PROJECTED max useful GPUs {number}:",
                  "beyond": "PROJECTED max useful GPUs: beyond", "flat": "no limit in sight",
                  "unfitted": f"at least {pts[-1][0]} (measured)", "undecided": "max useful GPUs: undecided"}[kind]
        if expect not in line:
            fail(f"report: {name} {layout}: '{line}', expected '{expect}' (from {pts})")
        chart = next((c for c in charts if f">{name} {layout} {scaling}: step time by phase<" in c), None)
        if chart is None or len(re.findall(r'data-part="compute"', chart)) != len(pts):
            fail(f"report --html: {name} {layout}: no stacked bar with a compute part per count")
        print(f"ok: report {name} {layout} {scaling}: {line}")


def case_strong():
    path = e2e_common.out_path(ARGS.workdir, "train_strong.json")
    # 4 ranks as 2 hosts: the 1-GPU row accumulates the whole global batch, so 8 ranks cost twice the time
    # for the same check.
    p = e2e_common.mpirun(4, ["run", "--backend", "cpu", "--quick", "--benchmarks", "train-step", "--model", "llama3-8b",
                              "--layout", "dp;pp=2", "--scaling", "strong", "-o", path],
                          {"GPUSCALE_TEST_HOSTS": "h0,h0,h1,h1"}, timeout=600)
    if p.returncode != 0:
        fail(f"exit {p.returncode}\n{p.stderr[-3000:]}")
    doc = load_valid(path)
    counts = doc["plan"]["gpu_counts"]
    # The global batch: the data-parallel ranks of the largest count the layout runs at (4 for dp, 4 / pp = 2).
    for layout, global_dp in (("dp", max(counts)), ("pp=2", max(counts) // 2)):
        rows = [r for r in doc["results"] if r["benchmark"] == "train-step" and r["params"]["layout"] == layout]
        ok = [r for r in rows if r["status"] == "ok"]
        if sorted(r["gpu_count"] for r in ok) != [n for n in counts if allowed(layout, n)]:
            fail(f"strong {layout}: ok at {sorted(r['gpu_count'] for r in ok)}: {[(r['gpu_count'], r['errors']) for r in rows]}")
        for r in rows:
            if r["params"].get("scaling") != "strong" or r["params"].get("global_dp") != global_dp:
                fail(f"strong {layout} at {r['gpu_count']}: params {r['params']}")
        tokens = {r["metrics"]["tokens_per_step"] for r in ok}
        # At the largest count: one pass per data-parallel rank (x 2 pp micro-batches under a pipeline).
        m = ok[0]["params"]
        expect = global_dp * m["seq"] * m["micro_batch"] * (4 if layout == "pp=2" else 1)
        if tokens != {expect}:
            fail(f"strong {layout}: tokens per step {sorted(tokens)} across counts, expected {expect} at every count")
        print(f"ok: strong {layout}: {expect} tokens a step at " + ", ".join(
            f"{r['gpu_count']}: {r['aggregate']:.0f} tokens/s" for r in sorted(ok, key=lambda r: r["gpu_count"])))
    check_report(path, doc)


def case_wrong():
    path = e2e_common.out_path(ARGS.workdir, "train_wrong.json")
    p = run8(["--quick", "--benchmarks", "train-step", "--layout", "dp;tp=2", "--model", "llama3-8b", "-o", path],
             {"GPUSCALE_TEST_FAULT": "wrong:all_reduce"})
    if p.returncode != 1:
        fail(f"a wrong all_reduce value inside train-step exited {p.returncode}:\n{p.stderr[-2000:]}")
    doc = load_valid(path)
    for r in doc["results"]:
        reduces = r["gpu_count"] > 1  # dp all-reduces its gradients, tp its activations
        if r["status"] == "skipped":
            continue
        if reduces and (r["status"] != "invalid" or r["aggregate"] is not None):
            fail(f"{r['params']['layout']} at {r['gpu_count']}: {r['status']}, value {r['aggregate']}")
        if not reduces and r["status"] != "ok":
            fail(f"{r['params']['layout']} at 1 GPU (no all_reduce): {r['status']} {r['errors']}")
    print("ok: a wrong all_reduce makes every multi-GPU train-step row invalid, the 1-GPU row stays ok")


def case_slow_nic():
    path = e2e_common.out_path(ARGS.workdir, "train_slow_nic.json")
    hosts = ",".join(f"h{i // 2}" for i in range(16))
    p = e2e_common.mpirun(16, ["run", "--backend", "cpu", "--quick", "--benchmarks", "train-step", "--model", "mixtral-8x7b",
                               "--layout", "tp=2;ep=4", "--tiling", "sequential", "-o", path],
                          {"GPUSCALE_TEST_HOSTS": hosts, "GPUSCALE_TEST_FAULT": "slow-nic:h1:0:10,slow-nic:h1:1:10"},
                          timeout=900)
    if p.returncode != 0:
        fail(f"exit {p.returncode}\n{p.stderr[-3000:]}")
    named = load_valid(path)["analysis"]["outliers"]
    found = [(o["params"]["layout"], o["gpu_count"], o["hosts"]) for o in named]
    if not any(l == "ep=4" and n == 4 and "h1" in h for l, n, h in found):
        fail(f"the ep=4 group holding h1 at 4 GPUs is not named: {found}")
    if any(l == "tp=2" and n == 2 for l, n, h in found) or any("h1" not in h for l, n, h in found):
        fail(f"a single-node tp=2 group, or a group without h1, is named: {found}")
    print(f"ok: named {found}")


def one_line(p, needle):
    """Exit 2 and one error line of gpuscale's: refused when the plan is made, after the line naming the
    backend (as e2e_cpu_bad_input's plan cases); mpirun's own report of the exit is not ours."""
    lines = [l for l in p.stderr.splitlines() if l.startswith("gpuscale:") and "backend (" not in l]
    if p.returncode != 2 or len(lines) != 1 or needle not in lines[0] or p.stdout.strip():
        fail(f"exit {p.returncode}, lines {lines}: expected one line with {needle!r} and exit 2")
    print(f"ok: {lines[0]}")


def case_bad_input():
    out = e2e_common.out_path(ARGS.workdir, "train_bad.json")
    base = ["--benchmarks", "train-step", "--quick", "-o", out]
    one_line(run8(base + ["--layout", "tp=3"]), "does not divide the launch's 8 GPUs")
    one_line(run8(base + ["--layout", "tp=4"]), "spans more than a node (2 GPUs)")
    one_line(run8(base + ["--model", "mixtral-8x7b", "--layout", "ep=3"]), "8 experts do not divide over ep 3")
    one_line(run8(base + ["--model", "llama3-8b", "--layout", "ep=2"]), "dense")
    one_line(run8(["--benchmarks", "train-step", "--model", "llama3-70b", "--layout", "tp=2", "-o", out]),
             "does not fit")
    one_line(run8(base + ["--layout", "tp=2,tp=4"]), "given twice")
    model = os.path.join(ARGS.workdir, "model_bad.json")
    with open(model, "w") as f:
        json.dump({"layers": 2, "hidden": 64, "ffn": 128, "heads": 3, "seq": 16, "vocab": 100}, f)
    one_line(run8(base + ["--model", model]), "3 heads do not divide the hidden size 64")
    with open(model, "w") as f:
        json.dump([[1, 2], [3, 4]], f)
    one_line(run8(base + ["--model", model]), "a model is a JSON object")
    one_line(run8(base + ["--model", "gpt-9"]), "neither a preset")
    one_line(run8(base + ["--scaling", "weak,fixed"]), "invalid --scaling 'fixed'")


def parse():
    global ARGS
    ARGS = e2e_common.parse_args("--mpiexec")
    return ARGS


def main():
    cores = e2e_common.CORES
    cases = {
        "layouts": (case_layouts, cores),
        "strong": (case_strong, cores),
        "wrong": (case_wrong, cores),
        "bad_input": (case_bad_input, cores),
    }
    if sys.argv[1:] != ["--cmake"]:  # by hand only (the module's docstring says why)
        cases["slow_nic"] = (case_slow_nic, {})
    e2e_common.run_case("e2e_training_", {"TIMEOUT": 600, "LABELS": "e2e;training"}, cases, parse)


if __name__ == "__main__":
    main()
