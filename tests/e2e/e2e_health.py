#!/usr/bin/env python3
"""End-to-end tests of GPU health and telemetry with the fake NVML (tests/fake_nvml), no GPU needed.

`--case health`: `gpuscale health` on every scripted scenario: exit code, one line per GPU with its
verdict, the drain line for a failing node, and the -o JSON (validated against its schema).
`--case health_bad_input`, `health_launch`: bad flags exit 5 with one line; under mpirun one task per
node checks it. `--case run_*`: CPU-backend `gpuscale run`s whose ranks are mapped to the fake GPUs by
local rank (GPUSCALE_TEST_FAULT=telemetry:by-index): per-row telemetry, throttled flags, verdicts,
consistency warnings; and the CPU backend's own answer, telemetry unavailable.
"""
import json
import os

import e2e_common
from e2e_common import fail

ARGS = None
BY_INDEX = "telemetry:by-index"


# Every command here: without the caller's fake NVML and fault variables (each case sets its own), and
# echoed with the variables it is given; under mpirun those are exported to the ranks.
HEALTH_RUN = {"env_drop": ("GPUSCALE_NVML_LIBRARY", "GPUSCALE_FAKE_NVML_SCENARIO", "GPUSCALE_TEST_FAULT"),
              "echo_env": True}


def run(cmd, env_extra=None, timeout=240):
    return e2e_common.run(cmd, env_extra, timeout=timeout, **HEALTH_RUN)


def mpirun(np, args, env_extra):
    return e2e_common.mpirun(np, args, env_extra, export=list(env_extra), **HEALTH_RUN)


def scenario(name):
    return os.path.join(ARGS.scenarios, name + ".json")


def out_path_kept(name):
    return os.path.join(ARGS.workdir, name)


def out_path(name):
    return e2e_common.out_path(ARGS.workdir, name)


def load(path, schema):
    with open(path) as f:
        doc = json.load(f)
    import jsonschema  # here, so that --cmake runs without it (at configure time)
    with open(schema) as f:
        jsonschema.validate(doc, json.load(f))
    return doc


# scenario, library, expected exit code, per GPU: (verdict, text its line must contain)
HEALTH_CASES = [
    ("healthy", "fake", 0, [("PASS", ""), ("PASS", "")]),
    ("thermal", "fake", 2, [("PASS", ""), ("FAIL", "HW_THERMAL clock event")]),
    ("ecc_uncorrected", "fake", 2, [("FAIL", "uncorrected ECC errors +2"), ("PASS", "")]),
    ("remap_pending", "fake", 2, [("FAIL", "row remapping pending"), ("PASS", "")]),
    ("xid79", "fake", 2, [("PASS", ""), ("FAIL", "Xid 79 (GPU has fallen off the bus)")]),
    ("pcie_x8", "fake", 1, [("WARN", "PCIe link x8, below its maximum x16"), ("PASS", "")]),
    ("nvlink_down", "fake", 2, [("FAIL", "NVLink link 3 down"), ("PASS", "")]),
    ("nvlink_counters", "fake", 1, [("PASS", ""), ("WARN", "NVLink errors +150")]),
    ("in_use", "fake", 2, [("FAIL", "exclusive compute mode held by another process: pid 4242"),
                           ("WARN", "in use by other processes: pid 4343")]),
    ("gpu_lost", "fake", 2, [("PASS", ""), ("FAIL", "GPU lost")]),
    ("consistency", "fake", 1, [("PASS", ""), ("PASS", ""), ("PASS", ""),
                                ("WARN", "power_limit_w 500.0 differs from the node's other GPUs")]),
    ("not_supported", "fake", 0, [("PASS", "")]),
    ("mig", "fake", 0, [("PASS", ""), ("PASS", "")]),
    # a library without nvmlDeviceGetRemappedRows / nvmlDeviceGetCurrentClocksEventReasons
    ("healthy", "missing", 0, [("PASS", ""), ("PASS", "")]),
    ("thermal", "missing", 2, [("PASS", ""), ("FAIL", "HW_THERMAL clock event")]),
]


