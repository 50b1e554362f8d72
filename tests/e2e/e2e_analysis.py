#!/usr/bin/env python3
"""End-to-end tests of gpuscale report / compare / check / reference.

Synthetic result files (tests/data/analysis, written by make_synthetic.py) give golden outputs and exact
exit codes; a real CPU-backend run (the analysis_run fixture) is reported, compared and checked; the HTML
report is opened in headless Chromium. --update-golden rewrites the golden files (review the diff).
"""
import argparse
import collections
import copy
import csv
import io
import json
import os
import random
import re
import shutil
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import analysis_oracle
import analysis_outputs
import e2e_common
import golden_verdicts
import result_rows
from analysis_oracle import LOWER_IS_BETTER, expected_regressions

ARGS = None
fail = e2e_common.fail


# Every command's output here is decoded by hand (keep_line_ends): text mode would turn the CSV's CRLF
# line ends into LF.
def run(cmd, **kw):
    return e2e_common.run(cmd, keep_line_ends=True, **kw)


def gs(*args, **kw):
    return e2e_common.gs(*args, keep_line_ends=True, **kw)


def mpirun(np, args, **kw):
    return e2e_common.mpirun(np, args, keep_line_ends=True, **kw)


def work(name):
    # Fresh like e2e_common.work(name, fresh=True), but a leftover folder is removed too (cases make folders here).
    os.makedirs(ARGS.workdir, exist_ok=True)
    path = e2e_common.work(name)
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)
    return path


def data(name):
    return os.path.join(ARGS.data, name)


def load(path):
    with open(path) as f:
        return json.load(f)


def save(doc, path):
    with open(path, "w") as f:
        json.dump(doc, f)


def expect_code(p, code, what):
    if p.returncode != code:
        fail(f"{what}: exit {p.returncode}, expected {code}\nstdout: {p.stdout[-3000:]}\nstderr: {p.stderr[-3000:]}")


def one_error_line(p, needle, what):
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    if p.returncode != 2 or len(lines) != 1 or not lines[0].startswith("gpuscale: ") or needle not in lines[0]:
        fail(f"{what}: expected exit 2 and one line naming {needle!r}, got exit {p.returncode}: {p.stderr!r}")


# ---- golden outputs from synthetic files -------------------------------------------------------------

GOLDEN = [  # (golden file, command run in tests/data/analysis)
    ("report-a.txt", ["report", "synthetic-a.json"]),
    ("report-a.md", ["report", "synthetic-a.json", "--markdown", "-"]),
    ("report-a.csv", ["report", "synthetic-a.json", "--csv", "-"]),
    ("report-a.prom", ["report", "synthetic-a.json", "--openmetrics", "-"]),
    ("compare-a-b.txt", ["compare", "synthetic-a.json", "synthetic-b.json"]),
    ("check-a.txt", ["check", "synthetic-a.json", "--reference", "reference-alpha.json"]),
]
GOLDEN_CODES = {"compare-a-b.txt": 1, "check-a.txt": 1}


def case_golden():
    # Each output, and each golden file before it is compared byte for byte, carries the verdicts
    # derived without gpuscale (golden_verdicts.py: make_synthetic.py's plan, and the rules written
    # again in analysis_oracle.py); --update-golden writes only outputs that carry them.
    exp = golden_verdicts.expected(ARGS.data)
    bad = []
    for name, args in GOLDEN:
        p = gs(*args, cwd=ARGS.data)
        expect_code(p, GOLDEN_CODES.get(name, 0), " ".join(args))
        golden_verdicts.check_output(name, p.stdout, exp, "gpuscale " + " ".join(args))
        path = os.path.join(ARGS.data, "golden", name)
        if ARGS.update_golden:
            with open(path, "w", newline="") as f:
                f.write(p.stdout)
            continue
        with open(path, newline="") as f:
            want = f.read()
        golden_verdicts.check_output(name, want, exp, path)
        if p.stdout != want:
            out = work("actual-" + name)
            with open(out, "w", newline="") as f:
                f.write(p.stdout)
            bad.append(f"{name} (diff {path} {out})")
    if bad:
        fail("output differs from golden: " + ", ".join(bad))
    # The JUnit of compare and check: one case per row, failing exactly where the rules' verdicts fail.
    p = gs("compare", "synthetic-a.json", "synthetic-b.json", "--junit", "-", cwd=ARGS.data)
    expect_code(p, 1, "compare --junit -")
    golden_verdicts.check_compare_junit(p.stdout, exp, "compare --junit")
    p = gs("check", "synthetic-a.json", "--reference", "reference-alpha.json", "--junit", "-", cwd=ARGS.data)
    expect_code(p, 1, "check --junit -")
    golden_verdicts.check_check_junit(p.stdout, exp, "check --junit")
    # The Prometheus text parses with the reference client library and holds the documented families.
    from prometheus_client.parser import text_string_to_metric_families
    with open(os.path.join(ARGS.data, "golden", "report-a.prom")) as f:
        fams = {f.name: f for f in text_string_to_metric_families(f.read())}
    for name in ["gpuscale_bandwidth_bytes_per_second", "gpuscale_flops_per_second", "gpuscale_samples_per_second",
                 "gpuscale_scaling_efficiency_ratio", "gpuscale_fraction_of_peak_ratio", "gpuscale_valid",
                 "gpuscale_rank_bandwidth_bytes_per_second", "gpuscale_straggler_deficit_ratio", "gpuscale_run_info"]:
        if name not in fams:
            fail(f"{name} missing from the Prometheus export")
    # (the straggler and valid families' samples, and the CSV's lines, are held to the rules above)


# ---- compare exit codes ----------------------------------------------------------------------------------

def moved_within_spread(doc, seed=7):
    """Every rank's value moved to a random point of its own repetition range (without per-rank stats,
    of the row's spread around it: the band compare then uses); aggregates follow."""
    rnd = random.Random(seed)
    d = copy.deepcopy(doc)
    for r in d["results"]:
        if r["status"] != "ok":
            continue
        ratios = []
        entries = e2e_common.rank_entries(r)
        spread = r.get("spread", {"down": 0.0, "up": 0.0})
        for rv in entries:
            s = rv.get("stats")
            if rv["value"] is None or (s["median"] if s else rv["value"]) <= 0:
                continue
            if s:
                v = rnd.uniform(s.get("lo", s["min"]), s.get("hi", s["max"]))  # within the median's bounds
            else:
                v = rnd.uniform(rv["value"] * (1 - spread["down"]), rv["value"] * (1 + spread["up"]))
            ratios.append(v / rv["value"])
            rv["value"] = v
            if s:
                s["median"] = v
        e2e_common.put_rank_entries(r, entries)
        if not ratios or r["aggregate"] is None:
            continue
        if r["scope"] == "independent":
            new = sum(rv["value"] for rv in entries if rv["value"] is not None)
        else:  # the collective's busbw moves like its ranks' (within the lowest and highest of them)
            new = r["aggregate"] * rnd.uniform(min(ratios), max(ratios))
        f = new / r["aggregate"] if r["aggregate"] > 0 else 1.0
        r["aggregate"] = new
        for key in ("scaling_efficiency", "fraction_of_peak"):
            if r[key] is not None:
                r[key] *= f
    return d


