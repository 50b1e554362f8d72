#!/usr/bin/env python3
"""End-to-end tests of the checkpoint storage benchmarks (`--benchmarks storage`, docs/capacity.md) on
the CPU backend, writing to a directory under the workdir.

  ckpt: 4 ranks, `--ckpt-size 64M`: write and read rows at 1, 2 and 4 ranks for both layouts (a file per
    rank, one shared file) and both I/O modes (buffered, O_DIRECT); every row valid (every chunk read back
    equals what was written), each rank's shard the plan's, the checkpoint's time its slowest rank's, the
    file system named; nothing left in the directory.
  bad_input: no --ckpt-dir, a directory that does not exist, a file, a size not a multiple of 4K, a
    checkpoint larger than the free space: one line, exit 2, nothing written.
  io_error: rank 2's file cannot be opened (a directory stands where it goes, from the run's --seed): every
    point rank 2 takes part in fails naming it and the others are measured; the run neither hangs (rank 2
    keeps every barrier of its point's repetitions) nor leaves a file of its own.
  rank_size: `--ckpt-rank-size 8M`: every rank's shard is 8M at every count, the checkpoint k x 8M.
  hosts: 4 ranks acting as two hosts (GPUSCALE_TEST_HOSTS=a,a,b,b): where the directory's file system is
    local to a node, the shared-file rows of the 4-rank count (spanning both hosts) are skipped with the
    reason, and those within one host measured; on any other file system all are measured. Every write row
    gives each preset's checkpoint time at its bandwidth (bytes by hand: 14 per bf16 weight).
  sigterm: SIGTERM in the middle of a run of larger shards: exit 4, the finished rows kept, and nothing
    left in the directory.
"""
import os
import shutil
import signal
import subprocess
import time

import e2e_common
from e2e_common import fail

ARGS = None
KINDS = {("file_per_rank", "buffered"), ("file_per_rank", "direct"), ("shared_file", "buffered"), ("shared_file", "direct")}


