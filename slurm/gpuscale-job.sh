# shellcheck shell=bash
# Shared by the job scripts in this folder (gpuscale.sbatch, health.sbatch, merge.sbatch): sourced,
# never submitted; the scripts find it through the job record (scontrol show job: Command=), since
# sbatch runs a copy of the script from its spool folder, or through GPUSCALE_SLURM_DIR. It resolves the variables every script documents, checks the job's GPU request,
# builds the launch line (srun --mpi=pmix, or mpirun inside the allocation; optionally in a container)
# and runs gpuscale with the time-limit signal forwarded. docs/slurm.md explains each piece.
#
# Variables (the same in every script):
#   GPUSCALE_BIN        the gpuscale executable. Default: the installed one when this folder is
#                       <prefix>/share/gpuscale/slurm (<prefix>/bin/gpuscale), else `gpuscale` on PATH,
#                       else the repository's build/bin/gpuscale next to this folder; in a
#                       container, `gpuscale`.
#   GPUSCALE_ARGS       extra arguments for gpuscale, e.g. "--backend cpu --quick".
#   GPUSCALE_OUT        folder for the result files. Default: $SLURM_SUBMIT_DIR/results.
#   GPUSCALE_LAUNCHER   auto (default: srun --mpi=pmix when Slurm has PMIx, else mpirun), srun or mpirun.
#   GPUSCALE_CONTAINER  a container image; empty (default) runs gpuscale directly.
#   GPUSCALE_CONTAINER_RUNTIME  pyxis (srun --container-image) or apptainer (apptainer exec --nv);
#                       default: pyxis when srun has --container-image, else apptainer.
#   GPUSCALE_DRY_RUN    1: print the launch line and exit 0 without running it.
#   GPUSCALE_STORE      a results history (docs/history.md): `gpuscale run` adds its result file to it
#                       at the end (passed to the ranks; PostgreSQL for jobs that write at once).

gs_name=${gs_name:-gpuscale-job}

gs_say() { echo "$gs_name: $*"; }
gs_fail() {  # gs_fail CODE MESSAGE: one line on stderr, the job ends FAILED
  local code=$1; shift
  echo "$gs_name: $*" >&2
  exit "$code"
}

# The gpuscale these scripts belong to, printed: installed (cmake --install, the .deb, a bundle), the
# scripts sit in <prefix>/share/gpuscale/slurm and gpuscale in <prefix>/bin; else `gpuscale` on PATH;
# else the repository's build/bin/gpuscale next to this folder. Prints the
# path, or the build path it expected and fails, when none is an executable.
gs_find_gpuscale() {
  local dir
  dir=$(cd "$gs_dir" && pwd -P) || return 1
  case $dir in
    */share/gpuscale/slurm)
      if [ -x "${dir%/share/gpuscale/slurm}/bin/gpuscale" ]; then echo "${dir%/share/gpuscale/slurm}/bin/gpuscale"; return 0; fi ;;
  esac
  if command -v gpuscale >/dev/null; then command -v gpuscale; return 0; fi
  local repo exe
  repo=$(cd "$dir/.." && pwd)
  for exe in "$repo/build/bin/gpuscale"; do
    [ -x "$exe" ] && { echo "$exe"; return 0; }
  done
  echo "$repo/build/bin/gpuscale"
  return 1
}

