#!/usr/bin/env python3
"""k8s/continuous-validation.yaml: the CronJob's scheduling (lowest priority, never preempting, one pod
per idle node, its node's name from the downward API), its RBAC (get and patch of nodes, patch of
nodes/status, nothing else), and the node-check script of its ConfigMap run for real: against a fake
Kubernetes API server (HTTPS on 127.0.0.1, the ServiceAccount's token and CA), with the real gpuscale
run on the CPU backend under mpirun (`--backend cuda` turned into `cpu`, nothing else changed) and
`gpuscale health` played by a stand-in that prints a line and exits with the code a case picks
(health's own tests are e2e_health). Each case checks the label and the condition the script patched,
the .prom file it left in the textfile folder, or that it wrote nothing when stopped.

No cluster here: docs/kubernetes.md lists what stays untested.
"""
import http.server
import json
import os
import signal
import ssl
import subprocess
import sys
import threading
import time

import yaml

import e2e_common
from e2e_common import fail, run

ARGS = None
MANIFEST = "k8s/continuous-validation.yaml"
NODE = "gpu-node-7"
TOKEN = "test-token-123"


def objects():
    with open(os.path.join(ARGS.source, MANIFEST)) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def one(objs, kind):
    found = [d for (k, _), d in objs.items() if k == kind]
    if len(found) != 1:
        fail(f"{MANIFEST}: {len(found)} objects of kind {kind}, want 1")
    return found[0]


def case_scheduling():
    """Lowest priority, never preempting; one pod per node holding every GPU; the names agree."""
    objs = objects()
    pc, cron = one(objs, "PriorityClass"), one(objs, "CronJob")
    if not pc["value"] < 0 or pc.get("preemptionPolicy") != "Never" or pc.get("globalDefault", False):
        fail(f"PriorityClass: value {pc['value']} (want < 0), preemptionPolicy {pc.get('preemptionPolicy')} (want Never)")
    if not pc.get("description"):
        fail("PriorityClass: no description")
    job = cron["spec"]["jobTemplate"]["spec"]
    pod = job["template"]["spec"]
    if pod.get("priorityClassName") != pc["metadata"]["name"]:
        fail(f"pod priorityClassName {pod.get('priorityClassName')}, the PriorityClass is {pc['metadata']['name']}")
    if cron["spec"].get("concurrencyPolicy") != "Forbid" or job.get("backoffLimit") != 0:
        fail("CronJob: want concurrencyPolicy Forbid and backoffLimit 0")
    anti = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    labels = job["template"]["metadata"]["labels"]
    if not any(t["topologyKey"] == "kubernetes.io/hostname" and
               all(labels.get(k) == v for k, v in t["labelSelector"]["matchLabels"].items()) for t in anti):
        fail("pods are not kept one per node (required anti-affinity on kubernetes.io/hostname against their own label)")
    (c,) = pod["containers"]
    env = {e["name"]: e for e in c["env"]}
    if env.get("NODE_NAME", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") != "spec.nodeName":
        fail("NODE_NAME does not come from the downward API's spec.nodeName")
    gpus = c["resources"]["limits"].get("nvidia.com/gpu")
    if str(gpus) != env["GPUS"]["value"]:
        fail(f"nvidia.com/gpu {gpus} but GPUS {env['GPUS']['value']}: the pod must hold every GPU it runs on")
    if job.get("parallelism") != job.get("completions"):
        fail("parallelism and completions differ")
    vols = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: vols[m["name"]] for m in c["volumeMounts"]}
    if "hostPath" not in mounts.get("/textfile", {}):
        fail("/textfile (the textfile collector's folder) is not a hostPath")
    if mounts.get("/opt/node-check", {}).get("configMap", {}).get("name") != one(objs, "ConfigMap")["metadata"]["name"]:
        fail("the script's folder is not the ConfigMap's")
    if c["command"][-1] != "/opt/node-check/node-check.sh" or "node-check.sh" not in one(objs, "ConfigMap")["data"]:
        fail(f"the container runs {c['command']}, not the ConfigMap's node-check.sh")
    if pod.get("serviceAccountName") != one(objs, "ServiceAccount")["metadata"]["name"]:
        fail("the pod does not run as the manifest's ServiceAccount")
    print(f"ok: priority {pc['value']}, {job['parallelism']} pods a round, one per node, {gpus} GPUs each")


