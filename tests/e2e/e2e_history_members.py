#!/usr/bin/env python3
"""`gpuscale history members` (docs/history.md, "Each member against its own past") on a SQLite store of
synthetic result files (tests/data/analysis/make_synthetic.py's document: 2 hosts x 2 GPUs with UUIDs,
one stream.triad row at 4 GPUs). Each GPU has its own level, 1% apart (the manufacturing spread a peer
rule sees), each run's value 1% Gaussian run-to-run noise around it, each rank's own band 0.5%.

  step:      30 clean runs, then GPU 3 (host a2, the fastest: 3% above GPU 0) 5% slower for 3 runs, which
             leaves it 2% below GPU 0, inside its peers' spread; `history members` names it, changed in
             run 31, exit 1, and nothing else but its own node; its power states a step under 5%.
  clean:     33 clean runs: nothing named, exit 0; the JSON gives every GPU and node a power.
  bad_input: a bad --kind, --within-runs 0 and a store with no member series: one line each, exit 2.
The files are drawn from a fixed seed (GPUSCALE_TEST_SEED overrides it), so a run is repeatable; the
rule's rates over thousands of series are tests/unit/history/test_self_baseline.cpp's.
"""
import json
import os
import random
import shutil
import subprocess
import sys

import e2e_common
from e2e_common import fail

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "data", "analysis"))
import make_synthetic  # noqa: E402  (the synthetic result document)

ARGS = None
HOSTS = ["a1", "a2"]
CLEAN, SLOW_RUNS, SLOW_RANK, STEP = 30, 3, 3, 0.05


def files(name, planted):
    """CLEAN + SLOW_RUNS result files, one a day; GPU SLOW_RANK STEP slower in the last SLOW_RUNS when planted."""
    rng = random.Random(int(os.environ.get("GPUSCALE_TEST_SEED") or 44))
    folder = e2e_common.work(name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    paths = []
    for run in range(CLEAN + SLOW_RUNS):
        ranks = []
        for r in range(4):
            v = 100 * (1 + 0.01 * r) * (1 - STEP if planted and r == SLOW_RANK and run >= CLEAN else 1)
            v *= 2.718281828459045 ** rng.gauss(0, 0.01)
            rv = make_synthetic.rank_value(r, HOSTS[r // 2], r % 2, v)
            rv["stats"] = make_synthetic.stats(v, spread=0.005, n=10)
            ranks.append(rv)
        agg = sum(rv["value"] for rv in ranks)
        row = make_synthetic.row("stream.triad", "independent", {"dtype": "fp64", "elements": 1 << 24}, 4, "GB/s",
                                 ranks, agg, None, None, None)
        doc = make_synthetic.doc("alpha", "NVIDIA H100 80GB HBM3", HOSTS, [row])
        doc["created_utc"] = doc["finished_utc"] = f"2026-01-{1 + run // 24:02d}T{run % 24:02d}:00:00Z"
        path = os.path.join(folder, f"run{run + 1:02d}.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        paths.append(path)
    return paths


def gs(*args, code):
    p = subprocess.run([ARGS.gpuscale, "history", *args], capture_output=True, text=True, timeout=120)
    if p.returncode != code:
        fail(f"history {' '.join(args[:2])}: exit {p.returncode}, wanted {code}\n{p.stdout}{p.stderr}")
    return p


def store(name, planted):
    db = e2e_common.work(name + ".db")
    if os.path.exists(db):
        os.remove(db)
    url = "sqlite://" + db
    gs("add", "--store", url, *files(name, planted), code=0)
    return url


def uuid(rank):
    return f"GPU-alpha-{rank:04d}-0000-0000-000000000000"  # make_synthetic.doc's


def case_step():
    url = store("members_step", True)
    text = gs("members", "--store", url, code=1).stdout
    print(text)
    out = json.loads(gs("members", "--store", url, "--json", code=1).stdout)
    named = [m for m in out["members"] if m["slower"]]
    gpus = [m["member"] for m in named if m["kind"] == "gpu"]
    if gpus != [uuid(SLOW_RANK)]:
        fail(f"named GPUs {gpus}, wanted only {uuid(SLOW_RANK)}")
    others = [m for m in named if m["kind"] == "node" and m["member"] != HOSTS[SLOW_RANK // 2]]
    if others:
        fail(f"named a node without the slow GPU: {others}")
    gpu = next(m for m in named if m["kind"] == "gpu")
    files_ = sorted(os.listdir(e2e_common.work("members_step")))
    if not 0.03 < gpu["slower"]["fraction"] < 0.07 or gpu["slower"]["runs"] != SLOW_RUNS:
        fail(f"the slow GPU's step: {gpu['slower']}")
    if gpu["slower"]["changed_in"]["created_utc"] != f"2026-01-02T{CLEAN % 24:02d}:00:00Z":
        fail(f"changed in {gpu['slower']['changed_in']}, wanted run {CLEAN + 1} of {len(files_)}")
    if not gpu["power"] or not gpu["power"]["step"] < STEP:
        fail(f"the slow GPU's power does not reach a {STEP:.0%} step: {gpu['power']}")
    if f"SLOWER gpu {uuid(SLOW_RANK)} (host {HOSTS[SLOW_RANK // 2]})" not in text or "power, gpu" not in text:
        fail("the text names neither the GPU nor the power")


def case_clean():
    url = store("members_clean", False)
    text = gs("members", "--store", url, code=0).stdout
    print(text)
    out = json.loads(gs("members", "--store", url, "--json", code=0).stdout)
    if out["named"] != 0 or len(out["members"]) != 6:
        fail(f"a clean store: {out['named']} named of {len(out['members'])} series (4 GPUs, 2 nodes)")
    if any(not m["power"] or not m["power"]["step"] < 0.1 for m in out["members"]):
        fail(f"every series has a power under 10%: {[m['power'] for m in out['members']]}")
    # Only GPUs, one benchmark: the filters hold.
    out = json.loads(gs("members", "--store", url, "--json", "--kind", "gpu", "-b", "stream.triad", code=0).stdout)
    if {m["kind"] for m in out["members"]} != {"gpu"} or len(out["members"]) != 4:
        fail(f"--kind gpu: {[m['member'] for m in out['members']]}")


def case_bad_input():
    url = store("members_bad", False)
    for args, needle in ((["--kind", "cable"], "invalid --kind 'cable'"), (["--within-runs", "0"], "invalid --within-runs 0"),
                         (["-b", "all_reduce"], "no stored member series matches")):
        p = gs("members", "--store", url, *args, code=2)
        lines = p.stderr.strip().splitlines()
        if len(lines) != 1 or needle not in lines[0]:
            fail(f"members {' '.join(args)}: wanted one line with {needle!r}, got {p.stderr!r}")


def parse():
    global ARGS
    ARGS = e2e_common.parse_args("--mpiexec")
    return ARGS


def main():
    cases = {"step": (case_step, {}), "clean": (case_clean, {}), "bad_input": (case_bad_input, {})}
    e2e_common.run_case("e2e_history_members_", {"TIMEOUT": 120, "LABELS": "e2e;history"}, cases, parse)


if __name__ == "__main__":
    main()
