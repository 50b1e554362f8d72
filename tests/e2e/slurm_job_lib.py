#!/usr/bin/env python3
"""The decisions of slurm/gpuscale-job.sh without a cluster: its functions run in bash with the
environment a Slurm job would have (tasks per node, GPUs on the node, the backend asked for), and
their exit codes, messages and launch lines are checked. The Slurm tests (label slurm) cover the same
scripts on a real cluster; this one runs everywhere, root or not."""
import os
import subprocess
import sys
import tempfile

from e2e_common import fail

LIB = None


def bash(snippet, env):
    e = {"PATH": os.environ["PATH"], "gs_name": "t"}
    e.update(env)
    p = subprocess.run(["bash", "-c", f'. "{LIB}"; {snippet}'], capture_output=True, text=True, env=e)
    return p.returncode, p.stdout.strip(), p.stderr.strip()


def expect(snippet, env, code, out=None, err=None):
    rc, o, e = bash(snippet, env)
    if rc != code or (out is not None and out not in o) or (err is not None and err not in e):
        fail(f"{snippet} with {env}: exit {rc} stdout {o!r} stderr {e!r}; expected exit {code}, "
             f"stdout containing {out!r}, stderr containing {err!r}")
    if err is not None and len(e.splitlines()) != 1:
        fail(f"{snippet} with {env}: expected one line on stderr, got {e!r}")


def main():
    global LIB
    LIB = os.path.join(sys.argv[1], "slurm", "gpuscale-job.sh")
    with tempfile.TemporaryDirectory() as tmp:
        check_all(tmp)
    print("PASS: slurm/gpuscale-job.sh decisions")


