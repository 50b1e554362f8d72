"""The verdicts the golden outputs of tests/data/analysis must carry, derived twice without gpuscale:
by hand from make_synthetic.py's plan (its PLANNED_* and planned_compare) and by analysis_oracle.py's
second implementation of docs/analysis.md's rules from the files' values and bands; the two must agree.
e2e_analysis.py (case golden) then holds gpuscale's output and each golden file to them, so a golden
file rewritten (--update-golden) from a wrong verdict fails the test like a wrong output does.

Per file: compare-a-b.txt every row's verdict, basis, B/A and its range, and the summary counts;
check-a.txt every checked row's ok/FAIL, its bounds and reason, the entry that matched no row, and the
summary counts; report-a.* the valid column (only stream.copy at 4 GPUs invalid) and the stragglers
(only rank 3 of stream.triad at 4 GPUs, with its host, UUID and PCI bus id)."""
import csv
import importlib.util
import io
import json
import math
import os

import analysis_oracle as oracle
import analysis_outputs as outputs
from analysis_oracle import row_key
from result_rows import fail


def _human(n):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def point_label(r):
    """The point's name as the tables print it, for the benchmarks of the synthetic files."""
    p = r["params"]
    if r["benchmark"].startswith("stream."):
        return f"{p['dtype']} {_human(p['array_bytes'])}"
    if r["benchmark"] == "gemm":
        return f"{p['dtype']} {p['m']}x{p['n']}x{p['k']}:{p['layout']}"
    if r["scope"] == "collective":
        return " ".join([p["dtype"]] + ([p["op"]] if "op" in p else []) + [p["placement"], _human(p["size_bytes"])])
    if r["benchmark"] == "dp-step":
        return " ".join([p["dtype"]] + [f"{k}={v}" for k, v in sorted(p.items()) if k != "dtype"])
    fail(f"no point name for {r['benchmark']}")


def figure(v):
    """A figure as gpuscale writes every figure a person reads (text/number_text.h, figure_text): 4
    significant digits, plain from 0.001 to below a million (38400, not 3.84e+04), %g's exponent beyond."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    a = abs(v)
    if a == 0:
        return "0"
    if a < 1e-3 or a >= 999999.5:
        return "%.4g" % v
    s = "%.*f" % (max(0, 3 - math.floor(math.log10(a))), v)
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


class Expected:
    """What the golden outputs must say, from the synthetic files (a: synthetic-a.json, b:
    synthetic-b.json, ref: reference-alpha.json)."""

    def __init__(self, a, b, ref, compare, checks, unmatched, uncovered, stragglers, invalid):
        self.a, self.b, self.ref = a, b, ref
        self.compare, self.checks, self.unmatched, self.uncovered = compare, checks, unmatched, uncovered
        self.stragglers, self.invalid = stragglers, invalid
        self.rows = {row_key(r): r for r in a["results"]}


def _plan(data_dir):
    spec = importlib.util.spec_from_file_location("make_synthetic", os.path.join(data_dir, "make_synthetic.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def expected(data_dir):
    """The verdicts, once the files are shown to be what make_synthetic.py builds and the oracle is
    shown to agree with the plan's hand-worked verdicts."""
    plan = _plan(data_dir)
    load = lambda name: json.load(open(os.path.join(data_dir, name)))
    for name, doc in plan.files().items():
        if load(name) != json.loads(json.dumps(doc)):
            fail(f"{name} is not what make_synthetic.py builds (run it again): the planned verdicts describe its build")
    a, b, ref = load("synthetic-a.json"), load("synthetic-b.json"), load("reference-alpha.json")
    rows = {row_key(r): r for r in a["results"]}

    compare = oracle.compare_verdicts(a, b)
    planned = {row_key(r): plan.planned_compare(r) for r in a["results"]}
    got = {k: (v.verdict, v.on_peak) for k, v in compare.items()}
    if got != planned:
        diff = {k: (planned.get(k), got.get(k)) for k in set(planned) | set(got) if planned.get(k) != got.get(k)}
        fail(f"compare: the oracle and the plan disagree (plan, oracle): {diff}")

    checks, unmatched, uncovered = oracle.check_verdicts(a, ref)
    planned = {}
    for bench, k, params, ok, why, index in plan.PLANNED_CHECK:
        hits = [key for key, r in rows.items() if r["benchmark"] == bench and r["gpu_count"] == k
                and all(r["params"].get(pk) == pv for pk, pv in params.items())]
        if len(hits) != 1:
            fail(f"PLANNED_CHECK entry {bench} @ {k} {params} names {len(hits)} rows")
        planned[hits[0]] = (ok, why, index)
    got = {key: (c.ok, c.why, c.index) for key, c in checks.items()}
    if got != planned or [(c, i) for c, i, _ in unmatched] != plan.PLANNED_UNMATCHED or uncovered != plan.PLANNED_UNCOVERED:
        fail(f"check: the oracle and the plan disagree: oracle {got}, {unmatched}, {uncovered} not covered; "
             f"plan {planned}, {plan.PLANNED_UNMATCHED}, {plan.PLANNED_UNCOVERED}")

    strag = oracle.stragglers(a)
    got = [(rows[key]["benchmark"], rows[key]["gpu_count"], rank, host, v, med) for key, rank, host, v, med, _ in strag]
    if len(got) != len(plan.PLANNED_STRAGGLERS) or any(
            g[:4] != p[:4] or not math.isclose(g[4], p[4]) or not math.isclose(g[5], p[5])
            for g, p in zip(got, plan.PLANNED_STRAGGLERS)):
        fail(f"stragglers: the oracle finds {got}, the plan {plan.PLANNED_STRAGGLERS}")
    invalid = oracle.problem_rows(a)
    if [(rows[k]["benchmark"], rows[k]["gpu_count"]) for k in invalid] != plan.PLANNED_INVALID:
        fail(f"invalid rows: {invalid}, the plan {plan.PLANNED_INVALID}")
    return Expected(a, b, ref, compare, checks, unmatched, uncovered, strag, invalid)


