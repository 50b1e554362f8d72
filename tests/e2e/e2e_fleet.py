#!/usr/bin/env python3
"""Fleet coverage on the CPU backend (docs/fleet.md): 16 ranks under mpirun acting as 8 nodes of 2
ranks (GPUSCALE_TEST_HOSTS), so tiling, node pairs, GPU pairs and outliers are tested without a cluster.

  fleet_clean:     rows at 1 and 2 GPUs hold 16 and 8 groups, every count's groups cover every host, the
                   node-pair matrix is 8 x 8 and full, each node has its GPU-pair matrix; no outlier is
                   named (noise alone, on a loaded 2-core machine) and --fail-on-outliers exits 0.
  fleet_slow_host: GPUSCALE_TEST_FAULT=slow-host-reported:n3:10 (the exact, reported variant): n3, and no
                   other host, is the outlier named in the summary, the JSON (analysis.outlier_hosts, every
                   outlier record includes n3), the HTML heatmap and the drain list; --fail-on-outliers exits 1.
  The default-rule cases (--outlier at its default 10%, --tiling sequential: DEFAULT_RULE), with faults
  that take real time, run by hand (--case NAME), NOT registered with ctest: on this 2-core VM 4 of 15
  unplanted launches named something (a STREAM 1-GPU group 22-39% below the median in both passes, a
  node-pair link slow in both passes; docs/measurements.md, "Fleet e2e at the default rule"), and with
  a third pass of what is still suspect 3 of 23 (node-pair links slow in all three measurements,
  under a helper's load), so five in a row would fail CI often.
  Sequential turns hand the 2 cores from group to group: the waiting ranks sleep (World::turn_barrier)
  and a node pair's rails take turns too; with spinning waiters and rails at once, 4 of 6 unplanted
  launches named a host.
  clean_default:   five unplanted launches in a row: none names anything, --fail-on-outliers exits 0.
  slow_mem:        a real-time slow-mem:HOST:10 (time really slept in each STREAM pass) on one random host
                   (seed printed; GPUSCALE_TEST_SEED replays): that host alone in the summary, the JSON,
                   the heatmap and the drain list, exit 1 (7 of 7 by hand).
  slow_nic:        a real-time slow-nic:HOST:RAIL:10 (that host's local rank RAIL sends slowly off the node)
                   on a random host and rail (seed printed), the pairs alone: the rail matrix names that
                   host on that rail, no other host or rail is named, the node matrix's records are
                   explained by the rail, the record's NIC is null with the CPU backend's reason, the
                   summary and the HTML heatmap of that rail name the host (9 of 9 by hand).
  slow_host_progress: a real-time slow-host:HOST:10 on a random host (seed printed) over STREAM, the 1M
                   all_reduce at every count and the node pairs (PROGRESS_PLAN), five launches under a
                   --watchdog shorter than the slow rows: each finishes (never exit 5: the watchdog
                   judges progress, not a point's total time) and names that host alone, exit 1 with
                   --fail-on-outliers (docs/measurements.md).
  By hand: python3 tests/e2e/e2e_fleet.py --case NAME --gpuscale BIN --mpiexec mpirun --schema SCHEMA --workdir DIR
  fleet_modes:     --tiling sequential (with --rep-order interleaved, the default, and blocked) and first on
                   4 ranks of 2 hosts: recorded in the file, groups per count as the mode says, idle ranks
                   named, each row's metrics.rep_order (interleaved or blocked where groups took turns,
                   concurrent for one group; the pairs blocked); a one-node fleet run says there are no
                   pairs and measures the rest.
  fleet_only_html: a fleet-only run (--benchmarks fleet, 4 ranks on 2 hosts): its HTML report opens with
                   the verdict (the rule of docs/analysis.md, derived here from the JSON) and the
                   heatmaps, and draws no empty chart (each one not drawn says why in one line).
  fleet_resume_complete: --resume of a complete fleet-only run (4 ranks on 2 hosts) measures nothing
                   again ("nothing to resume", the file unchanged): its pairs and gpu_pairs points, whose
                   one row is at the job's full size, are done.
  fleet_bad_input: --outlier outside (0, 1), --pairs-rounds 0, --tiling bogus, GPUSCALE_TEST_HOSTS with the
                   wrong number of names, a bad slow-host item: one line each, exit 2.
"""
import json
import os
import re
import sys
import time

import e2e_common
from e2e_common import fail