def check_health_doc(doc, name, code, expected):
    if doc["exit_code"] != code or len(doc["nodes"]) != 1:
        fail(f"{name}: JSON exit_code {doc['exit_code']} / {len(doc['nodes'])} nodes")
    node = doc["nodes"][0]
    got = [g["verdict"] for g in node["gpus"]]
    if got != [v for v, _ in expected]:
        fail(f"{name}: JSON verdicts {got}, expected {[v for v, _ in expected]}")
    for g, (verdict, text) in zip(node["gpus"], expected):
        if verdict == "PASS" and g["findings"]:
            fail(f"{name}: a PASS GPU has findings {g['findings']}")
        if verdict != "PASS" and not any(text in f["message"] and f["severity"] == verdict for f in g["findings"]):
            fail(f"{name}: GPU {g['index']} has no {verdict} finding with {text!r}: {g['findings']}")
        if any(p["ran"] for p in g["perf"]):
            fail(f"{name}: perf checks claim to have run without a GPU backend")
    drain = doc["drain_commands"]
    if (code == 2) != (len(drain) == 1):
        fail(f"{name}: drain commands {drain} for exit code {code}")
    return node


def case_health():
    libs = {"fake": ARGS.fake_lib, "missing": ARGS.fake_missing_lib}
    for name, lib, code, expected in HEALTH_CASES:
        path = out_path(f"health-{name}-{lib}.json")
        p = run([ARGS.gpuscale, "health", "--nvml-library", libs[lib], "-o", path, "--drain-command",
                 "--node-name", "gpu-node-7"], {"GPUSCALE_FAKE_NVML_SCENARIO": scenario(name)})
        label = f"{name} ({lib})"
        if p.returncode != code:
            fail(f"{label}: exit {p.returncode}, expected {code}\n{p.stdout}\n{p.stderr}")
        if p.stderr.strip():
            fail(f"{label}: unexpected stderr {p.stderr!r}")
        lines = p.stdout.splitlines()
        gpu_lines = [l for l in lines if l.startswith("GPU ")]
        if len(gpu_lines) != len(expected):
            fail(f"{label}: {len(gpu_lines)} GPU lines, expected {len(expected)}:\n{p.stdout}")
        for i, (line, (verdict, text)) in enumerate(zip(gpu_lines, expected)):
            if not line.startswith(f"GPU {i} ") or f": {verdict}" not in line or text not in line:
                fail(f"{label}: line {line!r} should be GPU {i} {verdict} with {text!r}")
        drain = [l for l in lines if l.startswith("scontrol ")]
        if code == 2:
            if len(drain) != 1 or not drain[0].startswith('scontrol update nodename=gpu-node-7 state=drain reason="gpuscale: GPU'):
                fail(f"{label}: expected one drain line for the failing node:\n{p.stdout}")
        elif drain:
            fail(f"{label}: a drain line for a node that did not fail:\n{p.stdout}")
        if len(lines) != len(gpu_lines) + len(drain):
            fail(f"{label}: unexpected stdout lines:\n{p.stdout}")
        node = check_health_doc(load(path, ARGS.health_schema), label, code, expected)
        if lib == "missing":
            if node["nvml"]["missing_symbols"] != ["nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetRemappedRows"]:
                fail(f"{label}: missing symbols {node['nvml']['missing_symbols']}")
            why = node["gpus"][0]["identity"]["unsupported"].get("row_remap", "")
            if "nvmlDeviceGetRemappedRows is missing" not in why:
                fail(f"{label}: row_remap not marked unsupported: {why!r}")
        if name == "not_supported":
            unsup = node["gpus"][0]["identity"]["unsupported"]
            for field in ("serial", "power_w", "processes", "ecc_counts"):
                if field not in unsup:
                    fail(f"{label}: {field} not marked unsupported: {unsup}")
            if "NVML_ERROR_NO_PERMISSION" not in unsup["processes"]:
                fail(f"{label}: processes should say NO_PERMISSION: {unsup['processes']}")
        if name == "nvlink_counters":
            # Unsupported counters are null and named, never zeros: GPU 0 has none, GPU 1 lacks the CRC ones.
            for g, missing in zip(node["gpus"], (["replay", "recovery", "crc_flit", "crc_data"], ["crc_flit", "crc_data"])):
                links = g["counters"]["end"]["nvlink_errors"]
                nulls = sorted({k for link in links for k, v in link.items() if v is None})
                named = sorted(k.split(".", 1)[1] for k in g["identity"]["unsupported"] if k.startswith("nvlink_errors."))
                if len(links) != 18 or nulls != sorted(missing) or named != sorted(missing):
                    fail(f"{label}: GPU {g['index']}: {len(links)} links, null counters {nulls}, named {named}, "
                         f"expected {sorted(missing)}")
            if not any("NVLink errors not judged" in n for n in node["gpus"][0]["notes"]):
                fail(f"{label}: GPU 0 does not say its NVLink errors were not judged: {node['gpus'][0]}")
        if name == "mig":
            mig = node["gpus"][0]["mig"]
            if len(mig) != 2 or mig[0]["peaks"]["applies"] != "slice share" or node["gpus"][1]["mig"]:
                fail(f"{label}: MIG instances not recorded: {mig}")
        if name == "xid79" and node["nvml"]["xid_events"] != "watched":
            fail(f"{label}: Xid events not watched: {node['nvml']['xid_events']}")
        print(f"ok: {label}: exit {code}")

    # A driver too old for the CUDA runtime: judged when this gpuscale has the CUDA backend (a runtime to
    # compare with), a note otherwise.
    cuda = "cuda" in run([ARGS.gpuscale, "--version"]).stdout.split("backends:")[-1]
    path = out_path("health-old-driver.json")
    p = run([ARGS.gpuscale, "health", "--nvml-library", ARGS.fake_lib, "-o", path],
            {"GPUSCALE_FAKE_NVML_SCENARIO": scenario("old_driver")})
    node = load(path, ARGS.health_schema)["nodes"][0]
    if cuda:
        if p.returncode != 2 or "driver 535.104.05 supports CUDA 12.2, older than the CUDA runtime" not in p.stdout:
            fail(f"old driver (CUDA build): exit {p.returncode}: {p.stdout}")
        if node["software"]["runtime_cuda"] is None:
            fail("old driver: the CUDA build reports no runtime version")
    elif p.returncode != 0 or not any("not compared" in n for n in node["node"]["notes"]):
        fail(f"old driver (no CUDA backend): exit {p.returncode}, notes {node['node']['notes']}")
    print(f"ok: old driver ({'judged' if cuda else 'noted'})")

    # No NVML library at all and no GPU backend: its own exit code and one line saying why.
    path = out_path("health-nolib.json")
    p = run([ARGS.gpuscale, "health", "-o", path], {"GPUSCALE_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"})
    lines = p.stdout.splitlines()
    if p.returncode != 3 or len(lines) != 1 or not lines[0].startswith("no GPU to check on ") \
            or "/nonexistent/libnvidia-ml.so.1 cannot be loaded" not in lines[0] or p.stderr.strip():
        fail(f"no library: exit {p.returncode}, stdout {p.stdout!r}, stderr {p.stderr!r}")
    doc = load(path, ARGS.health_schema)
    if doc["verdict"] != "NO_GPU" or doc["nodes"][0]["nvml"]["status"] != "unavailable":
        fail(f"no library: JSON says {doc['verdict']}")
    # The driver refuses NVML (a container's library against another host driver): a failed node.
    p = run([ARGS.gpuscale, "health", "--nvml-library", ARGS.fake_lib, "--drain-command"],
            {"GPUSCALE_FAKE_NVML_SCENARIO": scenario("version_mismatch")})
    if p.returncode != 2 or "NVML library and kernel driver differ in version" not in p.stdout \
            or "state=drain" not in p.stdout:
        fail(f"version mismatch: exit {p.returncode}: {p.stdout}")
    p = run([ARGS.gpuscale, "health", "--nvml-library", ARGS.fake_lib],
            {"GPUSCALE_FAKE_NVML_SCENARIO": scenario("driver_not_loaded")})
    if p.returncode != 3 or "NVML_ERROR_DRIVER_NOT_LOADED" not in p.stdout:
        fail(f"driver not loaded: exit {p.returncode}: {p.stdout}")
    # A thresholds file changes the verdict: an x8 link becomes a failure.
    rules = out_path("rules.json")
    with open(rules, "w") as f:
        json.dump({"pcie": {"width_below_max": "fail"}}, f)
    path = out_path("health-rules.json")
    p = run([ARGS.gpuscale, "health", "--nvml-library", ARGS.fake_lib, "--health-thresholds", rules, "-o", path],
            {"GPUSCALE_FAKE_NVML_SCENARIO": scenario("pcie_x8")})
    doc = load(path, ARGS.health_schema)
    if p.returncode != 2 or doc["nodes"][0]["thresholds"] != rules:
        fail(f"thresholds file: exit {p.returncode}, thresholds {doc['nodes'][0]['thresholds']}")
    print("ok: no library, driver mismatch, driver not loaded, thresholds file")


