#!/usr/bin/env python3
"""End-to-end tests of `gpuscale health --dcgm` (health/dcgm/, docs/health.md) with the fake NVML
(tests/fake_nvml) and the fake dcgmi (tests/fake_dcgmi/dcgmi, DCGM 4.x's documented JSON) on PATH.

`--case dcgm_verdicts`: each of the fake's outcomes at a random level and on a random GPU: a failed GPU
is FAIL with DCGM's reason and its node in the drain list (`gpuscale report --drain-list`), a monitor-only
failure WARN, a skipped test a note and never a pass, a GPU DCGM left out its own WARN; GPUs matched by
serial number when both sides give unique ones. `--case dcgm_unreadable`: dcgmi missing, malformed output,
a non-zero exit without results, a runtime_error, a hang past --dcgm-timeout, and bad flags: one line
each, exit 5, nothing hangs. `--case dcgm_acceptance_choice`: slurm/acceptance.sbatch's GPUSCALE_ACCEPT_DCGM
(r1-r4, none, auto) picks the health step's --dcgm, and a bad value is one line, exit 2.
The oracles come from the fake's model (its docstring): the level's tests, the test each case acts on,
the GPU it names, DCGM's message texts.
"""
import json
import os
import shutil
import time

import e2e_common
from e2e_common import fail

ARGS = None
# DCGM 4.x's suites as the fake models them: the tests each level adds, in order.
SUITES = {1: ["software"], 2: ["pcie", "memory"], 3: ["diagnostic", "targeted_stress", "targeted_power",
                                                      "memory_bandwidth"], 4: ["pulse_test", "memtest"]}
DROP = ("GPUSCALE_NVML_LIBRARY", "GPUSCALE_FAKE_NVML_SCENARIO") + tuple(
    k for k in os.environ if k.startswith("GPUSCALE_FAKE_DCGMI_"))


def tests_at(level):
    return [t for lvl in range(1, level + 1) for t in SUITES[lvl]]


def health(args, env, path_with_fake=True, timeout=240):
    env = {"GPUSCALE_NVML_LIBRARY": ARGS.fake_lib,
           "GPUSCALE_FAKE_NVML_SCENARIO": os.path.join(ARGS.scenarios, "healthy.json"),
           "PATH": (ARGS.fake_dcgmi + ":" if path_with_fake else "") + "/usr/bin:/bin", **env}
    return e2e_common.run([ARGS.gpuscale, "health", "--no-perf", "--node-name", "gpu-node-7"] + args, env,
                          timeout=timeout, env_drop=DROP, echo_env=True)


def load(path):
    with open(path) as f:
        doc = json.load(f)
    import jsonschema  # here, so that --cmake runs without it (at configure time)
    with open(ARGS.health_schema) as f:
        jsonschema.validate(doc, json.load(f))
    return doc


def gpu_lines(p):
    return [l for l in p.stdout.splitlines() if l.startswith("GPU ")]