ARGS = None
HOSTS8 = ",".join(f"n{i // 2}" for i in range(16))
# STREAM triad, all_reduce and the fleet group, small and quick, one thread per rank (16 ranks share 2 cores).
# --outlier 0.7: 16 busy ranks on 2 cores are not a cluster. Their noise is correlated in time (a rank
# starved for a second slows all its node's pairs): CI once saw a node 46% below the median, and a
# pair 51% below in both passes, with nothing planted. The rule at the default 10% is tested on
# seeded noise (tests/unit/analysis/test_outliers.cpp); here the planted fault (10x: 90% below) and
# the noise (well under 70%) are kept apart by the fraction.
PLAN = ["--backend", "cpu", "--quick", "--benchmarks", "stream.triad,all_reduce,fleet", "--threads", "1",
        "--placement", "out-of-place", "--outlier", "0.7"]
# The default rule (--outlier 0.1) against faults that take real time (core/fault_plan.h). Sequential
# tiling: on a cluster every GPU works on its own device, so a slow one's extra time costs the others
# nothing; here 16 ranks share 2 cores, and in concurrent groups the healthy ones finish first and
# leave the slow one alone with both cores, which hides most of a slept fault. Taking turns, every
# group measures under the same conditions (STREAM's repetitions interleaved across the groups, the
# pairs' twice when a suspect shows: harness/run/row_measure.cpp), while the others wait asleep
# (World::turn_barrier), not spinning on the cores the turn needs.
DEFAULT_RULE = ["--backend", "cpu", "--quick", "--benchmarks", "stream.triad,fleet", "--threads", "1",
                "--tiling", "sequential"]
CLEAN_LAUNCHES = 5


def work(name):  # a fresh output file's path (a leftover one and its journal removed)
    return e2e_common.work(name, fresh=True)


# The variables the cases set themselves, taken out of the caller's environment.
CLEAN = ("GPUSCALE_TEST_FAULT", "GPUSCALE_TEST_HOSTS")


def mpirun(n, args, extra_env, timeout=560):  # gpuscale run; a run past the timeout fails the case
    return e2e_common.mpirun(n, ["run"] + args, extra_env, timeout=timeout, env_drop=CLEAN,
                             on_timeout=f"mpirun -np {n} did not finish within {timeout} s")


def gs(*args, env=None):  # not echoed, no time limit
    return e2e_common.gs(*args, env_extra=env, timeout=None, env_drop=CLEAN, echo=False)


def load_valid(path):
    return e2e_common.load_valid(path, ARGS.schema, ARGS.gpuscale)


def check_fleet_shape(doc, tiling="concurrent"):
    hosts = [f"n{i}" for i in range(8)]
    if sorted(h["name"] for h in doc["hosts"]) != hosts:
        fail(f"hosts {[h['name'] for h in doc['hosts']]}, expected n0..n7 from GPUSCALE_TEST_HOSTS")
    if doc["plan"]["options"]["tiling"] != tiling:
        fail(f"plan.options.tiling {doc['plan']['options'].get('tiling')}, expected {tiling}")
    for r in doc["results"]:
        if r["benchmark"] in ("pairs", "gpu_pairs"):
            continue
        want, groups = 16 // r["gpu_count"], e2e_common.group_entries(r)
        if len(groups) != want:
            fail(f"{r['benchmark']} at {r['gpu_count']} GPUs: {len(groups)} groups, expected {want}")
        covered = sorted({h for g in groups for h in g["hosts"]})
        ranks = sorted(x for g in groups for x in g["ranks"])
        if covered != hosts or ranks != list(range(16)):
            fail(f"{r['benchmark']} at {r['gpu_count']} GPUs: groups cover {covered} / ranks {ranks}")
        if r["gpu_count"] <= 2 and any(len(g["hosts"]) != 1 for g in groups):
            fail(f"{r['benchmark']} at {r['gpu_count']} GPUs: a group leaves its node")
        s = r["group_summary"]
        if r["scope"] == "collective" and r["gpu_count"] == 1:  # no bandwidth at one rank: no group value
            if r["aggregate"] is not None or s["measured"] != 0:
                fail(f"{r['benchmark']} at 1 GPU: value {r['aggregate']}, {s['measured']} groups measured")
        elif r["status"] == "ok" and not (s["min"] <= r["aggregate"] <= s["max"]):
            fail(f"{r['benchmark']} at {r['gpu_count']}: value {r['aggregate']} outside its groups' {s}")
    pairs = [r for r in doc["results"] if r["benchmark"] == "pairs"]
    if sorted(r["params"]["collective"] for r in pairs) != ["all_reduce", "sendrecv"]:
        fail(f"pairs rows: {[r['params'] for r in pairs]}")
    for r in pairs:
        c = r["params"]["collective"]
        # The sendrecv rail by rail: its node matrix (each pair's slowest rail), then rails 0 and 1; the
        # all_reduce over both nodes' ranks: its node matrix alone.
        kinds = [(m["kind"], m.get("rail")) for m in r["matrices"]]
        want = [("node", None), ("rail", 0), ("rail", 1)] if c == "sendrecv" else [("node", None)]
        if kinds != want:
            fail(f"pairs {c}: matrices {kinds}, expected {want}")
        for m in r["matrices"]:
            v = m["values"]
            if sorted(m["hosts"]) != hosts or len(v) != 8 or any(len(row) != 8 for row in v):
                fail(f"pairs {c} {m['kind']} matrix: not 8 x 8: {m['hosts']}")
            for i in range(8):
                for j in range(8):
                    if (i == j) != (v[i][j] is None) or v[i][j] != v[j][i]:
                        fail(f"pairs {c} {m['kind']} {m.get('rail')}: cell {i},{j} is {v[i][j]} (full and symmetric expected)")
            if m["kind"] == "rail":  # each node's rank on the rail: its local rank `rail`
                if m["ranks"] != [[2 * n + m["rail"]] for n in range(8)]:
                    fail(f"pairs {c} rail {m['rail']}: ranks {m['ranks']}")
        if c == "sendrecv":
            node, rails = r["matrices"][0]["values"], [m["values"] for m in r["matrices"][1:]]
            for i in range(8):
                for j in range(8):
                    if i != j and abs(node[i][j] - min(x[i][j] for x in rails)) > 1e-9 * node[i][j]:
                        fail(f"pairs sendrecv: node cell {i},{j} {node[i][j]} is not its slowest rail's")
            if r["metrics"].get("rails") != 2:
                fail(f"pairs sendrecv: metrics.rails {r['metrics'].get('rails')}, expected 2")
        if r["status"] != "ok" or r["gpu_count"] != 16:
            fail(f"pairs row status {r['status']} at {r['gpu_count']} GPUs")
    gp = [r for r in doc["results"] if r["benchmark"] == "gpu_pairs"]
    if len(gp) != 1 or sorted(m["hosts"][0] for m in gp[0]["matrices"]) != hosts:
        fail("gpu_pairs: expected one row with a GPU-pair matrix per node")
    for m in gp[0]["matrices"]:
        if m["kind"] != "gpu" or m["values"][0][1] is None:
            fail(f"gpu_pairs matrix of {m['hosts'][0]}: {m}")


