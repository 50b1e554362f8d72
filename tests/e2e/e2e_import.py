#!/usr/bin/env python3
"""End-to-end tests of `gpuscale import` (docs/usage.md, "Importing peers' output").

  fixtures: every fixture under tests/data/import/ imported on its own; the file passes `gpuscale
    validate`, says it was imported and from what, and its rows hold the input's figures, checked against
    an oracle that reads the fixture here (nccl-tests: busbw, algbw and time per size and placement;
    BabelStream: each kernel's best bandwidth in GB/s from its own unit; nvbandwidth: each measured cell
    of each matrix, one row each, on the cell's GPU). `gpuscale report` (text, CSV,
    JSON) reads it; `history add` stores it and `history regressions` reads the store; `plan` refuses it
    in one line (no train-step rows to plan from).
  compare: 4 CPU ranks measure all_reduce (fp32, sum) at the nccl-tests fixture's small sizes; `gpuscale
    compare` between the imported 4-GPU log and that run gives one row per size and placement both hold.
  damaged: 44 distinct damages of the fixtures (nvbandwidth's among them: a cut matrix, a non-number
    cell, an unknown testcase, a file in UTF-16) (truncated, reordered, wrong numbers, wrong encoding,
    unknown names): each is refused with one line naming the file (and the line, for text), exit 2, and
    no output file. Positions and values are drawn from a seeded generator (GPUSCALE_TEST_SEED replays).
"""
import csv
import io
import json
import os
import shutil
from xml.etree import ElementTree

import e2e_common
from e2e_common import fail

ARGS = None
DATA = None


def fixture(name):
    return os.path.join(DATA, name)


# Each fixture and the flags its import needs (the reason in tests/data/import/README.md).
FIXTURES = {
    "nccl-tests-2.19-all_reduce-2x2.txt": [],
    "nccl-tests-2.13-reduce_scatter-8.txt": ["--collective", "reduce_scatter_perf"],
    "nccl-tests-2.19-broadcast-periter-4.txt": [],
    "nccl-tests-2.19-all_gather-8.json": [],
    "babelstream-omp.txt": [],
    "babelstream-omp.csv": ["--backend", "cpu"],
    "nvbandwidth-0.8-a100x8.txt": [],
    "nvbandwidth-0.8-a100x8.json": [],
}
# nvbandwidth's testcases in the fixtures and the copy benchmark each is imported as.
NVB_NAMES = {"host_to_device_memcpy_ce": "copy.h2d", "host_to_device_bidirectional_memcpy_ce": "copy.h2d",
             "device_to_device_memcpy_write_ce": "copy.p2p_ce"}
GS_NAMES = {"all_reduce_perf": "all_reduce", "reduce_scatter_perf": "reduce_scatter", "broadcast_perf": "broadcast",
            "all_gather_perf": "all_gather"}
DTYPES = {"float": "fp32", "double": "fp64", "half": "fp16", "bfloat16": "bf16"}
UNITS = {"MB": 1e6, "MiB": 2 ** 20, "GB": 1e9, "GiB": 2 ** 30, "TB": 1e12, "TiB": 2 ** 40}


def do_import(inputs, out, extra=(), expect=0):
    if os.path.exists(out):
        os.remove(out)
    p = e2e_common.gs("import", *inputs, "-o", out, *extra)
    if p.returncode != expect:
        fail(f"import {inputs} {extra}: exit {p.returncode}, expected {expect}\n{p.stderr[-2000:]}")
    return p


def oracle_nccl_text(path, collective):
    """(benchmark, params-key) -> figures, read from the text table the way its columns are printed."""
    rows, n = {}, 0
    lines = open(path).read().splitlines()
    for line in lines:
        if line.startswith("#  Rank "):
            n += 1
    half = 8 if any("i_p99" in l for l in lines) else 4
    for line in lines:
        w = line.split()
        if not w or line.startswith("#"):
            continue
        size, count, typ, redop, root = int(w[0]), int(w[1]), w[2], w[3], int(w[4])
        for k, placement in ((5, "out-of-place"), (5 + half, "in-place")):
            rows[(size, placement)] = {"time_us": float(w[k]), "algbw": float(w[k + 1]), "busbw": float(w[k + 2]),
                                       "type": typ, "redop": redop, "root": root, "count": count}
    return rows, n


