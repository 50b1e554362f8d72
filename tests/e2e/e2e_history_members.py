#!/usr/bin/env python3
"""`gpuscale history members` (docs/history.md, "Each member against its own past") on a SQLite store of
synthetic result files (tests/data/analysis/make_synthetic.py's document: 2 hosts x 2 GPUs with UUIDs,
one stream.triad row at 4 GPUs). Each GPU has its own level, 1% apart (the manufacturing spread a peer
rule sees), each run's value 1% Gaussian run-to-run noise around it, each rank's own band 0.5%.

  step:      30 clean runs, then GPU 3 (host a2, the fastest: 3% above GPU 0) 5% slower for 3 runs, which
             leaves it 3.6% below its peers' median, inside the peer rule's 10%; `history members` names it, changed in
             run 31, exit 1, and nothing else but its own node; its power states a step under 5%.
  clean:     33 clean runs: nothing named, exit 0; the JSON gives every GPU and node a power.
  links:     a real CPU run of the fleet `pairs` benchmark (8 ranks as hosts n0-n3, 2 per host)
             is the template of 33 runs: each link's cell its own level (the real run's), 1% noise from
             run to run, spreads 0.5%; in the last 3 runs the all_reduce link n0~n2 is 5% slower and n1's
             NIC on rail 1 too (its 3 sendrecv pairs on that rail; the node matrix stays each pair's
             slowest rail). `history members --kind link,nic` names both, and nothing beyond what n1's
             rail 1 reaches (its node-matrix links, a peer NIC whose median cell on rail 1 is its pair
             with n1); the clean 33 runs name nothing.
  bad_input: a bad --kind, --within-runs 0 and a store with no member series: one line each, exit 2.
The files are drawn from a fixed seed (GPUSCALE_TEST_SEED overrides it), so a run is repeatable; the
rule's rates over thousands of series are tests/unit/history/test_self_baseline.cpp's.
"""
import json
import math
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


# Four hosts: a NIC is the median of its pairs on the rail, so each of n1's peers has 3 cells there, one
# of them n1's (with 2 the median is their mean, and n1's slow NIC would move its peers' by half).
TEMPLATE_HOSTS = "n0,n0,n1,n1,n2,n2,n3,n3"


def fleet_template():
    out = e2e_common.work("members_fleet_template.json", fresh=True)
    e2e_common.mpirun(8, ["run", "--backend", "cpu", "--quick", "--benchmarks", "pairs", "--threads", "1", "--tiling",
                          "sequential", "--cluster", "lab", "-q", "-o", out], {"GPUSCALE_TEST_HOSTS": TEMPLATE_HOSTS})
    with open(out) as f:
        return json.load(f)


def fleet_files(name, template, planted):
    """CLEAN + SLOW_RUNS copies of the template run, its matrices' cells moved by 1% noise a run; planted:
    link n0~n2 of all_reduce and NIC n1 rail 1 of sendrecv STEP slower in the last SLOW_RUNS."""
    rng = random.Random(int(os.environ.get("GPUSCALE_TEST_SEED") or 44))
    folder = e2e_common.work(name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    paths = []
    for run in range(CLEAN + SLOW_RUNS):
        doc = json.loads(json.dumps(template))
        slow = planted and run >= CLEAN
        for row in doc["results"]:
            collective = row["params"]["collective"]
            by_kind = {(m["kind"], m.get("rail")): m for m in row["matrices"]}
            for (kind, rail), m in by_kind.items():
                if collective == "sendrecv" and kind == "node":
                    continue  # made from the rails below
                hosts = m["hosts"]
                for i in range(len(hosts)):
                    for j in range(i + 1, len(hosts)):
                        f = math.exp(rng.gauss(0, 0.01))
                        if slow and collective == "all_reduce" and {hosts[i], hosts[j]} == {"n0", "n2"}:
                            f *= 1 - STEP
                        if slow and collective == "sendrecv" and rail == 1 and "n1" in (hosts[i], hosts[j]):
                            f *= 1 - STEP
                        for a, b in ((i, j), (j, i)):
                            m["values"][a][b] *= f
                            m["spread_down"][a][b] = m["spread_up"][a][b] = 0.005
            if collective == "sendrecv":  # the node matrix: each pair's slowest rail (docs/fleet.md)
                node = by_kind[("node", None)]
                rails = [m for (kind, _), m in by_kind.items() if kind == "rail"]
                for i in range(len(node["hosts"])):
                    for j in range(len(node["hosts"])):
                        if i != j:
                            node["values"][i][j] = min(m["values"][i][j] for m in rails)
                            node["spread_down"][i][j] = node["spread_up"][i][j] = 0.005
        doc["created_utc"] = doc["finished_utc"] = f"2026-01-{1 + run // 24:02d}T{run % 24:02d}:00:00Z"
        path = os.path.join(folder, f"run{run + 1:02d}.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        paths.append(path)
    return paths


def case_links():
    template = fleet_template()
    for planted in (True, False):
        name = "members_links" if planted else "members_links_clean"
        db = e2e_common.work(name + ".db")
        if os.path.exists(db):
            os.remove(db)
        url = "sqlite://" + db
        gs("add", "--store", url, *fleet_files(name, template, planted), code=0)
        text = gs("members", "--store", url, "--kind", "link,nic", code=1 if planted else 0).stdout
        print(text)
        out = json.loads(gs("members", "--store", url, "--kind", "link,nic", "--json", code=1 if planted else 0).stdout)
        named = {(m["kind"], m["member"], m["params"]["collective"]) for m in out["members"] if m["slower"]}
        if not planted:
            if named:
                fail(f"a clean fleet history named {sorted(named)}")
            continue
        want = {("link", "n0~n2", "all_reduce"), ("nic", "n1 rail 1", "sendrecv")}
        if not want <= named:
            fail(f"named {sorted(named)}, wanted {sorted(want)} among them")
        # What n1's slow NIC reaches: the sendrecv node matrix is each pair's slowest rail, so a link of n1
        # may carry its rail 1; and a peer's NIC on rail 1 is the median of its 3 cells there, which moves
        # with its pair with n1 when that cell was its median (the template's cells are a real run's).
        def reached(x):
            return x[2] == "sendrecv" and ((x[0] == "link" and "n1" in x[1]) or (x[0] == "nic" and x[1].endswith(" rail 1")))
        extra = {x for x in named - want if not reached(x)}
        if extra:
            fail(f"named beside the planted members: {sorted(extra)}")


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
    cases = {"step": (case_step, {}), "clean": (case_clean, {}), "bad_input": (case_bad_input, {}),
             # links: one real 8-rank run (its template): the cores held as other mpirun cases hold them.
             "links": (case_links, e2e_common.CORES)}
    e2e_common.run_case("e2e_history_members_", {"TIMEOUT": 120, "LABELS": "e2e;history"}, cases, parse)


if __name__ == "__main__":
    main()
