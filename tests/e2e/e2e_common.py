"""What the end-to-end test scripts share: failing with one line, the common command-line arguments,
waiting for a running gpuscale's first rows, reading a result file that must pass both the JSON Schema
(Python's jsonschema) and gpuscale validate, and a row's per-rank data and groups read alike from
result files of version 1 and 2; and each script's table of cases, the one place a case is declared
(its ctest registration is read from it)."""
import argparse
import copy
import json
import os
import re
import subprocess
import sys
import time


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def parser():
    """--gpuscale, --schema, --workdir and --case; a script adds its own."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuscale", required=True)
    ap.add_argument("--schema", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--case", required=True)
    return ap


# The parsed arguments (parse_args sets them): gs() and mpirun() read --gpuscale and --mpiexec there.
ARGS = None


def parse_args(*required):
    """The common options (parser()) and the script's own required ones, parsed (kept in ARGS); the
    workdir made."""
    global ARGS
    ap = parser()
    for name in required:
        ap.add_argument(name, required=True)
    ARGS = ap.parse_args()
    os.makedirs(ARGS.workdir, exist_ok=True)
    return ARGS


def run(cmd, env_extra=None, cwd=None, timeout=240):
    """`cmd` run to its end (output captured as text), echoed first; the environment is this one plus
    `env_extra`."""
    env = dict(os.environ)
    env.update(env_extra or {})
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


def gs(*args, env_extra=None, cwd=None, timeout=240):
    """gpuscale ARGS... run (see run)."""
    return run([ARGS.gpuscale] + list(args), env_extra, cwd, timeout)


def mpirun(np, args, env_extra=None, cwd=None, timeout=240):
    """gpuscale `args` under mpirun with `np` ranks (see run)."""
    return run([ARGS.mpiexec, "--oversubscribe", "-np", str(np), ARGS.gpuscale] + args, env_extra, cwd, timeout)


# The ctest property of the cases that run gpuscale for real: they take the 2 cores one at a time, so
# their timings and timeouts stay sane.
CORES = {"RESOURCE_LOCK": "cpu_cores"}


def cmake_value(v):
    return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


def run_case(prefix, common, cases, parse):
    """Runs the case that --case names. `cases`: {name: (function, its own ctest properties)}; `common`:
    the ctest properties of every case of the script (a case's own win). Every e2e case is declared only
    in such a table: `SCRIPT --cmake` prints one gpuscale_e2e_case(TEST CASE) call per case and its
    properties, which tests/e2e/CMakeLists.txt runs at configure time; the test is `prefix` + name.
    `parse`: the script's argument parsing, called (with --case among its options) otherwise."""
    if sys.argv[1:] == ["--cmake"]:
        for name, (_, own) in cases.items():
            props = " ".join(f"{k} {cmake_value(v)}" for k, v in {**common, **own}.items())
            print(f"gpuscale_e2e_case({prefix}{name} {name})")
            if props:
                print(f"set_tests_properties({prefix}{name} PROPERTIES {props})")
        sys.exit(0)
    args = parse()
    if args.case not in cases:
        print(f"unknown case {args.case!r}; the cases: {', '.join(cases)}", file=sys.stderr)
        sys.exit(2)
    cases[args.case][0]()
    print(f"PASS: {args.case}")


def out_path(workdir, name):
    """A fresh path for an output file in `workdir` (created; a leftover file of that name and its journal removed)."""
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, name)
    for old in (path, path + ".journal"):  # a result file and its journal (results/result_journal.h)
        if os.path.exists(old):
            os.remove(old)
    return path