def oracle_nccl_json(path):
    doc = json.load(open(path))
    rows = {}
    for r in doc["results"]:
        for key, placement in (("out_of_place", "out-of-place"), ("in_place", "in-place")):
            h = r[key]
            rows[(r["size"], placement)] = {"time_us": h["time"], "algbw": h["alg_bw"], "busbw": h["bus_bw"], "type": r["type"],
                                            "redop": r["redop"], "root": int(r["root"]), "count": r["count"]}
    return rows, len(doc["config"]["devices"]), os.path.basename(doc["args"][0]), doc["args"]


def oracle_babelstream(path):
    text = open(path).read()
    out = {}
    if path.endswith(".csv"):
        rd = list(csv.reader(io.StringIO(text)))
        unit = UNITS[rd[0][4][len("max_"):-len("_per_sec")]]
        for r in rd[1:]:
            out[r[0]] = {"gbs": float(r[4]) * unit / 1e9, "min_us": float(r[5]) * 1e6, "elements": int(r[2]), "size": int(r[3])}
        return out
    lines = text.splitlines()
    elements = int(next(l for l in lines if l.startswith("Number of elements:")).split(":")[1])
    size = 8 if "double" in next(l for l in lines if l.startswith("Precision:")) else 4
    head = next(i for i, l in enumerate(lines) if l.startswith("Function"))
    unit = UNITS[lines[head].split()[1][:-2]]
    for l in lines[head + 1:]:
        w = l.split()
        if len(w) == 5:
            out[w[0]] = {"gbs": float(w[1]) * unit / 1e9, "min_us": float(w[2]) * 1e6, "elements": elements, "size": size}
    return out


def oracle_nvbandwidth(path):
    """(testcase, gpu, peer or None) -> GB/s, every measured cell of every matrix; and the GPU count."""
    out = {}
    if path.endswith(".json"):
        root = json.load(open(path))["nvbandwidth"]
        for t in root["testcases"]:
            for r, row in enumerate(t["bandwidth_matrix"]):
                for c, v in enumerate(row):
                    if v != "N/A":
                        out[(t["name"], c if len(t["bandwidth_matrix"]) == 1 else r, None if len(t["bandwidth_matrix"]) == 1 else c)] = float(v)
        return out, len(root["GPU Device list"])
    lines = open(path).read().splitlines()
    n = sum(1 for l in lines if l.startswith("Device "))
    for i, l in enumerate(lines):
        if not l.startswith("Running "):
            continue
        name = l[len("Running "):-1]
        rows = []
        for m in lines[i + 3:]:
            if not m.strip():
                break
            rows.append(m.split()[1:])
        for r, row in enumerate(rows):
            for c, v in enumerate(row):
                if v != "N/A":
                    out[(name, c if len(rows) == 1 else r, None if len(rows) == 1 else c)] = float(v)
    return out, n


def check_nvbandwidth(name, doc, rows):
    oracle, n = oracle_nvbandwidth(fixture(name))
    if len(rows) != len(oracle) or doc["mpi"]["world_size"] != n:
        fail(f"{name}: {len(rows)} rows for {len(oracle)} measured cells, world {doc['mpi']['world_size']} for {n} GPUs")
    for r in rows:
        p = r["params"]
        key = (p["testcase"], p["gpu"], p.get("peer"))
        if key not in oracle or r["benchmark"] != NVB_NAMES[p["testcase"]] or "size_bytes" in p:
            fail(f"{name}: row {r['benchmark']} {p}: no such cell of the input, or the wrong benchmark")
        if not close(r["aggregate"], oracle.pop(key)) or r["ranks"]["rank"] != [p["gpu"]] or r["status"] != "ok":
            fail(f"{name}: {p}: aggregate {r['aggregate']} on ranks {r['ranks']['rank']}, not the input's cell")
        if p["testcase"].startswith("device_to_device") and (p["direction"] != "write" or p["mode"] != "one-pair"):
            fail(f"{name}: {p}: a write test measured pair by pair")
    if doc["software"]["driver"] != "550.54.15" or doc["ranks"][0]["host"] != "dgx-a100-07":
        fail(f"{name}: driver {doc['software']['driver']}, host {doc['ranks'][0]['host']}: not the input's")


