#!/usr/bin/env python3
"""Hostile strings in a real result file reach no output raw (docs/reliability.md#hostile-input).

A small CPU run (2 ranks, one STREAM point and one all_reduce size) is made once (case `make`, the
e2e_hostile_output fixture); every other case derives files from it:

  readers:      ANSI CSI (ESC[31m, ESC[2J), OSC (ESC]0;title BEL), C1 (U+009B CSI, U+0085 NEL), CR, NUL,
                BEL and newlines planted in the cluster name, host names, device names, environment
                values, the command line, a params string and error messages; then validate, report
                (text, --markdown -, --csv -, --openmetrics -, --html FILE), compare, check (with a
                reference, --junit FILE and -, and --fail-on-outliers), reference, merge and run --resume: no byte
                0x00-0x1F but newline and tab, no CR, no DEL, no UTF-8 C1 on stdout, on stderr or in
                a file written; an error is one line.
  long:         a 4 MiB host name and cluster name: every output shows at most a few hundred bytes of
                them, with a marker saying how much was cut.
  labels:       params whose keys give one OpenMetrics label name ("a-b" and "a_b", "cluster" and
                "param_cluster"): every series has each label name once, names are [a-zA-Z_][a-zA-Z0-9_]*,
                and prometheus_client's Prometheus and OpenMetrics parsers read the text.
  cluster_nul:  a cluster "vm\\u0000evil" is not matched by the reference for "vm" (fnmatch stops at NUL).
  dbl_max:      DBL_MAX values (rank values, aggregates, times): every reader exits 0 with finite output
                (no inf or nan in text, CSV or SVG) or refuses in one line; --resume writes a valid file.
  bad_rows:     an ok row with fewer ranks than its gpu_count, and a negative time_us, refused in one
                line naming the file by validate, merge and --resume (exit 2).
  bad_points:   a resumed STREAM point of 0 elements, or without 'elements': one line naming the file,
                the point and the parameter, exit 2.
  flags:        --threads beyond the visible cores (100000, 2^31-1), --peaks deeply nested, with a key
                twice or /dev/zero, --health-thresholds /dev/zero: one line naming the flag or file, exit 2.
"""
import copy
import csv
import json
import os
import random
import re
import shutil
import sys

import e2e_common
import result_rows

ARGS = None
fail = e2e_common.fail
SEED = random.randrange(1, 1 << 30)
PLAN = ["run", "--backend", "cpu", "--benchmarks", "stream.triad,all_reduce", "--dtypes", "fp32", "--array-size", "64K",
        "-b", "1K", "-e", "1K", "--ops", "sum", "--placement", "out", "--reps", "3", "--threads", "1"]
# Every kind of control a terminal acts on, and a newline that would split a one-line message.
HOSTILE = "\x1b[31mred\x1b[2J\x1b]0;title\x07\u009b2J\u0085nel\rcr\u0000nul\x07bel\nline2\x7fdel"
FIXTURE = {"FIXTURES_REQUIRED": "e2e_hostile_output"}


def work(name):  # a fresh output file's path (a leftover one and its journal removed)
    return e2e_common.work(name, fresh=True)


def base_path():
    return os.path.join(ARGS.workdir, "base.json")


# Every command here: output as bytes (searched for raw control bytes), the arguments echoed escaped and
# cut (they carry the hostile strings), without the caller's GPUSCALE_TEST_FAULT and GPUSCALE_TEST_HOSTS,
# and failing the case when it runs past 120 s.
HOSTILE_RUN = {"timeout": 120, "text": False, "env_drop": ("GPUSCALE_TEST_FAULT", "GPUSCALE_TEST_HOSTS"),
               "echo": lambda cmd: "+ " + " ".join(c.encode("unicode_escape").decode()[:200] for c in cmd),
               "on_timeout": lambda cmd: f"{cmd[:4]} did not finish within 120 s"}


def gs(*args):
    return e2e_common.gs(*args, **HOSTILE_RUN)


