#!/usr/bin/env python3
"""A result file is checked for what it means (results/result_semantics.h, issue 29).

Three real runs are made once (case `make`, the e2e_semantics fixture): 1 rank, 4 ranks on one host,
and a fleet run of 4 ranks as 2 test hosts (tiled counts, node and GPU pair matrices). Then:

  untouched:  each real file, its merge, and its resume with nothing left to measure pass validate and
              every reader (exit 0).
  mutations:  each file is broken one relation at a time (the classes of issue 29: summary lies, row
              status against content, ranks, hosts and groups, matrices, plan and analysis, times);
              validate names the contradiction (exit 2, at most 20 lines then a count), and every
              other reader (report, compare, check, reference, merge, seal, history add, run --resume)
              refuses the file in one line with the same first contradiction, exit 2.
  lenient:    report --lenient and compare --lenient read a file that contradicts itself, mark its
              figures UNTRUSTED, and still refuse a figure no reader can use.
"""
import copy
import json
import os
import re

import e2e_common
import result_rows
from e2e_common import fail

ARGS = None
FIXTURE = {"FIXTURES_REQUIRED": "e2e_semantics"}
QUICK = ["run", "--backend", "cpu", "--quick", "--threads", "1", "--benchmarks", "stream.triad,all_reduce",
         "--placement", "out-of-place", "--ops", "sum", "-b", "1K", "-e", "4K"]
FLEET = ["run", "--backend", "cpu", "--quick", "--threads", "1", "--benchmarks", "stream.triad,fleet",
         "--outlier", "0.9"]
KINDS = ("one", "four", "fleet")


def real(kind):
    return os.path.join(ARGS.workdir, f"{kind}.json")


def fresh_real(kind):  # the make case's output, a leftover of an earlier run (and its journal) removed
    return e2e_common.work(f"{kind}.json", fresh=True)


def work(name):
    return e2e_common.work(name, fresh=True)


def gs(*args):
    return e2e_common.gs(*args, timeout=120, echo=False, env_drop=("GPUSCALE_TEST_FAULT", "GPUSCALE_TEST_HOSTS"))


def load(kind):
    if not os.path.exists(real(kind)):
        fail(f"{real(kind)} is missing: the make case (fixture e2e_semantics) did not run")
    with open(real(kind)) as f:
        return json.load(f)