def check_all(tmp):
    no_gpu_node, gpu_node, out_dir = (os.path.join(tmp, d) for d in ("cpu-node", "gpu-node", "out"))
    for d in (no_gpu_node, gpu_node, out_dir):
        os.makedirs(d)
    for i in range(8):
        open(os.path.join(gpu_node, f"0000:{i:02x}:00.0"), "w").close()

    # Tasks per node: SLURM_NTASKS_PER_NODE, else the largest count of SLURM_TASKS_PER_NODE.
    expect("gs_tasks_per_node", {"SLURM_NTASKS_PER_NODE": "3", "SLURM_TASKS_PER_NODE": "9"}, 0, out="3")
    expect("gs_tasks_per_node", {"SLURM_TASKS_PER_NODE": "4(x2),2"}, 0, out="4")
    expect("gs_tasks_per_node", {"SLURM_TASKS_PER_NODE": "2,8(x3)"}, 0, out="8")
    # The backend asked for in GPUSCALE_ARGS.
    expect("gs_backend", {"GPUSCALE_ARGS": "--quick --backend cpu -o x"}, 0, out="cpu")
    expect("gs_backend", {"GPUSCALE_ARGS": "--backend=cuda"}, 0, out="cuda")
    expect("gs_backend", {"GPUSCALE_ARGS": "--quick"}, 0, out="auto")
    expect("gs_node_gpus", {"gs_nvidia_proc": gpu_node}, 0, out="8")

    # The GPU request: one task per GPU whenever GPUs are used.
    check = "gs_check_gpus && echo fine"
    cpu_node = {"gs_nvidia_proc": no_gpu_node, "SLURM_NTASKS_PER_NODE": "4"}
    expect(check, dict(cpu_node, GPUSCALE_ARGS="--backend cpu"), 0, out="fine")
    expect(check, dict(cpu_node, GPUSCALE_ARGS=""), 0, out="fine")  # auto on a CPU node: the CPU backend
    expect(check, dict(cpu_node, GPUSCALE_ARGS="--backend cuda"), 2,
           err="t: --backend cuda but the job has no GPUs: submit with --gpus-per-node=G --ntasks-per-node=G")
    gpu = {"gs_nvidia_proc": gpu_node, "GPUSCALE_ARGS": ""}
    expect(check, dict(gpu, SLURM_NTASKS_PER_NODE="8"), 2,
           err="t: this node has 8 GPU(s) but the job requested none: submit with --gpus-per-node=8 --ntasks-per-node=8")
    expect(check, dict(gpu, SLURM_NTASKS_PER_NODE="16", SLURM_GPUS_ON_NODE="8"), 2,
           err="t: 16 tasks per node but 8 GPU(s) per node: gpuscale runs one task per GPU")
    expect(check, dict(gpu, SLURM_TASKS_PER_NODE="8(x2)", SLURM_GPUS_ON_NODE="8"), 0, out="fine")
    expect(check, dict(gpu, SLURM_NTASKS_PER_NODE="4", SLURM_GPUS_ON_NODE="8"), 0,
           out="t: note: 4 task(s) for 8 GPU(s) per node: 4 GPU(s) per node stay idle")
    expect(check, dict(gpu, GPUSCALE_ARGS="--backend cpu", SLURM_NTASKS_PER_NODE="32"), 0, out="fine")

    # Launch lines.
    show = 'gs_build_command run -o /o/r.json; echo "${gs_cmd[*]}"'
    base = {"gs_launcher": "srun", "gs_runtime": "", "GPUSCALE_BIN": "/b/gpuscale", "GPUSCALE_OUT": "/o",
            "SLURM_NTASKS": "16", "GPUSCALE_CONTAINER": "img:1"}
    expect(show, base, 0, out="srun --mpi=pmix --kill-on-bad-exit=1 /b/gpuscale run -o /o/r.json")
    expect(show, dict(base, gs_launcher="mpirun"), 0, out="mpirun -np 16 /b/gpuscale run -o /o/r.json")
    expect(show, dict(base, gs_runtime="pyxis", GPUSCALE_BIN="gpuscale"), 0,
           out="srun --mpi=pmix --kill-on-bad-exit=1 --container-image=img:1 --container-mounts=/o:/o gpuscale run")
    expect(show, dict(base, gs_runtime="apptainer", gs_launcher="mpirun", GPUSCALE_BIN="gpuscale"), 0,
           out="mpirun -np 16 apptainer exec --nv --bind /o img:1 gpuscale run -o /o/r.json")
    # GPU ranks bind themselves next to their GPU: the launch does not bind them first, unless the CPU
    # backend runs or GPUSCALE_CPU_BIND=none keeps the launcher's placement.
    gpus = dict(base, SLURM_GPUS_ON_NODE="8", GPUSCALE_ARGS="")
    expect(show, gpus, 0, out="srun --mpi=pmix --kill-on-bad-exit=1 --cpu-bind=none /b/gpuscale run -o /o/r.json")
    expect(show, dict(gpus, gs_launcher="mpirun"), 0, out="mpirun -np 16 --bind-to none /b/gpuscale run -o /o/r.json")
    expect(show, dict(gpus, GPUSCALE_CPU_BIND="none"), 0,
           out="srun --mpi=pmix --kill-on-bad-exit=1 /b/gpuscale run -o /o/r.json")
    expect(show, dict(gpus, GPUSCALE_ARGS="--backend cpu", gs_launcher="mpirun"), 0,
           out="mpirun -np 16 /b/gpuscale run -o /o/r.json")

    # Outside a job, and bad settings: one line, exit 2.
    expect("gs_init", {}, 2, err="t: not inside a Slurm job: submit with sbatch (SLURM_JOB_ID is unset)")
    job = {"SLURM_JOB_ID": "7", "GPUSCALE_OUT": out_dir}
    expect("gs_init", dict(job, GPUSCALE_BIN="/nonexistent/gpuscale", GPUSCALE_LAUNCHER="srun"), 2,
           err="t: GPUSCALE_BIN=/nonexistent/gpuscale is not an executable")
    expect("gs_init", dict(job, GPUSCALE_BIN="/bin/true", GPUSCALE_LAUNCHER="ssh"), 2,
           err="t: GPUSCALE_LAUNCHER=ssh: use auto, srun or mpirun")
    expect("gs_init", dict(job, GPUSCALE_CONTAINER="img", GPUSCALE_CONTAINER_RUNTIME="docker"), 2,
           err="t: GPUSCALE_CONTAINER_RUNTIME=docker: use pyxis or apptainer")
    expect("gs_init", dict(job, GPUSCALE_CONTAINER="img", GPUSCALE_CONTAINER_RUNTIME="pyxis", GPUSCALE_LAUNCHER="mpirun"),
           2, err="t: pyxis containers start through srun")
    expect("gs_init && echo $gs_tag", dict(job, GPUSCALE_BIN="/bin/true", GPUSCALE_LAUNCHER="mpirun",
                                           SLURM_ARRAY_JOB_ID="6", SLURM_ARRAY_TASK_ID="1"), 0, out="6_1")


if __name__ == "__main__":
    main()