def mpirun(args):  # 2 ranks
    return e2e_common.mpirun(2, args, **HOSTILE_RUN)


C1 = re.compile(rb"\xc2[\x80-\x9f]")


def raw_controls(data):
    """The control bytes of `data` no output may hold: C0 but newline and tab, DEL, and UTF-8 C1."""
    bad = sorted({b for b in data if (b < 0x20 and b not in (0x0a, 0x09)) or b == 0x7f})
    return bad + (["C1"] if C1.search(data) else [])


def clean(data, what):
    bad = raw_controls(data)
    if bad:
        i = min([data.find(bytes([b])) for b in bad if b != "C1"] + ([C1.search(data).start()] if "C1" in bad else []))
        fail(f"{what}: raw control characters {bad} at byte {i}: {data[max(0, i - 60):i + 60]!r}")


def our_lines(stderr):
    """gpuscale's own lines on stderr (mpirun adds its report of a non-zero exit), without the note
    naming the backend that a run prints first."""
    return [l for l in stderr.decode("utf-8", "replace").splitlines()
            if l.startswith("gpuscale:") and not re.match(r"gpuscale: \w+ backend \(", l)]


def checked(p, what, codes=(0,), outputs=(), csv=False):
    """`p` exited with one of `codes`; its stdout, stderr and `outputs` (the files it must write unless
    it refused) hold no raw control character (CSV's own CRLF record ends aside, with csv=True); a
    refusal (exit 2) is one line and may write nothing."""
    if p.returncode not in codes:
        fail(f"{what}: exit {p.returncode}, expected one of {codes}\nstdout: {p.stdout[-1500:]!r}\nstderr: {p.stderr[-1500:]!r}")
    clean(p.stdout.replace(b"\r\n", b"\n") if csv else p.stdout, what + " (stdout)")
    clean(p.stderr, what + " (stderr)")
    if p.returncode == 2:
        lines = our_lines(p.stderr)
        if len(lines) != 1:
            fail(f"{what}: a refusal in {len(lines)} lines, not one: {p.stderr!r}")
    for f in outputs:
        if not os.path.exists(f):
            if p.returncode != 2:  # only a refusal writes nothing
                fail(f"{what}: exit {p.returncode} without writing {f}")
            continue
        with open(f, "rb") as fh:
            clean(fh.read(), f"{what} ({os.path.basename(f)})")
    print(f"ok: {what} (exit {p.returncode})")
    return p


def load_base():
    if not os.path.exists(base_path()):
        fail(f"{base_path()} is missing: the make case (fixture e2e_hostile_output) did not run")
    with open(base_path()) as f:
        return json.load(f)


def save(doc, name):
    path = work(name)
    with open(path, "w") as f:
        json.dump(doc, f)  # ensure_ascii: the file itself is ASCII, its strings hold the controls as \u escapes
    return path


def rename_hosts(doc, make):
    """Every host name (hosts[], ranks[], the rows' host lists, the analysis) renamed alike by make(old):
    the file still agrees with itself (results/result_semantics.h)."""
    names = {h["name"] for h in doc["hosts"]}
    new = {n: make(n) for n in names}

    def walk(v):
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return new.get(v, v) if isinstance(v, str) else v

    for key in ("hosts", "ranks", "results", "analysis"):
        if key in doc:
            doc[key] = walk(doc[key])


def hostile_doc(text):
    doc = load_base()
    doc["cluster"]["name"] = "vm" + text
    rename_hosts(doc, lambda n: n + text)
    for k in list(doc["environment"]):
        doc["environment"][k] += text
    doc["command_line"].append(text)
    for r in doc["ranks"]:
        r["device"]["name"] += text
    for row in doc["results"]:
        row["errors"] = [text]
        row["ranks"]["error"] = text
        row["peak_source"] = text
    add_param(doc, "note", text)  # a params string: the schema allows any
    return doc


def cut_to(doc, n):
    """The file of a run that died after its first `n` rows: its summary says so."""
    doc["results"] = doc["results"][:n]
    result_rows.agree(doc, complete=False)


