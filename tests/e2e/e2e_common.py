"""What the end-to-end test scripts share: failing with one line, the common command-line arguments,
running a command, gpuscale or gpuscale under mpirun (run, gs, mpirun), paths in the workdir (work),
waiting for a running gpuscale's first rows, reading a result file that must pass both the JSON Schema
(Python's jsonschema) and gpuscale validate (rows are read through result_rows.py); and each script's
table of cases, the one place a case is declared
(its ctest registration is read from it)."""
import argparse
import copy
import json
import os
import random
import re
import subprocess
import sys
import time

import result_rows
# fail(msg): "FAIL: msg" on stderr, exit 1; every script takes it from here. Defined in result_rows, which
# fails the same way and cannot import this module (this module imports it).
from result_rows import fail


def parser():
    """--gpuscale, --schema, --workdir and --case; a script adds its own."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuscale", required=True)
    ap.add_argument("--schema", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--case", required=True)
    return ap


# The parsed arguments (parse_args sets them; a script that parses its own sets them here too): gs(),
# mpirun() and work() read --gpuscale, --mpiexec and --workdir there.
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


def run(cmd, env_extra=None, cwd=None, timeout=240, *, env=None, env_drop=(), echo=True, echo_env=False,
        text=True, keep_line_ends=False, input=None, on_timeout=None):
    """`cmd` run to its end (output captured as text), echoed first; the environment is this one plus
    `env_extra`. The keywords, for the scripts whose commands need them:
      env:            the environment to start from instead of this one (a whole environment, not additions);
      env_drop:       names taken out of it before env_extra is added (variables the cases set themselves);
      echo:           False: not echoed; a function of cmd: the line echoed instead of "+ CMD";
      echo_env:       env_extra's NAME=VALUE pairs echoed after the command;
      text:           False: the output as bytes;
      keep_line_ends: the output decoded by hand (UTF-8, bad bytes replaced), so that CRLF line ends stay
                      as written (text mode turns them into LF);
      input:          written to the command's standard input;
      on_timeout:     a timeout fails (fail()) with this message, or the one this function of cmd makes,
                      instead of raising subprocess.TimeoutExpired."""
    run_env = dict(os.environ if env is None else env)
    for k in env_drop:
        run_env.pop(k, None)
    run_env.update(env_extra or {})
    if echo:
        line = echo(cmd) if callable(echo) else "+ " + " ".join(cmd)
        if echo_env:
            line += " " + " ".join(f"{k}={v}" for k, v in (env_extra or {}).items())
        print(line, flush=True)
    try:
        p = subprocess.run(cmd, capture_output=True, text=text and not keep_line_ends, env=run_env, cwd=cwd,
                           timeout=timeout, input=input)
    except subprocess.TimeoutExpired:
        if on_timeout is None:
            raise
        fail(on_timeout(cmd) if callable(on_timeout) else on_timeout)
    if keep_line_ends:
        p.stdout = p.stdout.decode("utf-8", "replace")
        p.stderr = p.stderr.decode("utf-8", "replace")
    return p


def gs(*args, env_extra=None, cwd=None, timeout=240, **kw):
    """gpuscale ARGS... run (see run, whose keywords it takes)."""
    return run([ARGS.gpuscale] + list(args), env_extra, cwd, timeout, **kw)


def mpirun(np, args, env_extra=None, cwd=None, timeout=240, *, export=(), program=None, **kw):
    """gpuscale `args` under mpirun with `np` ranks (see run, whose keywords it takes); `export`: the
    names of variables mpirun passes to the ranks (-x NAME each); `program`: what each rank starts
    instead of gpuscale (a launcher script that ends by running it)."""
    cmd = [ARGS.mpiexec, "--oversubscribe", "-np", str(np)]
    for k in export:
        cmd += ["-x", k]
    return run(cmd + [program or ARGS.gpuscale] + list(args), env_extra, cwd, timeout, **kw)


def seeded_rng(name):
    """A random source whose seed is printed, so a failing draw can be replayed (GPUSCALE_TEST_SEED=N)."""
    seed = int(os.environ.get("GPUSCALE_TEST_SEED") or random.SystemRandom().randrange(1 << 30))
    print(f"{name}: seed {seed} (GPUSCALE_TEST_SEED={seed} replays it)", flush=True)
    return random.Random(seed)


def work(*parts, fresh=False):
    """`parts` joined under the workdir (ARGS.workdir). fresh: a path for a new output file, as out_path
    makes it (its folder made, a leftover file of that name and its journal removed)."""
    path = os.path.join(ARGS.workdir, *parts)
    if fresh:
        return out_path(os.path.dirname(path), os.path.basename(path))
    return path


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
    result_rows.validate(doc, schema_for(doc, schema))
    p = subprocess.run([gpuscale, "validate", path], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        fail(f"gpuscale validate rejected {path}: {p.stderr}")
    return doc


# A row's per-rank data and groups: result_rows.py, the one module for result files (re-exported here
# for the tests that call them through this module).
from result_rows import STAT_KEYS, group_entries, put_rank_entries, rank_entries, rank_rel  # noqa: E402,F401


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
