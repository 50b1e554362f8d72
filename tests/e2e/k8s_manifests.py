#!/usr/bin/env python3
"""Checks k8s/: the manifests parse and carry what Kubernetes, the MPI Operator (kubeflow.org/v2beta1)
and the NVIDIA device plugin need; their gpuscale command lines are ones this gpuscale accepts; the GPU
counts agree with the rank counts; and k8s/Dockerfile builds gpuscale the way the project does.

No cluster and no container build here: docs/kubernetes.md lists what stays untested.
"""
import argparse
import os
import re
import subprocess
import sys

import yaml

ARGS = None
problems = []


def check(ok, msg):
    if not ok:
        problems.append(msg)
    return ok


def load(name):
    with open(os.path.join(ARGS.source, "k8s", name)) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    check(len(docs) == 1, f"{name}: expected one document, found {len(docs)}")
    return docs[0]


def containers(pod_template, where):
    spec = pod_template.get("spec", {})
    cs = spec.get("containers") or []
    check(len(cs) >= 1, f"{where}: no containers")
    for c in cs:
        check(isinstance(c.get("name"), str) and c["name"], f"{where}: a container has no name")
        check(isinstance(c.get("image"), str) and c["image"], f"{where}: container {c.get('name')} has no image")
    return spec, cs


def run_flags():
    """Long and short options `gpuscale run` accepts, from its --help."""
    p = subprocess.run([ARGS.gpuscale, "run", "--help"], capture_output=True, text=True)
    check(p.returncode == 0, "gpuscale run --help failed")
    return set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", p.stdout))


def check_mpirun_gpuscale(cmd, where, ranks, flags, volumes_at):
    """cmd: mpirun ... gpuscale run ...; returns nothing, records problems."""
    check(isinstance(cmd, list) and all(isinstance(x, str) for x in cmd), f"{where}: command must be a list of strings")
    check(cmd[:1] == ["mpirun"], f"{where}: command does not start with mpirun: {cmd}")
    if check("-np" in cmd, f"{where}: mpirun without -np"):
        np = cmd[cmd.index("-np") + 1]
        check(np == str(ranks), f"{where}: mpirun -np {np}, but the GPUs requested give {ranks} ranks")
    if not check("gpuscale" in cmd, f"{where}: command does not run gpuscale"):
        return
    g = cmd.index("gpuscale")
    check(cmd[g + 1:g + 2] == ["run"], f"{where}: command runs gpuscale {cmd[g + 1:g + 2]}, not gpuscale run")
    args = cmd[g + 2:]
    for a in args:
        if a.startswith("-"):
            check(a.split("=")[0] in flags, f"{where}: gpuscale run has no option {a}")
    if check("-o" in args, f"{where}: gpuscale run without -o: the result file would stay in the pod"):
        out = args[args.index("-o") + 1]
        check(any(out.startswith(v.rstrip("/") + "/") for v in volumes_at),
              f"{where}: result file {out} is not on a mounted volume ({volumes_at})")
    check("--backend" in args and args[args.index("--backend") + 1] == "cuda",
          f"{where}: a GPU manifest must ask for --backend cuda (auto would fall back to the CPU silently)")


def mounts(spec, container):
    vols = {v["name"]: v for v in spec.get("volumes") or []}
    out = {}
    for m in container.get("volumeMounts") or []:
        check(m.get("name") in vols, f"volumeMount {m.get('name')} has no volume")
        out[m.get("mountPath")] = vols.get(m.get("name"), {})
    return out


def check_shm_and_results(spec, c, where):
    ms = mounts(spec, c)
    check(ms.get("/dev/shm", {}).get("emptyDir", {}).get("medium") == "Memory",
          f"{where}: /dev/shm is not a memory emptyDir (NCCL needs more than the default 64 MiB)")
    check("persistentVolumeClaim" in ms.get("/results", {}), f"{where}: /results is not a persistent volume claim")
    return [p for p in ms if p != "/dev/shm"]