def rows_of(path):
    doc = e2e_common.read_doc(path)
    return doc, doc["results"]


def close(a, b, rel=1e-9, abs_=1e-9):
    return a is not None and b is not None and abs(a - b) <= abs_ + rel * abs(b)


def check_nccl(doc, rows, oracle, n, collective):
    if len(rows) != len(oracle):
        fail(f"{len(rows)} rows, the input has {len(oracle)} (size, placement) figures")
    for r in rows:
        p = r["params"]
        o = oracle[(p["size_bytes"], p["placement"])]
        if r["benchmark"] != GS_NAMES[collective] or r["gpu_count"] != n or p["dtype"] != DTYPES[o["type"]]:
            fail(f"row {r['benchmark']} {p} at {r['gpu_count']}: not {collective} {o['type']} at {n}")
        m = r["metrics"]
        for k in ("busbw", "algbw", "time_us"):
            if not close(m[k], o[k]):
                fail(f"{p}: {k} {m[k]}, the input printed {o[k]}")
        if not close(r["aggregate"], o["busbw"]) or r["status"] != "ok" or m["count"] != o["count"]:
            fail(f"{p}: aggregate {r['aggregate']} status {r['status']}, the input's busbw {o['busbw']}")
        if any(v is not None for v in r["ranks"]["value"]):
            fail(f"{p}: rank values {r['ranks']['value']}: nccl-tests prints no rank's own figure")
    if doc["mpi"]["world_size"] != n or doc["cluster"]["source"] != "import":
        fail(f"world {doc['mpi']['world_size']} (input {n} ranks), cluster {doc['cluster']}")


