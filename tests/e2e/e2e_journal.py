#!/usr/bin/env python3
"""The result journal (results/result_journal.h, docs/reliability.md) on the CPU backend: rank 0
appends each point's rows to FILE.journal and writes FILE whole only at the start and the end.

  kill_rank0: SIGKILL to rank 0 mid-run, then --resume: every row in the journal is kept byte for byte
              (attempt 0), no finished point is measured again, the rest is measured (attempt 1), each
              row once; the journal is gone and reliability.bytes_written is under 3x the file.
  seal:       SIGKILL to rank 0, then `gpuscale seal`: the file holds the journal's rows, says it was
              sealed from the journal, and validates.
  damaged:    a journal cut short mid-line, with a repeated row and a row of another plan: --resume names
              them in one line, takes the whole lines it can prove and measures no kept point again.
  foreign:    a journal of another run beside the file: --resume and seal refuse it in one line, exit 2.
"""
import json
import os
import shutil
import signal
import subprocess
import time

import e2e_common
from e2e_common import fail

ARGS = None
# Many short points (sizes of all_reduce and two STREAM dtypes), so the kill lands mid-run.
PLAN = ["--backend", "cpu", "--benchmarks", "stream.triad,all_reduce", "--dtypes", "fp64,fp32", "--array-size", "4M",
        "--reps", "20", "-b", "1K", "-e", "256K", "--threads", "1", "--seed", "77"]


def work(name):  # a fresh output file's path (a leftover one and its journal removed)
    return e2e_common.work(name, fresh=True)


# The variables the cases set themselves, taken out of the caller's environment.
CLEAN = ("GPUSCALE_TEST_FAULT", "GPUSCALE_TEST_HOSTS")


def env():
    e = dict(os.environ)
    for k in CLEAN:
        e.pop(k, None)
    return e


def mpirun(args, timeout=300):  # gpuscale run on 4 ranks; a run past the timeout fails the case
    return e2e_common.mpirun(4, ["run"] + args, timeout=timeout, env_drop=CLEAN,
                             on_timeout=lambda cmd: f"{' '.join(cmd)} did not finish within {timeout} s")


def gs(*args):  # not echoed, 120 s
    return e2e_common.gs(*args, timeout=120, env_drop=CLEAN, echo=False)


def killed_run(path, rows=6):
    """Starts the plan on 4 ranks, SIGKILLs rank 0 once the journal holds at least `rows` rows, and waits
    for the job to end. Returns the rows the journal held at the kill."""
    cmd = [ARGS.mpiexec, "--oversubscribe", "-np", "4", ARGS.gpuscale, "run"] + PLAN + ["-o", path]
    print("+", " ".join(cmd), flush=True)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    deadline = time.time() + 180
    while True:
        if os.path.exists(path + ".journal") and len(e2e_common.journal_rows(path)) >= rows:
            break
        if p.poll() is not None:
            fail(f"the run ended before its journal held {rows} rows: {p.communicate()}")
        if time.time() > deadline:
            p.kill()
            fail(f"the journal did not reach {rows} rows within 180 s")
        time.sleep(0.05)
    pid = e2e_common.read_doc(path)["ranks"][0]["pid"]
    os.kill(pid, signal.SIGKILL)
    try:
        p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("the job did not end within 120 s of rank 0's kill")
    if p.returncode == 0:
        fail("mpirun exited 0 after rank 0 was killed")
    return e2e_common.journal_rows(path)  # the rows finished before the kill (rank 0 appended nothing after it)


def key(r):
    return (r["benchmark"], json.dumps(r["params"], sort_keys=True), r["gpu_count"])


def point(r):
    return key(r)[:2]


def finished_points(rows, counts):
    """Points with an ok row at every GPU count."""
    by = {}
    for r in rows:
        if r["status"] == "ok":
            by.setdefault(point(r), set()).add(r["gpu_count"])
    return {p for p, ks in by.items() if ks == set(counts)}


def check_resumed(path, before):
    doc = e2e_common.load_valid(path, ARGS.schema, ARGS.gpuscale)
    s = doc["summary"]
    total = doc["plan"]["points"] * len(doc["plan"]["gpu_counts"])
    if not s["complete"] or s["rows"] != total or len(doc["results"]) != total:
        fail(f"the resumed run is not complete with {total} rows: {s}")
    keys = [key(r) for r in doc["results"]]
    if len(set(keys)) != len(keys):
        fail("the resumed file holds a row twice")
    finished = finished_points(before, doc["plan"]["gpu_counts"])
    if not finished:
        fail("no point was finished before the kill: the test proves nothing")
    old = {key(r): r for r in before}
    kept = 0
    for r in doc["results"]:
        if point(r) in finished:
            if r != old[key(r)] or r.get("attempt") != 0:
                fail(f"finished point {point(r)} was measured again (attempt {r.get('attempt')})")
            kept += 1
        elif r.get("attempt") != 1:
            fail(f"row {key(r)} of an unfinished point has attempt {r.get('attempt')}, expected 1")
    if os.path.exists(path + ".journal"):
        fail("the journal is still there after the run ended")
    written, size = doc["reliability"]["bytes_written"], os.path.getsize(path)
    if not size < written < 3 * size:
        fail(f"bytes_written {written} is not between the file's size {size} and 3x it")
    print(f"ok: {kept} rows kept, {total - kept} measured anew; {written} bytes written for a {size}-byte file")
    return doc