def case_verdicts():
    rng = e2e_common.seeded_rng("dcgm_verdicts")
    # case: (exit code, the target GPU's verdict, text in its line, DCGM counts in its line)
    for case in ("pass", "fail", "warn", "skip", "missing_gpu"):
        level, target = rng.randint(1, 4), rng.randint(0, 1)
        tests, acted_on = tests_at(level), tests_at(level)[-1]
        n = len(tests)
        want = {
            "pass": (0, "PASS", "", f"[DCGM r{level}: {n} Pass]"),
            "fail": (2, "FAIL", f"DCGM r{level} {acted_on}: Found 2 faulty memory elements on GPU {target} (DCGM error 52)",
                     f"[DCGM r{level}: {n - 1} Pass, 1 Fail]" if n > 1 else f"[DCGM r{level}: 1 Fail]"),
            "warn": (1, "WARN", f"DCGM r{level} {acted_on}: There were thermal violations totaling 12.5 seconds for "
                                f"GPU {target} (DCGM error 40)",
                     f"[DCGM r{level}: {n - 1} Pass, 1 Warn]" if n > 1 else f"[DCGM r{level}: 1 Warn]"),
            "skip": (0, "PASS", "", f"[DCGM r{level}: {n - 1} Pass, 1 Skip]" if n > 1 else f"[DCGM r{level}: 1 Skip]"),
            "missing_gpu": (1, "WARN", f"DCGM r{level} reported no result for this GPU (DCGM's GPU ids: {1 - target};",
                            f"[DCGM r{level}: no result]"),
        }[case]
        code, verdict, text, counts = want
        path = e2e_common.out_path(ARGS.workdir, f"dcgm-{case}.json")
        log = e2e_common.out_path(ARGS.workdir, f"dcgmi-{case}.log")
        p = health(["--dcgm", f"r{level}", "-o", path, "--drain-command"],
                   {"GPUSCALE_FAKE_DCGMI_CASE": case, "GPUSCALE_FAKE_DCGMI_GPU": str(target),
                    "GPUSCALE_FAKE_DCGMI_LOG": log})
        label = f"{case} r{level} GPU {target}"
        lines = gpu_lines(p)
        if p.returncode != code or len(lines) != 2 or p.stderr.strip():
            fail(f"{label}: exit {p.returncode} (want {code}), stdout {p.stdout!r}, stderr {p.stderr!r}")
        with open(log) as f:
            if f.read() != f"diag -r {level} -j\n":
                fail(f"{label}: dcgmi was not called once as `diag -r {level} -j`")
        line = lines[target]
        if f": {verdict}" not in line or text not in line or not line.endswith(counts):
            fail(f"{label}: line {line!r} should be {verdict} with {text!r}, ending {counts!r}")
        other = lines[1 - target]
        want_other = f"[DCGM r{level}: {n} Pass]" if case != "missing_gpu" else f"[DCGM r{level}: {n} Pass]"
        if ": PASS" not in other or not other.endswith(want_other):
            fail(f"{label}: the other GPU's line {other!r}")
        doc = load(path)
        node = doc["nodes"][0]
        if node["dcgm"]["status"] != "read" or node["dcgm"]["level"] != level \
                or node["dcgm"]["matched_by"] != "index (DCGM gives no serial number for every GPU)":
            fail(f"{label}: node dcgm {node['dcgm']}")
        g = node["gpus"][target]
        statuses = sorted(t["status"] for t in g["dcgm"])
        want_statuses = {"pass": ["Pass"] * n, "fail": ["Fail"] + ["Pass"] * (n - 1),
                         "warn": ["Fail"] + ["Pass"] * (n - 1), "skip": ["Pass"] * (n - 1) + ["Skip"],
                         "missing_gpu": []}[case]
        if statuses != sorted(want_statuses):
            fail(f"{label}: the GPU's DCGM tests {statuses}, expected {want_statuses}")
        if case == "skip" and not any(f"DCGM r{level} {acted_on} skipped: Test {acted_on} skipped" in x for x in g["notes"]):
            fail(f"{label}: the skip is not a note: {g['notes']}")
        drain = [l for l in p.stdout.splitlines() if l.startswith("scontrol ")]
        if (case == "fail") != bool(drain):
            fail(f"{label}: drain lines {drain}")
        listed = e2e_common.run([ARGS.gpuscale, "report", "--drain-list", "--health-file", path])
        if listed.returncode != 0 or listed.stdout.split() != (["gpu-node-7"] if case == "fail" else []):
            fail(f"{label}: drain list {listed.stdout!r} (exit {listed.returncode}, {listed.stderr!r})")
        print(f"ok: {label}: exit {code}, {line}")

    # Serial numbers on both sides, DCGM numbering the GPUs the other way round: DCGM's GPU 0 is our GPU 1.
    scenario = e2e_common.out_path(ARGS.workdir, "serials.json")
    with open(scenario, "w") as f:
        json.dump({"description": "two H100s with their own serial numbers",
                   "gpus": [{"serial": "1650923000011"}, {"serial": "1650923000022"}]}, f)
    path = e2e_common.out_path(ARGS.workdir, "dcgm-serials.json")
    # The "done when": `gpuscale health --dcgm r2`, a GPU DCGM fails is FAIL with DCGM's reason, in
    # the drain list.
    p = health(["--dcgm", "r2", "-o", path, "--drain-command"],
               {"GPUSCALE_FAKE_NVML_SCENARIO": scenario, "GPUSCALE_FAKE_DCGMI_CASE": "fail", "GPUSCALE_FAKE_DCGMI_GPU": "0",
                "GPUSCALE_FAKE_DCGMI_SERIALS": "1650923000022,1650923000011"})
    lines = gpu_lines(p)
    node = load(path)["nodes"][0]
    reason = "DCGM r2 memory: Found 2 faulty memory elements on GPU 0 (DCGM error 52)"
    if p.returncode != 2 or len(lines) != 2 or ": PASS" not in lines[0] or f": FAIL: {reason}" not in lines[1] \
            or node["dcgm"]["matched_by"] != "serial number":
        fail(f"serials: exit {p.returncode}, {lines}, matched by {node['dcgm'].get('matched_by')}")
    drain = [l for l in p.stdout.splitlines() if l.startswith("scontrol ")]
    if len(drain) != 1 or "nodename=gpu-node-7 state=drain" not in drain[0] or f"GPU 1 {reason}" not in drain[0]:
        fail(f"serials: the drain line {drain}")
    listed = e2e_common.run([ARGS.gpuscale, "report", "--drain-list", "--health-file", path])
    if listed.returncode != 0 or listed.stdout.split() != ["gpu-node-7"]:
        fail(f"serials: drain list {listed.stdout!r} (exit {listed.returncode}, {listed.stderr!r})")
    print(p.stdout, end="")
    print("ok: matched by serial number: DCGM's GPU 0 failed, our GPU 1 is FAIL with DCGM's reason, gpu-node-7 in "
          "the drain list")