def add_param(doc, key, value):
    """`key` set in every parameter point of the file alike (rows, plan.point_list, the analysis), so
    the rows stay the plan's."""
    for row in doc["results"]:
        row["params"][key] = value
    for p in doc["plan"].get("point_list", []):
        p["params"][key] = value
    for kind in ("stragglers", "outliers"):
        for e in doc.get("analysis", {}).get(kind, []):
            if "params" in e:
                e["params"][key] = value


def case_make():
    path = work("base.json")
    p = mpirun(PLAN + ["--seed", str(SEED), "--cluster", "vm", "-o", path])
    if p.returncode != 0:
        fail(f"the base run failed ({p.returncode}): {p.stderr[-2000:]!r}")
    doc = load_base()
    if len(doc["results"]) < 4 or any(r["status"] != "ok" for r in doc["results"]):
        fail(f"the base run did not measure its plan: {[r['status'] for r in doc['results']]}")


def all_readers(path, tag, expect_ok=True):
    """Every reader and output format on `path`; returns the files written."""
    ok = (0,) if expect_ok else (0, 2)
    files = []
    checked(gs("validate", path), f"{tag}: validate", ok)
    checked(gs("report", path), f"{tag}: report", ok)
    for flag in ("--markdown", "--csv", "--openmetrics"):
        checked(gs("report", path, flag, "-"), f"{tag}: report {flag} -", ok, csv=flag == "--csv")
    html = work(f"{tag}.html")
    checked(gs("report", path, "--html", html), f"{tag}: report --html", ok, [html])
    files.append(html)
    checked(gs("compare", base_path(), path), f"{tag}: compare", (0, 1, 2))
    checked(gs("compare", path, path), f"{tag}: compare with itself", (0, 1, 2))
    ref = work(f"{tag}-ref.json")
    checked(gs("reference", path, "-o", ref), f"{tag}: reference", ok, [ref])
    checked(gs("reference", path, "-o", "-"), f"{tag}: reference -o -", ok)
    if os.path.exists(ref):
        checked(gs("check", path, "--reference", ref), f"{tag}: check --reference (its own)", (0, 1, 2))
    base_ref = work(f"{tag}-base-ref.json")
    checked(gs("reference", base_path(), "-o", base_ref), f"{tag}: reference of the base run")
    checked(gs("check", path, "--reference", base_ref), f"{tag}: check against another cluster's reference", (0, 1, 2))
    junit = work(f"{tag}-check.xml")
    checked(gs("check", path, "--reference", base_ref, "--junit", junit), f"{tag}: check --junit", (0, 1, 2), [junit])
    if os.path.exists(ref):
        checked(gs("check", path, "--reference", ref, "--junit", "-"), f"{tag}: check --junit -", (0, 1, 2))
    checked(gs("check", path, "--fail-on-outliers"), f"{tag}: check --fail-on-outliers", (0, 1, 2))
    merged = work(f"{tag}-merged.json")
    checked(gs("merge", "-o", merged, path), f"{tag}: merge", (0, 2), [merged])
    return files


def case_readers():
    path = save(hostile_doc(HOSTILE), "hostile.json")
    all_readers(path, "hostile")
    # --resume: this launch's devices differ from the file's (refused in one line), and a file whose
    # devices are this launch's: resumed with nothing left to measure, or measuring what is.
    checked(mpirun(["run", "--resume", path, "-o", work("resumed.json")]), "run --resume (other devices)", (0, 2))
    doc = hostile_doc(HOSTILE)
    for r, b in zip(doc["ranks"], load_base()["ranks"]):
        r["device"]["name"] = b["device"]["name"]
    for row in doc["results"] + doc["plan"]["point_list"]:
        del row["params"]["note"]
    cut_to(doc, 1)  # the rest is measured again
    path = save(doc, "hostile-resume.json")
    out = work("resumed.json")
    checked(mpirun(["run", "--resume", path, "-o", out]), "run --resume", (0,), [out])