def case_kill_rank0():
    path = work("kill0.json")
    before = killed_run(path)
    header = e2e_common.read_doc(path)
    if header is None or header["results"]:
        fail("the file after rank 0's kill should be the header alone (the rows are in the journal)")
    r = mpirun(["--resume", path])
    if r.returncode != 0:
        fail(f"--resume exited {r.returncode}: {r.stderr}")
    if "warning" in r.stderr:
        fail(f"an intact journal should be taken without a warning: {r.stderr}")
    check_resumed(path, before)


def case_seal():
    path = work("seal.json")
    before = killed_run(path)
    r = gs("seal", path)
    if r.returncode != 0 or f"{len(before)} row(s) from" not in r.stdout:
        fail(f"seal: exit {r.returncode}: {r.stdout} {r.stderr}")
    doc = e2e_common.load_valid(path, ARGS.schema, ARGS.gpuscale)
    if [key(x) for x in doc["results"]] != [key(x) for x in before] or doc["results"] != before:
        fail("the sealed file does not hold exactly the journal's rows")
    s = doc["summary"]
    if s["complete"] or s["exit_code"] is not None or "journal" not in (s["interrupted"] or "") or s["rows"] != len(before):
        fail(f"the sealed file's summary does not say what happened: {s}")
    if os.path.exists(path + ".journal"):
        fail("seal left the journal behind")
    r = gs("seal", path)
    if r.returncode != 0 or "nothing to seal" not in r.stdout:
        fail(f"a second seal: exit {r.returncode}: {r.stdout} {r.stderr}")
    print(f"ok: sealed {len(before)} rows")


def case_damaged():
    path = work("damaged.json")
    before = killed_run(path, rows=8)
    with open(path + ".journal") as f:
        lines = f.read().split("\n")[:-1]  # the header line and the whole rows
    # Keep a few whole rows, repeat one, add a row of another plan, and cut the last one short.
    foreign = dict(json.loads(lines[1]))
    foreign["params"] = dict(foreign["params"], elements=12345)
    kept_lines = lines[:5]
    damaged = kept_lines + [lines[2], json.dumps(foreign)] + [lines[5][: len(lines[5]) // 2]]
    with open(path + ".journal", "w") as f:
        f.write("\n".join(damaged))  # no newline at the end: the last write was cut short
    proven = [json.loads(l) for l in kept_lines[1:]]
    r = mpirun(["--resume", path])
    if r.returncode != 0:
        fail(f"--resume exited {r.returncode}: {r.stderr}")
    warn = [l for l in r.stderr.splitlines() if "journal" in l and "left out" in l]
    if len(warn) != 1 or "cut-short last line (line 8)" not in warn[0] or "1 repeated row(s) (line 6)" not in warn[0] \
            or "1 row(s) outside the file's plan (line 7)" not in warn[0] or f"took {len(proven)} row(s)" not in warn[0]:
        fail(f"expected one line naming the cut-short line 8, repeated line 6, foreign line 7: {warn}")
    check_resumed(path, proven)


def case_foreign():
    path, other = work("foreign.json"), work("other.json")
    killed_run(path, rows=3)
    killed_run(other, rows=3)
    shutil.copy(other + ".journal", path + ".journal")
    for cmd in (lambda: mpirun(["--resume", path], timeout=120), lambda: gs("seal", path)):
        r = cmd()
        lines = [l for l in r.stderr.splitlines() if l.startswith("gpuscale:")]  # not mpirun's banner
        if r.returncode != 2 or len(lines) != 1 or "belongs to another run" not in lines[0]:
            fail(f"a journal of another run: exit {r.returncode}, expected 2 and one line: {r.stderr}")
    print("ok: another run's journal refused")


def parse():
    global ARGS
    ARGS = e2e_common.parse_args("--mpiexec")
    return ARGS


def main():
    cores = e2e_common.CORES
    cases = {"kill_rank0": (case_kill_rank0, cores), "seal": (case_seal, cores), "damaged": (case_damaged, cores),
             "foreign": (case_foreign, cores)}
    e2e_common.run_case("e2e_journal_", {"TIMEOUT": 400, "LABELS": "e2e;cpu"}, cases, parse)


if __name__ == "__main__":
    main()
