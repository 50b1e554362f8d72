#!/usr/bin/env python3
"""Writes the synthetic result files the analysis tests read (deterministic: rerun to regenerate), as
version 2 (through tests/e2e/result_rows.py).

synthetic-a.json  cluster "alpha": 2 hosts x 2 H100s. stream.triad with one slow GPU (rank 3, 15% below
                  the median at 4 GPUs), gemm with peaks, all_reduce and all_gather generated from known
                  alpha-beta models (intra-node 2 GPUs, inter-node 4 GPUs), dp-step rows generated from the
                  dp-step model, and one invalid row (stream.copy at 4 GPUs).
synthetic-b.json  cluster "beta": the same points on A100s (another device model), some slower.
hostile.json      hostile strings (markup, quotes, commas, newlines, escape sequences) in every string field.
Every rank's repetitions spread +-2% around its median (noise bands compare can rely on).
"""
import copy
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "e2e"))
import result_rows  # noqa: E402  (the one module for result files)
SIZES = [1 << p for p in range(10, 25, 2)]  # 1K .. 16M
MODELS = {  # (alpha us per step, beta GB/s) per topology level
    "intra-node": (5.0, 150.0),
    "inter-node": (12.0, 40.0),
}
STEPS = {"all_reduce": lambda n: 2 * (n - 1), "all_gather": lambda n: n - 1}
FACTOR = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n}


def stats(v, spread=0.02, n=5):
    return {"n": n, "median": v, "min": v * (1 - spread), "max": v * (1 + spread), "mean": v, "stddev": v * spread / 2}


def rank_value(rank, host, dev, v, metrics=None):
    return {"rank": rank, "host": host, "device_index": dev, "value": v, "stats": stats(v), "valid": True, "error": "",
            "metrics": metrics or {}}


def topology(k):
    return "single" if k == 1 else ("intra-node" if k <= 2 else "inter-node")


def row(benchmark, scope, params, k, unit, ranks, aggregate, eff, peak, frac, metrics=None, status="ok", errors=None):
    return {"benchmark": benchmark, "scope": scope, "params": params, "gpu_count": k, "nodes": 1 if k <= 2 else 2,
            "topology": topology(k), "unit": unit, "status": status, "ranks": ranks, "aggregate": aggregate,
            "scaling_efficiency": eff, "efficiency_basis": "synthetic", "expected_peak": peak,
            "fraction_of_peak": frac, "peak_source": "synthetic peaks" if peak else "unknown",
            "metrics": metrics or {}, "errors": errors or []}