def lowered(doc, factor=0.8, only=None):
    """Every figure of every row (of the rows whose keys are in `only`, when given) made worse by factor:
    aggregates, efficiencies, fractions of peak, group values and summaries, rank values and statistics
    (times longer by 1/factor for lower-is-better units). Spreads are relative: they stay."""
    d = copy.deepcopy(doc)
    for r in d["results"]:
        if only is not None and analysis_oracle.row_key(r) not in only:
            continue
        f = 1 / factor if r["unit"] in LOWER_IS_BETTER else factor
        for key in ("aggregate", "scaling_efficiency", "fraction_of_peak"):
            if r[key] is not None:
                r[key] *= factor if key != "aggregate" else f
        groups = r.get("groups")
        if isinstance(groups, dict) and "value" in groups:
            v = groups["value"]
            groups["value"] = [x * f if x is not None else None for x in v] if isinstance(v, list) else (
                v * f if v is not None else None)
        summary = r.get("group_summary")
        if isinstance(summary, dict):
            for k in ("min", "median", "max"):
                if summary.get(k) is not None:
                    summary[k] *= f
        entries = e2e_common.rank_entries(r)
        for rv in entries:
            if rv["value"] is not None:
                rv["value"] *= f
            if "stats" in rv:
                for k in ("median", "min", "max", "mean", "stddev", "lo", "hi"):
                    if k in rv["stats"]:
                        rv["stats"][k] *= f
        e2e_common.put_rank_entries(r, entries)  # a row's spread is relative: it stays
    return d


