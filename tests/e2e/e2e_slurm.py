#!/usr/bin/env python3
"""End-to-end tests of the job scripts in slurm/ on a real Slurm cluster started by scripts/slurm-cluster.

--case single_up / two_up and single_down / two_down are the ctest fixtures that start and stop the cluster; the other
cases submit the project's own scripts unedited (their shape from sbatch options, the rest from
GPUSCALE_* variables in the environment, which sbatch exports to the job), watch the queue with
squeue, and check the job's state, exit code, log and result JSON (schema-validated).

Exit code 77 (ctest SKIP_RETURN_CODE) only when the cluster cannot run here: not root, or Slurm is
not installed and cannot be installed; the reason is printed.
"""
import json
import os
import re
import shutil
import sys
import time

import e2e_common
from e2e_common import fail

ARGS = None
SKIP = 77
FINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE",
         "PREEMPTED"}
ORDER = ["PENDING", "CONFIGURING", "RUNNING", "COMPLETING"]
# A small plan (seconds) for the jobs that check launch, placement and JSON rather than speed.
LIGHT = "--backend cpu --quick --array-size 4M -e 64K"


def skip_marker():
    return os.path.join(ARGS.workdir, "cluster-skipped.txt")


def env():
    e = dict(os.environ)
    e.update({"SLURM_CONF": os.path.join(ARGS.cluster_dir, "etc", "slurm.conf"),
              "GPUSCALE_CLUSTER_DIR": ARGS.cluster_dir,
              "GPUSCALE_BIN": ARGS.gpuscale,
              "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    for k in ["GPUSCALE_ARGS", "GPUSCALE_OUT", "GPUSCALE_LAUNCHER", "GPUSCALE_CONTAINER", "GPUSCALE_CONTAINER_RUNTIME",
              "GPUSCALE_DRY_RUN", "GPUSCALE_SLURM_DIR", "GPUSCALE_MERGE_JOBS", "GPUSCALE_MERGE_FILES",
              "OMPI_MCA_rmaps_base_oversubscribe"]:
        e.pop(k, None)
    return e


def run(cmd, extra=None, cwd=None, timeout=120):  # in the cluster's environment (env()), 120 s
    return e2e_common.run(cmd, extra, cwd, timeout, env=env())


def cluster(action):
    p = run([os.path.join(ARGS.source, "scripts", "slurm-cluster"), action], timeout=400)
    print(p.stdout + p.stderr, flush=True)
    return p


def case_dir(name):
    d = os.path.join(ARGS.workdir, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def script(name):
    return os.path.join(ARGS.source, "slurm", name)


def submit(cwd, sbatch_opts, job_script, variables):
    p = run(["sbatch", "--parsable", "--export=ALL"] + sbatch_opts + [script(job_script)], variables, cwd=cwd)
    if p.returncode != 0:
        fail(f"sbatch failed: {p.stderr.strip()}")
    return p.stdout.strip().split(";")[0]


def watch(job, limit=150, seen=None):
    """Polls squeue until the job reaches a final state; returns (states seen in order, after those
    already `seen`, final, exit code)."""
    seen, start = list(seen or []), time.time()
    while True:
        p = run(["squeue", "-h", "-t", "all", "-j", job, "-o", "%T"])
        st = p.stdout.strip()
        if st and (not seen or seen[-1] != st):
            seen.append(st)
            print(f"job {job}: {st} (+{time.time() - start:.1f}s)", flush=True)
        if st in FINAL:
            break
        if time.time() - start > limit:
            run(["scancel", job])
            fail(f"job {job} still {st} after {limit} s (states {seen})")
        time.sleep(0.2)
    info = run(["scontrol", "show", "job", job]).stdout
    m = re.search(r"\bExitCode=(\d+):(\d+)", info)
    return seen, seen[-1], int(m.group(1)) if m else None


def log_of(cwd, pattern):
    path = os.path.join(cwd, pattern)
    if not os.path.exists(path):
        fail(f"job log {path} missing")
    with open(path) as f:
        return f.read()


def load_valid(path):
    return e2e_common.load_valid(path, ARGS.schema, ARGS.gpuscale, env())


def expect_completed(job, seen, final, code, log):
    """`seen`: the states from PENDING (the held job, checked before its release) to the final one. After
    the release the first squeue may already find the job RUNNING (a scheduling pass can start it at
    once), so PENDING is the held state and never waited for; RUNNING must still be seen, in order."""
    if final != "COMPLETED" or code != 0:
        fail(f"job {job} ended {final} with exit code {code}; log:\n{log}")
    if seen[0] != "PENDING" or "RUNNING" not in seen:
        fail(f"job {job}: expected PENDING -> RUNNING -> COMPLETED, saw {seen}")
    ranks = [ORDER.index(s) if s in ORDER else len(ORDER) for s in seen]
    if ranks != sorted(ranks):
        fail(f"job {job}: states out of order: {seen}")


def check_job_json(doc, job, nodes, tasks_per_node, gpus_per_node, launcher):
    s = doc["slurm"]
    if s is None or s["job_id"] != job:
        fail(f"result slurm.job_id is {s and s['job_id']}, expected {job}")
    world = nodes * tasks_per_node
    expect_counts = sorted({1 << i for i in range(world.bit_length()) if (1 << i) <= world} | {world})
    if doc["plan"]["gpu_counts"] != expect_counts:
        fail(f"gpu_counts {doc['plan']['gpu_counts']}, expected {expect_counts}")
    for k in expect_counts:
        if not any(r["gpu_count"] == k and r["status"] == "ok" for r in doc["results"]):
            fail(f"no ok row at GPU count {k}")
    if s["num_nodes"] != str(nodes) or s["ntasks"] != str(world):
        fail(f"slurm nodes/tasks {s['num_nodes']}/{s['ntasks']}, expected {nodes}/{world}")
    if gpus_per_node:
        if s["gpus_on_node"] != str(gpus_per_node) or s["gpus_per_node"] != str(gpus_per_node):
            fail(f"slurm GPUs per node {s['gpus_on_node']}/{s['gpus_per_node']}, expected {gpus_per_node}")
        if len(s["job_gpus"].split(",")) != gpus_per_node:
            fail(f"slurm job_gpus {s['job_gpus']} does not list {gpus_per_node} GPUs")
    if s["launcher"] != launcher:
        fail(f"slurm.launcher {s['launcher']}, expected {launcher}")
    if doc["cluster"] != {"name": s["cluster"], "source": "SLURM_CLUSTER_NAME"}:
        fail(f"cluster {doc['cluster']} is not Slurm's {s['cluster']}")
    if not doc["summary"]["complete"] or not doc["summary"]["valid"]:
        fail(f"summary {doc['summary']}")
    # Ranks: packed node by node, local ranks 0..T-1 on each node, every node named.
    if doc["mpi"]["world_size"] != world or len(doc["ranks"]) != world:
        fail("world size does not match the job")
    hosts = [h["name"] for h in doc["hosts"]]
    if len(hosts) != nodes or len(set(hosts)) != nodes:
        fail(f"hosts {hosts}, expected {nodes} distinct nodes")
    for r in doc["ranks"]:
        node = r["rank"] // tasks_per_node
        if r["host"] != hosts[node] or r["local_rank"] != r["rank"] % tasks_per_node:
            fail(f"rank {r['rank']} on {r['host']} local {r['local_rank']}: expected {hosts[node]} local "
                 f"{r['rank'] % tasks_per_node} (binding by MPI_Comm_split_type is wrong under {launcher})")
    for h in doc["hosts"]:
        if len(h["ranks"]) != tasks_per_node:
            fail(f"host {h['name']} ran ranks {h['ranks']}, expected {tasks_per_node}")
    return hosts


# ---- fixtures --------------------------------------------------------------------------------------

def case_up(kind):
    os.makedirs(ARGS.workdir, exist_ok=True)
    if os.path.exists(skip_marker()):
        os.remove(skip_marker())
    p = cluster("up-" + kind)
    if p.returncode == SKIP:
        with open(skip_marker(), "w") as f:
            f.write(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "cluster cannot run here")
        print(f"SKIP: {open(skip_marker()).read()}")
        sys.exit(SKIP)
    if p.returncode != 0:
        fail(f"scripts/slurm-cluster up-{kind} failed (exit {p.returncode})")


def case_down():
    if os.path.exists(skip_marker()):
        print(f"SKIP: {open(skip_marker()).read()}")
        sys.exit(SKIP)
    p = cluster("down")
    if p.returncode != 0:
        fail(f"scripts/slurm-cluster down failed (exit {p.returncode})")


def require_cluster():
    if os.path.exists(skip_marker()):
        print(f"SKIP: {open(skip_marker()).read()}")
        sys.exit(SKIP)
    p = run(["scontrol", "ping"])
    if "is UP" not in p.stdout:
        fail(f"the test cluster is not up (its fixture failed?): {p.stdout.strip()} {p.stderr.strip()}")


# ---- one node --------------------------------------------------------------------------------------

def run_job(name, nodes, tasks_per_node, launcher, benchmarks):
    """gpuscale.sbatch on `nodes` x `tasks_per_node` tasks with as many GPUs, under `launcher`; checks the
    queue states, the log and the JSON (job id, GPU counts, ranks and hosts); returns the JSON."""
    cwd = case_dir(name)
    variables = {"GPUSCALE_ARGS": f"{LIGHT} --benchmarks {benchmarks}"}
    if launcher == "mpirun":
        variables["GPUSCALE_LAUNCHER"] = "mpirun"
    shape = [f"--nodes={nodes}", f"--gpus-per-node={tasks_per_node}", f"--ntasks-per-node={tasks_per_node}"]
    # Held at submission, so PENDING is seen whatever the scheduler's timing (a scheduling pass that
    # happens to run just then can start a job before the first squeue), then released: the states
    # watched after the release start from that PENDING (a second PENDING, before it starts, merges).
    job = submit(cwd, shape + ["--hold"], "gpuscale.sbatch", variables)
    pending = run(["squeue", "-h", "-j", job, "-o", "%T %r"]).stdout.split()
    if pending != ["PENDING", "JobHeldUser"]:
        fail(f"job {job} submitted with --hold is {pending}, not PENDING (JobHeldUser)")
    if run(["scontrol", "release", job]).returncode != 0:
        fail(f"scontrol release {job} failed")
    seen, final, code = watch(job, seen=["PENDING"])
    log = log_of(cwd, f"gpuscale-{job}.out")
    expect_completed(job, seen, final, code, log)
    if f"launcher: {launcher}" not in log or "done: every measurement valid" not in log:
        fail(f"job log does not say how it launched and ended:\n{log}")
    # Default GPUSCALE_OUT: results/ under the submit folder; the file is named with the job id.
    doc = load_valid(os.path.join(cwd, "results", f"gpuscale-{job}.json"))
    check_job_json(doc, job, nodes, tasks_per_node, tasks_per_node, launcher)
    print(f"ok: job {job} {seen}, {len(doc['results'])} rows at GPU counts {doc['plan']['gpu_counts']} "
          f"on {[h['name'] for h in doc['hosts']]} under {launcher}")
    return doc


def job_one_node(launcher):
    run_job(f"single_{launcher}", 1, 4, launcher, "stream.triad,gemm,all_reduce,sendrecv")


def case_bad_input():
    cwd = case_dir("bad_input")
    cases = [
        (["--gpus-per-node=2", "--ntasks-per-node=4"], "--backend cuda --quick", 2,
         "4 tasks per node but 2 GPU(s) per node: gpuscale runs one task per GPU"),
        (["--ntasks-per-node=2"], "--backend cuda --quick", 2, "--backend cuda but the job has no GPUs"),
        # GPUs allocated (stand-ins): gpuscale itself finds no CUDA device and says so, exit 3.
        (["--gpus-per-node=2", "--ntasks-per-node=2"], "--backend cuda --quick", 3, "gpuscale: no CUDA device"),
        # Bad flags: every rank parses them, one line (rank 0's, found from PMIx's rank under srun).
        (["--ntasks-per-node=2"], "--backend cpu --reps 0", 2, "gpuscale: invalid --reps '0'"),
    ]
    jobs = [(submit(cwd, opts, "gpuscale.sbatch", {"GPUSCALE_ARGS": args}), code, needle)
            for opts, args, code, needle in cases]
    for job, code, needle in jobs:
        _, final, got = watch(job, limit=60)
        log = log_of(cwd, f"gpuscale-{job}.out")
        if final != "FAILED" or got != code:
            fail(f"job {job} ended {final} exit {got}, expected FAILED exit {code}:\n{log}")
        lines = [l for l in log.splitlines() if needle in l]
        if len(lines) != 1:
            fail(f"job {job}: expected one line with {needle!r}:\n{log}")
        print(f"ok: job {job} FAILED with exit {code}: {lines[0]}")


def case_health():
    cwd = case_dir("health")
    p = run([ARGS.gpuscale, "--help"])
    if re.search(r"^\s+health\b", p.stdout, re.M) is not None:
        return health_jobs(cwd)
    job = submit(cwd, ["--gpus-per-node=2", "--ntasks-per-node=2"], "health.sbatch", {"GPUSCALE_ARGS": ""})
    _, final, code = watch(job, limit=60)
    log = log_of(cwd, f"gpuscale-health-{job}.out")
    if final != "FAILED" or code != 2 or "has no 'health' subcommand: no health check was run" not in log:
        fail(f"health job without a health subcommand: {final} exit {code}, expected FAILED exit 2 and one line:\n{log}")
    print(f"ok: health job {job} FAILED, saying this gpuscale has no health subcommand")


def health_jobs(cwd):
    # The cluster's GPUs are fake: the node's NVML is the fake NVML of tests/fake_nvml, replaying a
    # scenario. A healthy node completes; a GPU with a pending row remap ends the job FAILED with exit 2,
    # naming the GPU and printing the line that would drain the node.
    shape = ["--gpus-per-node=2", "--ntasks-per-node=2"]
    fake = {"GPUSCALE_ARGS": "", "GPUSCALE_NVML_LIBRARY": ARGS.fake_nvml}
    ok = submit(cwd, shape, "health.sbatch",
                dict(fake, GPUSCALE_FAKE_NVML_SCENARIO=os.path.join(ARGS.scenarios, "healthy.json")))
    bad = submit(cwd, shape, "health.sbatch",
                 dict(fake, GPUSCALE_FAKE_NVML_SCENARIO=os.path.join(ARGS.scenarios, "remap_pending.json")))
    for job, want_final, want_code, needles in [
            (ok, "COMPLETED", 0, ["GPU 0 00000000:18:00.0", ": PASS", "done: every GPU PASS"]),
            (bad, "FAILED", 2, ["GPU 0 00000000:18:00.0", "FAIL: row remapping pending",
                                "scontrol update nodename=", "exit 2: a GPU failed its health check"])]:
        _, final, code = watch(job, limit=90)
        log = log_of(cwd, f"gpuscale-health-{job}.out")
        if final != want_final or code != want_code or any(n not in log for n in needles):
            fail(f"health job {job} ended {final} exit {code}, expected {want_final} exit {want_code} with {needles}:\n{log}")
        # one report for the job (two tasks, one check), written by rank 0
        reports = [os.path.join(d, f) for d, _, fs in os.walk(cwd) for f in fs if f.startswith("health-") and job in f]
        if len(reports) != 1:
            fail(f"health job {job}: reports {reports}")
        with open(reports[0]) as f:
            doc = json.load(f)
        if doc["exit_code"] != want_code or len(doc["nodes"]) != 1 or len(doc["nodes"][0]["gpus"]) != 2:
            fail(f"health job {job}: report exit {doc['exit_code']}, {len(doc['nodes'])} nodes")
        print(f"ok: health job {job} {final} exit {code}")


def case_acceptance_two():
    """slurm/acceptance.sbatch on both nodes: health (the fake NVML's pending row remap fails every
    node's GPU 0; with GPUSCALE_ACCEPT_DCGM=r2 the fake dcgmi, tests/fake_dcgmi, on PATH fails GPU 1's
    memory test), then the fleet run, then a short burn-in, then one drain list holding both nodes,
    nothing drained; the job FAILED with exit 1 and all three files written."""
    cwd = case_dir("acceptance_two")
    shape = ["--nodes=2", "--gpus-per-node=2", "--ntasks-per-node=2"]
    job = submit(cwd, shape, "acceptance.sbatch",
                 {"GPUSCALE_ARGS": LIGHT, "GPUSCALE_ACCEPT_FLEET": "stream.triad",
                  "GPUSCALE_ACCEPT_BURN": "--duration 6s --window 2s --burn gemm",
                  "GPUSCALE_ACCEPT_HEALTH": "--no-perf", "GPUSCALE_NVML_LIBRARY": ARGS.fake_nvml,
                  "GPUSCALE_ACCEPT_DCGM": "r2", "GPUSCALE_FAKE_DCGMI_CASE": "fail",
                  "PATH": os.path.join(ARGS.source, "tests", "fake_dcgmi") + ":" + os.environ["PATH"],
                  "GPUSCALE_FAKE_NVML_SCENARIO": os.path.join(ARGS.scenarios, "remap_pending.json")})
    _, final, code = watch(job, limit=300)
    log = log_of(cwd, f"gpuscale-acceptance-{job}.out")
    if final != "FAILED" or code != 1:
        fail(f"acceptance job {job} ended {final} exit {code}, expected FAILED exit 1:\n{log}")
    for needle in ["health: a GPU failed", "DCGM r2 memory: Found 2 faulty memory elements on GPU 1 (DCGM error 52)",
                   "fleet: done", "burn-in: done", "drain: node1 (not drained",
                   "drain: node2 (not drained", "exit 1: not accepted"]:
        if needle not in log:
            fail(f"acceptance job {job}: '{needle}' not in its log:\n{log}")
    if "draining it" in log:
        fail(f"acceptance job {job} drained a node without GPUSCALE_ACCEPT_DRAIN=1:\n{log}")
    results = os.path.join(cwd, "results")
    burn = load_valid(os.path.join(results, f"acceptance-burn-{job}.json"))
    if {r["benchmark"] for r in burn["results"]} != {"burn.gemm"} or not burn["analysis"].get("capacity"):
        fail(f"acceptance job {job}: the burn-in file holds {sorted({r['benchmark'] for r in burn['results']})}")
    load_valid(os.path.join(results, f"acceptance-fleet-{job}.json"))
    with open(os.path.join(results, f"acceptance-health-{job}.json")) as f:
        doc = json.load(f)
        if doc["exit_code"] != 2:
            fail(f"acceptance job {job}: the health file does not fail")
        for n in doc["nodes"]:
            if n["dcgm"]["level"] != 2 or n["gpus"][1]["verdict"] != "FAIL" or not n["gpus"][1]["dcgm"]:
                fail(f"acceptance job {job}: {n['host']}: DCGM r2 not in the health file: {n.get('dcgm')}")
    print(f"ok: acceptance job {job} FAILED exit 1, both nodes in the drain list, three files")


def case_time_limit():
    # --time=3 (minutes) with the script's own --signal=B:USR1@120: Slurm sends the warning 120 to 150 s
    # before the limit (it checks every 30 s), i.e. 30-60 s into the job. The plan's rows take seconds
    # each and all of them minutes even on a fast machine, so the warning always cuts it; gpuscale
    # stops after its current row, and the job ends after about a minute.
    cwd = case_dir("time_limit")
    job = submit(cwd, ["--time=3", "--ntasks-per-node=2"], "gpuscale.sbatch",
                 {"GPUSCALE_ARGS": "--backend cpu --quick --benchmarks stream --dtypes fp64,fp32 --array-size 64M --reps 400 --threads 1"})
    _, final, code = watch(job, limit=200)
    log = log_of(cwd, f"gpuscale-{job}.out")
    if final != "FAILED" or code != 4:
        fail(f"job {job} ended {final} exit {code}, expected FAILED with exit 4 (interrupted):\n{log}")
    for needle in ["SIGUSR1 received (time limit near)", "gpuscale: interrupted by SIGUSR1 after"]:
        if needle not in log:
            fail(f"job log lacks {needle!r}:\n{log}")
    doc = load_valid(os.path.join(cwd, "results", f"gpuscale-{job}.json"))
    rows, total = e2e_common.check_interrupted(doc, "interrupted by SIGUSR1")
    print(f"ok: job {job} cut by the time-limit warning: {rows} of {total} rows flushed")


def case_container_dry_run():
    cwd = case_dir("container")
    expect = {
        "pyxis": "launch: srun --mpi=pmix --kill-on-bad-exit=1 --container-image=registry.example/gpuscale:1 "
                 f"--container-mounts={cwd}/results:{cwd}/results gpuscale run --backend cpu -o {cwd}/results/gpuscale-",
        "apptainer": "launch: mpirun -np 2 apptainer exec --nv --bind "
                     f"{cwd}/results registry.example/gpuscale:1 gpuscale run --backend cpu -o {cwd}/results/gpuscale-",
    }
    for runtime, needle in expect.items():
        variables = {"GPUSCALE_ARGS": "--backend cpu", "GPUSCALE_CONTAINER": "registry.example/gpuscale:1",
                     "GPUSCALE_CONTAINER_RUNTIME": runtime, "GPUSCALE_DRY_RUN": "1",
                     "GPUSCALE_LAUNCHER": "mpirun" if runtime == "apptainer" else "srun"}
        # No GPUSCALE_BIN: in a container it defaults to the image's gpuscale.
        job = submit(cwd, ["--ntasks-per-node=2"], "gpuscale.sbatch", dict(variables, GPUSCALE_BIN=""))
        _, final, code = watch(job, limit=60)
        log = log_of(cwd, f"gpuscale-{job}.out")
        if final != "COMPLETED" or needle not in log:
            fail(f"{runtime}: expected the launch line {needle!r} in:\n{log}")
        print(f"ok: {runtime} launch line: {needle}")


# ---- two nodes -------------------------------------------------------------------------------------

def job_two_nodes(launcher):
    doc = run_job(f"two_{launcher}", 2, 2, launcher, "stream.triad,all_reduce,sendrecv")
    hosts = [h["name"] for h in doc["hosts"]]
    if sorted(hosts) != ["node1", "node2"] or doc["slurm"]["nodelist"] != "node[1-2]":
        fail(f"hosts {hosts}, nodelist {doc['slurm']['nodelist']}: expected node1 and node2")
    inter = [r for r in doc["results"] if r["gpu_count"] == 4]
    if not inter or any(r["topology"] != "inter-node" or r["nodes"] != 2 or
                        {v["host"] for v in e2e_common.rank_entries(r)} != {"node1", "node2"} for r in inter):
        fail("the 4-rank rows did not run on both nodes")


def case_fleet_two():
    """slurm/fleet.sbatch on both nodes: every count's groups hold both nodes between them, the node-pair
    matrix is 2 x 2 with its one pair measured, the drain list is printed (nothing drained), and the
    job's exit code says whether the file names outliers (1) or not (0)."""
    cwd = case_dir("fleet_two")
    shape = ["--nodes=2", "--gpus-per-node=2", "--ntasks-per-node=2"]
    job = submit(cwd, shape, "fleet.sbatch", {"GPUSCALE_ARGS": LIGHT})
    _, final, code = watch(job, limit=240)
    log = log_of(cwd, f"gpuscale-fleet-{job}.out")
    doc = load_valid(os.path.join(cwd, "results", f"fleet-{job}.json"))
    outliers = doc["analysis"].get("outliers", [])
    want_code = 1 if outliers else 0
    if code != want_code or final != ("FAILED" if want_code else "COMPLETED"):
        fail(f"fleet job {job} ended {final} exit {code}; its file names {len(outliers)} outlier(s):\n{log}")
    if "drain list: empty" not in log and "drain: node" not in log:
        fail(f"fleet job {job}: no drain list in the log:\n{log}")
    if "state=drain reason=gpuscale fleet" in log or "draining it" in log:
        fail(f"fleet job {job} drained a node without GPUSCALE_FLEET_DRAIN=1:\n{log}")
    for k in doc["plan"]["gpu_counts"]:
        for r in (r for r in doc["results"] if r["gpu_count"] == k and "groups" in r):
            hosts = {h for g in e2e_common.group_entries(r) for h in g["hosts"]}
            if hosts != {"node1", "node2"}:
                fail(f"{r['benchmark']} at {k} GPUs: its groups ran on {hosts}, not both nodes")
    pairs = [r for r in doc["results"] if r["benchmark"] == "pairs"]
    if len(pairs) != 2:
        fail(f"expected the pairs rows of sendrecv and all_reduce, got {len(pairs)}")
    for r in pairs:
        m = r["matrices"][0]
        v = m["values"]
        if r["status"] != "ok" or sorted(m["hosts"]) != ["node1", "node2"] or len(v) != 2 or v[0][1] is None or v[0][1] != v[1][0]:
            fail(f"pairs row {r['params']}: status {r['status']}, matrix {m}")
    print(f"ok: fleet job {job} {final} exit {code}: both nodes in every count's groups, the pair measured")


def campaign(cwd, extra_sbatch):
    variables = {"GPUSCALE_ARGS": LIGHT + " --benchmarks stream.triad,all_reduce"}
    p = run([script("scaling-campaign"), "--max-nodes", "2", "--gpus-per-node", "2", "--"] + extra_sbatch,
            variables, cwd=cwd)
    print(p.stdout + p.stderr)
    if p.returncode != 0:
        fail(f"scaling-campaign failed: {p.stderr}")
    jobs = dict(re.findall(r"^nodes (\d+): job (\d+)$", p.stdout, re.M))
    merge = re.search(r"^merge: job (\d+) \(after jobs ([\d ]+);", p.stdout, re.M)
    if set(jobs) != {"1", "2"} or not merge or merge.group(2).split() != [jobs["1"], jobs["2"]]:
        fail(f"campaign output does not name the 1- and 2-node jobs and the merge job:\n{p.stdout}")
    dep = run(["scontrol", "show", "job", merge.group(1)]).stdout
    if f"afterany:{jobs['1']}" not in dep or f"afterany:{jobs['2']}" not in dep:
        fail(f"merge job lacks the afterany dependency:\n{dep}")
    return jobs, merge.group(1)


def case_campaign():
    cwd = case_dir("campaign")
    jobs, merge = campaign(cwd, [])
    for n, job in jobs.items():
        _, final, code = watch(job)
        if final != "COMPLETED":
            fail(f"{n}-node job {job} ended {final}:\n{log_of(cwd, f'gpuscale-{job}.out')}")
    _, final, code = watch(merge, limit=60)
    log = log_of(cwd, f"gpuscale-merge-{merge}.out")
    if final != "COMPLETED" or code != 0:
        fail(f"merge job {merge} ended {final} exit {code}:\n{log}")
    doc = load_valid(os.path.join(cwd, "results", f"campaign-{merge}.json"))
    if doc["cluster"]["source"] != "merge" or doc["plan"]["gpu_counts"] != [1, 2, 4]:
        fail(f"merged set: cluster {doc['cluster']}, GPU counts {doc['plan']['gpu_counts']}")
    src = {e["job_id"]: e for e in doc["merged_from"]}
    if set(src) != set(jobs.values()) or any(e["status"] != "merged" for e in src.values()):
        fail(f"merged_from {doc['merged_from']}")
    if src[jobs["2"]]["hosts"] != ["node1", "node2"] or src[jobs["1"]]["world_size"] != 2:
        fail(f"merged_from does not describe the jobs: {doc['merged_from']}")
    keys = [(r["benchmark"], json.dumps(r["params"], sort_keys=True), r["gpu_count"]) for r in doc["results"]]
    if len(keys) != len(set(keys)) or not doc["summary"]["complete"] or not doc["summary"]["valid"]:
        fail("merged rows are duplicated or the set is not complete and valid")
    for job in jobs.values():
        if f"job {job}: COMPLETED" not in log:
            fail(f"merge log does not report job {job}:\n{log}")
    print(f"ok: campaign {jobs} merged by job {merge}: {len(doc['results'])} rows")


def case_campaign_failed():
    # Every job held; the 2-node job is cancelled before it runs, the rest released: the merge job must
    # name the cancelled job, merge the 1-node job's results, and fail.
    cwd = case_dir("campaign_failed")
    jobs, merge = campaign(cwd, ["--hold"])
    run(["scancel", jobs["2"]])
    p = run(["scontrol", "release", f"{jobs['1']},{merge}"])
    if p.returncode != 0:
        fail(f"scontrol release: {p.stderr}")
    watch(jobs["1"])
    _, final, code = watch(merge, limit=60)
    log = log_of(cwd, f"gpuscale-merge-{merge}.out")
    if final != "FAILED" or code == 0:
        fail(f"merge job {merge} ended {final} exit {code}, expected FAILED:\n{log}")
    for needle in [f"job {jobs['2']}: CANCELLED", f"jobs that did not complete: {jobs['2']} (CANCELLED",
                   f"gpuscale-{jobs['2']}.json: unreadable (no such file)"]:
        if needle not in log:
            fail(f"merge log lacks {needle!r}:\n{log}")
    doc = load_valid(os.path.join(cwd, "results", f"campaign-{merge}.json"))
    st = {e["job_id"] or os.path.basename(e["file"]): e["status"] for e in doc["merged_from"]}
    if st != {jobs["1"]: "merged", f"gpuscale-{jobs['2']}.json": "unreadable"}:
        fail(f"merged_from statuses {st}")
    if doc["summary"]["complete"] or doc["plan"]["gpu_counts"] != [1, 2] or not doc["results"]:
        fail(f"the merged set should hold the 1-node job's rows and be incomplete: {doc['summary']}")
    print(f"ok: merge job {merge} FAILED naming cancelled job {jobs['2']}; merged the rest")


def parse():
    global ARGS
    ap = e2e_common.parser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--cluster-dir", required=True)
    ap.add_argument("--fake-nvml", required=True)  # tests/fake_nvml: the health job's NVML
    ap.add_argument("--scenarios", required=True)
    ARGS = ap.parse_args()
    return ARGS


def on_cluster(case):
    """A case that needs the running cluster (skipped, with the reason, when it could not start)."""
    def run_on_cluster():
        require_cluster()
        case()
    return run_on_cluster


def main():
    # The cluster is a ctest fixture: *_up starts it and *_down stops it, first one node, then two nodes in
    # network namespaces; the two clusters never overlap. Cases that run gpuscale for real hold cpu_cores.
    def fixture(name, timeout=240, cores=True):
        return {"TIMEOUT": timeout, "FIXTURES_REQUIRED": name, **(e2e_common.CORES if cores else {})}
    one, two = fixture("slurm_single"), fixture("slurm_two")
    cluster = {"RESOURCE_LOCK": "slurm_cluster"}
    cases = {
        "single_up": (lambda: case_up("single"), {"TIMEOUT": 420, "FIXTURES_SETUP": "slurm_single", **cluster}),
        "single_srun": (on_cluster(lambda: job_one_node("srun")), one),
        "single_mpirun": (on_cluster(lambda: job_one_node("mpirun")), one),
        "time_limit": (on_cluster(case_time_limit), {**one, "TIMEOUT": 300}),
        "bad_input": (on_cluster(case_bad_input), fixture("slurm_single", 180, cores=False)),
        "health": (on_cluster(case_health), fixture("slurm_single", 120, cores=False)),
        "container_dry_run": (on_cluster(case_container_dry_run), fixture("slurm_single", 120, cores=False)),
        "single_down": (case_down, {"TIMEOUT": 120, "FIXTURES_CLEANUP": "slurm_single", **cluster}),
        "two_up": (lambda: case_up("two"),
                   {"TIMEOUT": 420, "FIXTURES_SETUP": "slurm_two", **cluster, "DEPENDS": "slurm_single_down"}),
        "two_srun": (on_cluster(lambda: job_two_nodes("srun")), two),
        "two_mpirun": (on_cluster(lambda: job_two_nodes("mpirun")), two),
        "campaign": (on_cluster(case_campaign), two),
        "fleet_two": (on_cluster(case_fleet_two), two),
        "acceptance_two": (on_cluster(case_acceptance_two), {**two, "TIMEOUT": 360}),
        "campaign_failed": (on_cluster(case_campaign_failed), two),
        "two_down": (case_down, {"TIMEOUT": 120, "FIXTURES_CLEANUP": "slurm_two", **cluster}),
    }
    e2e_common.run_case("slurm_", {"LABELS": "e2e;slurm", "SKIP_RETURN_CODE": SKIP}, cases, parse)


if __name__ == "__main__":
    main()