def save(doc, name):
    path = work(name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def case_make():
    runs = {"one": (1, QUICK, {}), "four": (4, QUICK, {}),
            "fleet": (4, FLEET, {"GPUSCALE_TEST_HOSTS": "n0,n0,n1,n1"})}
    for kind, (n, args, env) in runs.items():
        p = e2e_common.mpirun(n, args + ["-o", fresh_real(kind)], env, timeout=300, env_drop=("GPUSCALE_TEST_FAULT",))
        if p.returncode not in (0, 1) or not os.path.exists(real(kind)):
            fail(f"the {kind} run: exit {p.returncode}\n{p.stderr[-2000:]}")
        print(f"ok: {kind} run written ({len(load(kind)['results'])} rows)")


# --- Mutations: one relation each, and the words validate names it with ---

def rows_of(doc, pred):
    return [r for r in doc["results"] if pred(r)]


def first_ok(doc, pred=lambda r: True):
    rows = rows_of(doc, lambda r: r["status"] == "ok" and pred(r))
    if not rows:
        fail("the real file has no ok row to break")
    return rows[0]


def m_summary_valid(doc):
    r = first_ok(doc, lambda r: r["aggregate"] is not None)
    r["status"] = "failed"
    for k in ("aggregate", "scaling_efficiency", "fraction_of_peak"):
        r[k] = None
    r["errors"] = ["rank 0: out of memory"]
    return "/summary/valid is true, but a row is invalid or failed"


def m_summary_complete(doc):
    doc["results"].pop()
    doc["summary"]["rows"] -= 1
    doc["summary"]["ok"] -= 1
    return "/summary/complete is true, but planned point"


def m_summary_counts(doc):
    doc["summary"]["rows"] += 3
    return "/summary/rows is"


def m_all_ranks_invalid(doc):
    first_ok(doc)["ranks"]["valid"] = False
    return "status ok, but every rank failed its check"


def m_invalid_with_aggregate(doc):
    r = first_ok(doc, lambda r: r["aggregate"] is not None)
    r["status"] = "invalid"
    r["ranks"]["valid"] = False
    r["errors"] = ["rank 0: 4 wrong values"]
    doc["summary"].update(ok=doc["summary"]["ok"] - 1, invalid=1, valid=False, exit_code=1)
    return "status invalid with an aggregate"


def m_skipped_with_values(doc):
    r = first_ok(doc, lambda r: any(v is not None for v in r["ranks"]["value"]))
    r["status"] = "skipped"
    for k in ("aggregate", "scaling_efficiency", "fraction_of_peak"):
        r[k] = None
    r["errors"] = []
    doc["summary"].update(ok=doc["summary"]["ok"] - 1, skipped=doc["summary"]["skipped"] + 1)
    return "status skipped, but a rank has a value"


def m_unknown_host(doc):
    doc["results"][0]["ranks"]["hosts"] = [f"ghost{i}" for i in range(len(doc["results"][0]["ranks"]["hosts"]))]
    return "that /hosts does not: ghost0"


def m_hosts_ranks(doc):
    doc["hosts"][0]["ranks"] = doc["hosts"][0]["ranks"][:-1] or [7]
    return "/hosts/0/ranks: host"


def m_rank_twice(doc):
    doc["ranks"].append(copy.deepcopy(doc["ranks"][0]))
    doc["mpi"]["world_size"] = len(doc["ranks"]) - 1
    return "rank 0 is listed twice"


def m_world_size(doc):
    doc["mpi"]["world_size"] += 1
    return "/mpi/world_size is"


def tiled_row(doc):
    rows = rows_of(doc, lambda r: "groups" in r and len(result_rows.group_entries(r)) >= 2)
    if not rows:
        fail("the real file has no tiled row")
    return rows[0]


def explicit_groups(r):
    """The row's groups with ranks and hosts written out (the file may leave them implied)."""
    groups = result_rows.group_entries(r)
    r["groups"]["ranks"] = [g["ranks"] for g in groups]
    r["groups"]["hosts"] = [[r["ranks"]["hosts"].index(h) for h in g["hosts"]] for g in groups]
    return r["groups"]


def m_group_outside(doc):
    g = explicit_groups(tiled_row(doc))
    g["ranks"][-1] = [99] * len(g["ranks"][-1])
    return "which the row does not list"


def m_group_overlap(doc):
    r = tiled_row(doc)
    g = explicit_groups(r)
    g["ranks"][1] = list(g["ranks"][0])
    return "is in group 0 and group 1"


def m_group_summary(doc):
    tiled_row(doc)["group_summary"]["count"] += 1
    return "group_summary.count"


def m_idle_measured(doc):
    r = tiled_row(doc)
    r["idle_ranks"] = [r["ranks"]["rank"][0]]
    return "is one of the ranks that measured"


def m_nine_nodes(doc):
    r = first_ok(doc, lambda r: r["gpu_count"] >= 2 and r["nodes"] == 1)
    r["nodes"], r["topology"] = 9, "inter-node"
    return "9 nodes for a group of"


def matrix_row(doc):
    rows = rows_of(doc, lambda r: r.get("matrices"))
    if not rows:
        fail("the fleet file has no matrix")
    return rows[0]


def m_matrix_shape(doc):
    m = matrix_row(doc)["matrices"][0]
    m["values"] = m["values"][:-1]
    return "values is not"


def m_matrix_members(doc):
    m = matrix_row(doc)["matrices"][0]
    m["hosts"] = list(reversed(m["hosts"]))
    return "but its rank"


def m_matrix_huge(doc):
    m = matrix_row(doc)["matrices"][0]
    n = 400
    m["hosts"] = m["labels"] = [f"x{i}" for i in range(n)]
    m.pop("ranks", None)
    m["values"] = m["spread_down"] = m["spread_up"] = [[None] * n for _ in range(n)]
    return "a pair matrix of 400 nodes"


def m_not_in_plan(doc):
    doc["plan"]["benchmarks"] = [b for b in doc["plan"]["benchmarks"] if b != doc["results"][0]["benchmark"]]
    return "is not in /plan/benchmarks"


def m_point_twice(doc):
    doc["results"].append(copy.deepcopy(doc["results"][0]))
    doc["summary"]["rows"] += 1
    doc["summary"][doc["results"][0]["status"]] += 1
    return "the same benchmark, params and gpu_count as /results/0"


def m_empty_point_list(doc):
    doc["plan"]["point_list"] = []
    doc["plan"]["points"] = 0
    return "not in /plan/point_list"


def m_straggler(doc):
    r = first_ok(doc)
    doc.setdefault("analysis", {"straggler_threshold": 0.1, "stragglers": []})
    doc["analysis"]["stragglers"] = [{"benchmark": r["benchmark"], "params": r["params"], "gpu_count": r["gpu_count"],
                                      "rank": 99, "host": doc["hosts"][0]["name"], "device_index": 0, "uuid": "-",
                                      "pci_bus_id": "-", "value": 1.0, "median": 2.0, "deficit": 0.5,
                                      "unit": r["unit"]}]
    return "/analysis/stragglers/0: rank 99 in a world of"


def m_timestamp(doc):
    doc["created_utc"] = "2026-13-04T99:00:00Z"
    return "/created_utc: 2026-13-04T99:00:00Z is not a time on the calendar"


MUTATIONS = {  # name: (the kinds of file it breaks, the mutation)
    "summary_valid": (KINDS, m_summary_valid), "summary_complete": (KINDS, m_summary_complete),
    "summary_counts": (KINDS, m_summary_counts), "all_ranks_invalid": (KINDS, m_all_ranks_invalid),
    "invalid_with_aggregate": (KINDS, m_invalid_with_aggregate), "skipped_with_values": (KINDS, m_skipped_with_values),
    "unknown_host": (KINDS, m_unknown_host), "hosts_ranks": (KINDS, m_hosts_ranks), "rank_twice": (KINDS, m_rank_twice),
    "world_size": (KINDS, m_world_size), "group_outside": (("four", "fleet"), m_group_outside),
    "group_overlap": (("four", "fleet"), m_group_overlap), "group_summary": (("four", "fleet"), m_group_summary),
    "idle_measured": (("four", "fleet"), m_idle_measured), "nine_nodes": (("four", "fleet"), m_nine_nodes),
    "matrix_shape": (("fleet",), m_matrix_shape), "matrix_members": (("fleet",), m_matrix_members),
    "matrix_huge": (("fleet",), m_matrix_huge), "not_in_plan": (KINDS, m_not_in_plan),
    "point_twice": (KINDS, m_point_twice), "empty_point_list": (KINDS, m_empty_point_list),
    "straggler": (KINDS, m_straggler), "timestamp": (KINDS, m_timestamp),
}


def our_lines(stderr):
    return [l for l in stderr.splitlines() if l.startswith("gpuscale:") and not re.match(r"gpuscale: \w+ backend \(", l)]


def refused_alike(p, what, first):
    """`p` refused its file in one line, exit 2, naming `first` (the validator's first contradiction)."""
    lines = our_lines(p.stderr)
    if p.returncode != 2 or len(lines) != 1 or "contradicts itself: " + first not in lines[0]:
        fail(f"{what}: exit {p.returncode}, expected 2 and one line naming {first!r}:\n{p.stderr[-1500:]}")
    if "`gpuscale validate " not in lines[0]:
        fail(f"{what}: the refusal does not point to gpuscale validate: {lines[0]}")


def readers_refuse(path, tag, first, base):
    ref = work(f"{tag}-ref.json")
    store = "sqlite://" + work(f"{tag}.db")
    calls = {"report": ("report", path), "report --csv": ("report", path, "--csv", "-"),
             "compare": ("compare", base, path), "compare (as A)": ("compare", path, base),
             "check": ("check", path, "--fail-on-outliers"), "reference": ("reference", path, "-o", ref),
             "merge": ("merge", "-o", work(f"{tag}-merged.json"), path, base),
             "seal": ("seal", path), "history add": ("history", "add", "--store", store, path)}
    for what, args in calls.items():
        p = gs(*args)
        if what == "merge":  # merge names the input it cannot use and merges the rest
            if p.returncode != 2 or "contradicts itself: " + first not in p.stderr:
                fail(f"{tag}: merge: exit {p.returncode}, expected 2 naming {first!r}:\n{p.stderr[-1500:]}")
            continue
        refused_alike(p, f"{tag}: {what}", first)


def case_mutations():
    bases = {k: load(k) for k in KINDS}
    named = 0
    for name, (kinds, mutate) in MUTATIONS.items():
        for kind in kinds:
            doc = copy.deepcopy(bases[kind])
            needle = mutate(doc)
            tag = f"{name}-{kind}"
            path = save(doc, f"{tag}.json")
            p = gs("validate", path)
            listed = [l.strip() for l in p.stderr.splitlines()[1:] if l.startswith("  ") and not l.startswith("  ... and")]
            if p.returncode != 2 or not any(needle in l for l in listed):
                fail(f"{tag}: validate exit {p.returncode}, expected 2 naming {needle!r}:\n{p.stderr[-2000:]}")
            if len(listed) > 20:
                fail(f"{tag}: validate named {len(listed)} contradictions, more than 20")
            readers_refuse(path, tag, listed[0], real(kind))
            named += 1
            print(f"ok: {tag}: validate names it, and every reader refuses the file with {listed[0][:80]!r}")
    # --resume refuses too (one launch per kind: mpirun is the slow part).
    for kind, n in (("one", 1), ("four", 4)):
        doc = copy.deepcopy(bases[kind])
        m_summary_counts(doc)
        path = save(doc, f"resume-{kind}.json")
        first = [l.strip() for l in gs("validate", path).stderr.splitlines()[1:]][0]
        p = e2e_common.mpirun(n, ["run", "--resume", path, "-o", work(f"resumed-{kind}.json")], timeout=120,
                              env_drop=("GPUSCALE_TEST_FAULT",))
        refused_alike(p, f"run --resume of a {kind} file", first)
    print(f"ok: {named} broken files, each refused by every reader with validate's first contradiction")


def case_untouched():
    for kind in KINDS:
        path = real(kind)
        p = gs("validate", path)
        if p.returncode != 0 or "valid gpuscale result" not in p.stdout:
            fail(f"the real {kind} file: validate exit {p.returncode}:\n{p.stderr[-2000:]}")
        merged = work(f"{kind}-merged.json")
        for what, args in {"report": ("report", path), "compare": ("compare", path, path),
                           "check": ("check", path, "--fail-on-outliers"),
                           "reference": ("reference", path, "-o", work(f"{kind}-ref.json")),
                           "merge": ("merge", "-o", merged, path, real("one")),
                           "merged validate": ("validate", merged),
                           "history add": ("history", "add", "--store", "sqlite://" + work(f"{kind}.db"), path)}.items():
            p = gs(*args)
            if p.returncode not in ((0, 1) if what == "check" else (0,)) or "contradicts itself" in p.stderr:
                fail(f"the real {kind} file: {what}: exit {p.returncode}:\n{p.stderr[-2000:]}")
        print(f"ok: the real {kind} file and its merge pass validate and every reader")


def case_lenient():
    doc = load("four")
    needle = m_summary_counts(doc)
    path = save(doc, "lenient.json")
    p = gs("report", path, "--lenient")
    if p.returncode != 0 or "UNTRUSTED" not in p.stdout or "--lenient" not in p.stderr or needle not in p.stderr:
        fail(f"report --lenient: exit {p.returncode}; stdout {p.stdout[-1500:]}\nstderr {p.stderr[-1500:]}")
    for flag, mark in (("--csv", ",UNTRUSTED,"), ("--openmetrics", 'untrusted="true"'), ("--markdown", "UNTRUSTED")):
        p = gs("report", path, "--lenient", flag, "-")
        if p.returncode != 0 or mark not in p.stdout:
            fail(f"report --lenient {flag}: exit {p.returncode}, no {mark!r} in its output:\n{p.stdout[-1500:]}")
    html = work("lenient.html")
    p = gs("report", path, "--lenient", "--html", html)
    if p.returncode != 0 or "UNTRUSTED" not in open(html).read():
        fail(f"report --lenient --html: exit {p.returncode}, no UNTRUSTED in the page")
    p = gs("compare", real("four"), path, "--lenient")
    if p.returncode not in (0, 1) or "UNTRUSTED in B" not in p.stdout:
        fail(f"compare --lenient: exit {p.returncode}; stdout {p.stdout[-1500:]}\nstderr {p.stderr[-1500:]}")
    doc = load("four")
    first_ok(doc)["metrics"]["time_us"] = -3.5  # the schema leaves metrics to the row-field table
    path = save(doc, "lenient-unreadable.json")
    p = gs("report", path, "--lenient")
    if p.returncode != 2 or "not readable even with --lenient" not in p.stderr:
        fail(f"report --lenient of a negative time: exit {p.returncode}:\n{p.stderr[-1500:]}")
    print("ok: --lenient marks every figure of a contradicting file UNTRUSTED and still refuses a negative time")


def parse():
    global ARGS
    ARGS = e2e_common.parse_args("--mpiexec")
    return ARGS


def main():
    cores = e2e_common.CORES
    cases = {"make": (case_make, {"FIXTURES_SETUP": "e2e_semantics", **cores}),
             "untouched": (case_untouched, FIXTURE),
             "mutations": (case_mutations, {**FIXTURE, **cores, "TIMEOUT": 600}),
             "lenient": (case_lenient, FIXTURE)}
    e2e_common.run_case("e2e_semantics_", {"TIMEOUT": 300, "LABELS": "e2e;cpu"}, cases, parse)


if __name__ == "__main__":
    main()