def read_doc(path):
    """The JSON document at `path`, or None while it does not exist or cannot be parsed."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def journal_rows(path):
    """The rows in the whole lines of `path`'s journal (FILE.journal: rank 0 appends each point's rows
    there while it runs and writes FILE whole at the end), or [] when there is none."""
    try:
        with open(path + ".journal") as f:
            lines = f.read().split("\n")
    except OSError:
        return []
    rows = []
    for line in lines[1:-1]:  # the header line; the last piece has no newline yet
        try:
            rows.append(json.loads(line))
        except ValueError:
            pass
    return rows


def read_progress(path):
    """The document at `path` with the rows its journal holds beyond the file's own (what a run has
    finished so far), or None while there is no document."""
    doc = read_doc(path)
    if doc is None:
        return None
    seen = {(r["benchmark"], json.dumps(r["params"], sort_keys=True), r["gpu_count"]) for r in doc["results"]}
    for r in journal_rows(path):
        if (r["benchmark"], json.dumps(r["params"], sort_keys=True), r["gpu_count"]) not in seen:
            doc["results"].append(r)
    return doc


def wait_for_rows(p, path, rows, limit=120):
    """The run's progress (read_progress) once it holds at least `rows` rows while `p` (gpuscale, or
    mpirun) still runs; fails when `p` ends first or after `limit` seconds. Polls: no fixed sleep to race."""
    deadline = time.time() + limit
    while True:
        doc = read_progress(path)
        if doc and len(doc["results"]) >= rows and p.poll() is None:
            return doc
        if p.poll() is not None:
            fail(f"gpuscale ended before writing {rows} row(s): {p.communicate()}")
        if time.time() > deadline:
            p.kill()
            fail(f"fewer than {rows} row(s) written within {limit} s")
        time.sleep(0.05)


def schema_for(doc, schema):
    """The schema of the document's own version: result-vN.schema.json beside `schema` (the one the
    test was given) when the document says schema_version N and that file exists; `schema` otherwise
    (a version without its schema then fails against the given one)."""
    version = doc.get("schema_version") if isinstance(doc, dict) else None
    folder, name = os.path.split(schema)
    m = re.fullmatch(r"(.*-v)\d+(\.schema\.json)", name)
    if isinstance(version, int) and not isinstance(version, bool) and m:
        own = os.path.join(folder, f"{m.group(1)}{version}{m.group(2)}")
        if os.path.exists(own):
            return own
    return schema


def load_valid(path, schema, gpuscale, env=None):
    """The result document at `path`, after checking it against the schema of its version (see
    schema_for) and with `gpuscale validate`."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        fail(f"cannot read result file {path}: {e}")
    import jsonschema  # here, so that --cmake runs where only CMake's Python is (at configure time)
    with open(schema_for(doc, schema)) as f:
        jsonschema.validate(doc, json.load(f))
    p = subprocess.run([gpuscale, "validate", path], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        fail(f"gpuscale validate rejected {path}: {p.stderr}")
    return doc


# ---- a row's per-rank data and groups, in either file version ---------------------------------------
# Version 1 keeps them as lists of objects, one per rank and one per group. Version 2 keeps columns
# aligned by position: a column that is not an array holds the one value of every rank (or group), a
# rank's host is an index into ranks.hosts, a group's hosts indices into the same table, a metric
# column holds null where a rank lacks that metric, and per-rank stats are there only with
# --rank-stats (the row's "spread" stands for them otherwise). Tests read rows through these, so one
# check covers both versions.

STAT_KEYS = ("n", "median", "min", "max", "mean", "stddev")


def is_columns(row):
    """Whether `row` keeps its per-rank data as columns (version 2)."""
    return isinstance(row.get("ranks"), dict)


def _column(col, n, what):
    """A version-2 column as n values: an array as it is (it must have n entries), anything else the one
    value of all n (copied, so that changing one entry's value leaves the others alone)."""
    if isinstance(col, list):
        if len(col) != n:
            fail(f"column {what} has {len(col)} entries for {n}")
        return col
    return [copy.deepcopy(col) for _ in range(n)]


def _host_names(names, indices, what):
    try:
        return [names[i] for i in indices]
    except (IndexError, TypeError):
        fail(f"{what}: host indices {indices} for the {len(names)} hosts {names}")


def rank_entries(row):
    """The row's ranks as version-1 entries (copies): rank, host (its name), device_index, value, valid,
    error, metrics (only the metrics the rank has) and stats where the file has per-rank stats."""
    if not is_columns(row):
        return copy.deepcopy(row.get("ranks") or [])
    c = row["ranks"]
    ranks = c["rank"]
    n = len(ranks)
    hosts = _host_names(c["hosts"], _column(c["host"], n, "ranks.host"), "ranks.host")
    cols = {k: _column(c[k], n, f"ranks.{k}") for k in ("device_index", "value", "valid", "error")}
    metrics = {name: _column(col, n, f"ranks.metrics.{name}") for name, col in c.get("metrics", {}).items()}
    stats = {k: _column(col, n, f"ranks.stats.{k}") for k, col in c["stats"].items()} if "stats" in c else None
    out = []
    for i in range(n):
        e = {"rank": ranks[i], "host": hosts[i], **{k: v[i] for k, v in cols.items()},
             "metrics": {name: v[i] for name, v in metrics.items() if v[i] is not None}}
        if stats is not None:
            e["stats"] = {k: v[i] for k, v in stats.items()}
        out.append(e)
    return out


def _compact(values):
    """A version-2 column of `values`: the one value when all are equal (not for list values, which
    would read as a column), the array otherwise."""
    if values and not isinstance(values[0], list) and all(v == values[0] for v in values):
        return values[0]
    return values


def put_rank_entries(row, entries):
    """Writes `entries` (version-1 entries, as rank_entries gives) into `row` in the row's own version;
    for version 2 the columns are rebuilt (hosts in first-appearance order, equal columns one value)."""
    if not is_columns(row):
        row["ranks"] = copy.deepcopy(entries)
        return
    hosts = []
    for e in entries:
        if e["host"] not in hosts:
            hosts.append(e["host"])
    names = []
    for e in entries:
        names += [k for k in e["metrics"] if k not in names]
    c = {"rank": [e["rank"] for e in entries], "hosts": hosts,
         "host": _compact([hosts.index(e["host"]) for e in entries]),
         "device_index": _compact([e["device_index"] for e in entries]),
         "value": [e["value"] for e in entries],
         "valid": _compact([e["valid"] for e in entries]),
         "error": _compact([e["error"] for e in entries]),
         "metrics": {k: _compact([copy.deepcopy(e["metrics"].get(k)) for e in entries]) for k in names}}
    if any("stats" in e for e in entries):
        c["stats"] = {k: [e["stats"][k] for e in entries] for k in STAT_KEYS}
        for k in ("lo", "hi"):  # the median's bounds: optional (files before them have min and max)
            if all(k in e["stats"] for e in entries):
                c["stats"][k] = [e["stats"][k] for e in entries]
    row["ranks"] = c


def group_entries(row):
    """The row's groups as version-1 entries (copies): hosts (names), ranks, value, status, and
    spread_down / spread_up where the file has them; [] for a row without groups."""
    g = row.get("groups")
    if not is_columns(row):
        return copy.deepcopy(g or [])
    if not g:
        return []
    n = len(g["value"])
    names = row["ranks"]["hosts"]
    cols = {k: _column(g[k], n, f"groups.{k}") for k in ("value", "status", "spread_down", "spread_up") if k in g}
    if "ranks" in g:
        members = [list(g["ranks"][i]) for i in range(n)]
        hosts = [_host_names(names, g["hosts"][i], f"groups.hosts[{i}]") for i in range(n)]
    else:
        # The groups tile the row's ranks in order, gpu_count each (docs/results.md).
        k, entries = row["gpu_count"], rank_entries(row)
        if n * k != len(entries):
            fail(f"groups: {n} group(s) of {k} do not tile the row's {len(entries)} ranks")
        members = [[e["rank"] for e in entries[i * k:(i + 1) * k]] for i in range(n)]
        hosts = [list(dict.fromkeys(e["host"] for e in entries[i * k:(i + 1) * k])) for i in range(n)]
    return [{"hosts": hosts[i], "ranks": members[i], **{k: v[i] for k, v in cols.items()}} for i in range(n)]


def rank_rel(row, numbers=1):
    """The relative difference allowed between a figure of `row` kept in full and the same figure made
    from `numbers` of its per-rank numbers: version 2 writes those rounded to 6 significant digits (each
    off by at most 5e-6 of itself), so 1e-5 per number; version 1 writes them in full (1e-9 each)."""
    return numbers * (1e-5 if is_columns(row) else 1e-9)


def check_interrupted(doc, reason):
    """A run stopped by a signal: partial (some rows, not all, every one ok), saying why, exit code 4.
    Returns (rows written, rows planned)."""
    s = doc["summary"]
    total = doc["plan"]["points"] * len(doc["plan"]["gpu_counts"])
    if s["complete"] or s["exit_code"] != 4 or s["interrupted"] != reason:
        fail(f"expected an incomplete run, exit code 4, interrupted {reason!r}: {s}")
    if not 0 < s["rows"] < total or s["ok"] != s["rows"] or doc["finished_utc"] is None:
        fail(f"expected some but not all of {total} rows, all ok, and a finish time: {s}")
    return s["rows"], total