def check_mpijob(name, gpu_resource, flags):
    d = load(name)
    where = f"k8s/{name}"
    check(d.get("apiVersion") == "kubeflow.org/v2beta1", f"{where}: apiVersion {d.get('apiVersion')}")
    check(d.get("kind") == "MPIJob", f"{where}: kind {d.get('kind')}")
    check(bool(d.get("metadata", {}).get("name")), f"{where}: no metadata.name")
    spec = d.get("spec", {})
    slots = spec.get("slotsPerWorker")
    check(isinstance(slots, int) and slots >= 1, f"{where}: slotsPerWorker {slots}")
    check(spec.get("mpiImplementation") == "OpenMPI", f"{where}: mpiImplementation must be OpenMPI (the image's MPI)")
    rp = spec.get("runPolicy", {})
    check(rp.get("cleanPodPolicy") in ("Running", "All", "None"), f"{where}: runPolicy.cleanPodPolicy {rp.get('cleanPodPolicy')}")
    check(rp.get("backoffLimit") == 0, f"{where}: runPolicy.backoffLimit should be 0 (no silent reruns)")
    reps = spec.get("mpiReplicaSpecs", {})
    check(set(reps) == {"Launcher", "Worker"}, f"{where}: mpiReplicaSpecs {sorted(reps)}, need Launcher and Worker")
    launcher, worker = reps.get("Launcher", {}), reps.get("Worker", {})
    check(launcher.get("replicas") == 1, f"{where}: Launcher replicas must be 1")
    workers = worker.get("replicas")
    check(isinstance(workers, int) and workers >= 1, f"{where}: Worker replicas {workers}")
    wspec, wcs = containers(worker.get("template", {}), f"{where} Worker")
    lspec, lcs = containers(launcher.get("template", {}), f"{where} Launcher")
    images = {c["image"] for c in wcs + lcs if "image" in c}
    check(len(images) == 1, f"{where}: launcher and workers use different images {images}")
    w = wcs[0]
    check(w.get("command") == ["/usr/sbin/sshd", "-De"], f"{where}: workers must run sshd (the launcher reaches them over ssh)")
    limits = w.get("resources", {}).get("limits", {})
    check(limits.get(gpu_resource) == slots, f"{where}: worker limit {gpu_resource}={limits.get(gpu_resource)}, slotsPerWorker {slots}")
    other = [k for k in limits if k.startswith("nvidia.com/") and k != gpu_resource]
    check(not other, f"{where}: worker also asks for {other}")
    check("nvidia.com/gpu" not in lcs[0].get("resources", {}).get("limits", {}), f"{where}: the launcher must not hold GPUs")
    at = check_shm_and_results(wspec, w, f"{where} Worker")
    check_mpirun_gpuscale(lcs[0].get("command"), f"{where} Launcher", slots * (workers or 0), flags, at)
    check(wspec.get("terminationGracePeriodSeconds", 30) >= 60,
          f"{where}: workers need terminationGracePeriodSeconds >= 60 to flush results on SIGTERM")
    return images


def check_rdma(name):
    """The RDMA variant: what NCCL's IB transport needs in a pod (docs/kubernetes.md#rdma)."""
    d = load(name)
    where = f"k8s/{name}"
    reps = d.get("spec", {}).get("mpiReplicaSpecs", {})
    w = (reps.get("Worker", {}).get("template", {}).get("spec", {}).get("containers") or [{}])[0]
    limits = w.get("resources", {}).get("limits", {})
    check(any(k.startswith("rdma/") and v == 1 for k, v in limits.items()),
          f"{where}: workers ask for no rdma/* device (NCCL would fall back to TCP over the pod network)")
    caps = w.get("securityContext", {}).get("capabilities", {}).get("add", [])
    check("IPC_LOCK" in caps, f"{where}: workers lack the IPC_LOCK capability (the verbs library cannot pin memory)")
    cmd = (reps.get("Launcher", {}).get("template", {}).get("spec", {}).get("containers") or [{}])[0].get("command", [])
    exported = {cmd[i + 1].split("=")[0] for i, a in enumerate(cmd[:-1]) if a == "-x"}
    for var in ("NCCL_IB_HCA", "NCCL_SOCKET_IFNAME"):
        check(var in exported, f"{where}: mpirun does not pass {var} to the ranks (-x)")