def doc(cluster, gpu, hosts, rows):
    ranks = []
    for r in range(4):
        host = hosts[r // 2]
        ranks.append({"rank": r, "host": host, "local_rank": r % 2,
                      "device": {"backend": "cuda", "name": gpu, "index": r % 2, "memory_bytes": 85899345920,
                                 "free_memory_bytes": 84000000000,
                                 "details": {"uuid": f"GPU-{cluster}-{r:04d}-0000-0000-000000000000",
                                             "pci_bus_id": f"0000:{0x18 + r % 2:02X}:00.0"}}})
    counts = {"rows": len(rows), "ok": 0, "invalid": 0, "failed": 0, "skipped": 0}
    for r in rows:
        counts[r["status"]] += 1
        # Built as per-rank entries, written as version 2 does (columns, with the per-rank statistics
        # of --rank-stats, and the row's spread from them; figures in full, not rounded).
        result_rows.put_rank_entries(r, r["ranks"])
    return {
        "schema": "gpuscale.result", "schema_version": 2,
        "tool": {"name": "gpuscale", "version": "0.1.0", "commit": "synthetic"},
        "created_utc": "2026-01-02T03:04:05Z", "finished_utc": "2026-01-02T03:14:05Z",
        "cluster": {"name": cluster, "source": "--cluster"}, "backend": "cuda",
        "command_line": ["gpuscale", "run", "--cluster", cluster], "environment": {"NCCL_DEBUG": "WARN"},
        "test_fault": None, "slurm": None, "mpi": {"library": "Open MPI v4.1.4", "world_size": 4},
        "software": {"blas": None, "driver": "550.54", "cuda_runtime": "12.4", "nccl": "2.21.5"},
        "hosts": [{"name": hosts[i], "node_index": i, "cpu_model": "Xeon", "ranks": [2 * i, 2 * i + 1]} for i in range(2)],
        "ranks": ranks,
        "links": {"intra_node": {"value": 450.0, "source": "synthetic"}, "inter_node": {"value": 50.0, "source": "synthetic"}},
        "plan": {"gpu_counts": [1, 2, 4], "benchmarks": sorted({r["benchmark"] for r in rows}), "points": 0, "seed": 1,
                 "options": {}},
        "results": rows,
        "summary": dict(counts, complete=True, valid=counts["invalid"] == 0 and counts["failed"] == 0,
                        exit_code=0 if counts["invalid"] == 0 else 1),
    }


def independent(hosts, bench, params, unit, per_gpu, peak, slow=None, invalid_at=None):
    rows = []
    for k in (1, 2, 4):
        values = [per_gpu * (1 + 0.01 * r) for r in range(k)]
        if slow and k == 4:
            values[slow[0]] = per_gpu * slow[1]
        ranks = [rank_value(r, hosts[r // 2], r % 2, v) for r, v in enumerate(values)]
        if invalid_at == k:
            for rv in ranks:
                rv["valid"] = False
                rv["error"] = "3 wrong values"
            rows.append(row(bench, "independent", params, k, unit, ranks, None, None, peak, None, status="invalid",
                            errors=["rank 0 (" + hosts[0] + "): 3 wrong values"]))
            continue
        agg = sum(values)
        rows.append(row(bench, "independent", params, k, unit, ranks, agg, agg / (k * per_gpu), peak,
                        agg / (k * peak) if peak else None))
    return rows


def collective(hosts, bench, k, size, link_peak):
    alpha, beta = MODELS[topology(k)]
    f = FACTOR[bench](k)
    t = alpha * STEPS[bench](k) + f * size / (beta * 1e3)
    algbw = size / t / 1e3
    busbw = algbw * f
    ranks = [rank_value(r, hosts[r // 2], r % 2, busbw, {"time_us": t, "wrong": 0}) for r in range(k)]
    metrics = {"size_bytes": size, "count": size // 4, "time_us": t, "algbw": algbw, "busbw": busbw,
               "bus_factor": f, "wrong": 0, "iters": 20, "time_reduce": "avg", "transport": "nccl"}
    params = {"dtype": "fp32", "op": "sum", "placement": "out-of-place", "size_bytes": size, "root": 0}
    if bench != "all_reduce":
        params = {"dtype": "fp32", "placement": "out-of-place", "size_bytes": size, "root": 0}
    return row(bench, "collective", params, k, "GB/s", ranks, busbw, busbw / link_peak, link_peak, busbw / link_peak, metrics)


def dp_steps(hosts, compute_us=20000.0, grad=256 << 20, bucket=25 << 20, hidden=3000.0, batch=32):
    rows = []
    step1 = compute_us
    for k in (1, 2, 4):
        if k == 1:
            comm = 0.0
        else:
            alpha, beta = MODELS[topology(k)]
            full, rest = divmod(grad, bucket)
            def t(s):
                return alpha * 2 * (k - 1) + 2 * (k - 1) / k * s / (beta * 1e3)
            comm = full * t(bucket) + (t(rest) if rest else 0)
        exposed = max(0.0, comm - hidden) if k > 1 else 0.0
        step = compute_us + exposed
        per_gpu = batch / (step * 1e-6)
        ranks = [rank_value(r, hosts[r // 2], r % 2, per_gpu) for r in range(k)]
        metrics = {"step_time_us": step, "exposed_comm_us": exposed, "compute_time_us": compute_us,
                   "gradient_bytes": grad}
        params = {"dtype": "bf16", "width": 4096, "depth": 8, "batch": batch, "bucket_bytes": bucket}
        rows.append(row("dp-step", "independent", params, k, "samples/s", ranks, per_gpu * k, step1 / step, None,
                        None, metrics))
    return rows


def build(cluster, gpu, hosts, scale=1.0, peak_scale=1.0):
    rows = []
    rows += independent(hosts, "stream.triad", {"dtype": "fp64", "array_bytes": 1 << 30, "elements": 1 << 27}, "GB/s",
                        3000.0 * scale, 3350.0 * peak_scale, slow=(3, 0.85))
    rows += independent(hosts, "stream.copy", {"dtype": "fp64", "array_bytes": 1 << 30, "elements": 1 << 27}, "GB/s",
                        3100.0 * scale, 3350.0 * peak_scale, invalid_at=4)
    rows += independent(hosts, "gemm", {"dtype": "fp16", "m": 8192, "n": 8192, "k": 8192, "layout": "NN"}, "TFLOP/s",
                        700.0 * scale, 989.0 * peak_scale)
    for bench in ("all_reduce", "all_gather"):
        for k in (2, 4):
            for s in SIZES:
                r = collective(hosts, bench, k, s, 450.0 if k == 2 else 50.0)
                if scale != 1.0:
                    for key in ("aggregate",):
                        r[key] *= scale
                    r["fraction_of_peak"] *= scale
                    r["scaling_efficiency"] *= scale
                    for rv in r["ranks"]:
                        rv["value"] *= scale
                        rv["stats"] = stats(rv["value"])
                rows.append(r)
    rows += dp_steps(hosts)
    return doc(cluster, gpu, hosts, rows)


def hostile():
    evil = "<script>alert(1)</script>"
    d = build("evil<b>\"cluster\"", "GPU <img src=x onerror=alert(2)>", [evil, '"a,b"\n'])
    d["command_line"] = ["gpuscale", "run", "--cluster", '"a,b"\nc', "</code><script>alert(3)</script>"]
    d["environment"] = {"NCCL_X": "=cmd|' /C calc'!A0", "OMPI_Y": "a\u001b[31mred\u001b[0m|`*_"}
    d["software"]["driver"] = "<i>550</i>"
    d["cluster"]["name"] = "evil<b>\"cluster\"\n# heading"
    for r in d["results"]:
        if r["status"] == "invalid":
            r["errors"] = ["<script>alert(4)</script> | wrong \"values\", here\n\u001b[2J"]
    d["results"][0]["params"]["note"] = "x\"} 1\nfake_metric 2 {"
    return d


def files():
    """{file name: document} of every file this script writes."""
    a = build("alpha", "NVIDIA H100 80GB HBM3", ["node-a1", "node-a2"])
    b = build("beta", "NVIDIA A100-SXM4-80GB", ["node-b1", "node-b2"], scale=0.7, peak_scale=0.7)
    return {"synthetic-a.json": a, "synthetic-b.json": b, "hostile.json": hostile()}


# ---- what the planted differences must give, worked out by hand from the plan above ------------------
# tests/e2e/e2e_analysis.py (case golden) holds gpuscale's output, the golden files and its own second
# implementation of the rules (tests/e2e/analysis_oracle.py) to these. Change them with the plan.

def planned_compare(r):
    """compare synthetic-a.json synthetic-b.json: (verdict, judged on fraction of peak) of A's row r.
    B is built with scale 0.7 and peak_scale 0.7 on another device model (A100 vs H100), so rows with
    a fraction of peak on both sides are judged on it; every rank spreads +-2% over 5 repetitions, so
    an unchanged figure gives the B/A range [0.98/1.02, 1.02/0.98] = [0.961, 1.041], inside the 5%
    threshold's [0.95, 1.05]."""
    if r["status"] != "ok":
        return "PROBLEM", False  # stream.copy at 4 GPUs is invalid in both files: no fraction of peak
    if r["benchmark"] in ("stream.triad", "stream.copy", "gemm"):
        return "same", True  # values and peaks both x0.7: the fraction of peak is A's, B/A = 1
    if r["benchmark"] in ("all_reduce", "all_gather"):
        # busbw x0.7 against the same link peaks (450, 50 GB/s): B/A = 0.7, range 0.7 x [0.961, 1.041]
        # = [0.673, 0.729], all of it below 0.95
        return "REGRESSION", True
    if r["benchmark"] == "dp-step":
        return "same", False  # dp_steps() ignores scale and has no peak: equal absolute values
    raise ValueError(f"no planned verdict for {r['benchmark']}")


# check synthetic-a.json --reference reference-alpha.json: (benchmark, gpu_count, params subset, passes,
# why it fails, index of the entry that decides). Per-GPU values from build(): STREAM triad 3000 x
# (1 + 0.01 r) with rank 3 at 0.85 at 4 GPUs, copy 3100 x (1 + 0.01 r), GEMM 700 x (1 + 0.01 r); rows sum
# their ranks. Entry 0 (triad fp64 @ 4, 12000 +-5%: 11400..12600), entry 1 (stream.* fp*: at least
# 2700), entry 2 (gemm @ 4, 3000 +-5%: 2850..3150), entry 3 (all_reduce 16M @ 4, 35 +-10%: 31.5..38.5),
# entry 4 (broadcast @ 8: no such row).
PLANNED_CHECK = [
    ("stream.triad", 1, {}, True, "", 1),        # 3000
    ("stream.triad", 2, {}, True, "", 1),        # 3000 + 3030 = 6030
    ("stream.triad", 4, {}, True, "", 0),        # 3000 + 3030 + 3060 + 2550 = 11640
    ("stream.copy", 1, {}, True, "", 1),         # 3100
    ("stream.copy", 2, {}, True, "", 1),         # 3100 + 3131 = 6231
    ("stream.copy", 4, {}, False, "invalid", 1),  # the invalid row
    ("gemm", 4, {}, False, "outside", 2),        # 700 + 707 + 714 + 721 = 2842 < 2850
    # t = 12 us x 6 steps + 1.5 x 16 MiB / 40 GB/s = 701.1 us: algbw 23.93, busbw 1.5 x that = 35.89
    ("all_reduce", 4, {"size_bytes": 1 << 24}, True, "", 3),
]
PLANNED_UNMATCHED = [("alpha", 4)]  # broadcast at 8 GPUs
PLANNED_UNCOVERED = 44 - len(PLANNED_CHECK)  # gemm at 1 and 2 GPUs, the other collectives, dp-step

# Stragglers (more than 10% below the median of the ranks): only rank 3 of stream.triad at 4 GPUs, on
# node-a2: 2550 against the median of 3000, 3030, 3060, 2550, which is 3015 (15.4% below). Every
# other independent row's ranks lie within 3% of each other; collectives are not judged.
PLANNED_STRAGGLERS = [("stream.triad", 4, 3, "node-a2", 2550.0, 3015.0)]
PLANNED_INVALID = [("stream.copy", 4)]  # invalid_at=4


def main():
    for name, d in files().items():
        with open(os.path.join(HERE, name), "w") as f:
            json.dump(d, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