# ---- compare --------------------------------------------------------------------------------------------

def check_compare_text(text, exp, what):
    rows, counts = outputs.compare_rows(text, what)
    want = []
    for r in exp.a["results"]:
        v = exp.compare.get(row_key(r))
        if v is None:
            continue
        if v.ratio is not None:
            figures = [figure(v.a), figure(v.b), "%.3f" % v.ratio, "%.3f-%.3f" % (v.lo, v.hi)]
        else:
            rb = next(x for x in exp.b["results"] if row_key(x) == row_key(r))
            figures = [r["status"].upper() if r["status"] != "ok" else figure(r["aggregate"]),
                       rb["status"].upper() if rb["status"] != "ok" else figure(rb["aggregate"]), "-", "-"]
        want.append((r["benchmark"], v.on_peak, point_label(r), r["gpu_count"], figures, v.verdict))
    if rows != want:
        bad = [(w, g) for w, g in zip(want, rows) if w != g] or [("rows", len(want), len(rows))]
        fail(f"{what}: compare's rows differ from the noise rule's verdicts (expected, printed): {bad[:4]}")
    verdicts = [v.verdict for v in exp.compare.values()]
    want_counts = {"matched": len(verdicts), **{n: verdicts.count(n) for n in outputs.VERDICTS},
                   "only in A": len(exp.a["results"]) - len(verdicts),
                   "only in B": len(exp.b["results"]) - len(verdicts)}
    if counts != want_counts:
        fail(f"{what}: summary counts {counts}, the rule gives {want_counts}")


def check_compare_junit(xml_text, exp, what):
    cases = outputs.junit_cases(xml_text, what)
    kind = {"REGRESSION": "failure", "PROBLEM": "failure", "skipped": "skipped", "n/a": "skipped"}
    want = [(f"gpuscale.compare.{r['benchmark']}", f"{point_label(r)} @ {r['gpu_count']} GPU(s)",
             kind.get(exp.compare[row_key(r)].verdict, "")) for r in exp.a["results"] if row_key(r) in exp.compare]
    if [c[:3] for c in cases] != want:
        fail(f"{what}: JUnit cases differ from the rule's verdicts: {[(w, c[:3]) for w, c in zip(want, cases) if w != c[:3]][:4]}")


# ---- check ----------------------------------------------------------------------------------------------