def check_mig_binding(name):
    """MIG: gpuscale binds local rank i to the i-th slice of the pod's device list itself
    (backends/cuda/device_binding.h, mig_slice_binding); a CUDA_VISIBLE_DEVICES set for all ranks of the
    pod would hand every rank the same slice."""
    d = load(name)
    where = f"k8s/{name}"
    for role, spec in d.get("spec", {}).get("mpiReplicaSpecs", {}).items():
        for c in spec.get("template", {}).get("spec", {}).get("containers") or []:
            env = {e.get("name") for e in c.get("env") or []}
            check("CUDA_VISIBLE_DEVICES" not in env, f"{where} {role}: CUDA_VISIBLE_DEVICES set for the whole pod")
            cmd = c.get("command") or []
            check(not any(a.startswith("CUDA_VISIBLE_DEVICES") for a in cmd),
                  f"{where} {role}: the command sets CUDA_VISIBLE_DEVICES for every rank")


def check_job(flags):
    d = load("job.yaml")
    where = "k8s/job.yaml"
    check(d.get("apiVersion") == "batch/v1" and d.get("kind") == "Job", f"{where}: not a batch/v1 Job")
    spec = d.get("spec", {})
    check(spec.get("backoffLimit") == 0, f"{where}: backoffLimit should be 0 (no silent reruns)")
    pspec, cs = containers(spec.get("template", {}), where)
    check(pspec.get("restartPolicy") in ("Never", "OnFailure"), f"{where}: restartPolicy {pspec.get('restartPolicy')}")
    check(pspec.get("restartPolicy") == "Never", f"{where}: restartPolicy should be Never")
    check(len(cs) == 1, f"{where}: one container expected")
    c = cs[0]
    gpus = c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu")
    check(isinstance(gpus, int) and gpus >= 1, f"{where}: nvidia.com/gpu limit {gpus}")
    at = check_shm_and_results(pspec, c, where)
    check_mpirun_gpuscale(c.get("command"), where, gpus, flags, at)
    check(pspec.get("terminationGracePeriodSeconds", 30) >= 60,
          f"{where}: terminationGracePeriodSeconds >= 60 lets gpuscale flush on SIGTERM")
    return {c.get("image")}


def check_pvc():
    d = load("results-pvc.yaml")
    check(d.get("apiVersion") == "v1" and d.get("kind") == "PersistentVolumeClaim", "k8s/results-pvc.yaml: not a PVC")
    check(d.get("metadata", {}).get("name") == "gpuscale-results", "k8s/results-pvc.yaml: name is not gpuscale-results")
    check("ReadWriteMany" in d.get("spec", {}).get("accessModes", []), "k8s/results-pvc.yaml: must be ReadWriteMany")


def continuous_validation_images():
    """The CronJob's image (k8s/continuous-validation.yaml; k8s_node_check tests the rest of it)."""
    with open(os.path.join(ARGS.source, "k8s", "continuous-validation.yaml")) as f:
        crons = [d for d in yaml.safe_load_all(f) if d and d.get("kind") == "CronJob"]
    check(len(crons) == 1, f"k8s/continuous-validation.yaml: {len(crons)} CronJobs, want 1")
    pod = crons[0]["spec"]["jobTemplate"]["spec"]["template"] if crons else {}
    return {c["image"] for c in containers(pod, "k8s/continuous-validation.yaml CronJob")[1]}