def case_rbac():
    """The ClusterRole grants exactly get/patch on nodes and patch on nodes/status, bound to the pod's account."""
    objs = objects()
    role, binding, sa = one(objs, "ClusterRole"), one(objs, "ClusterRoleBinding"), one(objs, "ServiceAccount")
    grants = set()
    for r in role["rules"]:
        if r.get("apiGroups") != [""] or set(r) - {"apiGroups", "resources", "verbs"}:
            fail(f"ClusterRole rule beyond the core group's resources and verbs: {r}")
        grants |= {(res, v) for res in r["resources"] for v in r["verbs"]}
    want = {("nodes", "get"), ("nodes", "patch"), ("nodes/status", "patch")}
    if grants != want:
        fail(f"ClusterRole grants {sorted(grants)}, want exactly {sorted(want)}")
    if binding["roleRef"] != {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role["metadata"]["name"]}:
        fail(f"ClusterRoleBinding refers to {binding['roleRef']}")
    if binding["subjects"] != [{"kind": "ServiceAccount", "name": sa["metadata"]["name"], "namespace": sa["metadata"]["namespace"]}]:
        fail(f"ClusterRoleBinding subjects {binding['subjects']}")
    print(f"ok: {sorted(grants)}")


class FakeApi:
    """An HTTPS API server on 127.0.0.1 that knows one node: GET returns it, PATCH is recorded (and
    answered 403 when `refuse` names the path's suffix)."""

    def __init__(self, workdir, conditions=(), refuse=None):
        self.requests, self.conditions, self.refuse = [], list(conditions), refuse
        cert, key = os.path.join(workdir, "api.crt"), os.path.join(workdir, "api.key")
        run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
             "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert], echo=False).check_returncode()
        api = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def answer(self, code, body):
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                api.requests.append(("GET", self.path, dict(self.headers), None))
                if self.path != f"/api/v1/nodes/{NODE}":
                    return self.answer(404, {"kind": "Status", "code": 404})
                self.answer(200, {"kind": "Node", "metadata": {"name": NODE}, "status": {"conditions": api.conditions}})

            def do_PATCH(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                api.requests.append(("PATCH", self.path, dict(self.headers), body))
                if api.refuse and self.path.endswith(api.refuse):
                    return self.answer(403, {"kind": "Status", "code": 403, "message": "forbidden"})
                self.answer(200, {"kind": "Node", "metadata": {"name": NODE}})

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url, self.cert = f"https://127.0.0.1:{self.server.server_address[1]}", cert

    def close(self):
        self.server.shutdown()


def setup(name):
    """The case's folders, the script from the ConfigMap, the stand-in gpuscale and the account files."""
    base = e2e_common.work("k8s-node-check", name)
    subprocess.run(["rm", "-rf", base], check=True)
    dirs = {d: os.path.join(base, d) for d in ("bin", "work", "textfile", "sa")}
    for d in dirs.values():
        os.makedirs(d)
    script = os.path.join(base, "node-check.sh")
    with open(script, "w") as f:
        f.write(one(objects(), "ConfigMap")["data"]["node-check.sh"])
    # gpuscale: health is played (FAKE_HEALTH_RC, FAKE_HEALTH_LINE); everything else is the real one,
    # with the CUDA backend asked for turned into the CPU backend.
    stand_in = os.path.join(dirs["bin"], "gpuscale")
    with open(stand_in, "w") as f:
        f.write(f"""#!/bin/bash
if [ "$1" = health ]; then echo "$FAKE_HEALTH_LINE"; exit "$FAKE_HEALTH_RC"; fi
args=(); for a in "$@"; do [ "$a" = cuda ] && a=cpu; args+=("$a"); done
exec {ARGS.gpuscale} "${{args[@]}}"
""")
    os.chmod(stand_in, 0o755)
    with open(os.path.join(dirs["sa"], "token"), "w") as f:
        f.write(TOKEN)
    return script, dirs


def start(name, health_rc, api, health_line="GPU 0: OK"):
    script, dirs = setup(name)
    with open(api.cert) as src, open(os.path.join(dirs["sa"], "ca.crt"), "w") as dst:
        dst.write(src.read())
    env = dict(os.environ, PATH=f"{dirs['bin']}:{os.path.dirname(ARGS.mpiexec)}:{os.environ['PATH']}",
               NODE_NAME=NODE, GPUS="2", WORK_DIR=dirs["work"], TEXTFILE_DIR=dirs["textfile"], SA_DIR=dirs["sa"],
               KUBE_API=api.url, FAKE_HEALTH_RC=str(health_rc), FAKE_HEALTH_LINE=health_line)
    print(f"+ bash node-check.sh (health exits {health_rc})", flush=True)
    return subprocess.Popen(["bash", script], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), dirs


def finish(p, timeout=300):
    out, err = p.communicate(timeout=timeout)
    print(out + err)
    return p.returncode, out, err


def verdict_patches(api):
    """(label patch, condition patch), each (headers, body), after checking the calls made."""
    calls = [(m, path) for m, path, _, _ in api.requests]
    want = [("GET", f"/api/v1/nodes/{NODE}"), ("PATCH", f"/api/v1/nodes/{NODE}"), ("PATCH", f"/api/v1/nodes/{NODE}/status")]
    if calls != want:
        fail(f"API calls {calls}, want {want}")
    for _, _, headers, _ in api.requests:
        if headers.get("Authorization") != f"Bearer {TOKEN}":
            fail(f"call without the ServiceAccount token: {headers.get('Authorization')}")
    (_, _, lh, label), (_, _, ch, cond) = api.requests[1:]
    if lh.get("Content-Type") != "application/merge-patch+json":
        fail(f"label patch Content-Type {lh.get('Content-Type')}")
    if ch.get("Content-Type") != "application/strategic-merge-patch+json":
        fail(f"condition patch Content-Type {ch.get('Content-Type')} (conditions merge by type only in a strategic merge)")
    return label, cond


def check_verdict(api, verdict, status, reason):
    label, cond = verdict_patches(api)
    if label != {"metadata": {"labels": {"gpuscale.dev/verdict": verdict}}}:
        fail(f"label patch {label}, want verdict {verdict}")
    (c,) = cond["status"]["conditions"]
    if (c["type"], c["status"], c["reason"]) != ("GpuscaleHealthy", status, reason):
        fail(f"condition {c}, want GpuscaleHealthy {status} {reason}")
    for k in ("lastHeartbeatTime", "lastTransitionTime"):
        if not time.strptime(c[k], "%Y-%m-%dT%H:%M:%SZ"):
            fail(f"condition {k} {c[k]!r}")
    return c


def case_pass():
    """Healthy node, a real short run: verdict pass, the condition True, the run's metrics in the textfile folder."""
    api = FakeApi(e2e_common.work())
    try:
        p, dirs = start("pass", 0, api)
        rc, out, err = finish(p)
        if rc != 0:
            fail(f"script exit {rc}")
        c = check_verdict(api, "pass", "True", "Passed")
        if "gpuscale run exit 0" not in c["message"] or "GPU 0: OK" not in c["message"]:
            fail(f"condition message {c['message']!r} does not give the exit codes and health's lines")
        files = os.listdir(dirs["textfile"])
        if files != ["gpuscale-node-check.prom"]:
            fail(f"textfile folder holds {files}, want gpuscale-node-check.prom alone (no temporary file left)")
        with open(os.path.join(dirs["textfile"], files[0])) as f:
            prom = f.read()
        if "gpuscale_run_valid{" not in prom or not prom.endswith("# EOF\n"):
            fail(f"the .prom file is not the run's OpenMetrics: {prom[:300]!r}")
        e2e_common.load_valid(os.path.join(dirs["work"], "run.json"), ARGS.schema, ARGS.gpuscale)
    finally:
        api.close()
    print("ok: pass, condition True, metrics written")


def case_fail():
    """Health fails: no run, verdict fail, the condition False with health's line, its transition now."""
    old = {"type": "GpuscaleHealthy", "status": "True", "reason": "Passed", "lastTransitionTime": "2020-01-01T00:00:00Z"}
    api = FakeApi(e2e_common.work(), conditions=[old])
    try:
        p, dirs = start("fail", 2, api, health_line="GPU 3: FAIL bandwidth 40% of peak")
        rc, _, _ = finish(p)
        if rc != 0:
            fail(f"script exit {rc}")
        c = check_verdict(api, "fail", "False", "Failed")
        if "GPU 3: FAIL" not in c["message"] or "gpuscale run exit -1" not in c["message"]:
            fail(f"condition message {c['message']!r}")
        if c["lastTransitionTime"] == old["lastTransitionTime"]:
            fail("status changed True -> False but lastTransitionTime kept the old time")
        if os.listdir(dirs["textfile"]) or os.path.exists(os.path.join(dirs["work"], "run.json")):
            fail("a node that failed health was still run, or metrics written")
    finally:
        api.close()
    print("ok: fail, no run")


def case_warn_keeps_transition():
    """Warnings: verdict warn, the condition still True, and its transition time kept from before."""
    old = {"type": "GpuscaleHealthy", "status": "True", "reason": "Passed", "lastTransitionTime": "2020-01-01T00:00:00Z"}
    api = FakeApi(e2e_common.work(), conditions=[old])
    try:
        p, _ = start("warn", 1, api, health_line="GPU 1: WARN temperature")
        rc, _, _ = finish(p)
        c = check_verdict(api, "warn", "True", "Warnings")
        if rc != 0 or c["lastTransitionTime"] != old["lastTransitionTime"]:
            fail(f"exit {rc}; lastTransitionTime {c['lastTransitionTime']}, want the old {old['lastTransitionTime']}")
    finally:
        api.close()
    print("ok: warn, transition kept")


def case_unknown():
    """Health could not check (exit 5): verdict unknown, the condition Unknown, no run."""
    api = FakeApi(e2e_common.work())
    try:
        p, _ = start("unknown", 5, api, health_line="gpuscale: health: cannot start MPI")
        rc, _, _ = finish(p)
        if rc != 0:
            fail(f"script exit {rc}")
        check_verdict(api, "unknown", "Unknown", "CouldNotCheck")
    finally:
        api.close()
    print("ok: unknown")


def case_preempted():
    """SIGTERM (preemption) while the run measures: gpuscale stops, and no verdict is written."""
    api = FakeApi(e2e_common.work())
    try:
        p, dirs = start("preempted", 0, api)
        journal_seen = time.time() + 120
        while time.time() < journal_seen and not os.path.exists(os.path.join(dirs["work"], "run.json")):
            if p.poll() is not None:
                fail("the script ended before the run started")
            time.sleep(0.1)
        time.sleep(1)
        p.send_signal(signal.SIGTERM)
        rc, out, _ = finish(p, timeout=120)
        if rc != 0 or "no verdict" not in out:
            fail(f"stopped script: exit {rc}, want 0 and 'no verdict'")
        if api.requests:
            fail(f"a stopped round still called the API: {[(m, u) for m, u, _, _ in api.requests]}")
        if os.listdir(dirs["textfile"]):
            fail(f"a stopped round left metrics: {os.listdir(dirs['textfile'])}")
        with open(os.path.join(dirs["work"], "run.json")) as f:
            s = json.load(f)["summary"]
        if s["complete"] or s["exit_code"] != 4:
            fail(f"the run was not stopped by the signal: summary {s}")
    finally:
        api.close()
    print("ok: preempted, node untouched")


def case_api_refused():
    """The API server refuses the status patch: the script says so in one line and exits non-zero."""
    api = FakeApi(e2e_common.work(), refuse="/status")
    try:
        p, _ = start("refused", 2, api)
        rc, _, err = finish(p)
        lines = err.strip().splitlines()
        if rc == 0 or len(lines) != 1 or "cannot set condition GpuscaleHealthy on node" not in lines[0] or "403" not in lines[0]:
            fail(f"refused patch: exit {rc}, stderr {err!r}")
    finally:
        api.close()
    print("ok: refusal reported")


def parse():
    global ARGS
    ARGS = e2e_common.parse_args("--mpiexec", "--source")
    return ARGS


def main():
    runs = {**e2e_common.CORES, "TIMEOUT": 300}
    cases = {"scheduling": (case_scheduling, {}), "rbac": (case_rbac, {}), "pass": (case_pass, runs),
             "fail": (case_fail, {}), "warn": (case_warn_keeps_transition, runs), "unknown": (case_unknown, {}),
             "preempted": (case_preempted, runs), "api_refused": (case_api_refused, {})}
    e2e_common.run_case("k8s_node_check_", {"TIMEOUT": 120, "LABELS": "k8s"}, cases, parse)


if __name__ == "__main__":
    sys.exit(main())