def case_health_bad_input():
    missing = os.path.join(ARGS.workdir, "no-such-dir", "h.json")
    bad_rules = out_path("bad-rules.json")
    with open(bad_rules, "w") as f:
        f.write('{"pcie": {"width_below_max": "sometimes"}}')
    cases = [
        (["health", "--bogus"], "--bogus"),
        (["health", "--telemetry-interval", "0"], "invalid --telemetry-interval '0'"),
        (["health", "--health-thresholds", "/no/such.json"], "cannot read --health-thresholds file"),
        (["health", "--health-thresholds", bad_rules], "pcie.width_below_max: expected \"fail\", \"warn\" or \"ignore\""),
        (["health", "-o", missing], "does not exist"),
        (["health", "--array-size", "lots"], "--array-size"),
        (["run", "--telemetry-interval", "fast"], "invalid --telemetry-interval 'fast'"),
        (["run", "--health-thresholds", bad_rules], "pcie.width_below_max"),
    ]
    for args, needle in cases:
        p = run([ARGS.gpuscale] + args, {"GPUSCALE_NVML_LIBRARY": ARGS.fake_lib})
        ours = [l for l in p.stderr.splitlines() if l.startswith("gpuscale:")]
        want = 5 if args[0] == "health" else 2
        if p.returncode != want or len(ours) != 1 or needle not in ours[0] or p.stdout.strip():
            fail(f"{args}: exit {p.returncode} (want {want}), stdout {p.stdout!r}, stderr {p.stderr!r}")
    if os.path.exists(missing):
        fail("a health report appeared in a missing directory")
    print(f"ok: {len(cases)} bad inputs, one line each, exit 5 (health) / 2 (run)")


