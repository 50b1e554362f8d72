#!/usr/bin/env python3
"""End-to-end tests of `gpuscale plan` (docs/capacity.md) on a file the CPU backend measured.

  plan: 4 ranks measure train-step (llama3-8b, --quick, layout dp) at 1, 2 and 4 ranks and the
    checkpoint storage benchmarks; `gpuscale plan --tokens 1T --ckpt-every 30m` is checked against an
    oracle written here from the rows alone: tokens/s at the measured counts, the scaling model
    GPU-us per token = a + b log2(n/n0) fitted by weighted least squares and its refusal rule (3 counts,
    25% RMS), counts to 4x the largest measured, the checkpoint's bytes from the shapes (12 bytes per
    fp32 weight), its stall at the best checkpoint.write row of the largest rank count not above the count,
    the time to train with its stalls. Text, Markdown and HTML carry the same table; the same file through
    a history store (`gpuscale history add`, `plan --history`) gives the same figures.
  bad_input: a model the file lacks, a file without train-step rows, a bad --tokens, --ckpt-every or
    --gpus, a deadline no count meets, a missing file: one line, exit 2, no output file written.
"""
import json
import math
import os
import shutil

import e2e_common
from e2e_common import fail

ARGS = None


def measure(name, benchmarks, extra=()):
    path = e2e_common.out_path(ARGS.workdir, name)
    args = ["run", "--backend", "cpu", "--quick", "--benchmarks", benchmarks, "-o", path] + list(extra)
    p = e2e_common.mpirun(4, args, timeout=400)
    if p.returncode != 0:
        fail(f"the run for the plan: exit {p.returncode}\n{p.stderr[-3000:]}")
    return path


def plan(*args, expect=0):
    p = e2e_common.gs("plan", *args)
    if p.returncode != expect:
        fail(f"plan {args}: exit {p.returncode}, expected {expect}\n{p.stderr[-2000:]}")
    return p