def case_csv_lines():
    """Line feeds, CR, commas and quotes in host names, the cluster, errors and params: report --csv
    writes one line per record, so Python's csv module, wc -l and awk count the same records (the header
    and one per row), each with the header's number of fields."""
    doc = hostile_doc("a\nb,\"c\"\r\nd")
    path = save(doc, "csv-lines.json")
    p = checked(gs("report", path, "--csv", "-"), "report --csv - (line breaks in strings)", csv=True)
    out = work("csv-lines.csv")
    with open(out, "wb") as f:
        f.write(p.stdout)
    with open(out, newline="", encoding="utf-8") as f:
        records = list(csv.reader(f))
    wc = p.stdout.count(b"\n")  # what wc -l counts
    awk = e2e_common.run(["awk", "END { print NR }", out], echo=False)
    if awk.returncode != 0:
        fail(f"awk: exit {awk.returncode}: {awk.stderr}")
    want = 1 + len(doc["results"])
    if len(records) != want or wc != want or int(awk.stdout) != want:
        fail(f"{len(records)} CSV records, wc -l {wc}, awk {awk.stdout.strip()}: expected {want} each")
    widths = {len(r) for r in records}
    if len(widths) != 1:
        fail(f"records of {sorted(widths)} fields: a field was split")
    hosts = [c for r in records[1:] for c in r if "a?b," in c]
    if not hosts:
        fail(f"no field holds the cluster with its line feed replaced: {records[1]}")
    print(f"ok: {want} records, one per line, {widths.pop()} fields each")


def case_long():
    big = "h" * (4 << 20)
    doc = load_base()
    doc["cluster"]["name"] = big
    rename_hosts(doc, lambda n: big)
    path = save(doc, "long.json")
    html = work("long.html")
    outs = [gs("report", path), gs("report", path, "--markdown", "-"), gs("report", path, "--csv", "-"),
            gs("report", path, "--openmetrics", "-"), gs("report", path, "--html", html), gs("validate", path),
            gs("check", path, "--reference", path)]
    with open(html, "rb") as f:
        texts = [p.stdout for p in outs] + [p.stderr for p in outs] + [f.read()]
    for t in texts:
        # Each output holds the name a few times at most (the ranks table, the header, labels).
        if len(t) > 64 << 10:
            fail(f"an output of {len(t)} bytes for a file with a 4 MiB host name: not cut ({t[:200]!r})")
        if b"h" * 401 in t:
            fail("an output shows more than 400 bytes of the host name")
    if not any(b"bytes cut]" in t for t in texts):
        fail("no output says how much of the long name was cut")
    print("ok: a 4 MiB host name is cut, with a marker, in every output")


def label_names(line):
    body = line[line.index("{") + 1:line.rindex("}")]
    return re.findall(r'(?:^|,)([^=,"]+)="(?:[^"\\]|\\.)*"', body)


def case_labels():
    doc = load_base()
    for k, v in {"a-b": "1", "a_b": "2", "cluster": "3", "param_cluster": "4", "9lives": "5", "__x": "6",
                 "rank": "7", "ünï": HOSTILE}.items():
        add_param(doc, k, v)
    path = save(doc, "labels.json")
    p = checked(gs("report", path, "--openmetrics", "-"), "report --openmetrics (clashing label names)")
    text = p.stdout.decode()
    series = [l for l in text.splitlines() if l and not l.startswith("#")]
    for line in series:
        names = label_names(line)
        if len(names) != len(set(names)):
            fail(f"a label name twice in one series: {line}")
        for n in names:
            if not re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_]*", n) or n.startswith("__"):
                fail(f"invalid label name {n!r} in {line}")
    rows = [l for l in series if l.startswith("gpuscale_valid{")]
    if not rows or not all(len(label_names(l)) >= 5 + 8 for l in rows):
        fail(f"the clashing params did not all become labels: {rows[:1]}")
    from prometheus_client.parser import text_string_to_metric_families as prom
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as om
    for parse, what in ((prom, "Prometheus"), (om, "OpenMetrics")):
        fams = list(parse(text))
        if not any(f.name.startswith("gpuscale_valid") for f in fams):
            fail(f"the {what} parser found no gpuscale_valid family")
    print(f"ok: {len(series)} series, each label name once, both parsers read them")