def case_health_launch():
    # Under mpirun (as slurm/health.sbatch launches it: one task per GPU) one task per node checks the
    # node and rank 0 writes one report; every task exits with the node's code.
    path = out_path("health-launch.json")
    p = mpirun(3, ["health", "-o", path, "--drain-command"],
               {"GPUSCALE_NVML_LIBRARY": ARGS.fake_lib, "GPUSCALE_FAKE_NVML_SCENARIO": scenario("xid79")})
    lines = [l for l in p.stdout.splitlines() if l.startswith("GPU ")]
    if p.returncode != 2 or len(lines) != 2 or p.stdout.count("state=drain") != 1:
        fail(f"launch: exit {p.returncode}, stdout {p.stdout!r}, stderr {p.stderr[-2000:]!r}")
    doc = load(path, ARGS.health_schema)
    if len(doc["nodes"]) != 1 or doc["verdict"] != "FAIL":
        fail(f"launch: {len(doc['nodes'])} node reports, verdict {doc['verdict']}")
    print("ok: 3 tasks on one node, one check, one report, exit 2")


def fake_env(name, by_index=True):
    env = {"GPUSCALE_NVML_LIBRARY": ARGS.fake_lib, "GPUSCALE_FAKE_NVML_SCENARIO": scenario(name)}
    if by_index:
        env["GPUSCALE_TEST_FAULT"] = BY_INDEX
    return env


def run_doc(name, np, args, env):
    path = out_path(name)
    p = mpirun(np, ["run", "--backend", "cpu", "--quick", "-o", path] + args, env)
    if p.returncode != 0:
        fail(f"{name}: exit {p.returncode}\n{p.stdout}\n{p.stderr[-3000:]}")
    return e2e_common.load_valid(path, ARGS.schema, ARGS.gpuscale), p