def check_check_text(text, exp, what):
    rows, unmatched, counts = outputs.check_rows(text, what)
    want = []
    for r in exp.a["results"]:
        c = exp.checks.get(row_key(r))
        if c is None:
            continue
        ref = figure(c.entry["value"])
        if r["status"] != "ok":
            figures, reasons = ["-", ref], [f"{r['status']}: {r['errors'][0]}"]
        else:
            bounds = f"{figure(c.lo) if c.lo is not None else '0'}..{figure(c.hi) if c.hi is not None else 'inf'}"
            figures, reasons = [figure(r["aggregate"]), bounds, ref], []
        want.append((r["benchmark"], "ok" if c.ok else "FAIL", point_label(r), r["gpu_count"], figures, reasons))
    if rows != want:
        bad = [(w, g) for w, g in zip(want, rows) if w != g] or [("rows", len(want), len(rows))]
        fail(f"{what}: check's rows differ from the reference rule's verdicts (expected, printed): {bad[:4]}")
    if unmatched != [(c, i) for c, i, _ in exp.unmatched]:
        fail(f"{what}: entries matching no row {unmatched}, the rule gives {[(c, i) for c, i, _ in exp.unmatched]}")
    n_ok = sum(c.ok for c in exp.checks.values())
    want_counts = {"checked": len(exp.checks), "passed": n_ok, "failed": len(exp.checks) - n_ok,
                   "unmatched": len(exp.unmatched), "not covered": exp.uncovered}
    if counts != want_counts:
        fail(f"{what}: summary counts {counts}, the rule gives {want_counts}")


def check_check_junit(xml_text, exp, what):
    cases = outputs.junit_cases(xml_text, what)
    want = [(f"gpuscale.check.{r['benchmark']}", f"{point_label(r)} @ {r['gpu_count']} GPU(s)",
             "" if exp.checks[row_key(r)].ok else "failure") for r in exp.a["results"] if row_key(r) in exp.checks]
    want += [("gpuscale.check.reference", None, "failure") for _ in exp.unmatched]
    got = [(c[0], c[1] if c[0] != "gpuscale.check.reference" else None, c[2]) for c in cases]
    if got != want:
        fail(f"{what}: JUnit cases {got}, the rule gives {want}")
    for (cls, _, kind, msg), r in zip(cases, [r for r in exp.a["results"] if row_key(r) in exp.checks]):
        c = exp.checks[row_key(r)]
        if (c.why == "outside" and "outside [" not in msg) or (c.why == "invalid" and not msg.startswith("invalid:")):
            fail(f"{what}: {cls} {point_label(r)}: failure message {msg!r} does not say why ({c.why})")


# ---- report ---------------------------------------------------------------------------------------------

def _valid_cells(exp):
    """{(benchmark, gpus): valid} the report tables show: every row, a collective series at its largest
    size only."""
    out, size = {}, {}
    for r in exp.a["results"]:
        key = (r["benchmark"], r["gpu_count"])
        s = r["params"].get("size_bytes", 0) if r["scope"] == "collective" else 0
        if key in out and s < size[key]:
            continue
        out[key], size[key] = "yes" if r["status"] == "ok" else r["status"], s
    return out


def _straggler_rows(exp):
    """[(benchmark, point, gpus, rank, host, value, median, below, GPU index, UUID, PCI bus id)]."""
    out = []
    for key, rank, host, v, med, deficit in exp.stragglers:
        r = exp.rows[key]
        dev = next(x["device"] for x in exp.a["ranks"] if x["rank"] == rank and x["host"] == host)
        out.append((r["benchmark"], point_label(r), r["gpu_count"], rank, host, figure(v), figure(med), "%.1f%%" % (100 * deficit),
                    str(dev["index"]), dev["details"]["uuid"], dev["details"]["pci_bus_id"]))
    return out


def check_report_text(text, exp, what):
    lines = text.splitlines()
    n_bad, n_strag = len(exp.invalid), len(exp.stragglers)
    want_verdict = f"verdict: FAIL: {n_bad} measurement(s) invalid or failed, {n_strag} straggler(s)"
    if want_verdict not in lines:
        fail(f"{what}: no line {want_verdict!r}")
    cells = outputs.report_valid_cells(text, what)
    if cells != _valid_cells(exp):
        fail(f"{what}: valid column {cells}, the rows' statuses give {_valid_cells(exp)}")
    title = f"{n_bad} measurement(s) invalid or failed:"
    if title not in lines:
        fail(f"{what}: no line {title!r}")
    start = lines.index(title)
    listed = lines[start + 1:lines.index("", start)]
    want = [f"  {exp.rows[k]['benchmark']} {point_label(exp.rows[k])} at {exp.rows[k]['gpu_count']} GPUs: "
            f"{exp.rows[k]['errors'][0]}" for k in exp.invalid]
    if listed != want:
        fail(f"{what}: invalid measurements listed {listed}, expected {want}")
    count, rows, uuid, pci = outputs.report_stragglers(text, what)
    want = _straggler_rows(exp)
    got = [(p.split(" ", 1)[0], p.split(" ", 1)[1], k, rank, host, v, med, below, gpu)
           for p, k, rank, host, v, med, below, gpu in rows]
    if count != len(want) or got != [w[:9] for w in want] or uuid != {w[3]: w[9] for w in want} \
            or pci != {w[3]: w[10] for w in want}:
        fail(f"{what}: stragglers {count}: {got}, UUIDs {uuid}, PCI {pci}; the rule names {want}")