def ckpt_dir(name):
    d = os.path.join(ARGS.workdir, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def left_in(d):
    return sorted(os.listdir(d))


def measure(name, extra, expect=0, **kw):
    """A 4-rank --quick run with `extra` flags, its exit code checked; the result file, validated."""
    path = e2e_common.out_path(ARGS.workdir, name)
    p = e2e_common.mpirun(4, ["run", "--backend", "cpu", "--quick", "-o", path] + extra, timeout=400, **kw)
    if p.returncode != expect:
        fail(f"exit {p.returncode}, expected {expect}\n{p.stderr[-3000:]}")
    return e2e_common.load_valid(path, ARGS.schema, ARGS.gpuscale)


def case_ckpt():
    d = ckpt_dir("ckpt")
    total = 64 << 20
    doc = measure("ckpt.json", ["--benchmarks", "storage", "--ckpt-dir", d, "--ckpt-size", "64M"])
    seen = set()
    for r in doc["results"]:
        k = r["gpu_count"]
        kind = (r["params"]["layout"], r["params"]["io"])
        seen.add((r["benchmark"], kind, k))
        m = r["metrics"]
        if r["status"] != "ok" or r["unit"] != "GB/s" or not r["aggregate"] > 0:
            fail(f"{r['benchmark']} {kind} at {k}: {r['status']} {r['errors']}")
        ranks = e2e_common.rank_entries(r)
        # Each group of k ranks cut the checkpoint into k shards of whole 4K blocks, the last taking the rest.
        for g in e2e_common.group_entries(r):
            shards = [e["metrics"]["shard_bytes"] for e in ranks if e["rank"] in g["ranks"]]
            each = total // 4096 // k * 4096
            if shards != [each] * (k - 1) + [total - each * (k - 1)]:
                fail(f"{r['benchmark']} {kind} at {k}: shards {shards}")
        if any(e["metrics"]["wrong"] != 0 or e["metrics"]["checked"] < 1 for e in ranks):
            fail(f"{r['benchmark']} {kind} at {k}: the read-back check {[e['metrics'] for e in ranks]}")
        # The checkpoint's time is its group's slowest rank's median (the row shows its median group's).
        by_rank = {e["rank"]: e["metrics"]["shard_bytes"] / (e["value"] * 1e9) for e in ranks}
        slowest = [max(by_rank[x] for x in g["ranks"]) for g in e2e_common.group_entries(r)]
        if not any(abs(m["checkpoint_s"] - s) <= 1e-3 * s + 1e-6 for s in slowest) \
                or abs(m["checkpoint_gb_s"] - total / m["checkpoint_s"] / 1e9) > 1e-3 * m["checkpoint_gb_s"]:
            fail(f"{r['benchmark']} {kind} at {k}: checkpoint_s {m['checkpoint_s']}, the groups' slowest ranks {slowest}")
        if m["checkpoint_memory"] != "host":  # the CPU backend's shard is in host memory
            fail(f"checkpoint_memory {m['checkpoint_memory']}")
        if not m["fs_type"] or m["fs_type"] == "unknown" or not m["mount_point"].startswith("/"):
            fail(f"the file system is not named: {m}")
    want = {(b, kind, k) for b in ("checkpoint.write", "checkpoint.read") for kind in KINDS for k in (1, 2, 4)}
    if seen != want:
        fail(f"rows missing: {sorted(want - seen)}; extra: {sorted(seen - want)}")
    if left_in(d):
        fail(f"left in the checkpoint directory: {left_in(d)}")
    print(f"ok: {len(doc['results'])} rows, all checked, nothing left in {d}")


def case_bad_input():
    d = ckpt_dir("ckpt_bad")
    a_file = os.path.join(d, "a-file")
    with open(a_file, "w") as f:
        f.write("x")
    base = ["run", "--backend", "cpu", "--quick", "--benchmarks", "storage", "-o", os.path.join(ARGS.workdir, "bad.json"),
            "--force"]
    cases = [([], "give --ckpt-dir DIR"),
             (["--ckpt-dir", os.path.join(d, "missing")], "No such file or directory"),
             (["--ckpt-dir", a_file], "is not a directory"),
             (["--ckpt-dir", d, "--ckpt-size", "4097"], "not a whole number of 4096-byte blocks"),
             (["--ckpt-dir", d, "--ckpt-size", "1000T"], "free, a checkpoint of"),
             (["--ckpt-dir", d, "--ckpt-size", "8M", "--ckpt-rank-size", "4M"], "not both"),
             (["--ckpt-dir", d, "--ckpt-rank-size", "5000"], "not a whole number of 4096-byte blocks")]
    for extra, needle in cases:
        p = e2e_common.run([ARGS.gpuscale] + base + extra)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        if p.returncode != 2 or not any(needle in l for l in lines):
            fail(f"{extra}: exit {p.returncode}, expected 2 and '{needle}':\n{p.stderr[-1500:]}")
        if left_in(d) != ["a-file"]:
            fail(f"{extra}: something was written: {left_in(d)}")
    print(f"ok: {len(cases)} refusals, exit 2, nothing written")


def case_io_error():
    d = ckpt_dir("ckpt_ioerr")
    os.makedirs(os.path.join(d, "gpuscale-ckpt-ff-r2.bin"))  # --seed 255: the run's id is ff
    doc = measure("ckpt_ioerr.json", ["--seed", "255", "--benchmarks", "storage", "--ckpt-dir", d, "--ckpt-size", "16M"],
                  expect=1)  # rows failed
    failed = 0
    for r in doc["results"]:
        per_rank = r["params"]["layout"] == "file_per_rank"
        if per_rank:
            failed += 1
            if r["status"] != "failed" or not any("rank 2" in e and "Is a directory" in e for e in r["errors"]):
                fail(f"{r['benchmark']} {r['params']} at {r['gpu_count']}: {r['status']} {r['errors']}")
        elif r["status"] != "ok":
            fail(f"{r['benchmark']} {r['params']} at {r['gpu_count']}: {r['status']} {r['errors']}")
    if failed != 12 or left_in(d) != ["gpuscale-ckpt-ff-r2.bin"]:
        fail(f"{failed} rows failed (expected 12); left: {left_in(d)}")
    print("ok: rank 2's points failed naming it, the rest measured, no hang, nothing left")


def case_rank_size():
    d = ckpt_dir("ckpt_rank")
    each = 8 << 20
    doc = measure("ckpt_rank.json", ["--benchmarks", "checkpoint.write", "--ckpt-dir", d, "--ckpt-rank-size", "8M"])
    counts = set()
    for r in doc["results"]:
        k, m = r["gpu_count"], r["metrics"]
        counts.add(k)
        if r["status"] != "ok" or r["params"].get("rank_bytes") != each or "checkpoint_bytes" in r["params"]:
            fail(f"{r['params']} at {k}: {r['status']} {r['errors']}")
        shards = {e["metrics"]["shard_bytes"] for e in e2e_common.rank_entries(r)}
        if shards != {each} or m["checkpoint_total_bytes"] != each * k:
            fail(f"at {k}: shards {shards}, checkpoint {m['checkpoint_total_bytes']}, expected {each} each, {each * k}")
        if abs(m["checkpoint_gb_s"] - each * k / m["checkpoint_s"] / 1e9) > 1e-3 * m["checkpoint_gb_s"]:
            fail(f"at {k}: {m['checkpoint_gb_s']} GB/s is not the checkpoint over {m['checkpoint_s']} s")
    if counts != {1, 2, 4} or left_in(d):
        fail(f"counts {counts}; left {left_in(d)}")
    print(f"ok: {len(doc['results'])} rows, 8M a rank at 1, 2 and 4 ranks")


LOCAL_FS = {"ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "zfs", "tmpfs", "ramfs", "overlay", "vfat", "bcachefs"}
# Weights of the presets by hand from their published shapes (docs/training.md): layers x (Q and O h^2, K
# and V h x kv_heads x h/heads, experts x 3 h f, router h x experts) + embedding and output h x vocab.
PRESETS = {"llama3-8b": (32, 4096, 14336, 32, 8, 128256, 1), "llama3-70b": (80, 8192, 28672, 64, 8, 128256, 1),
           "mixtral-8x7b": (32, 4096, 14336, 32, 8, 32000, 8)}


def preset_bytes(layers, h, f, heads, kv, vocab, experts):
    router = h * experts if experts > 1 else 0
    layer = 2 * h * h + 2 * h * kv * (h // heads) + experts * 3 * h * f + router
    return (layers * layer + 2 * h * vocab) * 14


def case_hosts():
    d = ckpt_dir("ckpt_hosts")
    doc = measure("ckpt_hosts.json", ["--benchmarks", "checkpoint.write", "--ckpt-dir", d, "--ckpt-size", "16M"],
                  env_extra={"GPUSCALE_TEST_HOSTS": "a,a,b,b"}, export=["GPUSCALE_TEST_HOSTS"])
    fs = {r["metrics"].get("fs_type") for r in doc["results"] if r["status"] == "ok"}
    if len(fs) != 1:
        fail(f"file systems {fs}")
    local = fs.pop() in LOCAL_FS
    skipped = 0
    for r in doc["results"]:
        spans = r["gpu_count"] == 4
        if r["params"]["layout"] == "shared_file" and spans and local:
            skipped += 1
            reason = " ".join(r["errors"])
            if r["status"] != "skipped" or "cannot span hosts a and b" not in reason:
                fail(f"shared file across hosts on a local file system: {r['status']} {r['errors']}")
            continue
        if r["status"] != "ok":
            fail(f"{r['params']} at {r['gpu_count']}: {r['status']} {r['errors']}")
        got = r["metrics"]["preset_checkpoint_s"]
        for name, shape in PRESETS.items():
            want = preset_bytes(*shape) / (r["metrics"]["checkpoint_gb_s"] * 1e9)
            if abs(got[name] - want) > 1e-6 * want:
                fail(f"{name}'s checkpoint at {r['metrics']['checkpoint_gb_s']} GB/s: {got[name]} s, by hand {want} s")
    if local and skipped != 2:
        fail(f"{skipped} shared-file rows skipped at 4 ranks, expected 2 (buffered and direct)")
    if left_in(d):
        fail(f"left in the checkpoint directory: {left_in(d)}")
    print(f"ok: {'local' if local else 'shared'} file system, {skipped} rows skipped, preset times by hand")


def case_sigterm():
    d = ckpt_dir("ckpt_term")
    path = e2e_common.out_path(ARGS.workdir, "ckpt_term.json")
    cmd = [ARGS.mpiexec, "--oversubscribe", "-np", "2", ARGS.gpuscale, "run", "--backend", "cpu", "--benchmarks", "storage",
           "--ckpt-dir", d, "--ckpt-size", "512M", "--reps", "3", "-o", path]
    print("+", " ".join(cmd), flush=True)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    e2e_common.wait_for_rows(p, path, 1)
    # Mid-point: wait until a shard file exists, then stop the job as scancel would.
    deadline = time.time() + 120
    while not left_in(d) and time.time() < deadline and p.poll() is None:
        time.sleep(0.02)
    for pid in [r["pid"] for r in e2e_common.read_progress(path)["ranks"]]:  # each task, as scancel signals them
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    out, err = p.communicate(timeout=300)
    if p.returncode != 4:
        fail(f"exit {p.returncode}, expected 4\n{err[-2000:]}")
    doc = e2e_common.load_valid(path, ARGS.schema, ARGS.gpuscale)
    e2e_common.check_interrupted(doc, "interrupted by SIGTERM")
    if left_in(d):
        fail(f"left in the checkpoint directory after SIGTERM: {left_in(d)}")
    print(f"ok: stopped after {doc['summary']['rows']} rows, nothing left in {d}")


def parse():
    global ARGS
    ARGS = e2e_common.parse_args("--mpiexec")
    return ARGS


def main():
    cores = e2e_common.CORES
    cases = {"ckpt": (case_ckpt, cores), "bad_input": (case_bad_input, {}), "hosts": (case_hosts, cores),
             "rank_size": (case_rank_size, cores), "io_error": (case_io_error, cores),
             "sigterm": (case_sigterm, cores)}
    e2e_common.run_case("e2e_storage_", {"TIMEOUT": 400, "LABELS": "e2e;cpu"}, cases, parse)


if __name__ == "__main__":
    main()