def case_cluster_nul():
    ref = work("vm-ref.json")
    checked(gs("reference", base_path(), "-o", ref), "reference of cluster vm")
    doc = load_base()
    doc["cluster"]["name"] = "vm\u0000evil"
    path = save(doc, "nul.json")
    p = checked(gs("check", path, "--reference", ref), "check of cluster vm\\0evil", (2,))
    if b"no reference for cluster" not in p.stderr:
        fail(f"cluster vm\\0evil was judged against vm's reference: {p.stderr!r}")
    # The control: cluster vm itself matches (and passes: a run passes its own reference).
    checked(gs("check", base_path(), "--reference", ref), "check of cluster vm itself")


DBL_MAX = sys.float_info.max


def case_dbl_max():
    doc = load_base()
    for row in doc["results"]:
        row["aggregate"] = DBL_MAX
        ranks = row["ranks"]
        n = len(ranks["rank"])
        ranks["value"] = [DBL_MAX] * n
        if "stats" in ranks:
            ranks["stats"] = {k: ([DBL_MAX] * n if k != "n" else v) for k, v in ranks["stats"].items()}
        for k in ("time_us", "algbw", "busbw"):
            if k in row["metrics"] and row["metrics"][k] is not None:
                row["metrics"][k] = DBL_MAX
    path = save(doc, "dblmax.json")
    html = work("dblmax.html")
    outs = [("report", gs("report", path)), ("CSV", gs("report", path, "--csv", "-")),
            ("markdown", gs("report", path, "--markdown", "-")), ("html", gs("report", path, "--html", html)),
            ("openmetrics", gs("report", path, "--openmetrics", "-")), ("validate", gs("validate", path)),
            ("compare", gs("compare", path, base_path())), ("reference", gs("reference", path, "-o", "-"))]
    for what, p in outs:
        checked(p, f"DBL_MAX: {what}", (0, 1, 2), csv=what == "CSV")
        if p.returncode in (0, 1):
            words = re.findall(rb"(?<![A-Za-z])(?:-?inf(?:inity)?|-?nan)(?![A-Za-z])", p.stdout, re.I)
            if words:
                fail(f"DBL_MAX: {what} prints {words[:3]} for finite input")
    with open(html, "rb") as f:
        svg_bad = re.findall(rb'="-?(?:nan|inf)', f.read(), re.I)
    if svg_bad:
        fail(f"DBL_MAX: the HTML report's SVG holds {svg_bad[:3]}")
    # Resumed with the all_reduce point to measure again: the file written keeps the DBL_MAX rows, and
    # its statistics (group summaries, stragglers) stay finite, so every reader takes it.
    doc["results"] = [r for r in doc["results"] if r["benchmark"] != "all_reduce"]
    result_rows.agree(doc, complete=False)
    path = save(doc, "dblmax-resume.json")
    out = work("dblmax-resumed.json")
    checked(mpirun(["run", "--resume", path, "-o", out]), "DBL_MAX: run --resume", (0,), [out])
    checked(gs("validate", out), "DBL_MAX: validate of the resumed file")
    p = checked(gs("report", out, "--csv", "-"), "DBL_MAX: report --csv of the resumed file", csv=True)
    if re.search(rb"(?<![A-Za-z])(?:-?inf|-?nan)(?![A-Za-z])", p.stdout, re.I):
        fail(f"DBL_MAX: the resumed file's CSV holds inf or nan: {p.stdout[:500]!r}")


def one_line_naming(p, what, *needles):
    checked(p, what, (2,))
    err = p.stderr.decode()
    for n in needles:
        if n not in err:
            fail(f"{what}: the message does not name {n!r}: {err!r}")