def case_run_cpu_unavailable():
    # The CPU backend has no GPU: telemetry is unavailable even with an NVML library at hand.
    doc, p = run_doc("run-cpu.json", 2, ["--benchmarks", "stream.triad"], fake_env("healthy", by_index=False))
    for r in doc["ranks"]:
        t = r["telemetry"]
        if t["status"] != "unavailable" or t["reason"] != "the CPU backend has no GPU":
            fail(f"rank {r['rank']} telemetry {t}")
    h = doc["health"]
    if h["telemetry"] != "unavailable" or h["gpus"] or h["verdict"] != "UNKNOWN":
        fail(f"health section {h}")
    if any("telemetry" in rv["metrics"] for row in doc["results"] for rv in e2e_common.rank_entries(row)):
        fail("rows carry telemetry without a GPU")
    if "GPU telemetry: unavailable (the CPU backend has no GPU)" not in p.stdout:
        fail(f"summary does not say telemetry is unavailable:\n{p.stdout}")
    doc, _ = run_doc("run-off.json", 1, ["--benchmarks", "stream.triad", "--no-telemetry"], fake_env("healthy"))
    if doc["ranks"][0]["telemetry"]["reason"] != "switched off (--no-telemetry)":
        fail(f"--no-telemetry: {doc['ranks'][0]['telemetry']}")
    print("ok: CPU backend telemetry unavailable; --no-telemetry says so")


def case_run_thermal():
    # Rank 0's fake GPU starts throttling after its first window: the first row is clean, later rows
    # that rank 0 measured are flagged, its verdict fails, rank 1 passes, and the summary says so.
    doc, p = run_doc("run-thermal.json", 2, ["--benchmarks", "stream.copy,stream.triad", "--telemetry-interval", "60s"],
                     fake_env("thermal_midrun"))
    if doc["test_fault"] != BY_INDEX:
        fail("the test mapping is not recorded in test_fault")
    rows = doc["results"]
    first = rows[0]
    if first["metrics"].get("throttled") is not False or first["metrics"]["throttled_ranks"] != []:
        fail(f"first row flagged: {first['metrics']}")
    flagged = [r for r in rows if r["metrics"].get("throttled")]
    if len(flagged) != len(rows) - 1:
        fail(f"{len(flagged)} of {len(rows)} rows flagged, expected all but the first")
    for r in flagged:
        if r["metrics"]["throttled_ranks"] != [0]:
            fail(f"throttled ranks {r['metrics']['throttled_ranks']}")
        t = e2e_common.rank_entries(r)[0]["metrics"]["telemetry"]
        if t["throttle_reasons"] != ["HW_THERMAL"] or t["sm_clock_mhz"]["min"] != 1000 or t["temperature_max_c"] != 94:
            fail(f"rank 0 telemetry {t}")
        if r["status"] != "ok":
            fail("a throttled measurement must stay a valid measurement, flagged")
    gpus = {g["rank"]: g for g in doc["health"]["gpus"]}
    if gpus[0]["verdict"] != "FAIL" or gpus[1]["verdict"] != "PASS":
        fail(f"verdicts {gpus[0]['verdict']} / {gpus[1]['verdict']}")
    if not any(f["check"] == "clock_events" and "HW_THERMAL" in f["message"] for f in gpus[0]["findings"]):
        fail(f"rank 0 findings {gpus[0]['findings']}")
    if doc["health"]["counts"] != {"PASS": 1, "WARN": 0, "FAIL": 1}:
        fail(f"counts {doc['health']['counts']}")
    if f"{len(flagged)} measurement(s) taken while a GPU was throttled" not in p.stdout \
            or "GPU health (available; rules: built-in): 1 FAIL, 0 WARN, 1 PASS" not in p.stdout:
        fail(f"summary:\n{p.stdout}")
    health_part = p.stdout[p.stdout.index("\nGPU health"):p.stdout.index("\nresults:")]
    rep = run([ARGS.gpuscale, "report", out_path_kept("run-thermal.json")])
    if rep.returncode != 0 or health_part not in rep.stdout:
        fail(f"gpuscale report does not show the run's health part:\n{health_part}\nreport:\n{rep.stdout}")
    for r in doc["ranks"]:
        if r["telemetry"]["status"] != "available" or r["telemetry"]["gpu"]["index"] != r["rank"]:
            fail(f"rank {r['rank']} telemetry identity {r['telemetry'].get('gpu', {}).get('index')}")
    print(f"ok: {len(flagged)} of {len(rows)} rows flagged throttled; rank 0 FAIL, rank 1 PASS")


