#!/usr/bin/env python3
"""Fault injection on the CPU backend (docs/reliability.md): the real gpuscale under mpirun, hurt on
purpose, must end within a bounded time with its distinct exit code, say what happened, and leave a
valid result file holding every point it finished; no gpuscale process may be left behind.

  kill_rank:    SIGKILL to rank 2 of 4 mid-run: the others exit with 6 within 60 s, the file names the lost rank.
  kill_rank0:   SIGKILL to rank 0: rank 1 says so, the survivors exit with 6; gpuscale seal puts the journal's rows in the file.
  stall:        rank 2 hangs in all_reduce (GPUSCALE_TEST_FAULT=stall:all_reduce@2): no rank completes a step
                for the budget, and the watchdog ends the run with 5, naming the stalled rank, its host, how
                long ago its last step was, every rank's steps in the file, and the ranks waiting for it (in the setup agreement:
                the stall comes before rank 2's setup).
  setup_fail:   rank 1's setup of stream.copy fails (GPUSCALE_TEST_FAULT=setup-fail:stream.copy@1): the 2-GPU row
                fails on both ranks with rank 1's message, the next point runs, the run ends with 1, not the
                watchdog's 5.
  resume:       a run killed mid-way, then --resume: the plan completes, finished points are not measured again.
  no_overwrite: run and merge refuse an existing output unless --force; clear errors for bad output folders.
  memory:       a plan larger than the host's memory is refused up front with the numbers (exit 2).
  exit_codes:   every exit code of core/error.h is in docs/reliability.md's table, with the test that proves it.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

import e2e_common
from e2e_common import fail

ARGS = None
HERE = os.path.dirname(os.path.abspath(__file__))
ENV_FAULT = "GPUSCALE_TEST_FAULT"
# 18 rows of a tenth of a second or more each with 4 ranks on 2 cores: a kill after the third row
# always finds the run in progress.
SLOW_PLAN = ["--backend", "cpu", "--benchmarks", "stream.copy,stream.triad,stream.dot", "--dtypes", "fp64,fp32",
             "--array-size", "16M", "--reps", "30", "--threads", "1"]


def work(name):  # a fresh output file's path (a leftover one and its journal removed)
    return e2e_common.work(name, fresh=True)


def env_with(extra=None):
    env = dict(os.environ)
    env.pop(ENV_FAULT, None)
    env.update(extra or {})
    return env


def load_valid(path):
    return e2e_common.load_valid(path, ARGS.schema, ARGS.gpuscale)


def alive(pid):
    """True while `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def start_ranks(n, args, rcdir=None, env=None):
    """mpirun -np n gpuscale ARGS; with rcdir, each rank runs under rank_wrapper.py, which records the
    rank's own exit code in rcdir/rc.<rank> (mpirun only reports the first process that failed)."""
    cmd = [ARGS.mpiexec, "--oversubscribe", "-np", str(n)]
    if rcdir:
        os.makedirs(rcdir, exist_ok=True)
        for f in os.listdir(rcdir):
            os.remove(os.path.join(rcdir, f))
        cmd += [sys.executable, os.path.join(HERE, "rank_wrapper.py"), rcdir]
    cmd += [ARGS.gpuscale, "run"] + args
    print("+", " ".join(cmd), flush=True)
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env or env_with())


def finish(p, limit, what):
    """Waits for mpirun; fails when it takes longer than `limit` seconds. Returns (rc, out, err, seconds)."""
    t0 = time.time()
    try:
        out, err = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        fail(f"{what}: still running after {limit} s\n{out}\n{err}")
    return p.returncode, out, err, time.time() - t0


def expect_gone(pids, what, deadline=None):
    """Every pid ends by `deadline` (default: 10 s from now); no process may be left behind."""
    deadline = deadline or time.time() + 10
    while any(alive(p) for p in pids) and time.time() < deadline:
        time.sleep(0.1)
    left = [p for p in pids if alive(p)]
    if left:
        for p in left:
            os.kill(p, signal.SIGKILL)
        fail(f"{what}: gpuscale processes left behind: {left}")


def rank_codes(rcdir, ranks, limit=30):
    """Each rank's own exit code, as rank_wrapper.py recorded it (possibly after mpirun has ended)."""
    deadline = time.time() + limit
    while True:
        codes = {}
        for r in ranks:
            try:
                with open(os.path.join(rcdir, f"rc.{r}")) as f:
                    codes[r] = int(f.read().strip())
            except (OSError, ValueError):
                codes[r] = None
        if None not in codes.values() or time.time() > deadline:
            return codes
        time.sleep(0.1)


def rank_output(rcdir, ranks, stream):
    """The ranks' standard output or error, as rank_wrapper.py kept it."""
    text = ""
    for r in ranks:
        try:
            with open(os.path.join(rcdir, f"{stream}.{r}")) as f:
                text += f.read()
        except OSError:
            pass
    return text


def check_completed_points(doc, before):
    """The file holds every point finished before the fault: all GPU counts of each, and at least as many
    rows as were on disk when the fault was injected."""
    counts = doc["plan"]["gpu_counts"]
    per_point = {}
    for r in doc["results"]:
        per_point.setdefault((r["benchmark"], json.dumps(r["params"], sort_keys=True)), []).append(r["gpu_count"])
    for key, ks in per_point.items():
        if sorted(ks) != counts:
            fail(f"point {key} is in the file at GPU counts {sorted(ks)}, not all of {counts}")
    if len(doc["results"]) < len(before["results"]):
        fail(f"the file lost rows: {len(doc['results'])} now, {len(before['results'])} before the fault")
    bad = [r for r in doc["results"] if r["status"] != "ok"]
    if bad:
        fail(f"rows not ok after the fault: {[(r['benchmark'], r['status']) for r in bad]}")


def kill_case(victim, name):
    path, rcdir = work(f"{name}.json"), os.path.join(ARGS.workdir, f"{name}-rc")
    p = start_ranks(4, SLOW_PLAN + ["-o", path], rcdir)
    before = e2e_common.wait_for_rows(p, path, 3, 180)  # the first point, at 1, 2 and 4 GPUs
    pids = {r["rank"]: r["pid"] for r in before["ranks"]}
    host = before["ranks"][victim]["host"]
    print(f"killing rank {victim} (pid {pids[victim]}) after {len(before['results'])} rows", flush=True)
    killed_at = time.time()
    os.kill(pids[victim], signal.SIGKILL)
    rc, _, _, _ = finish(p, 60, f"after killing rank {victim}")
    if rc == 0:
        fail("mpirun exited 0 after a rank was killed")
    # The survivors run out of mpirun's reach (rank_wrapper.py): each must end by itself within 60 s.
    expect_gone(list(pids.values()), f"60 s after killing rank {victim}", deadline=killed_at + 60)
    took = time.time() - killed_at
    survivors = [r for r in range(4) if r != victim]
    codes = rank_codes(rcdir, survivors)
    if any(c != 6 for c in codes.values()):
        fail(f"survivors' exit codes {codes}, expected 6 (rank lost) from each")
    err = rank_output(rcdir, range(4), "err")
    print(err, flush=True)
    lost = [l for l in err.splitlines() if f"rank {victim} ({host}" in l and "was lost" in l]
    if len(lost) != 1:
        fail(f"expected one line naming rank {victim} ({host}) as lost, got {lost}")
    if victim == 0:
        # Rank 0 could not write its file whole: its rows are in the journal, and seal puts them in.
        r = e2e_common.gs("seal", path, timeout=120)
        if r.returncode != 0 or "sealed:" not in r.stdout:
            fail(f"gpuscale seal after rank 0's kill: exit {r.returncode}: {r.stdout} {r.stderr}")
    doc = load_valid(path)
    check_completed_points(doc, before)
    return doc, before, took, pids


def case_kill_rank():
    doc, before, took, pids = kill_case(2, "kill2")
    s = doc["summary"]
    lost = s.get("lost_rank") or {}
    if s["complete"] or s["exit_code"] != 6 or lost.get("rank") != 2 or lost.get("pid") != pids[2]:
        fail(f"summary does not name rank 2 (pid {pids[2]}) as lost with exit code 6: {s}")
    if lost.get("host") != before["ranks"][2]["host"] or "process ended" not in lost.get("how", ""):
        fail(f"lost_rank lacks the host or how: {lost}")
    if "was lost" not in s["interrupted"] or doc["finished_utc"] is None:
        fail(f"summary.interrupted / finished_utc not set: {s}")
    print(f"ok: rank 2 lost, survivors exited 6 after {took:.1f} s, {len(doc['results'])} rows kept")


def case_kill_rank0():
    doc, before, took, _ = kill_case(0, "kill0")
    # Rank 0 could not seal its file: gpuscale seal gave it every row rank 0 had appended to its journal.
    if doc["summary"]["complete"]:
        fail("the file of a run whose rank 0 died says complete")
    print(f"ok: rank 0 lost, survivors exited 6 after {took:.1f} s, {len(doc['results'])} rows on disk")


def case_stall():
    path = work("stall.json")
    env = env_with({ENV_FAULT: "stall:all_reduce@2"})
    # Tiny points, and a 15 s budget: every point but the stalled one ends well within it on a loaded
    # machine under AddressSanitizer (a 3 s budget once ran out while a 2-rank communicator was made,
    # with the 2 cores shared by other builds). The stall is endless, so the budget costs only its own time.
    # --tiling first: only rank 0 measures at 1 GPU, so rank 2 first stalls in a 4-rank collective, whose
    # peers wait for it in the setup agreement (tiled counts would catch it alone at 1 GPU).
    p = start_ranks(4, ["--backend", "cpu", "--quick", "--benchmarks", "stream.triad,all_reduce", "-e", "4K",
                        "--array-size", "256K", "--watchdog", "15", "--tiling", "first", "-o", path], env=env)
    rc, out, err, took = finish(p, 90, "a stalled all_reduce")
    print(err, flush=True)
    if rc != 5:
        fail(f"exit {rc}, expected 5 (watchdog)\n{out}\n{err}")
    doc = load_valid(path)
    pids = {r["rank"]: r["pid"] for r in doc["ranks"]}
    expect_gone(list(pids.values()), "after the watchdog")
    host2 = doc["ranks"][2]["host"]
    line = [l for l in err.splitlines() if "watchdog:" in l]
    # The progress rule (harness/guard/watchdog.h): no rank completed a step for the budget, and the
    # rank that stopped is named with how long ago its last step was.
    want = (rf"watchdog: all_reduce .* on 4 ranks made no progress for 15 s \(no rank completed a step\); rank 2 "
            rf"\({re.escape(host2)}, pid {pids[2]}\) stalled in its own work \(computing: all_reduce \(injected "
            rf"stall.*\); its last step (\d+) s ago\); ranks 0, 1, 3 waited for it \(waiting for peers: setup "
            rf"agreement of the GPU count's ranks\)")
    found = re.search(want, line[0]) if len(line) == 1 else None
    if not found or int(found.group(1)) < 15:
        fail(f"expected one watchdog line matching {want!r} (a last step at least 15 s ago), got {line}")
    s = doc["summary"]
    st = s.get("stalled") or {}
    if s["exit_code"] != 5 or s["complete"] or st.get("stalled_ranks") != [2] or st.get("benchmark") != "all_reduce":
        fail(f"summary does not record the stall: {s}")
    if st.get("gpu_count") != 4 or [r["phase"] for r in st["ranks"]] != ["waiting for peers", "waiting for peers",
                                                                          "computing", "waiting for peers"]:
        fail(f"stalled record wrong: {st}")
    if any(not isinstance(r.get("progress"), int) or not r.get("idle_s", 0) >= 15 for r in st["ranks"]):
        fail(f"the stalled record does not give every rank's steps and its idle seconds (>= the 15 s budget): {st}")
    triad = [r for r in doc["results"] if r["benchmark"] == "stream.triad"]
    if len(triad) != 3 or any(r["benchmark"] == "all_reduce" for r in doc["results"]):
        fail(f"the file should hold stream.triad at 1, 2, 4 GPUs and no unfinished all_reduce point: "
             f"{[(r['benchmark'], r['gpu_count']) for r in doc['results']]}")
    if took > 75:
        fail(f"the watchdog of 15 s took {took:.0f} s to end the run")
    print(f"ok: stall caught in {took:.1f} s, {len(doc['results'])} rows kept")


def case_setup_fail():
    path = work("setup_fail.json")
    env = env_with({ENV_FAULT: "setup-fail:stream.copy@1"})
    # A short watchdog: without the setup agreement rank 0 waits in the first timed barrier, and the
    # watchdog would end the run with 5 after 10 s.
    p = start_ranks(2, ["--backend", "cpu", "--quick", "--benchmarks", "stream.copy,stream.triad", "--array-size", "256K",
                        "--watchdog", "10", "-o", path], env=env)
    rc, out, err, took = finish(p, 120, "a failed setup on rank 1")
    if rc != 1:
        fail(f"exit {rc}, expected 1 (a failed measurement; 5 would be the watchdog)\n{out}\n{err}")
    doc = load_valid(path)
    if not doc["summary"]["complete"]:
        fail(f"the run did not finish: {doc['summary']}")
    rows = {(r["benchmark"], r["gpu_count"]): r for r in doc["results"]}
    # At 1 GPU both ranks measure in groups of their own (tiled counts): rank 1's group fails, rank 0's
    # does not, and the row is failed (no figure) with the groups saying which.
    want = {("stream.copy", 1): "failed", ("stream.copy", 2): "failed", ("stream.triad", 1): "ok", ("stream.triad", 2): "ok"}
    got = {k: rows[k]["status"] if k in rows else None for k in want}
    if got != want:
        fail(f"row statuses {got}, expected {want}")
    groups = [(g["ranks"], g["status"]) for g in e2e_common.group_entries(rows[("stream.copy", 1)])]
    if groups != [([0], "ok"), ([1], "failed")]:
        fail(f"the 1-GPU row's groups are {groups}: expected rank 0's ok and rank 1's failed")
    failed = e2e_common.rank_entries(rows[("stream.copy", 2)])
    errors = {e["rank"]: e.get("error", "") for e in failed}
    if sorted(errors) != [0, 1]:
        fail(f"the failed row should hold both ranks' entries: {failed}")
    if "setup failed on rank 1: injected setup failure" not in errors[1]:
        fail(f"rank 1's entry does not give its own setup failure: {errors[1]!r}")
    if "setup failed on rank 1" not in errors[0]:
        fail(f"rank 0's entry does not name rank 1 as the one whose setup failed: {errors[0]!r}")
    print(f"ok: setup failure on rank 1 failed the 2-GPU row on both ranks, the run finished in {took:.1f} s with 1")


def case_resume():
    path, rcdir = work("resume.json"), os.path.join(ARGS.workdir, "resume-rc")
    # dp-step too: its model options must come back from the file as the others do.
    plan = ["--backend", "cpu", "--benchmarks", "stream.copy,stream.triad,all_reduce,dp-step", "--dtypes", "fp64",
            "--array-size", "16M", "--reps", "12", "--threads", "1", "-e", "64K", "--seed", "4242",
            "--dp-width", "128", "--dp-depth", "2", "--dp-batch", "32"]
    p = start_ranks(4, plan + ["-o", path], rcdir)
    before = e2e_common.wait_for_rows(p, path, 3, 180)
    os.kill(before["ranks"][3]["pid"], signal.SIGKILL)
    finish(p, 60, "after killing rank 3")
    expect_gone([r["pid"] for r in before["ranks"]], "after killing rank 3", deadline=time.time() + 60)
    killed = load_valid(path)
    kept_before = {key(r): r for r in killed["results"]}
    print(f"killed after {len(kept_before)} rows of {killed['plan']['points'] * 3}", flush=True)

    # The killed file is neither overwritten by a new run nor resumed with other options.
    q = mpirun(4, ["run"] + plan + ["-o", path])
    if q.returncode != 2 or "already exists" not in q.stderr:
        fail(f"a new run over the killed file: exit {q.returncode}, expected 2 'already exists': {q.stderr}")
    q = mpirun(4, ["run", "--resume", path, "--reps", "3"])
    if q.returncode != 2 or "--reps is 3 on this command line but 12 in the file" not in q.stderr:
        fail(f"--resume with other --reps: exit {q.returncode}: {q.stderr}")
    q = mpirun(2, ["run", "--resume", path])
    if q.returncode != 2 or "measured by 4 ranks, this launch has 2" not in q.stderr:
        fail(f"--resume with 2 ranks: exit {q.returncode}: {q.stderr}")

    # --resume alone: the options, points and seed come from the file.
    p = start_ranks(4, ["--resume", path])
    rc, out, err, _ = finish(p, 240, "--resume")
    if rc != 0:
        fail(f"--resume exited {rc}\n{out}\n{err}")
    doc = load_valid(path)
    s = doc["summary"]
    total = doc["plan"]["points"] * len(doc["plan"]["gpu_counts"])
    if not s["complete"] or not s["valid"] or s["rows"] != total or len(doc["results"]) != total:
        fail(f"the resumed run is not complete with {total} rows: {s}")
    o = doc["plan"]["options"]
    if doc["plan"]["seed"] != 4242 or o["reps"] != 12 or (o["dp_width"], o["dp_depth"], o["dp_batch"]) != (128, 2, 32):
        fail(f"the resumed run did not keep the original seed and options: {doc['plan']['seed']} {o}")
    if not any(r["benchmark"] == "dp-step" and r["attempt"] == 1 for r in doc["results"]):
        fail("the resumed run did not measure dp-step")
    keys = [key(r) for r in doc["results"]]
    if len(set(keys)) != len(keys):
        fail("the resumed file holds a row twice")
    # Points finished before the kill: the same rows, byte for byte (not measured again); the rest new.
    finished = complete_points(killed)
    reused = 0
    for r in doc["results"]:
        point = key(r)[:2]
        if point in finished:
            if r != kept_before[key(r)] or r.get("attempt") != 0:
                fail(f"finished point {point} was measured again (attempt {r.get('attempt')})")
            reused += 1
        elif r.get("attempt") != 1:
            fail(f"row {key(r)} of an unfinished point has attempt {r.get('attempt')}, expected 1")
    if reused == 0 or reused == total:
        fail(f"expected some rows kept and some measured anew, kept {reused} of {total}")
    att = doc.get("attempts") or []
    if len(att) != 1 or att[0]["summary"]["exit_code"] != 6 or "lost_rank" not in att[0]["summary"]:
        fail(f"attempts should record the killed run: {att}")
    # The plan order is kept: rows of each point together, in the plan's order.
    order = [json.dumps({"benchmark": r["benchmark"], "params": r["params"]}, sort_keys=True) for r in doc["results"]]
    plan_order = [json.dumps(p, sort_keys=True) for p in doc["plan"]["point_list"]]
    if [k for i, k in enumerate(order) if i == 0 or order[i - 1] != k] != plan_order:
        fail("rows are not in plan order")
    # Nothing left to do: a second resume says so and leaves the file alone.
    mtime = os.stat(path).st_mtime_ns
    q = mpirun(4, ["run", "--resume", path])
    if q.returncode != 0 or "nothing to resume" not in q.stdout or os.stat(path).st_mtime_ns != mtime:
        fail(f"resume of a complete file: exit {q.returncode}: {q.stdout} {q.stderr}")
    print(f"ok: resumed: {reused} rows kept, {total - reused} measured anew")


def key(r):
    return (r["benchmark"], json.dumps(r["params"], sort_keys=True), r["gpu_count"])


def complete_points(doc):
    counts = set(doc["plan"]["gpu_counts"])
    seen = {}
    for r in doc["results"]:
        if r["status"] in ("ok", "skipped"):
            seen.setdefault(key(r)[:2], set()).add(r["gpu_count"])
    return {p for p, ks in seen.items() if ks == counts}


# gs and mpirun here: without the caller's GPUSCALE_TEST_FAULT (env_with), 120 s at most; gs echoed as "+ gpuscale ARGS".
def gs(*args):
    return e2e_common.gs(*args, env_drop=(ENV_FAULT,), timeout=120, echo=lambda cmd: "+ gpuscale " + " ".join(args))


def mpirun(np, args):
    return e2e_common.mpirun(np, args, env_drop=(ENV_FAULT,), timeout=120)


def expect(p, code, needle, what):
    if p.returncode != code or needle not in p.stderr + p.stdout:
        fail(f"{what}: exit {p.returncode}, expected {code} with {needle!r}\n{p.stdout}\n{p.stderr}")


def case_no_overwrite():
    tiny = ["--backend", "cpu", "--quick", "--benchmarks", "stream.triad", "--array-size", "1M"]
    path = work("exists.json")
    with open(path, "w") as f:
        f.write("precious")
    expect(gs("run", *tiny, "-o", path), 2, "already exists: --force replaces it", "run -o over a file")
    with open(path) as f:
        if f.read() != "precious":
            fail("run -o changed an existing file")
    expect(gs("run", *tiny, "-o", path, "--force"), 0, "results:", "run -o --force")
    load_valid(path)
    merged = work("merged.json")
    with open(merged, "w") as f:
        f.write("precious")
    expect(gs("merge", "-o", merged, path), 2, "already exists (use --force", "merge -o over a file")
    expect(gs("merge", "-o", merged, path, "--force"), 0, "merged 1 of 1", "merge --force")
    expect(gs("run", *tiny, "-o", os.path.join(ARGS.workdir, "no-such-dir", "r.json")), 2, "does not exist",
           "a missing folder")
    expect(gs("run", *tiny, "--resume", os.path.join(ARGS.workdir, "missing.json")), 2, "no such file",
           "--resume of a missing file")
    with open(work("hostile.json"), "w") as f:
        f.write('{"schema": "gpuscale.result", "schema": "x"}')
    p = gs("run", *tiny, "--resume", os.path.join(ARGS.workdir, "hostile.json"))
    expect(p, 2, 'duplicate key "schema"', "--resume of a file with a duplicate key")
    print("ok: no silent overwrite, clear output errors")


def case_read_only():
    """-o into a folder this process cannot write: one line, exit 2, nothing written. Root writes into a
    mode-555 folder, so as root the folder is a read-only bind mount in a private mount namespace
    (unshare -m, util-linux); where that is refused too (a container without CAP_SYS_ADMIN) the case is
    reported skipped (77), saying why, never passed."""
    tiny = ["--backend", "cpu", "--quick", "--benchmarks", "stream.triad", "--array-size", "1M"]
    ro = e2e_common.work("read-only")  # a folder, kept between runs (this module's work() is for files)
    os.makedirs(ro, exist_ok=True)
    target = os.path.join(ro, "r.json")
    if os.geteuid() != 0:
        os.chmod(ro, 0o555)
        try:
            p = gs("run", *tiny, "-o", target)
        finally:
            os.chmod(ro, 0o755)
    else:
        # The mount is made and used inside one private namespace, so it is gone when the command ends.
        mount_ro = 'd=$1; shift; mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" && exec "$@"'
        probe = e2e_common.run(["unshare", "-m", "--propagation", "private", "sh", "-c", mount_ro, "sh", ro, "true"])
        if probe.returncode != 0:
            print(f"SKIP: root, and no read-only mount can be made here (unshare -m: {probe.stderr.strip()[:200]})")
            sys.exit(77)
        p = e2e_common.run(["unshare", "-m", "--propagation", "private", "sh", "-c", mount_ro, "sh", ro,
                            ARGS.gpuscale, "run", *tiny, "-o", target])
    expect(p, 2, "is not writable", "a read-only folder")
    if os.path.exists(target):
        fail("a refused -o wrote its file")
    print("ok: a read-only output folder is refused in one line")


def case_memory():
    out = work("memory.json")
    p = gs("run", "--backend", "cpu", "--benchmarks", "gemm", "--gemm-shapes", "65536", "--dtypes", "fp64", "-o", out)
    expect(p, 2, "gemm fp64 65536x65536x65536", "a 96 GiB GEMM")
    if not re.search(r"needs 96\.00 GiB \(103079215104 bytes\) per rank \(A, B and C of 65536x65536x65536 fp64\) but "
                     r"the host has [0-9.]+ GiB", p.stderr):
        fail(f"the refusal lacks the numbers: {p.stderr}")
    if os.path.exists(out):
        fail("a refused plan wrote a result file")
    p = mpirun(2, ["run", "--backend", "cpu", "--benchmarks", "stream.triad", "--array-size", "4T", "-o", out])
    if p.returncode != 2 or "each of the 2 ranks on this node may use" not in p.stderr or p.stderr.count("needs") != 1:
        fail(f"a 12 TiB STREAM plan on 2 ranks: exit {p.returncode}, expected one line with the per-rank share: {p.stderr}")
    print("ok: plans larger than memory are refused with the numbers")


def case_exit_codes():
    with open(os.path.join(ARGS.source, "core", "error.h")) as f:
        codes = {int(v): n for n, v in re.findall(r"(kExit\w+) = (\d+)", f.read())}
    with open(os.path.join(ARGS.source, "docs", "reliability.md")) as f:
        doc = f.read()
    table = dict(re.findall(r"^\| (\d+) \| `(kExit\w+)` \|", doc, re.M))
    if {int(k): v for k, v in table.items()} != codes:
        fail(f"docs/reliability.md's exit code table {table} does not match core/error.h {codes}")
    # Each row names the ctest cases that prove the code; every one is a case of a script in tests/e2e
    # (the scripts' --cmake listing is what registers them with ctest).
    tests = set()
    for script in sorted(f for f in os.listdir(HERE) if re.match(r"e2e_\w+\.py$", f) and f != "e2e_common.py"):
        p = subprocess.run([sys.executable, os.path.join(HERE, script), "--cmake"], capture_output=True, text=True)
        if p.returncode != 0:
            fail(f"{script} --cmake: {p.stderr}")
        tests |= set(re.findall(r"^gpuscale_e2e_case\((\w+) ", p.stdout, re.M))
    for code in codes:
        row = re.search(rf"^\| {code} \|.*$", doc, re.M).group(0)
        named = re.findall(r"`((?:e2e|slurm)_\w+)`", row)
        if not named:
            fail(f"exit code {code}: the table row names no test: {row}")
        for t in named:
            if t not in tests:
                fail(f"exit code {code}: {t} is not a test of tests/e2e")
    print(f"ok: exit codes {sorted(codes)} documented, each with its test")


def parse():
    global ARGS
    ARGS = e2e_common.parse_args("--mpiexec", "--source")
    return ARGS


def main():
    cores = e2e_common.CORES
    cases = {"kill_rank": (case_kill_rank, cores), "kill_rank0": (case_kill_rank0, cores), "stall": (case_stall, cores),
             "setup_fail": (case_setup_fail, cores),
             "resume": (case_resume, cores), "no_overwrite": (case_no_overwrite, {}),
             "read_only": (case_read_only, {"SKIP_RETURN_CODE": 77}), "memory": (case_memory, cores),
             "exit_codes": (case_exit_codes, {})}
    e2e_common.run_case("e2e_fault_", {"TIMEOUT": 300, "LABELS": "e2e;cpu;faults"}, cases, parse)


if __name__ == "__main__":
    main()
