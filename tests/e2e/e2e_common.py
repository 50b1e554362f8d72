"""What the end-to-end test scripts share: failing with one line, the common command-line arguments,
waiting for a running gpuscale's first rows, and reading a result file that must pass both the JSON
Schema (Python's jsonschema) and gpuscale validate; and each script's table of cases, the one place a
case is declared (its ctest registration is read from it)."""
import argparse
import json
import os
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
    """A fresh path for an output file in `workdir` (created; a leftover file of that name removed)."""
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, name)
    if os.path.exists(path):
        os.remove(path)
    return path


def read_doc(path):
    """The JSON document at `path`, or None while it does not exist or cannot be parsed."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def wait_for_rows(p, path, rows, limit=120):
    """The result document at `path` once it holds at least `rows` rows while `p` (gpuscale, or mpirun)
    still runs; fails when `p` ends first or after `limit` seconds. Polls: no fixed sleep to race."""
    deadline = time.time() + limit
    while True:
        doc = read_doc(path)
        if doc and len(doc["results"]) >= rows:
            return doc
        if p.poll() is not None:
            fail(f"gpuscale ended before writing {rows} row(s): {p.communicate()}")
        if time.time() > deadline:
            p.kill()
            fail(f"fewer than {rows} row(s) written within {limit} s")
        time.sleep(0.05)


def load_valid(path, schema, gpuscale, env=None):
    """The result document at `path`, after checking it against `schema` and with `gpuscale validate`."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        fail(f"cannot read result file {path}: {e}")
    import jsonschema  # here, so that --cmake runs where only CMake's Python is (at configure time)
    with open(schema) as f:
        jsonschema.validate(doc, json.load(f))
    p = subprocess.run([gpuscale, "validate", path], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        fail(f"gpuscale validate rejected {path}: {p.stderr}")
    return doc


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