def check_row_energy(r, what):
    """A row's energy fields against its ranks' own (the fake draws 350 W per GPU): the sum, the
    average power in range, work per joule = the groups' figures over that power (to the file's
    rounding of the figures)."""
    m = r["metrics"]
    ranks = e2e_common.rank_entries(r)
    if m.get("energy_scope") != "gpu":
        fail(f"{what}: energy scope {m.get('energy_scope')}")
    js = [e["metrics"].get("energy_j") for e in ranks]
    ws = [e["metrics"].get("avg_power_w") for e in ranks]
    if None in js:
        return False
    # The file keeps 6 significant figures of each.
    if abs(m["energy_j"] - sum(js)) > 1e-4 * sum(js) or not 250 * len(ws) <= m["avg_power_w"] <= 500 * len(ws):
        fail(f"{what}: row energy {m['energy_j']} J / {m['avg_power_w']} W from ranks {js} J / {ws} W")
    if any(not 250 <= w <= 500 for w in ws):
        fail(f"{what}: the ranks' average power {ws}, the fake draws 350 W")
    want = sum(g["value"] for g in e2e_common.group_entries(r)) / m["avg_power_w"] if r["status"] == "ok" else 0
    if r["status"] == "ok" and (abs(m["work_per_j"] - want) > 1e-4 * want or m["work_per_j_unit"] != "GB/J"):
        fail(f"{what}: work per joule {m.get('work_per_j')} {m.get('work_per_j_unit')}, expected {want} GB/J")
    return True


def case_run_energy():
    # Energy per row from the fake's counter (350 W per GPU, integrated over real time), read around
    # each point's timed repetitions (energy_window "timed"). GPU 1's counter restarts at the end of its
    # second window, after its timed repetitions: every row's energy stays valid and never negative (a
    # reset inside a timed span makes it unknown with the reason: tests/unit/health/test_energy_counter.cpp
    # and test_row_energy.cpp), while the run's energy, read over the whole run, is unknown with it.
    doc, p = run_doc("run-energy.json", 2, ["--benchmarks", "stream.copy,stream.triad", "--telemetry-interval", "60s"],
                     fake_env("energy_reset"))
    for i, r in enumerate(doc["results"]):
        for e in e2e_common.rank_entries(r):
            x = e["metrics"].get("energy_j")
            if x is None or x < 0:
                fail(f"row {i} rank {e['rank']}: energy {x} ({r['metrics']})")
        if not check_row_energy(r, f"row {i}"):
            fail(f"row {i}: unknown energy {r['metrics']}")
        if r["metrics"].get("energy_window") != "timed":
            fail(f"row {i}: energy_window {r['metrics'].get('energy_window')}, expected timed")
    hosts = doc["health"]["energy"]["hosts"]
    if doc["health"]["energy"]["scope"] != "gpu" or len(hosts) != 1 or hosts[0]["units"] != 2 \
            or "went backwards" not in hosts[0].get("invalid", ""):
        fail(f"the run's energy: {doc['health']['energy']}")
    if "Energy over the run (GPUs, NVML): unknown:" not in p.stdout:
        fail(f"the summary does not give the run's energy:\n{p.stdout[-1500:]}")
    # Without the reset: the run's energy is the GPUs' over the run, and the summary says it.
    doc, p = run_doc("run-energy-ok.json", 2, ["--benchmarks", "stream.triad", "--telemetry-interval", "60s"],
                     fake_env("healthy"))
    for i, r in enumerate(doc["results"]):
        if not check_row_energy(r, f"healthy row {i}"):
            fail(f"healthy row {i}: unknown energy {r['metrics']}")
    e = doc["health"]["energy"]
    if not (e["energy_j"] > 0 and 500 <= e["avg_power_w"] <= 1000) or "Energy over the run (GPUs, NVML): " not in p.stdout:
        fail(f"the run's energy: {e}\n{p.stdout[-1500:]}")
    print(f"ok: every row's energy over its timed repetitions, the run's unknown with the reset; run {e['energy_j']:.0f} J")