def check_dockerfile():
    """Two stages: the devel image builds and bundles as the project does, the runtime image runs the
    bundle (no compiler, no build tree)."""
    with open(os.path.join(ARGS.source, "k8s", "Dockerfile")) as f:
        text = f.read()
    # Join continued lines, drop comments.
    lines = [l for l in re.sub(r"\\\n", " ", text).splitlines() if l.strip() and not l.lstrip().startswith("#")]
    args = {m.group(1): m.group(2).strip('"') for l in lines for m in [re.match(r"ARG (\w+)=(.*)", l)] if m}
    stages = []  # (base, name, lines)
    for l in lines:
        if l.startswith("FROM "):
            parts = l.split()
            base = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), ""), parts[1])
            stages.append((base, parts[3] if len(parts) > 3 and parts[2].upper() == "AS" else "", []))
        elif stages:
            stages[-1][2].append(l)
    if not check(len(stages) == 2, f"Dockerfile: expected two stages (build, runtime), found {len(stages)}"):
        return
    (build_base, build_name, build_lines), (run_base, _, run_lines) = stages
    check(re.fullmatch(r"nvidia/cuda:\d+\.\d+\.\d+-devel-ubuntu\d\d\.\d\d", build_base) is not None,
          f"Dockerfile: build stage base {build_base} is not an nvidia/cuda devel image")
    check(re.fullmatch(r"nvidia/cuda:\d+\.\d+\.\d+-runtime-ubuntu\d\d\.\d\d", run_base) is not None,
          f"Dockerfile: runtime stage base {run_base} is not an nvidia/cuda runtime image")
    check(build_base.split(":")[1].split("-")[0] == run_base.split(":")[1].split("-")[0],
          "Dockerfile: the two stages use different CUDA versions")
    runs = " ".join(l for l in build_lines if l.startswith("RUN "))
    check(any(l.startswith("COPY . ") for l in build_lines), "Dockerfile: the build stage does not copy the repository")
    check("scripts/install-deps" in runs, "Dockerfile: does not install with scripts/install-deps")
    m = re.search(r"scripts/build ([^&]*)", runs)
    if check(m is not None, "Dockerfile: does not build with scripts/build"):
        opts = m.group(1)
        check("-DGPUSCALE_CUDA=ON" in opts, "Dockerfile: the build must require the CUDA backend (-DGPUSCALE_CUDA=ON)")
        with open(os.path.join(ARGS.source, "CMakeLists.txt")) as f:
            cmake = f.read()
        with open(os.path.join(ARGS.source, "cmake", "GpuscaleCuda.cmake")) as f:
            cmake += f.read()
        for var in re.findall(r"-D(\w+)=", opts):
            check(re.search(rf"\b{var}\b", cmake) is not None, f"Dockerfile: -D{var} is not an option of the project")
    bm = re.search(r"scripts/bundle (?:--build \S+ )?(\S+\.tar\.gz)", runs)
    if check(bm is not None, "Dockerfile: the build stage does not make a bundle with scripts/bundle"):
        check(any(l.startswith(f"COPY --from={build_name} {bm.group(1)}") for l in run_lines),
              "Dockerfile: the runtime stage does not copy the bundle from the build stage")
    rruns = " ".join(l for l in run_lines if l.startswith("RUN "))
    check("openssh-server" in rruns, "Dockerfile: the MPI Operator needs sshd in the runtime image")
    check("ibverbs-providers" in rruns, "Dockerfile: without rdma-core's providers NCCL falls back to sockets (mpijob-rdma)")
    check("/usr/local/bin/gpuscale" in rruns, "Dockerfile: gpuscale is not put on PATH")
    check("/usr/local/bin/mpirun" in rruns, "Dockerfile: the bundle's mpirun is not put on PATH")
    check(re.search(r"\bcurl\b", rruns) and re.search(r"\bjq\b", rruns),
          "Dockerfile: the continuous validation's script needs curl and jq in the runtime image")
    check(not any("scripts/build" in l or "install-deps" in l for l in run_lines),
          "Dockerfile: the runtime stage builds or installs build dependencies")
    with open(os.path.join(ARGS.source, "scripts", "install-deps")) as f:
        deps = f.read()
    check("openmpi-bin" in deps, "scripts/install-deps no longer installs Open MPI: the bundle would lack mpirun")


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuscale", required=True)
    ap.add_argument("--source", required=True)
    ARGS = ap.parse_args()
    flags = run_flags()
    images = check_mpijob("mpijob.yaml", "nvidia.com/gpu", flags)
    images |= check_mpijob("mpijob-mig.yaml", "nvidia.com/mig-1g.18gb", flags)
    images |= check_mpijob("mpijob-rdma.yaml", "nvidia.com/gpu", flags)
    check_rdma("mpijob-rdma.yaml")
    check_mig_binding("mpijob-mig.yaml")
    images |= check_job(flags)
    images |= continuous_validation_images()
    check(len(images) == 1, f"the manifests use different images: {images}")
    check_pvc()
    check_dockerfile()
    if problems:
        for p in problems:
            print(f"FAIL: {p}", file=sys.stderr)
        sys.exit(1)
    print("PASS: k8s manifests and Dockerfile")


if __name__ == "__main__":
    main()
