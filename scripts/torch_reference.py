#!/usr/bin/env python3
"""Reference figures from PyTorch on the same GPU, for scripts/device-check: copy_ and add (STREAM copy
and triad of the STREAM array size, GB/s counting bytes read plus written), torch.matmul on random
bf16, fp16 and tf32 8192^3 inputs and torch._scaled_mm on fp8 e4m3 (TFLOP/s = 2MNK), and host-to-device,
device-to-host (pinned) and device-to-device copies (bytes moved once). Timed with CUDA events after
warm-up, median of repetitions; a reference that fails is recorded with its error. Where torch is not
installed (a bare node, the emulated GPU node: docs/cuda.md) that is recorded as `absent` and the
script exits 0: device-check still runs, and its table says on every row that torch was not there.
Torch installed but blind to the GPU is a failure (exit 1)."""
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
    ap.add_argument("--copy-bytes", type=int, default=256 << 20)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        json.dump({"absent": f"torch is not installed ({e})"}, open(args.out, "w"))
        print(f"torch is not installed ({e}): the table's torch column says so", file=sys.stderr)
        return 0
    if not torch.cuda.is_available():
        json.dump({"error": "torch sees no CUDA device"}, open(args.out, "w"))
        return 1
    out = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0)}

    def guarded(name, fn):  # one reference failing (e.g. no fp8 on this GPU) leaves the others
        try:
            out[name] = fn()
        except Exception as e:  # noqa: BLE001: any torch error is reported in the file
            out[name] = {"error": f"{type(e).__name__}: {e}"}

    n = args.array_bytes // 8

    def stream():
        a = torch.rand(n, dtype=torch.float64, device="cuda")
        b, c = torch.empty_like(a), torch.rand(n, dtype=torch.float64, device="cuda")
        t = timed(torch, lambda: b.copy_(a), 3, 20)
        if not torch.equal(a, b):
            raise RuntimeError("torch copy produced a wrong result")
        copy = {"array_bytes": n * 8, "seconds": t, "gbps_read_plus_write": 2 * n * 8 / t / 1e9}
        t = timed(torch, lambda: torch.add(b, c, alpha=3.0, out=a), 3, 20)  # STREAM triad a = b + s c
        out["triad"] = {"array_bytes": n * 8, "seconds": t, "gbps": 3 * n * 8 / t / 1e9}
        return copy
    guarded("copy", stream)
    m = args.gemm

    def matmul(dtype, tf32=False):
        def fn():
            torch.backends.cuda.matmul.allow_tf32 = tf32
            x = torch.randn(m, m, dtype=dtype, device="cuda")
            y = torch.randn(m, m, dtype=dtype, device="cuda")
            t = timed(torch, lambda: torch.matmul(x, y), 5, 10, per_timing=10)
            return {"m": m, "n": m, "k": m, "seconds": t, "tflops": 2 * m**3 / t / 1e12}
        return fn
    guarded("matmul_bf16", matmul(torch.bfloat16))
    guarded("matmul_fp16", matmul(torch.float16))
    guarded("matmul_tf32", matmul(torch.float32, tf32=True))

    def scaled_mm(fast):  # both accumulation modes, as gpuscale's fp8 rows (fast_accum false and true)
        def fn():
            x = torch.randn(m, m, device="cuda").to(torch.float8_e4m3fn)
            y = torch.randn(m, m, device="cuda").to(torch.float8_e4m3fn).t()  # column-major, as cuBLASLt wants
            one = torch.tensor(1.0, device="cuda")
            t = timed(torch, lambda: torch._scaled_mm(x, y, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                                      use_fast_accum=fast), 5, 10, per_timing=10)
            return {"m": m, "n": m, "k": m, "use_fast_accum": fast, "seconds": t, "tflops": 2 * m**3 / t / 1e12}
        return fn
    guarded("scaled_mm_fp8", scaled_mm(False))
    guarded("scaled_mm_fp8_fast", scaled_mm(True))

    def copies():
        size = args.copy_bytes
        host = torch.empty(size, dtype=torch.uint8).pin_memory()
        dev, dev2 = torch.empty(size, dtype=torch.uint8, device="cuda"), torch.empty(size, dtype=torch.uint8, device="cuda")
        res = {}
        for name, fn in [("h2d", lambda: dev.copy_(host, non_blocking=True)),
                         ("d2h", lambda: host.copy_(dev, non_blocking=True)),
                         ("d2d", lambda: dev2.copy_(dev))]:
            t = timed(torch, fn, 3, 10)
            res[name] = {"bytes": size, "seconds": t, "gbps": size / t / 1e9}  # bytes moved once
        return res
    guarded("copies", copies)
    json.dump(out, open(args.out, "w"), indent=1)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