def case_run_vgpu():
    # A vGPU guest (the fake NVML says mode 2 and names each GPU by its vGPU type): every rank's
    # identity says so, and every row is flagged virtual_gpu naming the profiles. (The CPU backend has
    # no peaks, so what becomes of a MIG-backed profile's peak, kept or unknown, never scaled by an
    # invented share, is in the unit test.)
    doc, p = run_doc("run-vgpu.json", 2, ["--benchmarks", "stream.triad", "--telemetry-interval", "60s"], fake_env("vgpu"))
    modes = [r["telemetry"]["gpu"]["virtualization_mode"] for r in doc["ranks"]]
    if modes != ["vgpu_guest", "vgpu_guest"]:
        fail(f"virtualization modes {modes}")
    for r in doc["results"]:  # every row holds both ranks (at 1 GPU, as two groups)
        flags = {f["kind"]: f["reason"] for f in r.get("flags", [])}
        if r["status"] != "ok" or "measured on a vGPU (H100XM-1-10C, H100XM-40C)" not in flags.get("virtual_gpu", ""):
            fail(f"row at {r['gpu_count']}: {r['status']}, flags {flags}")
    # Without vGPUs (the healthy fake), no row says so.
    doc, _ = run_doc("run-novgpu.json", 1, ["--benchmarks", "stream.triad", "--telemetry-interval", "60s"], fake_env("healthy"))
    if any(f["kind"] == "virtual_gpu" for r in doc["results"] for f in r.get("flags", [])):
        fail("a whole GPU's row flagged virtual_gpu")
    if doc["ranks"][0]["telemetry"]["gpu"]["virtualization_mode"] != "none":
        fail(f"the healthy fake's mode: {doc['ranks'][0]['telemetry']['gpu']['virtualization_mode']}")
    print("ok: vGPU guest named per rank, its rows flagged; whole GPUs not")


def case_run_sampling():
    # The sampler runs during each point at the chosen period; a steady GPU passes. It runs on idle CPU
    # time only (SCHED_IDLE), so the benchmark leaves a core free here: one rank, one thread. Another
    # test (ctest -j2) may still take that core for the whole run and starve the sampler: a run without
    # a sample between the snapshots is tried again (a sampler that never samples fails all three).
    for attempt in range(1, 4):
        doc, _ = run_doc("run-sampling.json", 1, ["--benchmarks", "stream.triad", "--array-size", "64M", "--reps",
                                                  "20", "--threads", "1", "--telemetry-interval", "10ms"],
                         fake_env("healthy"))
        samples = [rv["metrics"]["telemetry"]["samples"] for row in doc["results"] for rv in e2e_common.rank_entries(row)]
        if max(samples) > 2:
            break
        print(f"attempt {attempt}: no sample between the snapshots at 10 ms: {samples}", flush=True)
    else:
        fail(f"no sample between the snapshots at 10 ms in 3 runs: {samples}")
    # The row's peak device memory is NVML's "used" (the fake's default state: 1234567168 bytes).
    peaks = {rv["metrics"]["telemetry"].get("memory_used_max_bytes") for row in doc["results"]
             for rv in e2e_common.rank_entries(row)}
    if peaks != {1234567168}:
        fail(f"rows' telemetry.memory_used_max_bytes {peaks}, expected the fake's 1234567168")
    if doc["health"]["gpus"][0]["sampler"]["ticks"] != max(samples) - 2:
        fail(f"sampler ticks {doc['health']['gpus'][0]['sampler']} for samples {samples}")
    h = doc["health"]
    if h["verdict"] != "PASS" or h["interval_ms"] != 10 or h["consistency"]:
        fail(f"health {h['verdict']} interval {h['interval_ms']} consistency {h['consistency']}")
    if doc["plan"]["options"]["telemetry"] != {"enabled": True, "interval_us": 10000}:
        fail(f"plan options {doc['plan']['options']['telemetry']}")
    print(f"ok: samples per rank and row {samples}")


def case_run_consistency():
    # Four ranks; rank 3's GPU has a 500 W power limit: the run lists it.
    doc, p = run_doc("run-consistency.json", 4, ["--benchmarks", "stream.triad"], fake_env("consistency"))
    inc = doc["health"]["consistency"]
    if len(inc) != 1 or inc[0]["field"] != "power_limit_w" or inc[0]["differing"][0]["ranks"] != [3]:
        fail(f"consistency {inc}")
    if "WARN: power_limit_w differs: 700.0 on 3 ranks; 500.0 on" not in p.stdout:
        fail(f"summary does not list the odd rank:\n{p.stdout}")
    print("ok: the rank with another power limit is listed")