def case_bad_rows():
    doc = load_base()
    row = next(i for i, r in enumerate(doc["results"]) if r["gpu_count"] == 2)
    few = copy.deepcopy(doc)

    def first_rank_only(cols):  # every per-rank column of the row cut to its first entry
        return {k: (first_rank_only(v) if isinstance(v, dict) else v[:1] if isinstance(v, list) and k != "hosts" else v)
                for k, v in cols.items()}

    few["results"][row]["ranks"] = first_rank_only(few["results"][row]["ranks"])
    neg = copy.deepcopy(doc)
    coll = next(i for i, r in enumerate(neg["results"]) if "time_us" in r["metrics"])
    neg["results"][coll]["metrics"]["time_us"] = -random.uniform(1, 1000)
    # (a version-2 row's groups must tile its ranks, so its reader names the groups; a version-1 row is
    # refused by the rank count itself: tests/unit/analysis/test_row_world.cpp)
    for name, bad, needle in (("few-ranks.json", few, f"/results/{row}/groups: 1 group(s) of 2 do not tile the row's 1 ranks"),
                              ("negative-time.json", neg, f"/results/{coll}/metrics/time_us must be a non-negative")):
        path = save(bad, name)
        one_line_naming(gs("validate", path), f"validate {name}", path, needle)
        one_line_naming(gs("merge", "-o", work("m-" + name), path), f"merge {name}", path, needle)
        one_line_naming(mpirun(["run", "--resume", path, "-o", work("r-" + name)]), f"run --resume {name}", path, needle)


def case_bad_points():
    doc = load_base()
    i = next(i for i, p in enumerate(doc["plan"]["point_list"]) if p["benchmark"] == "stream.triad")
    zero = copy.deepcopy(doc)
    zero["plan"]["point_list"][i]["params"]["elements"] = 0
    missing = copy.deepcopy(doc)
    del missing["plan"]["point_list"][i]["params"]["elements"]
    for name, bad in (("zero-elements.json", zero), ("no-elements.json", missing)):
        bad["results"] = [r for r in bad["results"] if r["benchmark"] != "stream.triad"]  # the point is not done
        result_rows.agree(bad, complete=False)
        path = save(bad, name)
        one_line_naming(mpirun(["run", "--resume", path, "-o", work("r-" + name)]), f"run --resume {name}", path,
                        f"plan.point_list[{i}] (stream.triad)", "'elements'")


def case_flags():
    """Hostile flags and input files of `run`, each refused before anything is measured."""
    cores = len(os.sched_getaffinity(0))
    for n in (100000, 2147483647, cores + 1):
        one_line_naming(gs("run", "--backend", "cpu", "--threads", str(n), "-o", work("t.json")), f"--threads {n}",
                        f"--threads '{n}'", f"at most {cores}")
    deep = work("deep-peaks.json")
    with open(deep, "w") as f:
        f.write('{"format": "gpuscale-peaks", "version": 1, "models": [{"notes": ' + "[" * 100000 + "]" * 100000 + "}]}")
    dup = work("dup-peaks.json")
    with open(dup, "w") as f:
        f.write('{"format": "gpuscale-peaks", "version": 1, "models": [], "models": []}')
    for path, needle in ((deep, "nested deeper than"), (dup, 'duplicate key "models"'), ("/dev/zero", "not a regular file")):
        one_line_naming(gs("run", "--backend", "cpu", "--peaks", path, "-o", work("p.json")), f"--peaks {path}",
                        f"peaks file {path}: ", needle)
    one_line_naming(gs("run", "--backend", "cpu", "--health-thresholds", "/dev/zero", "-o", work("h.json")),
                    "--health-thresholds /dev/zero", "/dev/zero", "not a regular file")
    for f in ("t.json", "p.json", "h.json"):
        if os.path.exists(work(f)):
            fail(f"a refused run wrote {f}")