# Sets GPUSCALE_BIN, GPUSCALE_OUT, gs_tag (job id, or ARRAYJOB_TASK), gs_runtime, gs_launcher.
gs_init() {
  : "${GPUSCALE_ARGS:=}" "${GPUSCALE_CONTAINER:=}" "${GPUSCALE_DRY_RUN:=0}" "${GPUSCALE_LAUNCHER:=auto}"
  : "${gs_dir:=$(dirname "${BASH_SOURCE[0]}")}"  # the slurm/ folder (the scripts set it before sourcing)
  [ -n "${SLURM_JOB_ID:-}" ] || gs_fail 2 "not inside a Slurm job: submit with sbatch (SLURM_JOB_ID is unset)"
  gs_tag=$SLURM_JOB_ID
  [ -n "${SLURM_ARRAY_JOB_ID:-}" ] && gs_tag=${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}
  : "${GPUSCALE_OUT:=${SLURM_SUBMIT_DIR:-$PWD}/results}"
  mkdir -p "$GPUSCALE_OUT" || gs_fail 2 "GPUSCALE_OUT=$GPUSCALE_OUT: cannot create the folder"

  gs_runtime=""
  if [ -n "$GPUSCALE_CONTAINER" ]; then
    gs_runtime=${GPUSCALE_CONTAINER_RUNTIME:-}
    if [ -z "$gs_runtime" ]; then
      if srun --help 2>/dev/null | grep -q -- '--container-image'; then gs_runtime=pyxis
      elif command -v apptainer >/dev/null; then gs_runtime=apptainer
      else gs_fail 2 "GPUSCALE_CONTAINER is set but neither pyxis (srun --container-image) nor apptainer is available"
      fi
    fi
    case $gs_runtime in pyxis | apptainer) ;; *) gs_fail 2 "GPUSCALE_CONTAINER_RUNTIME=$gs_runtime: use pyxis or apptainer" ;; esac
    : "${GPUSCALE_BIN:=gpuscale}"  # inside the image
  elif [ -z "${GPUSCALE_BIN:-}" ]; then
    GPUSCALE_BIN=$(gs_find_gpuscale) ||
      gs_fail 2 "gpuscale not found: not installed next to $gs_dir, not on PATH and not built at $GPUSCALE_BIN (set GPUSCALE_BIN)"
  fi
  if [ -z "$gs_runtime" ] && ! [ -x "$GPUSCALE_BIN" ] && ! command -v "$GPUSCALE_BIN" >/dev/null; then
    gs_fail 2 "GPUSCALE_BIN=$GPUSCALE_BIN is not an executable"
  fi

  gs_launcher=$GPUSCALE_LAUNCHER
  if [ "$gs_launcher" = auto ]; then
    if srun --mpi=list 2>&1 | grep -qw pmix; then gs_launcher=srun
    elif command -v mpirun >/dev/null; then
      gs_launcher=mpirun
      gs_say "Slurm has no PMIx plugin (srun --mpi=list): launching with mpirun inside the allocation"
    else gs_fail 2 "cannot launch MPI ranks: Slurm has no PMIx plugin (srun --mpi=list) and mpirun is not on PATH"
    fi
  fi
  case $gs_launcher in srun | mpirun) ;; *) gs_fail 2 "GPUSCALE_LAUNCHER=$gs_launcher: use auto, srun or mpirun" ;; esac
  [ "$gs_runtime" = pyxis ] && [ "$gs_launcher" = mpirun ] && gs_fail 2 "pyxis containers start through srun: GPUSCALE_LAUNCHER=mpirun cannot use them"

  # Slurm's time-limit warning (or scancel) may come before gpuscale runs: note it, do not die of it.
  gs_signal=""
  trap 'gs_signal=USR1' USR1
  trap 'gs_signal=TERM' TERM
  trap 'gs_signal=INT' INT
  gs_say "job $gs_tag on ${SLURM_JOB_NUM_NODES:-1} node(s) ${SLURM_JOB_NODELIST:-?}, ${SLURM_NTASKS:-?} task(s), GPUs on this node: ${SLURM_GPUS_ON_NODE:-none}"
  gs_say "gpuscale: $GPUSCALE_BIN${gs_runtime:+ in $gs_runtime image $GPUSCALE_CONTAINER}; launcher: $gs_launcher; output: $GPUSCALE_OUT"
}