def hand_params(m):
    kv = m["kv_heads"] * (m["hidden"] // m["heads"])
    layer = 2 * m["hidden"] ** 2 + 2 * m["hidden"] * kv + 3 * m["hidden"] * m["ffn"]
    return m["layers"] * layer + 2 * m["hidden"] * m["vocab"]


def fit(points):
    """a, b, rms of GPU-us per token = a + b log2(n/n0), weights 1/y^2; None when the rule refuses it."""
    n0 = points[0][0]
    xs = [math.log2(n / n0) for n, _ in points]
    ys = [n * 1e6 / tok for n, tok in points]
    ws = [1 / y ** 2 for y in ys]
    sw, sx, sy = sum(ws), sum(w * x for w, x in zip(ws, xs)), sum(w * y for w, y in zip(ws, ys))
    sxx = sum(w * x * x for w, x in zip(ws, xs))
    sxy = sum(w * x * y for w, x, y in zip(ws, xs, ys))
    b = (sw * sxy - sx * sy) / (sw * sxx - sx * sx)
    a = (sy - b * sx) / sw
    rms = math.sqrt(sum(((a + b * x) - y) ** 2 / y ** 2 for x, y in zip(xs, ys)) / len(ys))
    if len(points) < 3 or rms > 0.25 or a <= 0:
        return None
    return a, b, n0


def close(got, want, what, rel=1e-6):
    if not abs(got - want) <= rel * abs(want) + 1e-12:
        fail(f"{what}: plan {got}, oracle {want}")


def case_plan():
    d = os.path.join(ARGS.workdir, "plan_ckpt")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    path = measure("plan.json", "train-step,storage",
                   ["--model", "llama3-8b", "--layout", "dp", "--ckpt-dir", d, "--ckpt-size", "64M"])
    doc = e2e_common.load_valid(path, ARGS.schema, ARGS.gpuscale)
    steps = sorted(((r["gpu_count"], r["aggregate"]) for r in doc["results"]
                    if r["benchmark"] == "train-step" and r["status"] == "ok"))
    if [n for n, _ in steps] != [1, 2, 4]:
        fail(f"train-step rows at {[n for n, _ in steps]}, expected 1, 2, 4")
    model = next(r["params"] for r in doc["results"] if r["benchmark"] == "train-step")
    ckpt_bytes = hand_params(model) * 12  # fp32 on the CPU backend: weights, Adam's m and v
    best = {}
    for r in doc["results"]:
        if r["benchmark"] == "checkpoint.write" and r["status"] == "ok":
            best[r["gpu_count"]] = max(best.get(r["gpu_count"], 0), r["metrics"]["checkpoint_gb_s"])
    tokens, every = 1e12, 1800.0
    out = os.path.join(ARGS.workdir, "plan_out")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    plan(path, "--preset", "llama3-8b", "--tokens", "1T", "--ckpt-every", "30m", "--json", f"{out}/plan.json",
         "--markdown", f"{out}/plan.md", "--html", f"{out}/plan.html")
    with open(f"{out}/plan.json") as f:
        got = json.load(f)
    close(got["checkpoint"]["bytes"], ckpt_bytes, "checkpoint bytes")
    close(got["checkpoint"]["needed_gb_s"], ckpt_bytes / (0.05 * every) / 1e9, "the write bandwidth needed")
    series = got["series"]
    if len(series) != 1 or series[0]["layout"] != "dp":
        fail(f"series: {[(s['layout'], s['scaling']) for s in series]}")
    model_fit = fit(steps)
    want_counts = [1, 2, 4] + ([8, 16] if model_fit else [])
    counts = series[0]["counts"]
    if [c["gpus"] for c in counts] != want_counts:
        fail(f"planned counts {[c['gpus'] for c in counts]}, the oracle's {want_counts} (fit {model_fit})")
    measured = dict(steps)
    for c in counts:
        n = c["gpus"]
        if n in measured:
            tok = measured[n]
            if c["source"] != "measured":
                fail(f"{n}: {c['source']}")
        else:
            a, b, n0 = model_fit
            tok = n * 1e6 / (a + b * math.log2(n / n0))
            if c["source"] != "projected":
                fail(f"{n}: {c['source']}")
        close(c["tokens_per_s"], tok, f"tokens/s at {n}", 1e-6)
        k = max([r for r in best if r <= n], default=min(best))
        stall = ckpt_bytes / (best[k] * 1e9)
        close(c["ckpt_stall_s"], stall, f"checkpoint stall at {n}")
        train = tokens / tok
        close(c["train_s"], train + math.floor(train / every) * stall, f"time to train at {n}", 1e-6)
        if c["power_w"] is not None:
            fail(f"a power with no energy counter: {c}")
    # The same plan from a history store holding the file: the same figures, bottlenecks included (the
    # store keeps each row's phase times and node count).
    db = os.path.join(ARGS.workdir, "plan_history.db")
    if os.path.exists(db):
        os.remove(db)
    p = e2e_common.gs("history", "add", "--store", f"sqlite://{db}", path)
    if p.returncode != 0:
        fail(f"history add: exit {p.returncode}\n{p.stderr}")
    stored = json.loads(plan("--history", f"sqlite://{db}", "--preset", "llama3-8b", "--tokens", "1T", "--ckpt-every", "30m",
                             "--json", "-").stdout)
    for a, b in zip(stored["series"][0]["counts"], counts):
        for k in ("gpus", "source", "tokens_per_s", "train_s", "ckpt_stall_s", "nodes", "bottleneck", "bottleneck_why"):
            if a[k] != b[k] and not (isinstance(a[k], float) and abs(a[k] - b[k]) <= 1e-9 * abs(b[k])):
                fail(f"from the history, {k} at {b['gpus']}: {a[k]}, from the file {b[k]}")
        if a["bottleneck"] == "unknown":
            fail(f"from the history, a bottleneck 'unknown' (no phase times): {a}")
    text = plan(path, "--preset", "llama3-8b", "--tokens", "1T", "--ckpt-every", "30m").stdout
    for needle in ["SHRUNK", "fit error", "not planned beyond", "first bottleneck", "answer:"] + (["PROJECTED"] if model_fit else []):
        if needle not in text:
            fail(f"the text lacks '{needle}':\n{text}")
    md, html = open(f"{out}/plan.md").read(), open(f"{out}/plan.html").read()
    for n in want_counts:
        if f"| {n} |" not in md or f"<td>{n}</td>" not in html:
            fail(f"{n} GPUs missing from the Markdown or the HTML")
    print(f"ok: {len(counts)} counts ({'fitted' if model_fit else 'model refused'}) match the oracle")


def case_bad_input():
    path = measure("plan_bad.json", "train-step", ["--model", "llama3-8b", "--layout", "dp"])
    d = os.path.join(ARGS.workdir, "plan_bad_ckpt")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    storage_only = measure("plan_storage.json", "storage", ["--ckpt-dir", d, "--ckpt-size", "4M"])
    out = os.path.join(ARGS.workdir, "plan_bad_out.json")
    cases = [([path, "--preset", "mixtral-8x7b", "--tokens", "1T"], "no train-step rows of mixtral-8x7b"),
             ([storage_only, "--preset", "llama3-8b", "--tokens", "1T"], "it has no train-step rows"),
             ([path, "--preset", "llama3-8b", "--tokens", "lots"], "invalid --tokens"),
             ([path, "--preset", "llama3-8b", "--tokens", "1T", "--ckpt-every", "0"], "invalid --ckpt-every"),
             ([path, "--preset", "llama3-8b", "--tokens", "1T", "--deadline", "1s"], "no planned GPU count trains"),
             ([path, "--preset", "llama3-8b", "--tokens", "1T", "--gpus", "0"], "invalid --gpus 0"),
             ([os.path.join(ARGS.workdir, "no-such.json"), "--preset", "llama3-8b", "--tokens", "1T"], "no-such.json")]
    for args, needle in cases:
        if os.path.exists(out):
            os.remove(out)
        p = e2e_common.gs("plan", *args, "--json", out)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        if p.returncode != 2 or len(lines) != 1 or needle not in lines[0]:
            fail(f"{args}: exit {p.returncode}, expected 2 and one line with '{needle}':\n{p.stderr[-1500:]}")
        if os.path.exists(out):
            fail(f"{args}: the output was written")
    print(f"ok: {len(cases)} refusals, one line each, exit 2, nothing written")


def parse():
    global ARGS
    ARGS = e2e_common.parse_args("--mpiexec")
    return ARGS


def main():
    cores = e2e_common.CORES
    cases = {"plan": (case_plan, cores), "bad_input": (case_bad_input, cores)}
    e2e_common.run_case("e2e_plan_", {"TIMEOUT": 600, "LABELS": "e2e;cpu"}, cases, parse)


if __name__ == "__main__":
    main()