def check_report_markdown(text, exp, what):
    cells, strag = {}, []
    for heading, rows in outputs.markdown_tables(text):
        if heading and heading.startswith("Stragglers"):
            strag = [(r["benchmark"], r["point"], int(r["GPUs"]), int(r["rank"]), r["host"], r["value"], r["median"],
                      r["below"], r["GPU"], r["UUID"], r["PCI bus id"]) for r in rows]
        elif rows and "valid" in rows[0] and "GPUs" in rows[0]:
            bench = heading.split(" ", 1)[0]
            for r in rows:
                cells[(bench, int(r["GPUs"]))] = r["valid"]
    if cells != _valid_cells(exp):
        fail(f"{what}: valid column {cells}, the rows' statuses give {_valid_cells(exp)}")
    if strag != _straggler_rows(exp):
        fail(f"{what}: stragglers {strag}, the rule names {_straggler_rows(exp)}")
    if f"- {len(exp.stragglers)} straggler(s)" not in text.splitlines():
        fail(f"{what}: the verdict does not count {len(exp.stragglers)} straggler(s)")


def check_report_csv(text, exp, what):
    lines = list(csv.DictReader(io.StringIO(text)))
    per_row = {}
    for key, *_ in exp.stragglers:
        per_row[key] = per_row.get(key, 0) + 1
    want = [(r["benchmark"], r["gpu_count"], r["status"], per_row.get(row_key(r), 0)) for r in exp.a["results"]]
    got = [(l["benchmark"], int(l["gpu_count"]), l["status"], int(l["stragglers"] or 0)) for l in lines]
    if got != want:
        fail(f"{what}: (benchmark, GPUs, status, stragglers) per line differ from the rows': "
             f"{[(w, g) for w, g in zip(want, got) if w != g][:4] or (len(want), len(got))}")
    if [json.loads(l["params"]) for l in lines] != [r["params"] for r in exp.a["results"]]:
        fail(f"{what}: the lines' params are not the rows', in order")


def _labels(r):
    return (r["benchmark"], str(r["gpu_count"]), tuple(sorted((k, str(v)) for k, v in r["params"].items())))


def check_report_prom(text, exp, what):
    from prometheus_client.parser import text_string_to_metric_families
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    row_labels = lambda s: (s.labels["benchmark"], s.labels["gpu_count"], tuple(sorted(
        (k, v) for k, v in s.labels.items() if k not in ("cluster", "run", "benchmark", "gpu_count", "topology",
                                                          "rank", "host", "gpu"))))
    valid = {row_labels(s): s.value for s in fams["gpuscale_valid"].samples}
    want = {_labels(r): 1.0 if r["status"] == "ok" else 0.0 for r in exp.a["results"] if r["status"] != "skipped"}
    if valid != want:
        fail(f"{what}: gpuscale_valid differs from the rows' statuses: "
             f"{[(k, valid.get(k), want.get(k)) for k in set(valid) | set(want) if valid.get(k) != want.get(k)][:4]}")
    strag = sorted((row_labels(s), s.labels["rank"], s.labels["host"], s.value)
                   for s in fams["gpuscale_straggler_deficit_ratio"].samples)
    wanted = sorted((_labels(exp.rows[key]), str(rank), host, deficit) for key, rank, host, _, _, deficit in exp.stragglers)
    if len(strag) != len(wanted) or any(s[:3] != w[:3] or not math.isclose(s[3], w[3], rel_tol=1e-9)
                                        for s, w in zip(strag, wanted)):
        fail(f"{what}: straggler metric {strag}, the rule names {wanted}")


CHECKS = {"report-a.txt": check_report_text, "report-a.md": check_report_markdown, "report-a.csv": check_report_csv,
          "report-a.prom": check_report_prom, "compare-a-b.txt": check_compare_text, "check-a.txt": check_check_text}


def check_output(name, text, exp, what):
    """Fails unless `text`, the golden file `name` or gpuscale's output for it, carries exp's verdicts."""
    CHECKS[name](text, exp, what)