def case_fixtures():
    store = "sqlite://" + os.path.abspath(e2e_common.work("import-history.db", fresh=True))
    for name, extra in FIXTURES.items():
        out = e2e_common.work(name + ".gpuscale.json", fresh=True)
        do_import([fixture(name)], out, extra)
        v = e2e_common.gs("validate", out)
        if v.returncode != 0 or "valid gpuscale result" not in v.stdout:
            fail(f"validate {name}: exit {v.returncode}\n{v.stdout}{v.stderr}")
        doc, rows = rows_of(out)
        src = doc["imported"]["inputs"][0]
        if src["file"] != fixture(name) or not src["missing"] or src["rows"] != len(rows):
            fail(f"{name}: imported {src}")
        if name.startswith("nvbandwidth"):
            check_nvbandwidth(name, doc, rows)
            if src["command_line"] is not None or src["tool_version"] != "v0.8":
                fail(f"{name}: command line {src['command_line']}, version {src['tool_version']}")
        elif name.endswith(".json"):
            oracle, n, prog, args = oracle_nccl_json(fixture(name))
            check_nccl(doc, rows, oracle, n, prog)
            if src["command_line"] != args:
                fail(f"{name}: command line {src['command_line']}, the input's args {args}")
        elif name.startswith("nccl-tests"):
            collective = extra[1] if extra else next(l.split(":")[1].strip() for l in open(fixture(name)) if "test starting" in l)
            oracle, n = oracle_nccl_text(fixture(name), collective)
            check_nccl(doc, rows, oracle, n, collective)
            if src["command_line"] is not None or "does not print" not in src["command_line_note"]:
                fail(f"{name}: command line {src['command_line']} / {src['command_line_note']}")
        else:
            oracle = oracle_babelstream(fixture(name))
            names = {"Copy": "stream.copy", "Mul": "stream.scale", "Add": "stream.add", "Triad": "stream.triad", "Dot": "stream.dot"}
            if sorted(r["benchmark"] for r in rows) != sorted(names[k] for k in oracle if k in names):
                fail(f"{name}: benchmarks {[r['benchmark'] for r in rows]}, the input's kernels {list(oracle)}")
            for r in rows:
                k = next(k for k, v in names.items() if v == r["benchmark"])
                o = oracle[k]
                m = r["ranks"]["metrics"]
                # Rank columns are written to 6 significant digits (docs/results.md); the row's figure in full.
                if not close(m["best_gb_s"], o["gbs"], 1e-5) or not close(m["best_time_us"], o["min_us"], 1e-5) or \
                        not close(r["metrics"]["best_aggregate_gb_s"], o["gbs"], 1e-12):
                    fail(f"{name} {k}: best {m['best_gb_s']} GB/s {m['best_time_us']} us, the input {o}")
                if r["params"]["elements"] != o["elements"] or r["ranks"]["value"] != [None] or r["aggregate"] is not None:
                    fail(f"{name} {k}: params {r['params']}, value {r['ranks']['value']}, aggregate {r['aggregate']}")
        for fmt in ([], ["--csv", "-"], ["--markdown", "-"]):
            rep = e2e_common.gs("report", out, *fmt)
            if rep.returncode != 0 or not rep.stdout.strip():
                fail(f"report {fmt} of {name}: exit {rep.returncode}\n{rep.stderr[-1500:]}")
        csv_rows = list(csv.DictReader(io.StringIO(e2e_common.gs("report", out, "--csv", "-").stdout)))
        if len(csv_rows) != len(rows):
            fail(f"report --csv of {name}: {len(csv_rows)} lines for {len(rows)} rows")
        h = e2e_common.gs("history", "add", "--store", store, out)
        if h.returncode != 0:
            fail(f"history add {name}: exit {h.returncode}\n{h.stdout}{h.stderr[-1500:]}")
        p = e2e_common.gs("plan", out, "--preset", "llama3-8b", "--tokens", "1T")
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        if p.returncode != 2 or len(lines) != 1:
            fail(f"plan on {name}: exit {p.returncode}, expected a one-line refusal\n{p.stderr}")
        print(f"ok: {name}: {len(rows)} rows, validated, reported, stored")
    reg = e2e_common.gs("history", "regressions", "--store", store)
    if reg.returncode not in (0, 1):
        fail(f"history regressions: exit {reg.returncode}\n{reg.stderr[-1500:]}")


def case_compare():
    name = "nccl-tests-2.19-all_reduce-2x2.txt"
    imported = e2e_common.work("compare-imported.json", fresh=True)
    do_import([fixture(name)], imported)
    run = e2e_common.work("compare-cpu.json", fresh=True)
    p = e2e_common.mpirun(4, ["run", "--backend", "cpu", "--benchmarks", "all_reduce", "-b", "8", "-e", "4K", "-f", "2",
                              "--dtypes", "fp32", "--reps", "3", "-o", run], timeout=400)
    if p.returncode != 0:
        fail(f"the CPU run: exit {p.returncode}\n{p.stderr[-2000:]}")
    c = e2e_common.gs("compare", imported, run, "--junit", "-")
    if c.returncode not in (0, 1):
        fail(f"compare: exit {c.returncode}\n{c.stderr[-2000:]}")
    cases = ElementTree.fromstring(c.stdout).iter("testcase")
    # "fp32 sum out-of-place 4K @ 4 GPU(s)": one matched row each.
    got = [tuple(t.get("name").split()[2:6]) for t in cases if t.get("classname") == "gpuscale.compare.all_reduce"]
    sizes = ["8", "16", "32", "64", "128", "256", "512", "1K", "2K", "4K"]
    want = [(pl, s, "@", "4") for s in sizes for pl in ("out-of-place", "in-place")]
    if sorted(got) != sorted(want):
        fail(f"compare: rows {sorted(got)}, expected one per size and placement at 4 GPUs {sorted(want)}")
    print(f"ok: compare gives {len(got)} rows at 4 GPUs, one per size and placement")


