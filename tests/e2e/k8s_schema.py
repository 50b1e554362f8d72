#!/usr/bin/env python3
"""Every manifest in k8s/ against Kubernetes 1.36's OpenAPI schema, with the pinned checker of
tests/schema_checkers (check-manifests.mjs: kubernetes-models and @kubernetes/client-node from the npm
registry, installed by `npm ci` in the ctest fixture schema_checkers_npm). Every object of every
k8s/*.yaml must pass; copies with one field misspelled, one value of the wrong type or outside its
enum, or a kind Kubernetes does not have must each be refused, naming the problem.

  k8s_schema.py --node NODE --checker DIR/check-manifests.mjs --source SRC --workdir DIR
"""
import argparse
import copy
import glob
import os
import subprocess
import sys

import yaml

ARGS = None

# (file, the object's kind, path of keys and indices to a key, its new name): a misspelling each.
MISSPELLINGS = [
    ("job.yaml", "Job", ["spec", "template", "spec", "restartPolicy"], "restartPolicyy"),
    ("results-pvc.yaml", "PersistentVolumeClaim", ["spec", "accessModes"], "accesModes"),
    ("mpijob.yaml", "MPIJob", ["spec", "mpiReplicaSpecs", "Worker", "template", "spec", "containers", 0,
                               "volumeMounts"], "volumeMount"),
    ("continuous-validation.yaml", "PriorityClass", ["preemptionPolicy"], "preemptPolicy"),
    ("continuous-validation.yaml", "CronJob", ["spec", "jobTemplate", "spec", "template", "spec",
                                               "priorityClassName"], "priorityClass"),
    ("continuous-validation.yaml", "CronJob", ["spec", "concurrencyPolicy"], "concurencyPolicy"),
    ("continuous-validation.yaml", "ClusterRoleBinding", ["roleRef", "apiGroup"], "apigroup"),
]
# (file, kind, path to a value, the value planted, words the refusal must hold).
BAD_VALUES = [
    ("job.yaml", "Job", ["spec", "backoffLimit"], "none", "must be integer"),
    ("job.yaml", "Job", ["spec", "template", "spec", "restartPolicy"], "Sometimes", "allowed values"),
    ("continuous-validation.yaml", "PriorityClass", ["value"], "lowest", "must be integer"),
    ("mpijob-mig.yaml", "MPIJob", ["spec", "mpiReplicaSpecs", "Launcher", "template", "spec", "containers", 0,
                                   "name"], None, "required property name"),
]


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def manifests():
    files = sorted(glob.glob(os.path.join(ARGS.source, "k8s", "*.yaml")))
    if not files:
        fail(f"no manifests in {ARGS.source}/k8s")
    return files


def check(files):
    cmd = [ARGS.node, ARGS.checker] + files
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return p


def load(name):
    with open(os.path.join(ARGS.source, "k8s", name)) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def plant(name, kind, path, change, tag):
    """A copy of k8s/NAME with `change(parent, key)` applied at `path` in its object of `kind`; its path."""
    docs = copy.deepcopy(load(name))
    (obj,) = [d for d in docs if d["kind"] == kind]
    parent = obj
    for k in path[:-1]:
        parent = parent[k]
    if path[-1] not in (parent if isinstance(parent, dict) else range(len(parent))):
        fail(f"k8s/{name}: {kind} has no {'/'.join(map(str, path))} to plant into (the manifest changed: update the test)")
    change(parent, path[-1])
    out = os.path.join(ARGS.workdir, f"{tag}-{name}")
    with open(out, "w") as f:
        yaml.safe_dump_all(docs, f, sort_keys=False)
    return out


def refused(out, words, what):
    p = check([out])
    lines = [l for l in p.stderr.splitlines() if words in l]
    if p.returncode != 1 or not lines:
        fail(f"{what}: exit {p.returncode} (want 1), no line with {words!r}: {p.stderr.strip()[:600]}")
    print(f"ok: {what}: {lines[0]}")


def case_all_pass():
    files = manifests()
    p = check(files)
    print(p.stdout + p.stderr)
    if p.returncode != 0:
        fail(f"the manifests in k8s/ do not pass Kubernetes 1.36's schema (exit {p.returncode})")
    for f in files:
        for d in load(os.path.basename(f)):
            line = f"{f}: {d['apiVersion']} {d['kind']} {d['metadata']['name']}"
            if not any(l.startswith(line) and "valid (Kubernetes 1.36)" in l for l in p.stdout.splitlines()):
                fail(f"no 'valid' line for {line}: not every object was checked")


def case_misspelled():
    for i, (name, kind, path, new) in enumerate(MISSPELLINGS):
        def rename(parent, key, new=new):
            parent[new] = parent.pop(key)
        out = plant(name, kind, path, rename, f"misspelled{i}")
        refused(out, f'unknown field "{new}"', f"k8s/{name} {kind} {path[-1]} -> {new}")


def case_bad_values():
    for i, (name, kind, path, value, words) in enumerate(BAD_VALUES):
        def put(parent, key, value=value):
            if value is None:
                del parent[key]
            else:
                parent[key] = value
        out = plant(name, kind, path, put, f"badvalue{i}")
        refused(out, words, f"k8s/{name} {kind} {'/'.join(map(str, path))} = {value!r}")


def case_unknown_kind():
    def rename_kind(parent, key):
        parent[key] = "CronJobs"
    out = plant("continuous-validation.yaml", "CronJob", ["kind"], rename_kind, "kind")
    refused(out, "no batch/v1 CronJobs in the Kubernetes 1.36 schema", "kind CronJobs")


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    for a in ("--node", "--checker", "--source", "--workdir"):
        ap.add_argument(a, required=True)
    ARGS = ap.parse_args()
    os.makedirs(ARGS.workdir, exist_ok=True)
    for case in (case_all_pass, case_misspelled, case_bad_values, case_unknown_kind):
        case()
    print("PASS: k8s manifests against Kubernetes 1.36's schema; misspellings and bad values refused")


if __name__ == "__main__":
    main()