def case_slurm_healthcheck():
    # scripts/slurm-healthcheck as Slurm runs it, with a stand-in scontrol that records its arguments.
    bindir = os.path.join(ARGS.workdir, "fake-bin")
    os.makedirs(bindir, exist_ok=True)
    calls = os.path.join(ARGS.workdir, "scontrol-calls.txt")
    with open(os.path.join(bindir, "scontrol"), "w") as f:
        f.write(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done >> {calls}\necho --- >> {calls}\n')
    os.chmod(os.path.join(bindir, "scontrol"), 0o755)
    script = os.path.join(ARGS.source, "scripts", "slurm-healthcheck")

    def check(name, scenario_name, flags, env_extra, want_rc, want_calls, needle):
        if os.path.exists(calls):
            os.remove(calls)
        env = {"PATH": bindir + ":" + os.environ["PATH"], "GPUSCALE_BIN": ARGS.gpuscale, "SLURMD_NODENAME": "n17",
               "GPUSCALE_HEALTHCHECK_CONF": "/nonexistent/gpuscale-healthcheck",
               "GPUSCALE_NVML_LIBRARY": ARGS.fake_lib}
        if scenario_name:
            env["GPUSCALE_FAKE_NVML_SCENARIO"] = scenario(scenario_name)
        env.update(env_extra)
        p = run([script] + flags, env)
        got = open(calls).read().split("---\n")[:-1] if os.path.exists(calls) else []
        if p.returncode != want_rc or len(got) != len(want_calls) or needle not in p.stdout:
            fail(f"{name}: exit {p.returncode} (want {want_rc}), scontrol calls {got} (want {want_calls}), "
                 f"stdout {p.stdout!r}, stderr {p.stderr!r}")
        for call, want in zip(got, want_calls):
            if call.splitlines() != want:
                fail(f"{name}: scontrol {call.splitlines()}, expected {want}")
        print(f"ok: {name}")

    remap = ["update", "nodename=n17", "state=drain",
             "reason=gpuscale: GPU 0 row remapping pending (the GPU needs a reset to apply it)"]
    check("failing node, draining off", "remap_pending", [], {}, 0, [], "not draining it (GPUSCALE_HEALTH_DRAIN=0)")
    check("failing node, GPUSCALE_HEALTH_DRAIN=1", "remap_pending", [], {"GPUSCALE_HEALTH_DRAIN": "1"}, 0, [remap],
          "draining n17: gpuscale: GPU 0 row remapping pending")
    check("prolog, failing node", "xid79", ["--prolog", "--drain"], {}, 1,
          [["update", "nodename=n17", "state=drain", "reason=gpuscale: GPU 1 Xid 79 (GPU has fallen off the bus)"]],
          "GPU 1 00000000:28:00.0 NVIDIA H100 80GB HBM3")
    check("healthy node", "healthy", ["--drain"], {}, 0, [], "GPU 0 00000000:18:00.0")
    check("warnings only", "pcie_x8", ["--drain", "--prolog"], {}, 0, [], "warnings only: the node stays in service")
    check("no GPU, not drained by default", None, ["--drain"], {"GPUSCALE_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"},
          0, [], "nothing to judge")
    check("no GPU, --drain-no-gpu", None, ["--drain-no-gpu"], {"GPUSCALE_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"},
          0, [["update", "nodename=n17", "state=drain",
               "reason=gpuscale: no GPU to check (driver not loaded or GPUs gone)"]], "draining n17")
    report = out_path("healthcheck-report.json")
    check("report file", "healthy", ["--report", report], {}, 0, [], "PASS")
    load(report, ARGS.health_schema)
    check("no gpuscale", "healthy", ["--drain"], {"GPUSCALE_BIN": "/nonexistent/gpuscale"}, 0, [], "cannot run gpuscale")


def parse():
    global ARGS
    # With parser()'s --gpuscale, --schema (the result schema), --workdir, --case.
    ARGS = e2e_common.parse_args("--mpiexec", "--fake-lib", "--fake-missing-lib", "--scenarios", "--health-schema",
                                 "--source")
    return ARGS


def main():
    cores = e2e_common.CORES
    cases = {"health": (case_health, {}), "health_bad_input": (case_health_bad_input, {}),
             "health_launch": (case_health_launch, cores), "run_cpu_unavailable": (case_run_cpu_unavailable, cores),
             "run_thermal": (case_run_thermal, cores), "run_sampling": (case_run_sampling, cores),
             "run_consistency": (case_run_consistency, cores),
             "run_energy": (case_run_energy, cores), "run_vgpu": (case_run_vgpu, cores), "slurm_healthcheck": (case_slurm_healthcheck, {})}
    e2e_common.run_case("e2e_health_", {"TIMEOUT": 300, "LABELS": "e2e"}, cases, parse)


if __name__ == "__main__":
    main()
