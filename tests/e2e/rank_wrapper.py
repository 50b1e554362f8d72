#!/usr/bin/env python3
"""Runs one MPI rank's command and records its exit code, for the fault tests: mpirun reports only the
first process that failed (the one killed), not what the survivors exited with.

  mpirun -np 4 python3 rank_wrapper.py RCDIR gpuscale run ...
      ->  RCDIR/rc.<rank> (exit code), RCDIR/out.<rank>, RCDIR/err.<rank> (its standard output and error)

When a rank dies mpirun sends the others SIGTERM and, odls_base_sigkill_timeout (1 s) later, SIGKILL
to their process groups. gpuscale ends by itself within milliseconds, but a loaded CI machine may not
schedule it that fast, and the test must see gpuscale's own exit code, not mpirun's SIGKILL. So the
command runs under a recorder in its own session, out of reach of that SIGKILL; this wrapper (the
process mpirun knows) forwards SIGTERM and SIGINT to it, as mpirun's signal would have reached it, and
exits with its code. The recorder writes RCDIR/rc.<rank> when the command ends, even if mpirun has
killed this wrapper by then; the command's output goes to files, since mpirun's output forwarding
ends with mpirun.
"""
import os
import signal
import subprocess
import sys

FORWARDED = (signal.SIGTERM, signal.SIGINT)


def record(rcdir, rank, cmd, pid_pipe):
    """The recorder: its own session, runs the command, writes its exit code."""
    os.setsid()
    for sig in FORWARDED:
        signal.signal(sig, signal.SIG_DFL)
    with open(os.path.join(rcdir, f"out.{rank}"), "w") as out, open(os.path.join(rcdir, f"err.{rank}"), "w") as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err)  # gpuscale installs its own SIGTERM, SIGINT handlers
    os.write(pid_pipe, f"{p.pid}\n".encode())
    os.close(pid_pipe)
    rc = p.wait()
    rc = rc if rc >= 0 else 128 - rc
    with open(os.path.join(rcdir, f"rc.{rank}"), "w") as f:
        f.write(f"{rc}\n")
    os._exit(rc)


def main():
    rcdir, cmd = sys.argv[1], sys.argv[2:]
    rank = os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMIX_RANK", "x"))
    for sig in FORWARDED:  # until the command's pid is known
        signal.signal(sig, signal.SIG_IGN)
    r, w = os.pipe()
    recorder = os.fork()
    if recorder == 0:
        os.close(r)
        try:
            record(rcdir, rank, cmd, w)
        finally:
            os._exit(127)
    os.close(w)
    with os.fdopen(r) as f:
        line = f.readline().strip()
    if line:
        child = int(line)

        def forward(sig, _frame):
            try:
                os.kill(child, sig)
            except ProcessLookupError:  # it has ended already
                pass

        for sig in FORWARDED:
            signal.signal(sig, forward)
    _, status = os.waitpid(recorder, 0)
    rc = os.waitstatus_to_exitcode(status)
    sys.exit(rc if rc >= 0 else 128 - rc)


if __name__ == "__main__":
    main()
