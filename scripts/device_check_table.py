#!/usr/bin/env python3
"""The short table scripts/device-check prints: gpuscale's figures on one GPU next to torch's from the
same session (scripts/torch_reference.py), the expected peak and each one's % of it, with the targets of the CUDA issue (met or missed; targets
are reported, never used to pass or fail a test). Without torch (torch_reference.py's `absent`) every
row's torch cell says "no torch", and the targets that compare with torch are n/a."""
import argparse
import json


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def row(doc, bench, **params):
    if not doc:
        return None
    for r in doc["results"]:
        if r["benchmark"] == bench and r["gpu_count"] == 1 and all(r["params"].get(k) == v for k, v in params.items()):
            return r
    return None


def fmt(v, unit):
    return "-" if v is None else f"{v:,.1f} {unit}"


def num(v, spec, width=0):
    """v formatted by `spec`, or "-" where the file holds no number (a 1-rank collective's algbw is null
    while its row is ok: no bandwidth between one rank and itself), right-aligned to `width`."""
    text = format(v, spec) if isinstance(v, (int, float)) and not isinstance(v, bool) else "-"
    return f"{text:>{width}}"


def coll_summary(path):
    """Collective rows of one run: counts by status, the transports, and the largest size's time per
    collective and GPU count (at one rank there is no bandwidth: algbw is null, shown as "-")."""
    doc = load(path)
    if not doc:
        print(f"\ncollectives: no result at {path}")
        return
    rows = [r for r in doc["results"] if r.get("scope") == "collective"]
    by = {}
    for r in rows:
        by[r["status"]] = by.get(r["status"], 0) + 1
    print(f"\ncollectives ({path.rsplit('/', 1)[-1]}): {len(rows)} rows {by}, NCCL {doc['software'].get('nccl')}")
    largest = {}
    for r in rows:
        if r["status"] != "ok":
            continue
        key = (r["benchmark"], r["params"].get("transport"), r["params"].get("dtype"), r["params"].get("placement", ""),
               r["gpu_count"])
        if key not in largest or r["params"].get("size_bytes", 0) > largest[key]["params"].get("size_bytes", 0):
            largest[key] = r
    for key, r in sorted(largest.items(), key=lambda kv: str(kv[0])):
        if key[2] == "fp32":
            m = r["metrics"]
            print(f"  {key[0]:<15} {key[1] or '':<5} {key[3] or '':<13} {key[4]:>3} GPU(s) {num(m.get('size_bytes'), 'd', 12)} B  "
                  f"{num(m.get('time_us'), '.1f', 10)} us  algbw {num(m.get('algbw'), '.1f', 8)} GB/s")
    for r in rows:
        if r["status"] in ("invalid", "failed"):
            print(f"  {r['status']}: {r['benchmark']} {r['params']}: {'; '.join(r['errors'])}")