def case_unreadable():
    def one_line(name, args, env, needle, path_with_fake=True, max_s=120):
        start = time.time()
        p = health(args, env, path_with_fake)
        took = time.time() - start
        out = [l for l in p.stdout.splitlines() if not l.startswith("GPU ")]
        if p.returncode != 5 or len(out) != 1 or needle not in out[0] or took > max_s:
            fail(f"{name}: exit {p.returncode}, {took:.1f} s, stdout {p.stdout!r}, stderr {p.stderr!r}; want one line "
                 f"with {needle!r}")
        print(f"ok: {name}: exit 5 in {took:.1f} s: {out[0]}")
        return p

    p = one_line("dcgmi missing", ["--dcgm", "r2"], {}, "--dcgm r2: dcgmi not found on PATH", path_with_fake=False)
    if gpu_lines(p) or p.stderr.strip():
        fail(f"dcgmi missing: GPUs checked anyway or stderr: {p.stdout!r} {p.stderr!r}")
    one_line("malformed", ["--dcgm", "r3"], {"GPUSCALE_FAKE_DCGMI_CASE": "malformed"},
             "DCGM r3 on ")  # the reason: below
    p = one_line("malformed reason", ["--dcgm", "r3"], {"GPUSCALE_FAKE_DCGMI_CASE": "malformed"}, "not read: dcgmi printed no JSON")
    if len(gpu_lines(p)) != 2:
        fail("malformed: the node's own checks were not kept")
    one_line("no host engine", ["--dcgm", "r1"], {"GPUSCALE_FAKE_DCGMI_CASE": "nonzero"},
             "not read: dcgmi diag -r 1 -j exited 235: Error: unable to establish a connection to the specified host")
    one_line("runtime error", ["--dcgm", "r4"], {"GPUSCALE_FAKE_DCGMI_CASE": "runtime_error"},
             "could not run the diagnostic: Error: the requested test level is not supported on this system")
    one_line("hang", ["--dcgm", "r2", "--dcgm-timeout", "2s"], {"GPUSCALE_FAKE_DCGMI_CASE": "hang"},
             "not read: dcgmi diag -r 2 -j did not finish in 2 s: killed (--dcgm-timeout)", max_s=60)
    one_line("flood", ["--dcgm", "r2"], {"GPUSCALE_FAKE_DCGMI_CASE": "flood"}, "printed more than 64 MiB: killed")
    path = e2e_common.out_path(ARGS.workdir, "dcgm-unreadable.json")
    p = health(["--dcgm", "r2", "-o", path], {"GPUSCALE_FAKE_DCGMI_CASE": "malformed"})
    doc = load(path)
    if doc["verdict"] != "NOT_CHECKED" or doc["nodes"][0]["dcgm"]["status"] != "not read":
        fail(f"unreadable: JSON verdict {doc['verdict']}, dcgm {doc['nodes'][0]['dcgm']}")
    for args, needle in [(["--dcgm", "r5"], "invalid --dcgm 'r5': expected r1, r2, r3 or r4"),
                         (["--dcgm", "2"], "invalid --dcgm '2'"),
                         (["--dcgm-timeout", "5m"], "--dcgm-timeout goes with --dcgm only"),
                         (["--dcgm", "r1", "--dcgm-timeout", "soon"], "--dcgm-timeout")]:
        p = health(args, {})
        ours = [l for l in p.stderr.splitlines() if l.startswith("gpuscale:")]
        if p.returncode != 5 or len(ours) != 1 or needle not in ours[0] or p.stdout.strip():
            fail(f"{args}: exit {p.returncode}, stdout {p.stdout!r}, stderr {p.stderr!r}")
    print("ok: bad --dcgm flags: one line each, exit 5")