def case_flag_controls():
    """ESC, BEL, CSI, OSC and C1 in run's flag values, --store, GPUSCALE_STORE and GPUSCALE_TEST_HOSTS:
    every line on stderr escaped (one rule, core/term_text.h message_line), a refusal one line, exit 2."""
    hostile = "\x1b]0;pwn\x07\x1b[2J\u009b2J"
    out = work("fc.json")
    for flag, value in (("--array-size", "1" + hostile), ("--benchmarks", "stream.triad" + hostile),
                        ("--backend", "cpu" + hostile), ("--store", "bogus://" + hostile)):
        plan = [a for i, a in enumerate(PLAN) if flag not in PLAN[max(0, i - 1):i + 1]]  # without the flag and its value
        checked(gs(*plan, flag, value, "-o", out), f"run {flag} (hostile)", (2,))
    checked(e2e_common.gs(*PLAN, "-o", out, env_extra={"GPUSCALE_STORE": "bogus://" + hostile}, **HOSTILE_RUN),
            "run with GPUSCALE_STORE (hostile)", (2,))
    checked(e2e_common.gs(*PLAN, "-o", out, env_extra={"GPUSCALE_TEST_HOSTS": "h" + hostile}, **HOSTILE_RUN),
            "run with GPUSCALE_TEST_HOSTS (hostile)", (2,))
    if os.path.exists(out):
        fail("a refused run wrote its result file")
    # A store named with control bytes: the success line, then the warning of one that cannot be written.
    store_dir = os.path.join(ARGS.workdir, "store" + hostile)
    shutil.rmtree(store_dir, ignore_errors=True)
    os.makedirs(store_dir)
    p = checked(mpirun(PLAN + ["--store", "sqlite://" + store_dir + "/h.db", "-o", work("fc-stored.json")]),
                "run --store (hostile name)", (0,))
    if b"stored in" not in p.stderr:
        fail(f"no line says the run was stored: {p.stderr!r}")
    p = checked(mpirun(PLAN + ["--store", "sqlite://" + store_dir + "/no-such-dir/h.db", "-o", work("fc-unstored.json")]),
                "run --store (hostile, unwritable)", (7,))
    if b"not stored" not in p.stderr:
        fail(f"no warning says the run was not stored: {p.stderr!r}")


def case_env_not_utf8():
    """An allow-listed environment value that is not UTF-8 (NCCL_BAD=$'x\\xff'): the run completes, its
    file validates and records the value with the bad byte escaped (\\xff), never a lost run."""
    out = work("env.json")
    p = checked(e2e_common.gs(*PLAN, "-o", out, env_extra={"NCCL_BAD": "x\udcff", "OMP_BAD2": "\udcc3("},
                              **HOSTILE_RUN), "run with NCCL_BAD=x\\xff", (0,), [out])
    checked(gs("validate", out), "validate of the run with NCCL_BAD=x\\xff")
    with open(out, encoding="utf-8") as f:
        env = json.load(f)["environment"]
    if env.get("NCCL_BAD") != "x\\xff" or env.get("OMP_BAD2") != "\\xc3(":
        fail(f"the values are not recorded escaped: {env} (stderr {p.stderr[-500:]!r})")


def parse():
    global ARGS
    ARGS = e2e_common.parse_args("--mpiexec")
    return ARGS


def main():
    cores = e2e_common.CORES
    cases = {"flags": (case_flags, {}),
             "flag_controls": (case_flag_controls, cores),
             "env_not_utf8": (case_env_not_utf8, cores),
             "make": (case_make, {"FIXTURES_SETUP": "e2e_hostile_output", **cores}),
             "readers": (case_readers, {**FIXTURE, **cores}),
             "long": (case_long, FIXTURE),
             "csv_lines": (case_csv_lines, FIXTURE),
             "labels": (case_labels, FIXTURE),
             "cluster_nul": (case_cluster_nul, FIXTURE),
             "dbl_max": (case_dbl_max, {**FIXTURE, **cores}),
             "bad_rows": (case_bad_rows, {**FIXTURE, **cores}),
             "bad_points": (case_bad_points, {**FIXTURE, **cores})}
    e2e_common.run_case("e2e_hostile_output_", {"TIMEOUT": 120, "LABELS": "e2e;cpu"}, cases, parse)


if __name__ == "__main__":
    main()