def damages(rng):
    """(name, input file name, text or bytes, extra flags, what the one line must name)."""
    ar = open(fixture("nccl-tests-2.19-all_reduce-2x2.txt")).read()
    old = open(fixture("nccl-tests-2.13-reduce_scatter-8.txt")).read()
    js = open(fixture("nccl-tests-2.19-all_gather-8.json")).read()
    bt = open(fixture("babelstream-omp.txt")).read()
    bc = open(fixture("babelstream-omp.csv")).read()
    L = ar.splitlines(keepends=True)
    table = [i for i, l in enumerate(L) if l.strip() and not l.startswith("#")]
    row = rng.choice(table)
    footer = next(i for i, l in enumerate(L) if l.startswith("# Out of bounds"))
    head = next(i for i, l in enumerate(L) if "#wrong" in l)
    ranks = [i for i, l in enumerate(L) if l.startswith("#  Rank")]

    def at(lines, i, new):
        x = list(lines)
        x[i] = new
        return "".join(x)

    def field(line, k, value):
        w = line.split()
        w[k] = value
        return "  ".join(w) + "\n"

    nl = lambda i: f":{i + 1}:"
    d = []
    cut = rng.randrange(table[0] + 1, footer)
    d.append(("truncated-in-table", "t.txt", "".join(L[:cut]), [], "truncated"))
    d.append(("truncated-mid-line", "t.txt", "".join(L[:row]) + L[row][: rng.randrange(10, 40)], [], nl(row)))
    d.append(("truncated-header", "t.txt", "".join(L[:head]), [], "ends"))
    d.append(("cut-before-table", "t.txt", "".join(L[:ranks[-1] + 1]), [], "ends before its table"))
    d.append(("row-deleted", "t.txt", "".join(L[:row] + L[row + 1:]), [], "Avg bus bandwidth"))
    d.append(("rows-swapped-header", "t.txt", "".join(L[:head - 1] + [L[head]] + [L[head - 1]] + L[head + 1:]), [], nl(head - 1)))
    d.append(("columns-reordered", "t.txt", at(L, head, L[head].replace("algbw", "XXXX").replace("busbw", "algbw").replace("XXXX", "busbw")), [], nl(head)))
    d.append(("size-not-number", "t.txt", at(L, row, field(L[row], 0, rng.choice(["12a4", "1e3x", "-", "0x10"]))), [], nl(row)))
    d.append(("count-not-number", "t.txt", at(L, row, field(L[row], 1, "many")), [], nl(row)))
    d.append(("busbw-edited", "t.txt", at(L, table[-1], field(L[table[-1]], 7, f"{rng.uniform(60, 90):.2f}")), [], nl(table[-1])))
    d.append(("time-edited", "t.txt", at(L, table[-1], field(L[table[-1]], 5, f"{rng.uniform(100, 900):.2f}")), [], nl(table[-1])))
    d.append(("negative-time", "t.txt", at(L, row, field(L[row], 5, "-3.10")), [], nl(row)))
    d.append(("wrong-not-count", "t.txt", at(L, row, field(L[row], 8, "1.5")), [], nl(row)))
    d.append(("size-count-disagree", "t.txt", at(L, table[-1], field(L[table[-1]], 1, str(int(L[table[-1]].split()[1]) + rng.randrange(1, 999)))), [], nl(table[-1])))
    d.append(("unknown-collective", "t.txt", ar.replace("all_reduce_perf", "hypercube_perf"), [], "unknown collective"))
    d.append(("unknown-type", "t.txt", at(L, row, field(L[row], 2, "int128")), [], nl(row)))
    d.append(("unknown-redop", "t.txt", at(L, row, field(L[row], 3, "xor")), [], nl(row)))
    d.append(("rank-out-of-order", "t.txt", at(L, ranks[1], L[ranks[1]].replace("Rank  1", "Rank  3")), [], nl(ranks[1])))
    d.append(("rank-line-garbled", "t.txt", at(L, ranks[0], "#  Rank  0 Group  0 on gpu-a01\n"), [], nl(ranks[0])))
    d.append(("extra-field", "t.txt", at(L, row, L[row].rstrip("\n") + "  17\n"), [], nl(row)))
    d.append(("two-sweeps", "t.txt", "".join(L[:footer] + [L[row]] + L[footer:]), [], "twice"))
    d.append(("footer-first", "t.txt", "".join(L[:ranks[-1] + 1] + [L[footer]] + L[ranks[-1] + 1:]), [], nl(ranks[-1] + 1)))
    bad = bytearray(ar.encode())
    pos = ar.index(L[row]) + rng.randrange(2, 10)
    bad[pos] = 0xff
    d.append(("not-utf8", "t.txt", bytes(bad), [], "not UTF-8"))
    d.append(("binary", "t.bin", bytes(rng.randrange(256) for _ in range(512)) + b"\0", [], "t.bin"))
    d.append(("old-log-no-collective", "old.txt", old, [], "--collective"))
    d.append(("collective-disagrees", "t.txt", ar, ["--collective", "all_gather_perf"], "--collective"))
    j = json.loads(js)
    j["results"][rng.randrange(len(j["results"]))]["out_of_place"]["bus_bw"] *= 1.5
    d.append(("json-busbw-edited", "t.json", json.dumps(j), [], "/results/"))
    d.append(("json-truncated", "t.json", js[: rng.randrange(len(js) // 3, len(js) - 10)], [], "not valid JSON"))
    bl = bt.splitlines(keepends=True)
    k = next(i for i, l in enumerate(bl) if l.startswith("Triad"))
    d.append(("babelstream-bandwidth-edited", "b.txt", at(bl, k, field(bl[k], 1, f"{float(bl[k].split()[1]) * 2:.3f}")), [], nl(k)))
    cl = bc.splitlines(keepends=True)
    k = rng.randrange(1, len(cl))
    d.append(("babelstream-csv-unknown-kernel", "b.csv", at(cl, k, ",".join(["Scan"] + cl[k].split(",")[1:])), ["--backend", "cpu"], nl(k)))
    d.append(("babelstream-csv-no-backend", "b.csv", bc, [], "--backend"))
    d += nvbandwidth_damages(rng, at)
    return d


def nvbandwidth_damages(rng, at):
    nt = open(fixture("nvbandwidth-0.8-a100x8.txt")).read()
    nj = open(fixture("nvbandwidth-0.8-a100x8.json")).read()
    N = nt.splitlines(keepends=True)
    nl = lambda i: f":{i + 1}:"
    run = next(i for i, l in enumerate(N) if l.startswith("Running device_to_device"))
    rows = list(range(run + 3, run + 11))  # the 8 rows of the GPU x GPU matrix
    r = rng.choice(rows)
    devs = [i for i, l in enumerate(N) if l.startswith("Device ")]
    w = N[r].split()
    c = rng.choice([k for k in range(1, 9) if w[k] != "N/A"])
    cell = lambda v: "%2s" % w[0] + "".join("%10s" % (v if k == c else w[k]) for k in range(1, 9)) + "\n"
    d = []
    d.append(("nvb-truncated-matrix", "n.txt", "".join(N[:r]), [], "cut"))
    d.append(("nvb-matrix-row-deleted", "n.txt", "".join(N[:r] + N[r + 1:]), [], nl(r) if r != rows[-1] else "7x8"))
    d.append(("nvb-cell-not-number", "n.txt", at(N, r, cell(rng.choice(["27x.1", "--", "1e", "nan"]))), [], nl(r)))
    d.append(("nvb-cell-edited", "n.txt", at(N, r, cell(f"{float(w[c]) + rng.uniform(5, 50):.2f}")), [], "sum"))
    d.append(("nvb-unknown-testcase", "n.txt", nt.replace("Running device_to_device_memcpy_write_ce.", "Running device_to_device_warp_ce."), [], "unknown testcase"))
    d.append(("nvb-devices-swapped", "n.txt", "".join(N[:devs[2]] + [N[devs[3]], N[devs[2]]] + N[devs[3] + 1:]), [], nl(devs[2])))
    d.append(("nvb-sum-line-of-another", "n.txt", nt.replace("SUM device_to_device_memcpy_write_ce", "SUM host_to_device_memcpy_ce"), [], "summed as"))
    d.append(("nvb-utf16", "n.txt", nt.encode("utf-16"), [], "n.txt"))
    j = json.loads(nj)
    t = j["nvbandwidth"]["testcases"][2]["bandwidth_matrix"]
    t[rng.randrange(8)][rng.randrange(8)] = rng.choice(["fast", "27,5", ""])
    d.append(("nvb-json-cell-not-number", "n.json", json.dumps(j), [], "/nvbandwidth/testcases/2/bandwidth_matrix/"))
    j = json.loads(nj)
    j["nvbandwidth"]["testcases"][0]["sum"] += rng.uniform(1, 20)
    d.append(("nvb-json-sum-edited", "n.json", json.dumps(j), [], "sum"))
    j = json.loads(nj)
    j["nvbandwidth"]["testcases"][1]["name"] = "host_to_gpu_teleport_ce"
    d.append(("nvb-json-unknown-testcase", "n.json", json.dumps(j), [], "unknown testcase"))
    j = json.loads(nj)
    del j["nvbandwidth"]["testcases"][2]["bandwidth_matrix"][rng.randrange(8)]
    d.append(("nvb-json-matrix-row-cut", "n.json", json.dumps(j), [], "/nvbandwidth/testcases/2"))
    d.append(("nvb-json-truncated", "n.json", nj[: rng.randrange(len(nj) // 3, len(nj) - 10)], [], "not valid JSON"))
    return d


def case_damaged():
    rng = e2e_common.seeded_rng("damaged")
    dmg = damages(rng)
    names = [n for n, *_ in dmg]
    if len(dmg) < 30 or len(set(names)) != len(names):
        fail(f"{len(dmg)} damages, {len(set(names))} distinct: the test promises 30 distinct ones")
    folder = e2e_common.work("damaged", fresh=False)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for name, file, content, extra, needle in dmg:
        path = os.path.join(folder, name + "-" + file)
        with open(path, "wb") as f:
            f.write(content if isinstance(content, bytes) else content.encode())
        out = os.path.join(folder, name + ".out.json")
        p = e2e_common.gs("import", path, "-o", out, *extra)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        if p.returncode != 2 or len(lines) != 1 or path not in lines[0] or needle not in lines[0]:
            fail(f"{name}: exit {p.returncode}, expected 2 and one line naming {path} and '{needle}':\n{p.stderr[-1500:]}")
        if any(ord(c) < 0x20 for c in lines[0]):
            fail(f"{name}: a control character in the message")
        if os.path.exists(out) or any(f.startswith(name + ".out") for f in os.listdir(folder)):
            fail(f"{name}: an output was written")
        print(f"ok: {name}: {lines[0]}")
    print(f"ok: {len(dmg)} damaged inputs, one line each, exit 2, nothing written")


def parse():
    global ARGS, DATA
    ARGS = e2e_common.parse_args("--mpiexec", "--data")
    DATA = ARGS.data
    return ARGS


def main():
    cores = e2e_common.CORES
    cases = {"fixtures": (case_fixtures, {}), "compare": (case_compare, cores), "damaged": (case_damaged, {})}
    e2e_common.run_case("e2e_import_", {"TIMEOUT": 600, "LABELS": "e2e;cpu"}, cases, parse)


if __name__ == "__main__":
    main()