def case_clean():
    out = work("clean.json")
    p = mpirun(16, PLAN + ["--fail-on-outliers", "-o", out], {"GPUSCALE_TEST_HOSTS": HOSTS8})
    if p.returncode != 0:
        fail(f"unplanted run: exit {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    doc = load_valid(out)
    check_fleet_shape(doc)
    if doc["analysis"]["outliers"] or doc["analysis"]["outlier_hosts"]:
        fail(f"noise alone named outliers: {json.dumps(doc['analysis']['outliers'])[:2000]}")
    if "fleet outliers" in p.stdout:
        fail("the summary lists outliers for an unplanted run")
    for r in doc["results"]:
        if r["benchmark"] == "pairs" and r["metrics"].get("passes") not in (1, 2, 3):
            fail(f"pairs row without its passes (1; 2 when a suspect was confirmed, 3 when its pairs ran again): "
                 f"{r['metrics']}")
    print(f"ok: 16 ranks as 8 nodes, {len(doc['results'])} rows, no outlier")


def case_clean_default():
    """Five unplanted launches in a row at the default rule: none names anything."""
    for launch in range(1, CLEAN_LAUNCHES + 1):
        out = work(f"clean-default-{launch}.json")
        p = mpirun(16, DEFAULT_RULE + ["--fail-on-outliers", "-o", out], {"GPUSCALE_TEST_HOSTS": HOSTS8})
        doc = load_valid(out)
        a = doc["analysis"]
        if p.returncode != 0 or a["outliers"] or a["outlier_hosts"] or "fleet outliers" in p.stdout:
            fail(f"unplanted launch {launch} of {CLEAN_LAUNCHES} at the default --outlier: exit {p.returncode}, "
                 f"outliers {json.dumps(a['outliers'])[:2000]}\n{p.stderr[-2000:]}")
        if launch == 1:
            check_fleet_shape(doc, "sequential")
        print(f"ok: unplanted launch {launch}: no outlier")


def check_named_alone(p, out, host, tag):
    """`host`, and no other, in the summary, the JSON, the drain list and the heatmaps; exit 1."""
    if p.returncode != 1:
        fail(f"{tag} with --fail-on-outliers: exit {p.returncode}, expected 1:\n{p.stderr[-3000:]}")
    doc = load_valid(out)
    a = doc["analysis"]
    if a["outlier_hosts"] != [host]:
        fail(f"{tag}: outlier_hosts {a['outlier_hosts']}, expected only {host}: {json.dumps(a['outliers'])[:3000]}")
    for o in a["outliers"]:
        if host not in o["hosts"]:
            fail(f"{tag}: an outlier without {host}: {o}")
    summary = p.stdout[p.stdout.find("fleet outliers"):].split("\nresults:")[0]
    others = {h for h in re.findall(r"\bn[0-7]\b", summary)} - {host}
    if f"suspect hosts: {host}\n" not in summary or others:
        fail(f"{tag}: the summary does not name {host} alone:\n{summary}")
    r = gs("report", "--drain-list", out)
    if r.returncode != 0 or r.stdout != f"{host}\n":
        fail(f"{tag}: report --drain-list: exit {r.returncode}, {r.stdout!r} {r.stderr}")
    html = work(os.path.basename(out) + ".html")  # a leftover of an earlier run removed
    r = gs("report", out, "--html", html)
    if r.returncode != 0:
        fail(f"{tag}: report --html: exit {r.returncode}: {r.stderr}")
    with open(html) as f:
        heat = re.findall(r"<svg[^>]*class=\"[^\"]*heatmap[^\"]*\".*?</svg>", f.read(), re.S)
    marked = {t.replace("\u25b6", "").strip()
              for t in re.findall(r"class=\"[^\"]*suspect[^\"]*\"[^>]*>([^<]+)<", "".join(heat))}
    if host not in marked or marked - {host, "GPU0", "GPU1"}:
        fail(f"{tag}: the heatmaps mark {marked}, expected {host} alone")
    return doc


def case_slow_mem():
    """A real-time slow-mem at 10x on one random host (the seed printed) at the default rule."""
    host = f"n{e2e_common.seeded_rng('slow_mem').randrange(8)}"
    out = work("slow-mem.json")
    p = mpirun(16, DEFAULT_RULE + ["--fail-on-outliers", "-o", out],
               {"GPUSCALE_TEST_HOSTS": HOSTS8, "GPUSCALE_TEST_FAULT": f"slow-mem:{host}:10"})
    doc = check_named_alone(p, out, host, f"slow-mem:{host}:10")
    kinds = {(o["kind"], o.get("benchmark", "")) for o in doc["analysis"]["outliers"]}
    print(f"ok: slow-mem:{host}:10 names {host} alone ({len(doc['analysis']['outliers'])} records {sorted(kinds)}), "
          f"exit 1, drain list, heatmap")


def case_slow_host():
    # The reported variant (exact: the factor is the rank's own time under the shared load): the
    # concurrent tiling at --outlier 0.7, where a slept fault would run alone at the end (DEFAULT_RULE).
    out = work("slow.json")
    p = mpirun(16, PLAN + ["--fail-on-outliers", "-o", out],
               {"GPUSCALE_TEST_HOSTS": HOSTS8, "GPUSCALE_TEST_FAULT": "slow-host-reported:n3:10"})
    if p.returncode != 1:
        fail(f"planted slow host with --fail-on-outliers: exit {p.returncode}, expected 1:\n{p.stderr[-3000:]}")
    doc = load_valid(out)
    check_fleet_shape(doc)
    a = doc["analysis"]
    if a["outlier_hosts"] != ["n3"]:
        fail(f"outlier_hosts {a['outlier_hosts']}, expected only n3: {json.dumps(a['outliers'])[:3000]}")
    for o in a["outliers"]:
        if "n3" not in o["hosts"]:
            fail(f"an outlier without n3: {o}")
    # A suspect in the first pass of node pairs is confirmed by a second (harness/benchmarks/fleet/fleet_pairs.cpp),
    # and the pairs still suspect by a third of their own. On 16 ranks sharing 2 cores a matrix's healthy
    # cells may spread so far that the rule can name nothing in it (its floor is 0): the sendrecv's rails
    # (1.3-7.9 GB/s, 2 of 4 launches), and the all_reduce's too (healthy pairs 23-32% apart, 3.5 of them
    # past 100%: 4 of 8 launches on 2026-12-08, with and without -I). There one pass and no record of that
    # row is right; a record of a row without its confirming pass is not.
    passes = {r["params"]["collective"]: r["metrics"].get("passes") for r in doc["results"] if r["benchmark"] == "pairs"}
    named = {c: [o for o in a["outliers"] if o.get("benchmark") == "pairs" and (o.get("params") or {}).get("collective") == c]
             for c in passes}
    if set(passes) != {"sendrecv", "all_reduce"} or any(n not in (1, 2, 3) for n in passes.values()) or \
            any(named[c] and passes[c] == 1 for c in passes):
        fail(f"pairs rows with a planted slow host measured in passes {passes} "
             f"({ {c: len(v) for c, v in named.items()} } records), expected every named row confirmed in a second pass")
    print(f"pairs passes {passes}, records { {c: len(v) for c, v in named.items()} }")
    summary = p.stdout[p.stdout.find("fleet outliers"):]
    if "suspect hosts: n3\n" not in summary or re.search(r"\bn[0-24-7]\b", summary.split("\nresults:")[0]):
        fail(f"the summary does not name n3 alone:\n{summary}")
    r = gs("report", "--drain-list", out)
    if r.returncode != 0 or r.stdout != "n3\n":
        fail(f"report --drain-list: exit {r.returncode}, {r.stdout!r} {r.stderr}")
    html = work("slow.html")
    r = gs("report", out, "--html", html)
    if r.returncode != 0:
        fail(f"report --html: exit {r.returncode}: {r.stderr}")
    with open(html) as f:
        page = f.read()
    heat = re.findall(r"<svg[^>]*class=\"[^\"]*heatmap[^\"]*\".*?</svg>", page, re.S)
    if not heat:
        fail("the HTML report has no heatmap")
    # Suspect members' labels carry the class "suspect" (and a marker before the name).
    marked = {t.replace("\u25b6", "").strip()
              for t in re.findall(r"class=\"[^\"]*suspect[^\"]*\"[^>]*>([^<]+)<", "".join(heat))}
    if "n3" not in marked or marked - {"n3", "GPU0", "GPU1"}:
        fail(f"the heatmaps mark {marked}, expected n3 alone")
    print(f"ok: n3 alone named ({len(a['outliers'])} records), exit 1, drain list n3, heatmap marks n3")


def case_slow_nic():
    """A real-time slow-nic:HOST:RAIL:10 on a random host and rail (seed printed) at the default rule."""
    pick = e2e_common.seeded_rng("slow_nic")
    node, rail = pick.randrange(8), pick.randrange(2)
    host, rank, fault = f"n{node}", 2 * node + rail, f"slow-nic:n{node}:{rail}:10"
    out = work("slow-nic.json")
    # --tiling sequential: the pairs of a round take turns, and a pair's rails too (fleet_pairs.cpp says why).
    p = mpirun(16, ["--backend", "cpu", "--quick", "--benchmarks", "pairs", "--threads", "1", "--tiling", "sequential",
                    "-o", out], {"GPUSCALE_TEST_HOSTS": HOSTS8, "GPUSCALE_TEST_FAULT": fault})
    if p.returncode != 0:
        fail(f"{fault}: exit {p.returncode}:\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    doc = load_valid(out)
    a = doc["analysis"]
    dump = json.dumps(a["outliers"])[:3000]
    if a["outlier_hosts"] != [host]:
        fail(f"{fault}: outlier_hosts {a['outlier_hosts']}, expected only {host}: {dump}")
    on_rail = [o for o in a["outliers"] if "rail" in o]
    named = [o for o in on_rail if o["kind"] == "node" and o["hosts"] == [host] and o["rail"] == rail]
    if len(named) != 1 or named[0]["ranks"] != [rank]:
        fail(f"{fault}: the rail-{rail} matrix does not name {host} (rank {rank}) once: {dump}")
    if named[0]["nics"] != [None] or "CPU backend" not in named[0].get("nic_note", ""):
        fail(f"the CPU backend's rail record: nics {named[0]['nics']}, note {named[0].get('nic_note')!r}")
    for o in a["outliers"]:
        if host not in o["hosts"] or o.get("rail", rail) != rail:
            fail(f"{fault}: an outlier of another host or rail: {o}")
        if "rail" not in o and o["kind"] == "node" and o.get("explained_by_rail") != rail:
            fail(f"{fault}: a node-matrix record of {host} not explained by its rail: {o}")
    passes = {r["params"]["collective"]: r["metrics"].get("passes") for r in doc["results"] if r["benchmark"] == "pairs"}
    if passes.get("sendrecv") not in (2, 3):
        fail(f"pairs passes {passes}: the sendrecv's suspect rail was not confirmed by a second pass")
    summary = p.stdout[p.stdout.find("fleet outliers"):].split("\nresults:")[0]
    others = set(re.findall(r"\bn[0-7]\b", summary)) - {host}
    if (f"suspect hosts: {host}\n" not in summary or f"on rail {rail}" not in summary
            or f"on rail {1 - rail}" in summary or others):
        fail(f"{fault}: the summary does not name {host} on rail {rail} alone:\n{summary}")
    html = work("slow-nic.html")
    r = gs("report", out, "--html", html)
    if r.returncode != 0:
        fail(f"report --html: exit {r.returncode}: {r.stderr}")
    with open(html) as f:
        page = f.read()
    rails = re.findall(r"<svg[^>]*data-kind=\"rail\" data-rail=\"(\d+)\".*?</svg>", page, re.S)
    heat = re.search(rf"<svg[^>]*data-kind=\"rail\" data-rail=\"{rail}\".*?</svg>", page, re.S)
    marked = {t.replace("\u25b6", "").strip()
              for t in re.findall(r"class=\"[^\"]*suspect[^\"]*\"[^>]*>([^<]+)<", heat.group(0) if heat else "")}
    if rails != [str(rail)] or marked != {host}:
        fail(f"{fault}: the HTML draws rails {rails} (expected {rail} alone) marking {marked} (expected {host})")
    print(f"ok: {fault}: {host} on rail {rail} alone ({len(a['outliers'])} records, {len(on_rail)} on a rail), "
          f"heatmap of rail {rail} marks {host}")


# A slow host is named, not taken for a stall (docs/reliability.md, the watchdog's progress rule): a
# real-time slow-host:HOST:10 (every operation and pass of that host's ranks really takes 10x, the
# others wait for it in each collective) over STREAM, the 1M all_reduce at every count and the node
# pairs. Sequential tiling, as DEFAULT_RULE, for a fault that takes real time (concurrent node pairs on
# 2 cores spread 0.03-6 GB/s: 1 of 3 such launches named nothing), at --outlier 0.7 as PLAN (90% below
# against noise under 70%). --watchdog PROGRESS_GAP_S, below the slow rows' own length (9-27 s on the
# loaded 2-core VM), so a watchdog that judged a point's total time would end such a launch with exit 5:
# the case fails when the watchdog fired, and when no launch had a row that outlasted it (it would
# prove nothing; one launch in 10 had none, its rows shorter on a quieter moment).
PROGRESS_GAP_S = 10
PROGRESS_PLAN = ["--backend", "cpu", "--quick", "--benchmarks", "stream.triad,all_reduce,pairs", "--threads", "1",
                 "--placement", "out-of-place", "--tiling", "sequential", "--outlier", "0.7", "-b", "1M", "-e", "1M",
                 "--watchdog", str(PROGRESS_GAP_S)]
PROGRESS_LAUNCHES = 5


def point_seconds(stderr):
    """The longest row of a run, in seconds, from its progress lines ("[3/12] ... (elapsed 1:05, ETA ...")."""
    marks = [0] + [int(m) * 60 + int(s) for m, s in re.findall(r"^gpuscale: \[\d+/\d+\] .*\(elapsed (\d+):(\d\d)",
                                                                   stderr, re.M)]
    return max((b - a for a, b in zip(marks, marks[1:])), default=0)


def slow_host_progress(launches):
    pick = e2e_common.seeded_rng("slow_host_progress")
    outlasted = 0  # launches with a row longer than the watchdog: a total-time watchdog would have ended them
    for launch in range(1, launches + 1):
        host = f"n{pick.randrange(8)}"
        fault = f"slow-host:{host}:10"
        out = work(f"slow-host-progress-{launch}.json")
        t0 = time.monotonic()
        p = mpirun(16, PROGRESS_PLAN + ["--fail-on-outliers", "-o", out],
                   {"GPUSCALE_TEST_HOSTS": HOSTS8, "GPUSCALE_TEST_FAULT": fault}, timeout=900)
        took = time.monotonic() - t0
        if p.returncode == 5 or "watchdog:" in p.stderr:
            fail(f"launch {launch}, {fault}: the watchdog took a slow host for a stall (exit {p.returncode}):\n"
                 f"{p.stderr[-3000:]}")
        check_named_alone(p, out, host, f"launch {launch}, {fault}")
        longest = point_seconds(p.stderr)
        outlasted += longest > PROGRESS_GAP_S
        print(f"ok: launch {launch} of {launches}: {fault} finished (exit 1) in {took:.0f} s, its longest row "
              f"{longest} s (--watchdog {PROGRESS_GAP_S}), {host} named alone", flush=True)
    if not outlasted:
        fail(f"no launch had a row longer than --watchdog {PROGRESS_GAP_S}: the case proves nothing on this machine")
    print(f"ok: {outlasted} of {launches} launches had a row longer than --watchdog {PROGRESS_GAP_S}")


def case_slow_host_progress():
    """Five launches, each on a random host (by hand: 1-2 minutes each on the loaded 2-core VM)."""
    slow_host_progress(PROGRESS_LAUNCHES)


def case_modes():
    hosts4 = "a,a,b,b"
    for mode, order, groups_at in (("sequential", "interleaved", {1: 4, 2: 2, 4: 1}),
                                   ("sequential", "blocked", {1: 4, 2: 2, 4: 1}),
                                   ("first", "interleaved", {1: 1, 2: 1, 4: 1})):
        out = work(f"{mode}_{order}.json")
        p = mpirun(4, ["--backend", "cpu", "--quick", "--benchmarks", "stream.triad,pairs", "--threads", "1",
                       "--tiling", mode, "--rep-order", order, "-o", out], {"GPUSCALE_TEST_HOSTS": hosts4})
        if p.returncode != 0:
            fail(f"--tiling {mode} --rep-order {order}: exit {p.returncode}: {p.stderr[-2000:]}")
        doc = load_valid(out)
        recorded = (doc["plan"]["options"]["tiling"], doc["plan"]["options"].get("rep_order"))
        if recorded != (mode, order):
            fail(f"--tiling {mode} --rep-order {order} recorded as {recorded}")
        for r in doc["results"]:
            # Groups that took turns say how their repetitions were ordered; one group measured alone
            # is concurrent; the node pairs keep a pair's repetitions in its round (blocked).
            n = len(e2e_common.group_entries(r))
            want = "blocked" if r["benchmark"] == "pairs" else (order if n > 1 else "concurrent")
            if r["status"] == "ok" and r["metrics"].get("rep_order") != want:
                fail(f"--tiling {mode} --rep-order {order}: {r['benchmark']} at {r['gpu_count']} GPUs: "
                     f"rep_order {r['metrics'].get('rep_order')}, expected {want}")
            if r["benchmark"] != "stream.triad":
                continue
            idle = r.get("idle_ranks", [])
            if n != groups_at[r["gpu_count"]] or len(idle) != 4 - n * r["gpu_count"]:
                fail(f"--tiling {mode} at {r['gpu_count']} GPUs: {n} groups, idle {idle}")
    out = work("one_node.json")
    p = mpirun(2, ["--backend", "cpu", "--quick", "--benchmarks", "stream.triad,fleet", "--threads", "1", "-o", out], {})
    doc = load_valid(out) if os.path.exists(out) else None
    pairs = [r for r in (doc or {"results": []})["results"] if r["benchmark"] == "pairs"]
    if p.returncode != 0 or not pairs or any(r["status"] != "skipped" or "one node" not in r["errors"][0] for r in pairs):
        fail(f"one-node fleet run: exit {p.returncode}, pairs rows {pairs}: {p.stderr[-2000:]}")
    if not any(r["benchmark"] == "gpu_pairs" and r["status"] == "ok" for r in doc["results"]):
        fail("one-node fleet run: the GPU pairs were not measured")
    print("ok: sequential (interleaved, blocked) and first tiling as recorded, each row's rep_order as it ran; a "
          "one-node fleet run skips the pairs, saying why")


def expected_verdict(doc):
    """The verdict of docs/analysis.md ("The verdict"), from the file: FAIL, WARN or PASS."""
    a, health = doc.get("analysis") or {}, doc.get("health") or {}
    counts = health.get("counts") or {}
    if any(r["status"] in ("invalid", "failed") for r in doc["results"]) or a.get("outliers") or counts.get("FAIL"):
        return "FAIL"
    if counts.get("WARN") or a.get("stragglers") or doc["summary"].get("complete") is False:
        return "WARN"
    return "PASS"


def case_fleet_only_html():
    out = work("fleet-only.json")
    p = mpirun(4, ["--backend", "cpu", "--quick", "--benchmarks", "fleet", "--threads", "1", "-o", out],
               {"GPUSCALE_TEST_HOSTS": "a,a,b,b"}, timeout=240)
    if p.returncode != 0:
        fail(f"fleet-only run: exit {p.returncode}: {p.stderr[-2000:]}")
    doc = load_valid(out)
    if {r["benchmark"] for r in doc["results"]} != {"pairs", "gpu_pairs"}:
        fail(f"a fleet-only run measured {sorted({r['benchmark'] for r in doc['results']})}")
    want = expected_verdict(doc)
    summary = p.stdout[p.stdout.find("\nverdict: ") + 1:]
    if not summary.startswith(f"verdict: {want}") or summary.find("\npairs ") < 0:
        fail(f"the run summary does not open with the verdict {want}, then the tables: {p.stdout[-3000:]}")
    html = work("fleet-only.html")
    r = gs("report", out, "--html", html)
    if r.returncode != 0:
        fail(f"report --html: exit {r.returncode}: {r.stderr}")
    with open(html) as f:
        page = f.read()
    verdict = page.find(f'<div class="verdict" data-verdict="{want}">')
    charts = re.findall(r"<svg[^>]*>.*?</svg>", page, re.S)
    if verdict < 0 or not charts or verdict > page.find("<svg") or verdict > page.find("<h3>Environment</h3>"):
        fail(f"the page does not open with the verdict {want}: at {verdict}, first chart at {page.find('<svg')}")
    if 'data-chart="heatmap"' not in charts[0]:
        fail(f"the first chart is not a heatmap: {charts[0][:200]}")
    for c in charts:
        empty = ">no data</text>" in c or ('data-chart="heatmap"' not in c and "<polyline" not in c and 'class="bar' not in c)
        if empty:
            fail(f"an empty chart is drawn: {c[:300]}")
    if "scaling efficiency: not drawn, the run measured one GPU count</p>" not in page:
        fail("the page does not say why the scaling-efficiency charts are absent")
    print(f"ok: verdict {want} first, {len(charts)} charts, the first a heatmap, none empty")


def case_resume_complete():
    out = work("fleet-complete.json")
    args = ["--backend", "cpu", "--quick", "--benchmarks", "fleet", "--threads", "1"]
    p = mpirun(4, args + ["-o", out], {"GPUSCALE_TEST_HOSTS": "a,a,b,b"}, timeout=240)
    if p.returncode != 0:
        fail(f"fleet-only run: exit {p.returncode}: {p.stderr[-2000:]}")
    doc = load_valid(out)
    whole = [e for e in doc["plan"]["point_list"] if e.get("whole_job")]
    if len(whole) != len(doc["plan"]["point_list"]) or not whole:
        fail(f"the fleet points are not marked whole_job in plan.point_list: {doc['plan']['point_list']}")
    with open(out, "rb") as f:
        before = f.read()
    p = mpirun(4, ["--resume", out], {"GPUSCALE_TEST_HOSTS": "a,a,b,b"}, timeout=240)
    if p.returncode != 0 or "nothing to resume" not in p.stdout:
        fail(f"--resume of a complete fleet run: exit {p.returncode}, stdout {p.stdout[-1000:]!r}, stderr {p.stderr[-1000:]!r}")
    with open(out, "rb") as f:
        if f.read() != before:
            fail("--resume of a complete fleet run rewrote the file (a point measured again)")
    print(f"ok: {len(whole)} whole-job points, nothing resumed")


def case_bad_input():
    base = ["--backend", "cpu", "--quick", "--benchmarks", "stream.triad", "-o", work("bad.json")]
    for args, env, needle in [
            (["--outlier", "0"], {}, "invalid --outlier '0'"),
            (["--outlier", "1.5"], {}, "invalid --outlier '1.5'"),
            (["--pairs-rounds", "0"], {}, "invalid --pairs-rounds '0'"),
            (["--tiling", "bogus"], {}, "invalid --tiling 'bogus'"),
            ([], {"GPUSCALE_TEST_HOSTS": "a,b,c"}, "GPUSCALE_TEST_HOSTS: it names 3 hosts for a world of 2 ranks"),
            ([], {"GPUSCALE_TEST_FAULT": "slow-host:n1:0.5"}, "GPUSCALE_TEST_FAULT"),
            ([], {"GPUSCALE_TEST_FAULT": "slow-disk:n1:2"}, "'slow-disk:n1:2': not a known fault kind"),
            ([], {"GPUSCALE_TEST_HOSTS": "n1,n1", "GPUSCALE_TEST_FAULT": "slow-nic:n1:2:3"},
             "host 'n1' runs 2 rank(s) (local indices 0 to 1), not 2"),
            ([], {"GPUSCALE_TEST_FAULT": "flaky:n1:1.5:3"}, "the probability is not a number in [0, 1]"),
            ([], {"GPUSCALE_TEST_HOSTS": "a,b", "GPUSCALE_TEST_FAULT": "slow-mem:n9:3"},
             "no rank of the job runs on host 'n9'")]:
        p = mpirun(2, base + args, env, timeout=120)
        lines = [l for l in p.stderr.splitlines() if l.startswith("gpuscale:")]
        if p.returncode != 2 or len(lines) != 1 or needle not in lines[0]:
            fail(f"{args} {env}: exit {p.returncode}, lines {lines}, expected one with {needle!r}")
        print(f"ok: {lines[0]}")


def parse():
    global ARGS
    ARGS = e2e_common.parse_args("--mpiexec")
    return ARGS


def main():
    cores = e2e_common.CORES
    # The 16-rank cases are timing comparisons: they run in the normal build only, not in the
    # sanitizer run (label cpu), whose uneven slowdown is not a planted fault; modes and bad_input,
    # which run the same code, stay in it.
    # RUN_SERIAL: nothing else of the suite runs beside them, so its load is not their noise.
    timed = {"RUN_SERIAL": "TRUE", "TIMEOUT": 600, "LABELS": "e2e;fleet"}
    cases = {"clean": (case_clean, timed), "slow_host": (case_slow_host, timed),
             "modes": (case_modes, cores), "only_html": (case_fleet_only_html, cores),
             "resume_complete": (case_resume_complete, cores), "bad_input": (case_bad_input, {})}
    if sys.argv[1:] != ["--cmake"]:  # by hand only (the module's docstring says why): --case NAME
        cases.update({"clean_default": (case_clean_default, dict(timed, TIMEOUT=CLEAN_LAUNCHES * 400)),
                      "slow_mem": (case_slow_mem, timed), "slow_nic": (case_slow_nic, timed),
                      "slow_host_progress": (case_slow_host_progress, dict(timed, TIMEOUT=PROGRESS_LAUNCHES * 900))})
    e2e_common.run_case("e2e_fleet_", {"TIMEOUT": 300, "LABELS": "e2e;cpu;fleet"}, cases, parse)


if __name__ == "__main__":
    main()