def table_lines(text):
    """The row lines of compare's narrow table (after the column header, before the summary)."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.lstrip().startswith("point @ GPUs")), None)
    if start is None:  # no row shown
        return []
    end = max(i for i, l in enumerate(lines) if " matched:" in l)
    return [l for l in lines[start + 1:end] if l.strip()]


def expect_width(p, width, what):
    long = [l for l in p.stdout.splitlines() if len(l) > width]
    if long:
        fail(f"{what}: {len(long)} line(s) longer than {width} columns, e.g. {long[0]!r}")


def expect_verdicts(p, a, b, what):
    """Every row compare printed carries the verdict the noise rule (written again in analysis_oracle)
    gives it, not only the regressions (rows counted per benchmark, GPU count and verdict: the table
    groups rows under their benchmark), and the summary line counts them."""
    want = analysis_oracle.compare_verdicts(a, b)
    rows, counts = analysis_outputs.compare_rows(p.stdout, what)
    expected = sorted((r["benchmark"], r["gpu_count"], want[analysis_oracle.row_key(r)].verdict)
                      for r in a["results"] if analysis_oracle.row_key(r) in want)
    got = sorted((bench, gpus, verdict) for bench, _, _, gpus, _, verdict in rows)
    if got != expected:
        extra = list((collections.Counter(got) - collections.Counter(expected)).elements())
        missing = list((collections.Counter(expected) - collections.Counter(got)).elements())
        fail(f"{what}: verdicts differ from the noise rule's: printed, not expected {extra[:4]}; expected, not printed {missing[:4]}")
    verdicts = [v.verdict for v in want.values()]
    if any(counts[v] != verdicts.count(v) for v in analysis_outputs.VERDICTS) or counts["matched"] != len(verdicts):
        fail(f"{what}: summary counts {counts}, the noise rule's verdicts {verdicts}")


def compare_codes(path, expect_lowered_code):
    doc = load(path)
    same = gs("compare", path, path)
    expect_code(same, 0, "compare with itself")
    expect_verdicts(same, doc, doc, "compare with itself")
    moved = work("moved.json")
    moved_doc = moved_within_spread(doc)
    save(moved_doc, moved)
    p = gs("compare", path, moved)
    expect_code(p, 0, "compare with values moved within their spread")
    expect_verdicts(p, doc, moved_doc, "compare with values moved within their spread")
    low = work("lowered.json")
    low_doc = lowered(doc)
    save(low_doc, low)
    junit = work("compare.xml")
    p = gs("compare", path, low, "--junit", junit)
    expect_verdicts(p, doc, low_doc, "compare with values lowered by 20%")
    want = expected_regressions(doc, low_doc)
    code = 1 if want else 0
    if expect_lowered_code is not None and code != expect_lowered_code:
        fail(f"the oracle finds {len(want)} regressions, expected exit {expect_lowered_code}")
    expect_code(p, code, "compare with values lowered by 20%")
    flagged = [l for l in p.stdout.splitlines() if "REGRESSION" in l]
    expect_width(p, 80, "compare")
    if len(flagged) != len(want):
        fail(f"{len(flagged)} rows flagged, the noise rule gives {len(want)}")
    suites = ET.parse(junit).getroot()
    failures = sum(int(s.get("failures")) for s in suites.iter("testsuite"))
    if failures != len(want):
        fail(f"JUnit has {failures} failures, expected {len(want)}")
    expect_only_changes(path, low, want)
    return len(want)


def expect_only_changes(a, b, want):
    """compare --only-changes of B against A, where B is A made worse: exactly the rows of `want`, all
    REGRESSION (row lines carry B/A with 3 decimals; group headings and long point names do not)."""
    p = gs("compare", a, b, "--only-changes")
    expect_code(p, 1 if want else 0, "compare --only-changes")
    expect_width(p, 80, "compare --only-changes")
    figures = [l for l in table_lines(p.stdout) if re.search(r"\s\d+\.\d{3}\s", l)]
    if len(figures) != len(want) or any("REGRESSION" not in l for l in figures):
        fail(f"--only-changes shows other rows than the {len(want)} regression(s): {p.stdout}")
    if not want and "no regression, improvement or problem" not in p.stdout:
        fail(f"--only-changes without changes: {p.stdout}")
    for verdict in ("same", "inconclusive", "n/a"):
        if any(l.rstrip().endswith(verdict) for l in table_lines(p.stdout)):
            fail(f"--only-changes shows a row that is {verdict}")
    full = gs("compare", a, b)
    if p.stdout.split(" matched:")[1] != full.stdout.split(" matched:")[1]:
        fail("--only-changes changed the summary line")


def case_compare_codes():
    # synthetic-a holds one invalid row: a problem in both copies (tested below), so strip it here.
    doc = load(data("synthetic-a.json"))
    doc["results"] = [r for r in doc["results"] if r["status"] == "ok"]
    result_rows.agree(doc)
    clean = work("clean.json")
    save(doc, clean)
    n = compare_codes(clean, 1)
    if n < 10:
        fail(f"only {n} regressions on synthetic data with 2% noise lowered by 20%")
    # A row only one file has is listed, not fatal.
    fewer = copy.deepcopy(doc)
    fewer["results"] = fewer["results"][1:]
    result_rows.agree(fewer, complete=False)
    part = work("fewer.json")
    save(fewer, part)
    p = gs("compare", clean, part)
    expect_code(p, 0, "compare with a row missing in B")
    if "1 row(s) only in A" not in p.stdout:
        fail("the row only in A is not listed")
    # An invalid row in B is a problem: exit 1.
    p = gs("compare", data("synthetic-a.json"), data("synthetic-a.json"))
    expect_code(p, 1, "compare with an invalid row on both sides")
    if not re.search(r"PROBLEM\s+\(invalid in B\)", p.stdout):
        fail("the invalid row is not shown as a problem")


# ---- the real CPU-backend run --------------------------------------------------------------------------

def real_run():
    path = os.path.join(ARGS.root, "analysis-run.json")
    if not os.path.exists(path):
        fail(f"{path} missing: the analysis_run fixture did not run")
    return path


def case_run():
    os.makedirs(ARGS.root, exist_ok=True)
    path = os.path.join(ARGS.root, "analysis-run.json")
    if os.path.exists(path):
        os.remove(path)
    p = mpirun(4, ["run", "--backend", "cpu", "--quick", "-o", path])
    expect_code(p, 0, "gpuscale run")
    doc = load(path)
    a = doc.get("analysis")
    if not a or a["straggler_threshold"] != 0.1 or not isinstance(a["stragglers"], list):
        fail(f"the run wrote no analysis section: {a}")
    for s in a["stragglers"]:
        if s["deficit"] <= 0.1 or s["uuid"] != "-" or s["pci_bus_id"] != "-":
            fail(f"bad straggler entry {s}")
    # The run's own summary is the report's table.
    p2 = gs("report", path)
    expect_code(p2, 0, "report of the run")
    end = p.stdout.find("\nfleet outliers")  # the fleet section is the report's own (compared in tests/unit)
    table = p.stdout[p.stdout.index("\nstream.copy"):end if end >= 0 else p.stdout.index("\nresults:")]
    if table not in p2.stdout:
        fail("the run summary and the report's terminal tables differ")


NCCL_HEADING = ["size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
                "#wrong"]  # nccl-tests' heading, word for word
NCCL_TYPES = {"fp64": "double", "fp32": "float", "fp16": "half", "bf16": "bfloat16", "int32": "int32", "int8": "int8"}


def nccl_time(us):
    return "%.0f" % us if us >= 10000 else "%.1f" % us if us >= 100 else "%.2f" % us


def nccl_tables(text):
    """The nccl-tests tables of a run's or report's text: {(benchmark, count): (heading, data lines, avg)}
    and the indexes of the lines they take (a table runs from its title to the next blank line)."""
    lines = text.splitlines()
    tables, covered, i = {}, set(), 0
    while i < len(lines):
        m = re.match(r"# gpuscale (\S+) at (\d+) (?:ranks?|GPUs?)(?:, .*)?: nccl-tests' \S+ layout$", lines[i])
        if not m:
            i += 1
            continue
        start, heading, rows, avg = i, None, [], None
        i += 1
        while i < len(lines) and lines[i] and not lines[i].startswith("```"):  # Markdown: a code block
            l = lines[i]
            if l.startswith("#") and l[1:].split()[:2] == ["size", "count"]:
                heading = l[1:].split()
            elif l.startswith("# Avg bus bandwidth"):
                avg = l.split(":", 1)[1].strip()
            elif not l.startswith("#"):
                rows.append(l.split())
            i += 1
        covered.update(range(start, i))
        tables[(m.group(1), int(m.group(2)))] = (heading, rows, avg)
    return tables, covered, lines


def check_nccl_text(text, doc, what, width):
    tables, covered, lines = nccl_tables(text)
    colls = [r for r in doc["results"] if r["scope"] == "collective"]
    want = {(r["benchmark"], r["gpu_count"]) for r in colls}
    if set(tables) != want or not want:
        fail(f"{what}: nccl-tests tables for {sorted(tables)}, expected {sorted(want)}")
    for key, (heading, data_lines, avg) in tables.items():
        if heading != NCCL_HEADING:
            fail(f"{what}: {key} heading {heading}, nccl-tests' is {NCCL_HEADING}")
        rows = [r for r in colls if (r["benchmark"], r["gpu_count"]) == key]
        index = {}
        for d in data_lines:
            if len(d) != 13:
                fail(f"{what}: {key} line of {len(d)} columns: {d}")
            index[(d[0], d[2], d[3], d[4])] = d
        mean = []
        for d in data_lines:  # the table's order: out-of-place, then in-place, line by line
            for r in sorted([r for r in rows if index.get(nccl_key(r)) is d], key=lambda r: r["params"]["placement"] != "out-of-place"):
                if r["status"] == "ok" and isinstance(r["metrics"].get("busbw"), (int, float)):
                    mean.append(r["metrics"]["busbw"])
        for r in rows:
            d = index.get(nccl_key(r))
            if d is None:
                fail(f"{what}: no line for {r['params']} at {key[1]}: {data_lines}")
            m = r["metrics"]
            c = 5 if r["params"]["placement"] == "out-of-place" else 9
            bw = lambda v: "n/a" if not isinstance(v, (int, float)) else "%.2f" % v
            expect = [str(int(m["count"])), nccl_time(m["time_us"]), bw(m.get("algbw")), bw(m.get("busbw")), "%g" % m["wrong"]]
            if r["status"] != "ok":
                expect[2] = expect[3] = r["status"].upper() if r["status"] != "skipped" else "skipped"
            got = [d[1]] + d[c:c + 4]
            if got != expect:
                fail(f"{what}: {key} {r['params']}: table {got}, JSON {expect}")
        want_avg = "%g" % (sum(mean) / len(mean)) if mean else "n/a"
        if avg != want_avg:
            fail(f"{what}: {key} Avg bus bandwidth {avg}, the mean of the ok rows' busbw is {want_avg}")
    long = [l for i, l in enumerate(lines) if i not in covered and len(l) > width and not l.startswith("results: ")]
    if long:
        fail(f"{what}: lines over {width} columns outside the nccl-tests tables: {long}")
    return tables


def nccl_key(r):
    p, m = r["params"], r["metrics"]
    return (str(int(m["size_bytes"])), NCCL_TYPES.get(p["dtype"], p["dtype"]), p.get("op", "none"), "-1")


def case_nccl_table():
    path = work("nccl.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    p = mpirun(2, ["run", "--backend", "cpu", "--quick", "--benchmarks", "all_reduce", "--threads", "1", "-o", path],
               env_extra={"COLUMNS": "80"}, export=["COLUMNS"])
    expect_code(p, 0, "gpuscale run (all_reduce sweep)")
    doc = load(path)
    if len({r["params"]["size_bytes"] for r in doc["results"]}) < 2:
        fail("the sweep has fewer than two sizes")
    from_run = check_nccl_text(p.stdout, doc, "run summary", 80)
    rep = gs("report", path, env_extra={"COLUMNS": "80"})
    expect_code(rep, 0, "report")
    if check_nccl_text(rep.stdout, doc, "report", 80) != from_run:
        fail("the report's nccl-tests tables differ from the run's")
    wide = gs("report", path, "--wide", env_extra={"COLUMNS": "80"})
    expect_code(wide, 0, "report --wide")
    if check_nccl_text(wide.stdout, doc, "report --wide", 10**6) != from_run:
        fail("report --wide changed the nccl-tests tables")
    narrow = gs("report", path, env_extra={"COLUMNS": "50"})
    expect_code(narrow, 0, "report at COLUMNS=50")
    check_nccl_text(narrow.stdout, doc, "report at COLUMNS=50", 50)
    md = gs("report", path, "--markdown", "-")
    expect_code(md, 0, "report --markdown")
    if check_nccl_text(md.stdout, doc, "Markdown", 10**6) != from_run:
        fail("the Markdown report's nccl-tests tables differ from the run's")
    out = gs("report", path, "--csv", "-")
    lines = list(csv.DictReader(io.StringIO(out.stdout)))
    for r, line in zip(doc["results"], lines):
        m = r["metrics"]
        if (line["count"], line["wrong"], line["size"], line["placement"]) != (
                str(m["count"]), "%g" % m["wrong"], str(m["size_bytes"]), r["params"]["placement"]):
            fail(f"CSV line {line} does not hold the row's count, wrong, size, placement {m}")
    print(f"ok: {len(from_run)} nccl-tests table(s), every value the JSON's")


def case_real_compare():
    # On a real run the noise decides which rows may flag: the exit code must follow the rule.
    n = compare_codes(real_run(), None)
    print(f"ok: {n} row(s) regress when every value is 20% lower")


def case_real_check():
    path = real_run()
    doc = load(path)
    ref = work("ref.json")
    p = gs("reference", path, "-o", ref)
    expect_code(p, 0, "reference")
    p = gs("check", path, "--reference", ref)
    expect_code(p, 0, "check against its own reference")  # every input run passes its own (docs/analysis.md)
    # A planted difference on some rows, the others as measured: a random third of the rows with a value
    # (seeded, printed) 30% low, another third 40% low. With the default floor (lower 0.10) both thirds
    # fail; with --tolerance 0.35 only the 40% third does. The reference rule written again in Python
    # (analysis_oracle.check_verdicts) must agree with that plan, and check's JUnit with both.
    seed = random.randrange(1 << 30)
    print(f"seed {seed}")
    keys = [analysis_oracle.row_key(r) for r in doc["results"]
            if r["status"] == "ok" and r["aggregate"] and r["unit"] not in LOWER_IS_BETTER]
    random.Random(seed).shuffle(keys)
    factor = {k: (1.0, 0.7, 0.6)[i % 3] for i, k in enumerate(keys)}
    mixed_doc = lowered(lowered(doc, 0.7, {k for k, f in factor.items() if f == 0.7}), 0.6,
                        {k for k, f in factor.items() if f == 0.6})
    low = work("low.json")
    save(mixed_doc, low)
    ref2 = work("ref-wide.json")
    expect_code(gs("reference", path, "-o", ref2, "--tolerance", "0.35"), 0, "reference --tolerance")
    for ref_path, tolerance in ((ref, 0.10), (ref2, 0.35)):
        checks, unmatched, _ = analysis_oracle.check_verdicts(mixed_doc, load(ref_path))
        order = [analysis_oracle.row_key(r) for r in mixed_doc["results"] if analysis_oracle.row_key(r) in checks]
        want = [factor.get(k, 1.0) < 1 - tolerance for k in order]
        if sorted(checks) != sorted(keys) or unmatched or [not checks[k].ok for k in order] != want:
            fail(f"tolerance {tolerance}: the reference rule and the planted factors disagree: "
                 f"{[(k, factor.get(k), checks[k]) for k in order if (not checks[k].ok) != (factor.get(k, 1.0) < 1 - tolerance)][:4]}")
        junit = work("check.xml")
        if os.path.exists(junit):
            os.remove(junit)
        p = gs("check", low, "--reference", ref_path, "--junit", junit)
        expect_code(p, 1 if any(want) else 0, f"check with a third 30% and a third 40% low, tolerance {tolerance}")
        with open(junit) as f:
            cases = analysis_outputs.junit_cases(f.read(), "check --junit")
        if [c[2] == "failure" for c in cases] != want:
            fail(f"tolerance {tolerance}: JUnit fails {sum(c[2] == 'failure' for c in cases)} of {len(cases)} cases, "
                 f"expected {sum(want)} of {len(want)}, at other rows: {[c[:2] for c, w in zip(cases, want) if (c[2] == 'failure') != w][:4]}")
    print(f"ok: {len(keys)} rows, {sum(f < 0.9 for f in factor.values())} fail at the 10% floor, "
          f"{sum(f < 0.65 for f in factor.values())} at 35%")
    # No overwrite without --force.
    expect_code(gs("reference", path, "-o", ref2), 2, "reference over an existing file")
    expect_code(gs("reference", path, "-o", ref2, "--force"), 0, "reference --force")


# ---- back-to-back runs (issue 16): noise-aware verdicts, --only-changes, a reference from several runs ---

# A small plan of long repetitions (16M STREAM arrays, GEMM 256, collectives of 1M and up at 2 ranks),
# 10 of them per row: on a loaded machine their spread grows with the load, so the noise rule calls an
# unsteady row inconclusive, never a regression. Collectives of a few KB (repetitions of microseconds,
# steady within a run but shifting from run to run with the machine's load) are left out.
BACK_TO_BACK_PLAN = ["--backend", "cpu", "--quick", "--reps", "10", "--threads", "1", "--dtypes", "fp64",
                     "--benchmarks", "stream.triad,stream.copy,gemm,all_reduce", "--array-size", "16M",
                     "--gemm-shapes", "256", "-b", "1M", "-e", "4M"]


def case_back_to_back():
    runs = []
    for i in (1, 2):
        path = work(f"run{i}.json")
        p = mpirun(2, ["run", *BACK_TO_BACK_PLAN, "-o", path])
        expect_code(p, 0, f"back-to-back run {i}")
        runs.append(path)
    a, b = runs
    # Whether two real runs agree depends on the machine's load between them (a loaded CI machine can
    # halve a STREAM row from one run to the next), so no exit code is asserted for the pair: compare
    # must give exactly the regressions the noise rule (written again in Python) finds in the two files.
    # That back-to-back runs compare clean on a quiet machine is a measurement (docs/measurements.md,
    # "Comparison noise"), not a test.
    p = gs("compare", a, b)
    expect_verdicts(p, load(a), load(b), "compare of two back-to-back runs")
    pair = expected_regressions(load(a), load(b))
    expect_code(p, 1 if pair else 0, f"compare of two back-to-back --reps 10 runs ({len(pair)} row(s) the rule flags)")
    expect_width(p, 80, "compare")
    shown = [l for l in table_lines(p.stdout) if l.rstrip().endswith("REGRESSION") or "REGRESSION (" in l]
    if len(shown) != len(pair):
        fail(f"{len(shown)} regression(s) shown between back-to-back runs, the noise rule gives {len(pair)}: {p.stdout}")
    if not re.search(r"\n\d+ matched: %d regression, \d+ improvement, \d+ same, \d+ inconclusive" % len(pair), p.stdout):
        fail(f"no summary line of the verdicts: {p.stdout}")
    if pair:
        print(f"note: {len(pair)} row(s) moved beyond their noise between the two runs (machine load changed)")
    # Rows without a value (a collective at 1 GPU) are not compared and never regress.
    doc_b = load(b)
    # Every value of the second run 20% worse, spreads kept: the rule (written again in Python) names
    # the rows whose noise allows it; a loaded machine may leave none tight enough (then exit 0).
    worse = work("worse.json")
    worse_doc = lowered(doc_b, 0.8)
    save(worse_doc, worse)
    want = expected_regressions(doc_b, worse_doc)
    p = gs("compare", b, worse)
    expect_code(p, 1 if want else 0, f"compare with a 20% worse copy ({len(want)} row(s) tight enough to flag)")
    expect_verdicts(p, doc_b, worse_doc, "compare with a 20% worse copy")
    expect_width(p, 80, "compare")
    flagged = [l for l in table_lines(p.stdout) if l.rstrip().endswith("REGRESSION") or "REGRESSION (" in l]
    if len(flagged) != len(want):
        fail(f"{len(flagged)} regression(s) shown, the noise rule gives {len(want)}: {p.stdout}")
    if not want:
        print("note: no row of this run was steady enough to flag a 20% change (machine loaded)")
    if "improvement" in p.stdout.split(" matched:")[0].split("point @ GPUs")[1]:
        fail("a 20% worse copy shows an improvement")
    # --only-changes: just the regressions (and problems); the summary still counts every verdict.
    expect_only_changes(b, worse, want)
    wide = gs("compare", b, worse, "--wide")
    if max(len(l) for l in wide.stdout.splitlines()) <= 80 or "A %peak" not in wide.stdout:
        fail("--wide does not show the wide table")
    # A reference from both runs: the median, tolerances from their spread; each run passes it.
    ref = work("ref-two.json")
    p = gs("reference", a, b, "-o", ref)
    expect_code(p, 0, "reference from two runs")
    doc_ref = load(ref)
    entries = doc_ref["clusters"][0]["entries"]
    valued = {(r["benchmark"], json.dumps(r["params"], sort_keys=True), r["gpu_count"])
              for r in doc_b["results"] if r["status"] == "ok" and r["aggregate"]}
    if not entries or len(entries) > len(valued) or doc_ref["created_from"]["files"] != [a, b]:
        fail(f"reference from two runs: {len(entries)} entries for {len(valued)} rows with a value")
    for e in entries:
        if e["lower"] < 0.1 or e["value"] <= 0:
            fail(f"entry below the floor: {e}")
    for path in (a, b):
        p = gs("check", path, "--reference", ref)
        expect_code(p, 0, f"check of {os.path.basename(path)} against the reference of both runs")
        expect_width(p, 80, "check")
    # The worse copy fails exactly where it falls below an entry's lower bound.
    vals = {(r["benchmark"], json.dumps(r["params"], sort_keys=True), r["gpu_count"]): r["aggregate"]
            for r in worse_doc["results"]}
    below = [e for e in entries
             if vals[(e["benchmark"], json.dumps(e["params"], sort_keys=True), e["gpu_count"])] < e["value"] * (1 - e["lower"])]
    p = gs("check", worse, "--reference", ref)
    expect_code(p, 1 if below else 0, f"check of the 20% worse copy ({len(below)} entries below their bound)")
    expect_width(p, 80, "check")


# ---- HTML in headless Chromium ----------------------------------------------------------------------

class Charts(HTMLParser):
    def __init__(self):
        super().__init__()
        self.kinds = {}
        self.polylines = self.rects = self.scripts = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg" and "data-chart" in a:
            self.kinds[a["data-chart"]] = self.kinds.get(a["data-chart"], 0) + 1
        self.polylines += tag == "polyline"
        self.rects += tag == "rect" and "bar" in (a.get("class") or "")
        self.scripts += tag == "script"


def chromium(args, url):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    profile = work("chromium-profile")
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0"] + args + [url]
    return run(cmd, timeout=120)


class Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.count = {}

    def handle_starttag(self, tag, attrs):
        self.count[tag] = self.count.get(tag, 0) + 1


def elements(html):
    """{tag: how many} of a page (the DOM chromium dumps)."""
    e = Elements()
    e.feed(html)
    return e.count


def console_messages(stderr):
    return [l for l in stderr.splitlines() if ":CONSOLE" in l]


def case_browser():
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        print("SKIP: chromium is not installed (scripts/install-deps --test installs it)")
        sys.exit(77)
    # The console check catches errors, and the element count sees markup: a control page with a
    # script and an image, raw, must show both.
    control = work("control.html")
    with open(control, "w") as f:
        f.write("<!DOCTYPE html><html><body><script>console.error('gpuscale-control')</script><img src=x></body></html>")
    p = chromium(["--dump-dom"], "file://" + control)
    if not any("gpuscale-control" in l for l in console_messages(p.stderr)):
        fail(f"the console capture does not work (control page): {p.stderr[-2000:]}")
    if not (elements(p.stdout).get("script") and elements(p.stdout).get("img")):
        fail(f"the element count does not see the control page's script and image: {elements(p.stdout)}")

    path = real_run()
    html = work("report.html")
    expect_code(gs("report", path, "--html", html), 0, "report --html")
    p = chromium(["--dump-dom"], "file://" + html)
    if p.returncode != 0:
        fail(f"chromium --dump-dom: exit {p.returncode}: {p.stderr[-2000:]}")
    msgs = console_messages(p.stderr)
    if msgs:
        fail(f"console messages while loading the report: {msgs}")
    charts = Charts()
    charts.feed(p.stdout)
    doc = load(path)
    benches = {r["benchmark"] for r in doc["results"]}
    collectives = {r["benchmark"] for r in doc["results"] if r["scope"] == "collective"}
    # Each benchmark has its chart, or one line saying why it is not drawn (a chart with no data is not:
    # e.g. % of peak where no peak is known).
    want = {"scaling": (len(benches), "scaling efficiency"), "peak": (len(benches), "% of peak"),
            "busbw": (len(collectives), "busbw vs message size")}
    for kind, (n, title) in want.items():
        absent = p.stdout.count(f"{title}: not drawn, ")
        if charts.kinds.get(kind, 0) + absent < n:
            fail(f"{charts.kinds.get(kind, 0)} '{kind}' charts and {absent} not drawn, expected at least {n}: {charts.kinds}")
    # Every collective is projected, or its table row says why not: whether a fit holds depends on the
    # measured times (a loaded machine can make one fail), so the count of charts is not fixed.
    projected = 0
    for c in sorted(collectives):
        if c == "dp-step":  # the training step's own projection: a chart, or the reason it is not drawn
            if "PROJECTION: dp-step" not in p.stdout and not re.search(r"dp-step [^<]*: not projected", p.stdout):
                fail("dp-step: neither a projection chart nor the reason it is not projected")
            continue
        no_fit = re.search(rf"<td>{re.escape(c)}</td><td>[^<]*</td><td colspan=\"8\">no fit", p.stdout)
        if f"PROJECTION: {c} (" not in p.stdout and not no_fit:
            fail(f"collective {c}: neither a projection chart nor a 'no fit' reason in the report")
        projected += f"PROJECTION: {c} (" in p.stdout
    # A projection refused (a fit error above the bound, docs/analysis.md) draws no chart; one drawn does.
    if charts.kinds.get("projection", 0) < projected:
        fail(f"{projected} collectives projected, {charts.kinds.get('projection', 0)} projection charts")
    if charts.kinds.get("per-gpu", 0) < len(benches) or charts.rects == 0 or charts.polylines < len(benches):
        fail(f"per-GPU bars or lines missing: {charts.kinds}, {charts.rects} bars, {charts.polylines} lines")
    if charts.scripts:
        fail("the report contains a script")
    # The section says it is a model (its charts say PROJECTION; every fit may be refused, docs/analysis.md).
    if "Projection (a model fitted to this run, not a measurement)" not in p.stdout:
        fail("the projection is not labelled")

    shot = work("report.png")
    p = chromium([f"--screenshot={shot}", "--window-size=1280,2400", "--hide-scrollbars"], "file://" + html)
    if not os.path.exists(shot):
        fail(f"no screenshot: {p.stderr[-2000:]}")
    from PIL import Image, ImageStat
    img = Image.open(shot).convert("RGB")
    var = sum(ImageStat.Stat(img.convert("L")).var)
    colors = img.getcolors(1 << 20) or []
    # Bars are the first series' blue, or the warning red where a group or its host is named: which one
    # fills the top of the page depends on whether this (loaded) machine's run named an outlier.
    def near(rgb, ref):
        return all(abs(a - b) < 20 for a, b in zip(rgb, ref))
    blue = sum(c for c, rgb in colors if near(rgb, (0x1f, 0x77, 0xb4)))
    red = sum(c for c, rgb in colors if near(rgb, (0xd6, 0x27, 0x28)))
    if var < 100 or len(colors) < 20 or blue + red < 500:
        fail(f"the screenshot looks blank: variance {var:.0f}, {len(colors)} colours, "
             f"{blue} chart-blue and {red} warning-red pixels")
    # The hostile page (hostile.json: markup and scripts in every string field) renders without running
    # anything: the control page above shows that a script's console output would be caught.
    hostile = work("hostile.html")
    expect_code(gs("report", data("hostile.json"), "--html", hostile), 0, "report --html of hostile.json")
    p = chromium(["--dump-dom"], "file://" + hostile)
    if p.returncode != 0 or console_messages(p.stderr):
        fail(f"the hostile page: exit {p.returncode}, console messages {console_messages(p.stderr)}")
    if elements(p.stdout).get("script") or elements(p.stdout).get("img"):
        fail(f"the browser made elements of the hostile strings: {elements(p.stdout)}")
    if "&lt;script&gt;alert(1)&lt;/script&gt;" not in p.stdout:
        fail("the browser does not show the hostile host name as text")
    print(f"ok: charts {charts.kinds}; screenshot variance {var:.0f}, {len(colors)} colours; the hostile page ran nothing")


# ---- hostile strings ----------------------------------------------------------------------------------

def case_hostile():
    src = data("hostile.json")
    doc = load(src)
    outs = {k: work("hostile." + k) for k in ("html", "md", "csv", "prom")}
    p = gs("report", src, "--html", outs["html"], "--markdown", outs["md"], "--csv", outs["csv"],
           "--openmetrics", outs["prom"])
    expect_code(p, 0, "report of hostile.json")
    if "\x1b" in p.stdout:
        fail("an escape sequence from the file reached the terminal")
    html = open(outs["html"]).read()
    for bad in ["<script", "<img", "<b>", "<i>550"]:
        if bad in html:
            fail(f"{bad!r} reached the HTML unescaped")
    if "&lt;script&gt;alert(1)&lt;/script&gt;" not in html:
        fail("the hostile hostname is not shown escaped")
    md = open(outs["md"]).read()
    if "<script" in md or "<img" in md:
        fail("markup reached the Markdown unescaped")
    for line in md.splitlines():
        if line.startswith("|") and not line.rstrip().endswith("|"):
            fail(f"a Markdown table line was broken: {line!r}")
    rows = list(csv.DictReader(open(outs["csv"], newline="")))
    # Quotes and commas survive quoting; a control character but tab (the name's line feed) is '?', so
    # each record stays one line (text/escape.cpp, csv_field).
    shown = re.sub(r"[\x00-\x08\x0a-\x1f\x7f\x80-\x9f]", "?", doc["cluster"]["name"])
    if len(rows) != len(doc["results"]) or rows[0]["cluster"] != shown:
        fail(f"CSV fields did not survive quoting: {rows[0]['cluster']!r}, expected {shown!r}")
    if len(open(outs["csv"]).read().splitlines()) != len(rows) + 1:
        fail("a CSV record spans more than one line")
    if not any(json.loads(r["params"]).get("note") == doc["results"][0]["params"]["note"] for r in rows):
        fail("a params value did not survive CSV quoting")
    from prometheus_client.parser import text_string_to_metric_families
    fams = {f.name: f for f in text_string_to_metric_families(open(outs["prom"]).read())}
    if "fake_metric" in fams:
        fail("a label value injected a metric")
    hosts = {s.labels.get("host") for n, f in fams.items() if n.startswith("gpuscale_rank_") for s in f.samples}
    if hosts != {h["name"] for h in doc["hosts"]}:
        fail(f"host labels did not survive escaping: {hosts}")
    if not any(s.labels.get("note") == doc["results"][0]["params"]["note"]
               for n, f in fams.items() if n.endswith("_per_second") for s in f.samples):
        fail("a params label value did not survive escaping")
    ref = work("hostile-ref.json")
    expect_code(gs("reference", src, "-o", ref), 0, "reference of hostile.json")
    bad_ref = load(ref)
    for e in bad_ref["clusters"][0]["entries"]:
        e["value"] *= 10  # every check fails, so every message lands in the JUnit XML
    save(bad_ref, ref)
    p = gs("check", src, "--reference", ref, "--junit", "-")
    expect_code(p, 1, "check of hostile.json")
    ET.fromstring(p.stdout)  # well-formed XML
    if "<script" in p.stdout or "\x1b" in p.stdout:
        fail("markup or control characters reached the JUnit XML unescaped")
    # (the browser's view of the hostile page: case browser, which skips with 77 where chromium is missing)


# ---- version 1 at the edge (issue 23) -------------------------------------------------------------

def case_version_one():
    """A version-1 file (tests/data/upgrade/result-v1.json: rows of the old synthetic-a.json) reads in
    every command as its version-2 twin (the same rows of today's synthetic-a.json): validate names its
    version, report and check print the same, compare finds them the same, merge writes version 2, and
    history stores it."""
    old = os.path.join(os.path.dirname(ARGS.data), "upgrade", "result-v1.json")
    v1 = load(old)
    if v1["schema_version"] != 1:
        fail(f"{old} is not a version-1 file")
    keys = {(r["benchmark"], json.dumps(r["params"], sort_keys=True), r["gpu_count"]) for r in v1["results"]}
    twin = load(data("synthetic-a.json"))
    twin["results"] = [r for r in twin["results"] if (r["benchmark"], json.dumps(r["params"], sort_keys=True), r["gpu_count"]) in keys]
    for k in ("plan", "summary"):
        twin[k] = v1[k]
    if len(twin["results"]) != len(keys):
        fail(f"the twin holds {len(twin['results'])} of the {len(keys)} rows")
    dirs = {name: work(name) for name in ("v1", "v2")}
    for name, doc in (("v1", v1), ("v2", twin)):
        os.makedirs(dirs[name])
        save(doc, os.path.join(dirs[name], "run.json"))
    p = gs("validate", "run.json", cwd=dirs["v1"])
    expect_code(p, 0, "validate a version-1 file")
    if "schema version 1" not in p.stdout:
        fail(f"validate does not name version 1: {p.stdout!r}")
    ref = data("reference-alpha.json")
    for args in (["report", "run.json"], ["report", "run.json", "--csv", "-"], ["check", "run.json", "--reference", ref]):
        a, b = gs(*args, cwd=dirs["v1"]), gs(*args, cwd=dirs["v2"])
        if (a.returncode, a.stdout) != (b.returncode, b.stdout):
            fail(f"{' '.join(args)}: a version-1 file and its version-2 twin differ:\n{a.stdout}\n---\n{b.stdout}\n{a.stderr}")
    twin_path = os.path.join(dirs["v2"], "run.json")
    same = gs("compare", twin_path, twin_path)
    for pair in (["run.json", twin_path], [twin_path, "run.json"]):
        p = gs("compare", *pair, cwd=dirs["v1"])
        if p.returncode != same.returncode or "0 regression, 0 improvement" not in p.stdout:
            fail(f"compare {' '.join(pair)}: exit {p.returncode} (the twin against itself: {same.returncode}):\n{p.stdout}")
    merged = os.path.join(dirs["v1"], "merged.json")
    expect_code(gs("merge", "run.json", "-o", merged, cwd=dirs["v1"]), 0, "merge a version-1 file")
    m = e2e_common.load_valid(merged, os.path.join(os.path.dirname(ARGS.data), "..", "..", "results", "schema",
                                                   "result-v2.schema.json"), ARGS.gpuscale)
    if m["schema_version"] != 2 or len(m["results"]) != len(keys) or not all(isinstance(r["ranks"], dict) for r in m["results"]):
        fail("merge of a version-1 file did not write its rows as version 2")
    store = "sqlite://" + os.path.join(dirs["v1"], "h.db")
    expect_code(gs("history", "add", "--store", store, "run.json", cwd=dirs["v1"]), 0, "history add of a version-1 file")
    p = gs("history", "list", "--store", store)
    expect_code(p, 0, "history list")
    if "alpha" not in p.stdout:
        fail(f"history does not list the version-1 run: {p.stdout!r}")
    print("ok: a version-1 file reads in validate, report, check, compare, merge and history as version 2")


# ---- fleet data (issue 14): report's fleet section, check --fail-on-outliers, report --drain-list ---------

def fleet_doc(seed, nodes=8, gpn=2):
    """synthetic-a.json turned into a fleet run of `nodes` x `gpn` ranks with random figures around a
    random level, one random host at half speed and named in analysis.outliers / outlier_hosts (the
    format of docs/fleet.md, written by hand: this tests the readers, not the rule)."""
    rnd = random.Random(seed)
    base = load(data("synthetic-a.json"))
    d = copy.deepcopy(base)
    hosts = [f"gpu{rnd.randrange(10, 99)}-{i}" for i in range(nodes)]
    slow = rnd.randrange(nodes)
    n = nodes * gpn
    host_of = lambda r: hosts[r // gpn]
    d["ranks"] = [{"rank": r, "host": host_of(r), "local_rank": r % gpn,
                   "device": {"backend": "cpu", "name": "Test CPU", "index": r % gpn, "memory_bytes": 1 << 30,
                              "free_memory_bytes": 1 << 29, "details": {}}} for r in range(n)]
    d["hosts"] = [{"name": h, "node_index": i, "cpu_model": "x", "ranks": [i * gpn + k for k in range(gpn)]}
                  for i, h in enumerate(hosts)]
    d["mpi"]["world_size"] = n
    stream = next(r for r in base["results"] if r["benchmark"] == "stream.triad")
    coll = next(r for r in base["results"] if r["benchmark"] == "all_reduce")
    def ranks_for(proto, k):
        out = []
        for r in range(k):
            e = copy.deepcopy(e2e_common.rank_entries(proto)[0])
            e.update(rank=r, host=host_of(r), device_index=r % gpn)
            out.append(e)
        return out
    level, bw = rnd.uniform(500, 5000), rnd.uniform(10, 50)
    rows = []
    for k in (1, gpn):
        row = copy.deepcopy(stream)
        row.update(gpu_count=k, nodes=1, topology="single" if k == 1 else "intra-node")
        e2e_common.put_rank_entries(row, ranks_for(stream, n))  # every group's ranks
        groups = []
        for g in range(n // k):
            ranks = list(range(g * k, (g + 1) * k))
            v = k * level * rnd.uniform(0.98, 1.02) * (0.5 if ranks[0] // gpn == slow else 1)
            groups.append({"hosts": [host_of(ranks[0])], "ranks": ranks, "value": v, "status": "ok",
                           "spread_down": 0.01, "spread_up": 0.01})
        result_rows.put_group_entries(row, groups)
        vals = sorted(g["value"] for g in groups)
        med = vals[len(vals) // 2]
        row["group_summary"] = {"count": len(vals), "measured": len(vals), "min": vals[0], "median": med, "max": vals[-1],
                                "spread": (vals[-1] - vals[0]) / med}
        row["aggregate"] = med
        rows.append(row)
    pairs = copy.deepcopy(coll)
    pairs.update(benchmark="pairs.sendrecv", gpu_count=n, nodes=nodes, topology="inter-node")
    e2e_common.put_rank_entries(pairs, ranks_for(coll, n))
    m = [[None] * nodes for _ in range(nodes)]
    for i in range(nodes):
        for j in range(i + 1, nodes):
            m[i][j] = m[j][i] = bw * rnd.uniform(0.97, 1.03) * (0.5 if slow in (i, j) else 1)
    pairs["matrices"] = [{"kind": "node", "hosts": hosts, "ranks": [[i * gpn + k for k in range(gpn)] for i in range(nodes)],
                          "labels": hosts, "values": m, "directed": False}]
    rows.append(pairs)
    d["results"] = rows
    d["plan"]["gpu_counts"] = sorted({1, gpn, n})
    d["plan"].pop("point_list", None)  # synthetic-a's points are not these
    result_rows.agree(d)
    mine = [v for v in m[slow] if v is not None]
    others = sorted(v for i, row in enumerate(m) for j, v in enumerate(row) if v is not None and i < j)
    median = others[len(others) // 2]
    d["analysis"] = {"straggler_threshold": 0.1, "stragglers": [],
                     "outliers": [{"kind": "node", "hosts": [hosts[slow]], "ranks": [slow * gpn + k for k in range(gpn)],
                                   "value": sorted(mine)[len(mine) // 2], "median": median,
                                   "deficit": 1 - sorted(mine)[len(mine) // 2] / median,
                                   "reason": f"{len(mine)} of its {len(mine)} measured pairs are slow",
                                   "benchmark": "pairs.sendrecv", "params": {}, "gpu_count": n, "uuids": [],
                                   "pci_bus_ids": []}],
                     "outlier_hosts": [hosts[slow]], "outlier_rule": {"fraction": 0.1, "mad_k": 3.5}}
    return d, hosts, slow


def case_fleet_report():
    seed = random.randrange(1 << 30)
    print(f"seed {seed}")
    doc, hosts, slow = fleet_doc(seed)
    path = work("fleet.json")
    save(doc, path)
    p = gs("report", path)
    expect_code(p, 0, "report of a fleet file")
    if f"\nfleet: outlier hosts (suspects to drain): {hosts[slow]}\n" not in p.stdout:
        fail(f"the fleet section does not name the suspect {hosts[slow]}:\n{p.stdout}")
    nodes = [l for l in p.stdout.splitlines() if l.strip().startswith("nodes: ")]
    if len(nodes) != 1 or not nodes[0].strip().startswith(f"nodes: {hosts[slow]} "):
        fail(f"the slowest node is not listed first: {nodes}")
    html = work("fleet.html")
    expect_code(gs("report", path, "--html", html), 0, "HTML report of a fleet file")
    page = open(html).read()
    if page.count('data-chart="heatmap"') != 1 or page.count(f"\u25b6 {hosts[slow]}</text>") != 2:
        fail("the HTML heatmap does not mark the suspect on both axes")
    if page.count('data-chart="per-node"') != 2:
        fail("per-node bars missing")

    # The drain list: the suspect alone on standard output, nothing else.
    p = gs("report", "--drain-list", path)
    expect_code(p, 0, "report --drain-list")
    if p.stdout != hosts[slow] + "\n" or p.stderr:
        fail(f"drain list: {p.stdout!r} {p.stderr!r}")
    clean = copy.deepcopy(doc)
    clean["analysis"]["outliers"], clean["analysis"]["outlier_hosts"] = [], []
    clean_path = work("fleet-clean.json")
    save(clean, clean_path)
    p = gs("report", "--drain-list", clean_path)
    expect_code(p, 0, "report --drain-list without suspects")
    if p.stdout or p.stderr:
        fail(f"an empty drain list printed {p.stdout!r} {p.stderr!r}")
    evil = copy.deepcopy(doc)
    evil["analysis"]["outlier_hosts"] = [hosts[slow], "gpu1;scontrol reboot ALL"]
    evil_path = work("fleet-evil.json")
    save(evil, evil_path)
    p = gs("report", "--drain-list", evil_path)
    # A host the file does not have: the semantic validator refuses the file before the drain list's own
    # rule (a shell command is not a host name: tests/unit/analysis/test_fleet_check.cpp) is reached.
    one_error_line(p, "/analysis/outlier_hosts: host gpu1;scontrol reboot ALL is not in /hosts", "a drain list with a shell command")
    if p.stdout:
        fail(f"a refused drain list printed {p.stdout!r}")
    one_error_line(gs("report", "--drain-list", data("synthetic-a.json")), "no analysis.outlier_hosts", "drain list of an old file")
    one_error_line(gs("report", "--drain-list", path, "--csv", "-"), "--drain-list prints only", "drain list with --csv")

    # check --fail-on-outliers: exit 1 with one line per outlier; 0 without outliers; 2 without analysis.
    p = gs("check", path, "--fail-on-outliers")
    expect_code(p, 1, "check --fail-on-outliers with a suspect")
    lines = [l for l in p.stdout.splitlines() if "FAIL outlier" in l]
    if len(lines) != 1 or f"FAIL outlier node {hosts[slow]} (pairs.sendrecv" not in lines[0]:
        fail(f"check does not name the outlier: {p.stdout}")
    expect_code(gs("check", clean_path, "--fail-on-outliers"), 0, "check --fail-on-outliers without outliers")
    one_error_line(gs("check", data("synthetic-a.json"), "--fail-on-outliers"), "no outlier analysis", "check of an old file")
    one_error_line(gs("check", path), "--reference REF, --fail-on-outliers", "check with nothing to check")
    ref = work("fleet-ref.json")
    expect_code(gs("reference", path, "-o", ref), 0, "reference of the fleet file")
    expect_code(gs("check", path, "--reference", ref), 0, "check against its own reference, outliers not asked")
    p = gs("check", path, "--reference", ref, "--fail-on-outliers", "--junit", "-")
    expect_code(p, 1, "check against its own reference with --fail-on-outliers")
    suites = ET.fromstring(p.stdout).findall("testsuite")
    failed = [c for s in suites for c in s.findall("testcase") if c.find("failure") is not None]
    if len(suites) != 2 or len(failed) != 1 or hosts[slow] not in failed[0].find("failure").get("message", ""):
        fail(f"JUnit of check with outliers: {p.stdout[:2000]}")
    expect_code(gs("check", clean_path, "--reference", ref, "--fail-on-outliers"), 0, "clean file, its reference and no outliers")


# ---- bad input files ----------------------------------------------------------------------------------

def case_bad_files():
    good = load(data("synthetic-a.json"))
    text = json.dumps(good)
    bad = {}
    def put(name, content):
        path = work(name)
        with open(path, "w") as f:
            f.write(content)
        bad[name] = path
    put("empty.json", "")
    put("truncated.json", text[: len(text) // 2])
    wrong = copy.deepcopy(good)
    wrong["results"][0]["gpu_count"] = "four"
    put("wrong-type.json", json.dumps(wrong))
    put("nan.json", text.replace('"aggregate": 3000.0', '"aggregate": NaN', 1))
    neg = copy.deepcopy(good)
    neg["results"][0]["aggregate"] = -1.0
    put("negative.json", json.dumps(neg))
    negm = copy.deepcopy(good)
    next(r for r in negm["results"] if r["scope"] == "collective")["metrics"]["time_us"] = -5
    put("negative-metric.json", json.dumps(negm))
    put("huge-number.json", text.replace('"aggregate": 3000.0', '"aggregate": 1e999', 1))
    ver = copy.deepcopy(good)
    ver["schema_version"] = 1  # version-2 rows under version 1
    put("version.json", json.dumps(ver))
    deep = copy.deepcopy(good)
    deep["results"][0]["params"]["x"] = "@"
    put("deep.json", json.dumps(deep).replace('"@"', "[" * 100000 + "]" * 100000))
    put("not-result.json", '{"schema": 5}')
    put("array.json", "[1, 2, 3]")
    huge = work("huge.json")
    with open(huge, "w") as f:
        f.truncate(300 << 20)  # sparse: refused by size before it is read
    bad["huge.json"] = huge
    bad["missing.json"] = os.path.join(ARGS.workdir, "no-such-file.json")
    ref = data("reference-alpha.json")
    for name, path in bad.items():
        for args in (["report", path], ["compare", data("synthetic-a.json"), path], ["check", path, "--reference", ref],
                     ["reference", path, "-o", work("ref-out.json")]):
            p = gs(*args)
            one_error_line(p, path, f"{args[0]} {name}")
            if args[0] != "report" and p.stdout.strip():
                fail(f"{args[0]} {name} printed to stdout: {p.stdout[:200]!r}")
    # Bad reference files.
    for name, content, needle in [
        ("ref-empty.json", "", "empty file"),
        ("ref-sign.json", json.dumps({"schema": "gpuscale.reference", "schema_version": 1, "clusters": [
            {"cluster": "alpha", "entries": [{"benchmark": "x", "value": 1, "lower": -0.1, "unit": "GB/s"}]}]}), "lower"),
        ("ref-kind.json", json.dumps({"schema": "gpuscale.result"}), "not a gpuscale reference")]:
        path = work(name)
        with open(path, "w") as f:
            f.write(content)
        p = gs("check", data("synthetic-a.json"), "--reference", path)
        one_error_line(p, needle, name)
        if path not in p.stderr:
            fail(f"{name}: the message does not name the file: {p.stderr!r}")
    p = gs("check", data("synthetic-b.json"), "--reference", ref)
    one_error_line(p, "no reference for cluster 'beta'", "check with another cluster's reference")
    for args, needle in [(["report", data("synthetic-a.json"), "--straggler", "2"], "--straggler"),
                         (["compare", data("synthetic-a.json"), data("synthetic-a.json"), "--threshold", "-1"], "--threshold"),
                         (["reference", data("synthetic-a.json"), "-o", "-", "--tolerance", "x"], "--tolerance"),
                         (["report", data("synthetic-a.json"), "--markdown", "-", "--csv", "-"], "standard output")]:
        one_error_line(gs(*args), needle, " ".join(args))


def case_no_overwrite():
    out = work("exists.html")
    with open(out, "w") as f:
        f.write("keep me")
    p = gs("report", data("synthetic-a.json"), "--html", out)
    one_error_line(p, "already exists", "report over an existing file")
    if open(out).read() != "keep me":
        fail("an existing file was overwritten without --force")
    md = work("new.md")
    p = gs("report", data("synthetic-a.json"), "--markdown", md, "--html", out)
    if p.returncode != 2 or os.path.exists(md):
        fail("a refused output still let another output be written")
    expect_code(gs("report", data("synthetic-a.json"), "--html", out, "--force"), 0, "report --force")
    if not open(out).read().startswith("<!DOCTYPE html>"):
        fail("--force did not replace the file")
    copy_in = work("input-copy.json")
    shutil.copy(data("synthetic-a.json"), copy_in)
    one_error_line(gs("report", copy_in, "--csv", copy_in, "--force"), "is also an input", "output over an input")
    one_error_line(gs("compare", copy_in, copy_in, "--junit", copy_in, "--force"), "is also an input", "junit over an input")


def parse():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuscale", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--update-golden", action="store_true")
    ARGS = ap.parse_args()
    ARGS.gpuscale = os.path.abspath(ARGS.gpuscale)
    ARGS.data = os.path.abspath(ARGS.data)
    ARGS.root = os.path.abspath(ARGS.workdir)  # the real run's file lives here; each case works in its own folder
    ARGS.workdir = os.path.join(ARGS.root, ARGS.case)
    e2e_common.ARGS = ARGS  # for e2e_common's gs, mpirun and work
    os.environ["COLUMNS"] = "80"  # compare and check lay out to it; the golden files are 80 columns wide
    return ARGS


def main():
    # `run` makes the real CPU run (the analysis_run fixture) that real_compare, real_check and browser
    # read; browser is skipped (77) with a message when chromium is missing.
    real = {"FIXTURES_REQUIRED": "analysis_run"}
    cases = {
        "golden": (case_golden, {}),
        "compare_codes": (case_compare_codes, {}),
        "hostile": (case_hostile, {}),
        "bad_files": (case_bad_files, {}),
        "no_overwrite": (case_no_overwrite, {}),
        "fleet_report": (case_fleet_report, {}),
        "version_one": (case_version_one, {}),
        "run": (case_run, {"FIXTURES_SETUP": "analysis_run", **e2e_common.CORES}),
        "nccl_table": (case_nccl_table, {**e2e_common.CORES}),
        "real_compare": (case_real_compare, real),
        "real_check": (case_real_check, real),
        # Alone: two runs compared for noise must not differ in what else the machine is doing.
        "back_to_back": (case_back_to_back, {"RUN_SERIAL": "TRUE", "TIMEOUT": 400}),
        "browser": (case_browser, {**real, "LABELS": "e2e;analysis;browser", "SKIP_RETURN_CODE": 77, "TIMEOUT": 180}),
    }
    e2e_common.run_case("e2e_analysis_", {"TIMEOUT": 300, "LABELS": "e2e;analysis"}, cases, parse)


if __name__ == "__main__":
    main()