def case_acceptance_choice():
    """slurm/acceptance.sbatch's GPUSCALE_ACCEPT_DCGM, outside Slurm: the script in a pretend job
    (SLURM_JOB_ID set, GPUSCALE_DRY_RUN=1 prints each launch line and launches nothing), the CPU backend,
    so only the health step's arguments and the script's own refusal are looked at."""
    work = os.path.join(ARGS.workdir, "acceptance")
    shutil.rmtree(work, ignore_errors=True)  # a fresh folder each run: the script writes its files there
    os.makedirs(work)
    script = os.path.join(ARGS.slurm_dir, "acceptance.sbatch")

    def job(value, with_fake):
        env = {"PATH": (ARGS.fake_dcgmi + ":" if with_fake else "") + "/usr/bin:/bin", "HOME": work,
               "SLURM_JOB_ID": "4242", "GPUSCALE_SLURM_DIR": ARGS.slurm_dir, "GPUSCALE_LAUNCHER": "mpirun",
               "GPUSCALE_DRY_RUN": "1", "GPUSCALE_BIN": ARGS.gpuscale, "GPUSCALE_ARGS": "--backend cpu",
               "GPUSCALE_OUT": work}
        if value is not None:
            env["GPUSCALE_ACCEPT_DCGM"] = value
        p = e2e_common.run(["bash", script], env=env, cwd=work, timeout=60, echo_env=False)
        health = [l for l in (p.stdout + p.stderr).splitlines() if "launch:" in l and " health " in l]
        return p, health

    for value, with_fake, want_args, want_say in [
            ("r3", False, "health --dcgm r3 -o", None), ("none", True, "health -o", None),
            (None, True, "health --dcgm r2 -o", "GPUSCALE_ACCEPT_DCGM=auto: r2 (dcgmi found)"),
            ("auto", False, "health -o", "GPUSCALE_ACCEPT_DCGM=auto: none (dcgmi not found on PATH)")]:
        p, health = job(value, with_fake)
        said = p.stdout + p.stderr
        if p.returncode != 0 or len(health) != 1 or want_args not in health[0] or (want_say and want_say not in said):
            fail(f"GPUSCALE_ACCEPT_DCGM={value} (fake dcgmi on PATH: {with_fake}): exit {p.returncode}, health launch "
                 f"{health}, want {want_args!r} and {want_say!r}:\n{said}")
        print(f"ok: GPUSCALE_ACCEPT_DCGM={value or '(unset)'}: {health[0].split('launch: ')[1]}")
    for bad in ("r5", "R2", "yes", ""):
        p, health = job(bad, True)
        if bad == "":  # empty is unset: auto
            if p.returncode != 0 or "--dcgm r2" not in health[0]:
                fail(f"GPUSCALE_ACCEPT_DCGM='': exit {p.returncode}, {health}")
            continue
        lines = [l for l in (p.stdout + p.stderr).splitlines() if "GPUSCALE_ACCEPT_DCGM" in l]
        if p.returncode != 2 or health or len(lines) != 1 or \
                f"GPUSCALE_ACCEPT_DCGM must be r1, r2, r3, r4, none or auto, not '{bad}'" not in lines[0]:
            fail(f"GPUSCALE_ACCEPT_DCGM={bad!r}: exit {p.returncode}, {lines}, launched {health}")
    print("ok: GPUSCALE_ACCEPT_DCGM r5, R2, yes: one line each, exit 2, nothing launched")


def parse():
    global ARGS
    ARGS = e2e_common.parse_args("--fake-lib", "--scenarios", "--health-schema", "--fake-dcgmi", "--slurm-dir")
    return ARGS


def main():
    cases = {"dcgm_verdicts": (case_verdicts, {}), "dcgm_unreadable": (case_unreadable, {}),
             "dcgm_acceptance_choice": (case_acceptance_choice, {})}
    e2e_common.run_case("e2e_", {"TIMEOUT": 300, "LABELS": "e2e"}, cases, parse)


if __name__ == "__main__":
    main()
