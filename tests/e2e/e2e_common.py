"""What the end-to-end test scripts share: failing with one line, the common command-line arguments,
and reading a result file that must pass both the JSON Schema (Python's jsonschema) and gpuscale validate."""
import argparse
import json
import os
import subprocess
import sys

import jsonschema


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


def out_path(workdir, name):
    """A fresh path for an output file in `workdir` (created; a leftover file of that name removed)."""
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, name)
    if os.path.exists(path):
        os.remove(path)
    return path


def load_valid(path, schema, gpuscale, env=None):
    """The result document at `path`, after checking it against `schema` and with `gpuscale validate`."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        fail(f"cannot read result file {path}: {e}")
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
