#!/usr/bin/env python3
"""Reference figures from PyTorch on the same GPU, for scripts/device-check: a device-to-device copy of
the STREAM array size (GB/s counting bytes read plus written, as STREAM copy) and torch.matmul on random
bf16 8192^3 inputs (TFLOP/s = 2MNK). Timed with CUDA events after warm-up, median of repetitions."""
import argparse
import json
import statistics
import sys


def timed(torch, fn, warmup, reps, per_timing=1):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(per_timing):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3 / per_timing)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--array-bytes", type=int, default=1 << 30)
    ap.add_argument("--gemm", type=int, default=8192)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        json.dump({"error": f"torch not importable: {e}"}, open(args.out, "w"))
        print(f"torch not importable: {e}", file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        json.dump({"error": "torch sees no CUDA device"}, open(args.out, "w"))
        return 1
    out = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0)}
    n = args.array_bytes // 8
    a = torch.rand(n, dtype=torch.float64, device="cuda")
    b = torch.empty_like(a)
    t = timed(torch, lambda: b.copy_(a), 3, 20)
    if not torch.equal(a, b):
        out["copy_error"] = "torch copy produced a wrong result"
    out["copy"] = {"array_bytes": n * 8, "seconds": t, "gbps_read_plus_write": 2 * n * 8 / t / 1e9}
    del a, b
    m = args.gemm
    x = torch.randn(m, m, dtype=torch.bfloat16, device="cuda")
    y = torch.randn(m, m, dtype=torch.bfloat16, device="cuda")
    t = timed(torch, lambda: torch.matmul(x, y), 5, 10, per_timing=10)
    out["matmul_bf16"] = {"m": m, "n": m, "k": m, "seconds": t, "tflops": 2 * m**3 / t / 1e12}
    json.dump(out, open(args.out, "w"), indent=1)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