# The --backend in GPUSCALE_ARGS (cpu, cuda, auto), auto when absent.
gs_backend() {
  local -a args
  read -r -a args <<<"${GPUSCALE_ARGS:-}"
  local i b=auto
  for ((i = 0; i < ${#args[@]}; i++)); do
    case ${args[i]} in
      --backend) b=${args[i + 1]:-auto} ;;
      --backend=*) b=${args[i]#--backend=} ;;
    esac
  done
  echo "$b"
}

# The most tasks on one node: SLURM_NTASKS_PER_NODE, else the largest count in SLURM_TASKS_PER_NODE
# ("4(x2),2" = 4 on two nodes, 2 on one).
gs_tasks_per_node() {
  if [ -n "${SLURM_NTASKS_PER_NODE:-}" ]; then echo "$SLURM_NTASKS_PER_NODE"; return; fi
  local max=0 part n parts
  IFS=, read -r -a parts <<<"${SLURM_TASKS_PER_NODE:-1}"
  for part in "${parts[@]}"; do n=${part%%(*}; ((n > max)) && max=$n; done
  echo "$max"
}

# GPUs in this node's hardware (what nvidia-smi would list), whatever the job asked for: the NVIDIA
# driver's entries in /proc (gs_nvidia_proc overrides the folder, for the tests).
gs_node_gpus() {
  local n=0 d
  for d in "${gs_nvidia_proc:-/proc/driver/nvidia/gpus}"/*; do [ -e "$d" ] && n=$((n + 1)); done
  echo "$n"
}

# One task per GPU: a run that will use GPUs must have them allocated, and no more tasks on a node
# than GPUs there. Without this, ranks share a GPU or fail one by one instead of the job failing at once.
gs_check_gpus() {
  local backend gpus tpn hw
  backend=$(gs_backend)
  gpus=${SLURM_GPUS_ON_NODE:-0}
  tpn=$(gs_tasks_per_node)
  case $backend in
    cpu) return 0 ;;
    cuda)
      ((gpus > 0)) || gs_fail 2 "--backend cuda but the job has no GPUs: submit with --gpus-per-node=G --ntasks-per-node=G" ;;
    *)
      hw=$(gs_node_gpus)
      if ((gpus == 0)); then
        ((hw == 0)) && return 0  # a CPU node: auto runs the CPU backend
        gs_fail 2 "this node has $hw GPU(s) but the job requested none: submit with --gpus-per-node=$hw --ntasks-per-node=$hw"
      fi ;;
  esac
  ((tpn <= gpus)) || gs_fail 2 "$tpn tasks per node but $gpus GPU(s) per node: gpuscale runs one task per GPU (--ntasks-per-node=$gpus, or --gpus-per-node=$tpn)"
  ((tpn == gpus)) || gs_say "note: $tpn task(s) for $gpus GPU(s) per node: $((gpus - tpn)) GPU(s) per node stay idle"
}

# Whether the launch leaves the ranks unbound: GPU ranks bind themselves to the cores of their GPU's
# NUMA node, within the cores they may use (kernels/cuda/cpu_binding.h). The launchers' own binding
# (srun's block:cyclic, Open MPI's by socket beyond 2 ranks) would pin half the ranks to the far socket,
# where gpuscale can only leave them (their allowed cores and the GPU's do not meet). Not for the CPU
# backend (its ranks keep the launcher's placement), nor with GPUSCALE_CPU_BIND=none (the user's).
gs_unbind() {
  [ "$(gs_backend)" != cpu ] && [ "${SLURM_GPUS_ON_NODE:-0}" != 0 ] && [ "${GPUSCALE_CPU_BIND:-}" != none ]
}

# Fills the array gs_cmd with the launch line for gpuscale ARGS... over the job's tasks.
gs_build_command() {
  gs_cmd=()
  if [ "$gs_launcher" = srun ]; then
    gs_cmd=(srun --mpi=pmix --kill-on-bad-exit=1)
    gs_unbind && gs_cmd+=(--cpu-bind=none)
    [ "$gs_runtime" = pyxis ] && gs_cmd+=(--container-image="$GPUSCALE_CONTAINER" --container-mounts="$GPUSCALE_OUT:$GPUSCALE_OUT")
  else
    # Open MPI's mpirun reads the allocation from Slurm: one rank per task, placed as Slurm placed them.
    gs_cmd=(mpirun -np "${SLURM_NTASKS:-1}")
    gs_unbind && gs_cmd+=(--bind-to none)
    [ -n "${GPUSCALE_STORE:-}" ] && gs_cmd+=(-x GPUSCALE_STORE)  # srun passes the whole environment
  fi
  [ "$gs_runtime" = apptainer ] && gs_cmd+=(apptainer exec --nv --bind "$GPUSCALE_OUT" "$GPUSCALE_CONTAINER")
  gs_cmd+=("$GPUSCALE_BIN" "$@")
}

# gs_run_one ARGS...: gpuscale ARGS... as one process without MPI (merge, version checks), in the
# container when one is set. Sets gs_rc.
gs_run_one() {
  local -a cmd=()
  case $gs_runtime in
    pyxis) cmd=(srun -N 1 -n 1 --mpi=none --container-image="$GPUSCALE_CONTAINER" --container-mounts="$GPUSCALE_OUT:$GPUSCALE_OUT") ;;
    apptainer) cmd=(apptainer exec --bind "$GPUSCALE_OUT" "$GPUSCALE_CONTAINER") ;;
  esac
  cmd+=("$GPUSCALE_BIN" "$@")
  gs_say "run: ${cmd[*]}"
  if [ "$GPUSCALE_DRY_RUN" = 1 ]; then gs_rc=0; return; fi
  "${cmd[@]}"
  gs_rc=$?
}

# gs_run ARGS...: launches gpuscale ARGS... over the job's tasks and waits. Slurm's time-limit warning
# (--signal=B:USR1@120) reaches this shell only: it is forwarded to the launcher, which passes it on to
# every rank, and gpuscale stops at its next safe point, writes what it measured and exits with 4.
# Sets gs_rc.
gs_run() {
  gs_build_command "$@"
  gs_say "launch: ${gs_cmd[*]}"
  if [ "$GPUSCALE_DRY_RUN" = 1 ]; then gs_rc=0; gs_say "GPUSCALE_DRY_RUN=1: not launched"; return; fi
  if [ -n "$gs_signal" ]; then
    gs_rc=4
    gs_say "SIG$gs_signal arrived before gpuscale started (time limit too short for the warning?): not starting it"
    return
  fi
  "${gs_cmd[@]}" &
  gs_child=$!
  trap 'gs_forward USR1' USR1
  trap 'gs_forward TERM' TERM
  trap 'gs_forward INT' INT
  while :; do
    wait "$gs_child"
    gs_rc=$?
    local st
    st=$(ps -o stat= -p "$gs_child" 2>/dev/null || true)
    # Gone or a zombie: it exited. Otherwise `wait` returned early for a signal: wait again.
    if [ -z "$st" ] || [ "${st#Z}" != "$st" ]; then break; fi
  done
  # A signal that arrived just as the launcher exited interrupts `wait`: ask again for the real status.
  if [ -n "$gs_signal" ] && ((gs_rc > 128)); then
    wait "$gs_child" 2>/dev/null
    local again=$?
    ((again == 127)) || gs_rc=$again
  fi
  trap - USR1 TERM INT
}

gs_forward() {
  gs_signal=$1
  gs_say "SIG$1 received$([ "$1" = USR1 ] && echo ' (time limit near)'): passing it to gpuscale, which stops after its current point"
  kill -s "$1" "$gs_child" 2>/dev/null || true
}

# Prints what the exit code means, for the job log.
gs_explain() {
  case $1 in
    0) gs_say "done: every measurement valid" ;;
    1) gs_say "exit 1: a measurement was wrong or failed (the result file says which)" ;;
    2) gs_say "exit 2: bad input (gpuscale's message is above)" ;;
    3) gs_say "exit 3: no usable device (gpuscale's message is above)" ;;
    4) gs_say "exit 4: interrupted (time limit or cancel): the result file holds the points finished before" ;;
    5) gs_say "exit 5: a benchmark point stalled (watchdog; gpuscale named the rank above): the result file holds the points finished before" ;;
    6) gs_say "exit 6: a rank was lost (its process or node ended; named above): the result file holds the points finished before" ;;
    *) gs_say "exit $1: gpuscale or the launcher failed (a rank died? see the messages above)" ;;
  esac
}