def dp_summary(path):
    doc = load(path)
    if not doc:
        print(f"\ndp-step: no result at {path}")
        return
    print("\ndp-step on one GPU:")
    for r in doc["results"]:
        m, p = r["metrics"], r["params"]
        if r["status"] != "ok":
            print(f"  {p['dtype']}: {r['status']} {'; '.join(r['errors'])}")
            continue
        mfu = r["fraction_of_peak"]
        print(f"  {p['dtype']:<5} width {p['width']} depth {p['depth']} batch {p['batch']}: {num(r['aggregate'], ',.0f')} samples/s, "
              f"{num(m.get('tflops'), '.1f')} TFLOP/s, MFU {'-' if mfu is None else f'{100 * mfu:.1f}%'}, "
              f"step {num(m.get('step_time_us'), '.0f')} us (compute {num(m.get('compute_time_us'), '.0f')}, "
              f"comm {num(m.get('comm_time_us'), '.0f')}, exposed {num(m.get('exposed_comm_us'), '.0f')})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--result", required=True)
    ap.add_argument("--torch")
    ap.add_argument("--kernels")
    ap.add_argument("--collectives", nargs="*", default=[])
    ap.add_argument("--dp-step")
    ap.add_argument("--health")
    args = ap.parse_args()
    doc, torch = load(args.result), load(args.torch) if args.torch else None
    if not doc:
        print(f"no gpuscale result at {args.result}")
        return 1
    dev = doc["ranks"][0]["device"]
    print(f"GPU: {dev['name']} ({dev['details'].get('compute_capability')}, {dev['details'].get('sm_count')} SMs), "
          f"{doc['created_utc']}, gpuscale {doc['tool']['commit']}")
    lines = []

    absent = torch.get("absent") if isinstance(torch, dict) and isinstance(torch.get("absent"), str) else None
    none = "no torch" if absent else "-"  # a torch cell without a figure

    def tval(*path):  # a torch figure, or None where the reference is missing or failed
        v = torch
        for k in path:
            v = v.get(k) if isinstance(v, dict) else None
        return v if isinstance(v, (int, float)) else None

    def pct(v, peak):
        return "-" if v is None or not peak else f"{100 * v / peak:.1f}%"

    def add(label, r, tv):
        if r is None:
            lines.append((label, "-", fmt(tv, "") if tv is not None else none, "-", "-", "-", "missing"))
            return
        v = r["aggregate"] if r["status"] == "ok" else None
        peak = r["expected_peak"]
        lines.append((label, fmt(v, r["unit"]), fmt(tv, r["unit"]) if tv is not None else none, fmt(peak, r["unit"]),
                      pct(v, peak), pct(tv, peak) if tv is not None else none, r["status"]))

    add("stream.copy fp64 | copy_", row(doc, "stream.copy", dtype="fp64"), tval("copy", "gbps_read_plus_write"))
    add("stream.triad fp64 | add", row(doc, "stream.triad", dtype="fp64"), tval("triad", "gbps"))
    for dt, ref in [("bf16", "matmul_bf16"), ("fp16", "matmul_fp16"), ("tf32", "matmul_tf32")]:
        add(f"gemm {dt} 8192^3 | matmul", row(doc, "gemm", dtype=dt, m=8192, n=8192, k=8192), tval(ref, "tflops"))
    # fp8 in both accumulation modes; only fast accumulation has a datasheet peak (the other row shows "-").
    add("gemm fp8_e4m3 8192^3 | _scaled_mm", row(doc, "gemm", dtype="fp8_e4m3", m=8192, n=8192, k=8192,
                                                 fast_accum=False), tval("scaled_mm_fp8", "tflops"))
    add("gemm fp8_e4m3 fast-accum | fast", row(doc, "gemm", dtype="fp8_e4m3", m=8192, n=8192, k=8192,
                                               fast_accum=True), tval("scaled_mm_fp8_fast", "tflops"))
    add("copy.h2d | copy_", row(doc, "copy.h2d"), tval("copies", "h2d", "gbps"))
    add("copy.d2h | copy_", row(doc, "copy.d2h"), tval("copies", "d2h", "gbps"))
    d2d = tval("copies", "d2d", "gbps")
    add("copy.d2d (read+write) | copy_", row(doc, "copy.d2d"), None if d2d is None else 2 * d2d)
    w = max(len(l[0]) for l in lines)
    print(f"{'gpuscale | torch reference':<{w}}  {'gpuscale':>16}  {'torch':>16}  {'expected peak':>16}  "
          f"{'of peak':>7}  {'torch':>7}  status")
    for l in lines:
        print(f"{l[0]:<{w}}  {l[1]:>16}  {l[2]:>16}  {l[3]:>16}  {l[4]:>7}  {l[5]:>7}  {l[6]}")
    if torch:
        errs = {k: v["error"] for k, v in torch.items() if isinstance(v, dict) and "error" in v}
        for k, e in errs.items():
            print(f"  torch {k}: {e}")
        if "error" in torch and isinstance(torch["error"], str):
            print(f"  torch: {torch['error']}")
        if absent:
            print(f"  torch: {absent}; no torch figure beside gpuscale's")

    print("\ntargets (reported, not enforced):")

    def target(text, ok):
        print(f"  [{'met' if ok else 'MISSED' if ok is not None else 'n/a'}] {text}")

    def val(r):
        return r["aggregate"] if r and r["status"] == "ok" else None

    triad, copy = val(row(doc, "stream.triad", dtype="fp64")), val(row(doc, "stream.copy", dtype="fp64"))
    peak = (row(doc, "stream.triad", dtype="fp64") or {}).get("expected_peak")
    tcopy = tval("copy", "gbps_read_plus_write")
    for name, v in [("triad", triad), ("copy", copy)]:
        target(f"{name} >= 88% of the memory peak", None if v is None or not peak else v >= 0.88 * peak)
        target(f"{name} >= torch device copy", None if v is None or tcopy is None else v >= tcopy)
    bf16 = val(row(doc, "gemm", dtype="bf16", m=8192, n=8192, k=8192))
    tmm = tval("matmul_bf16", "tflops")
    target("bf16 8192^3 >= torch.matmul", None if bf16 is None or tmm is None else bf16 >= tmm)
    fp8r = row(doc, "gemm", dtype="fp8_e4m3", m=8192, n=8192, k=8192, fast_accum=True)
    target("fp8 8192^3 fast accumulation >= 70% of its dense peak",
           None if not fp8r or fp8r["fraction_of_peak"] is None else fp8r["fraction_of_peak"] >= 0.70)
    s = doc["summary"]
    print(f"\nrows: {s['rows']} ({s['ok']} ok, {s['invalid']} invalid, {s['failed']} failed, {s['skipped']} skipped)")
    for r in doc["results"]:
        if r["status"] in ("invalid", "failed"):
            print(f"  {r['status']}: {r['benchmark']} {r['params']}: {'; '.join(r['errors'])}")
    for path in args.collectives:
        coll_summary(path)
    if args.dp_step:
        dp_summary(args.dp_step)
    if args.health:
        h = load(args.health)
        print(f"\nhealth: {'no report at ' + args.health if not h else json.dumps(h.get('verdict', h.get('status', '?')))}")
    kern = load(args.kernels) if args.kernels else None
    if kern:
        errs = [b["name"] for b in kern.get("benchmarks", []) if b.get("error_occurred")]
        print(f"gpuscale-kernels: {len(kern.get('benchmarks', []))} results, {len(errs)} errors {errs if errs else ''}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
