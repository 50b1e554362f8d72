#!/usr/bin/env python3
"""README's quick start, run as it is written (cheaply): the two commands it names exist and are
executable, and scripts/setup-and-run does what README says: two CPU ranks when there is no GPU,
GPUSCALE_NP overrides, its arguments go to `gpuscale run`, and it prints the summary and the JSON
path. GPUSCALE_SKIP_SETUP=1 (documented in the script and README) skips the install and the build and
runs the binary under test. README's sample of what a run prints is held to a real run's output: its
verdict line's form and every table's title and column header appear as the run prints them.
docs/usage.md's list of benchmark groups (its option table) is also held to `gpuscale run --help`'s,
which comes from the registry (Registry::groups_text)."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_common  # noqa: E402
from e2e_common import fail  # noqa: E402

ARGS = None


def readme():
    with open(os.path.join(ARGS.source, "README.md")) as f:
        return f.read()


def quick_start_commands(text):
    """The commands of the code block under '## Quick start'."""
    m = re.search(r"^## Quick start[^\n]*\n+```sh\n(.*?)```", text, re.S | re.M)
    if not m:
        fail("README has no '## Quick start' section with a sh code block")
    return [line.split("#")[0].split()[0] for line in m.group(1).splitlines() if line.strip()]


def usage():
    with open(os.path.join(ARGS.source, "docs", "usage.md")) as f:
        return f.read()


def readme_sample(text):
    """The code block under '## What a run prints'."""
    m = re.search(r"^## What a run prints[^\n]*\n.*?```\n(.*?)```", text, re.S | re.M)
    if not m:
        fail("README has no '## What a run prints' section with a code block")
    return m.group(1).splitlines()


def setup_and_run(*args, np=None):
    """scripts/setup-and-run without install and build, on a PATH whose nvidia-smi lists no GPU."""
    fake = os.path.join(ARGS.workdir, "no-gpu-bin")
    os.makedirs(fake, exist_ok=True)
    smi = os.path.join(fake, "nvidia-smi")
    with open(smi, "w") as f:
        f.write("#!/bin/sh\nexit 9\n")  # as on a machine whose driver sees no GPU: nothing listed
    os.chmod(smi, 0o755)
    build = os.path.dirname(os.path.dirname(os.path.abspath(ARGS.gpuscale)))
    if not os.path.samefile(os.path.join(build, "bin", "gpuscale"), ARGS.gpuscale):
        fail(f"{ARGS.gpuscale} is not BUILD/bin/gpuscale: setup-and-run cannot be pointed at it")
    env = dict(os.environ, GPUSCALE_SKIP_SETUP="1", GPUSCALE_BUILD_DIR=build,
               PATH=os.pathsep.join([fake, os.path.dirname(os.path.abspath(ARGS.mpiexec)), os.environ["PATH"]]))
    env.pop("GPUSCALE_NP", None)
    if np is not None:
        env["GPUSCALE_NP"] = str(np)
    cmd = [os.path.join(ARGS.source, "scripts", "setup-and-run"), *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120), env


def case_commands():
    for c in quick_start_commands(readme()):
        path = os.path.normpath(os.path.join(ARGS.source, c))
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            fail(f"README's quick start names {c}: not an executable file")
    if len(quick_start_commands(readme())) != 2:
        fail(f"README's quick start names {quick_start_commands(readme())}, expected its two commands")


def case_setup_and_run():
    out = e2e_common.out_path(ARGS.workdir, "quickstart.json")
    p, env = setup_and_run("--backend", "cpu", "--quick", "--benchmarks", "stream.triad,all_reduce", "-o", out)
    if p.returncode != 0:
        fail(f"setup-and-run exit {p.returncode}: {p.stdout[-2000:]} {p.stderr[-2000:]}")
    # Two CPU ranks when there is no GPU (one on a one-core machine: the script's rule, nproc's count).
    cores = int(subprocess.run(["nproc"], env=env, capture_output=True, text=True).stdout)
    ranks = 2 if cores >= 2 else 1
    if f"setup-and-run: mpirun -np {ranks} gpuscale run --backend cpu" not in p.stdout:
        fail(f"setup-and-run did not launch {ranks} ranks with the arguments given: {p.stdout[:500]}")
    doc = e2e_common.read_doc(out)
    if doc is None:
        fail(f"no result file at {out}")
    if len(doc["ranks"]) != ranks:
        fail(f"{len(doc['ranks'])} ranks in the result file, expected {ranks}")
    if {r["benchmark"] for r in doc["results"]} != {"stream.triad", "all_reduce"} or doc["backend"] != "cpu":
        fail("the arguments did not reach gpuscale run (benchmarks, backend)")
    # The summary (it opens with the verdict) and the JSON path.
    if not re.search(r"^verdict: (PASS|WARN|FAIL)", p.stdout, re.M) or "\nstream.triad (GB/s)\n" not in p.stdout:
        fail(f"setup-and-run printed no summary: {p.stdout[-2000:]}")
    if f"\nresults: {out}\n" not in p.stdout:
        fail(f"setup-and-run did not print the JSON path {out}: {p.stdout[-500:]}")
    # README's sample: the launch line and the verdict line in their form, each table's title and column
    # header verbatim (the figures and the file name are the sample's own run's).
    sample = readme_sample(readme())
    printed = p.stdout.splitlines()
    if not sample or not re.match(r"setup-and-run: mpirun -np \d+ gpuscale run", sample[0]):
        fail(f"README's sample does not open with setup-and-run's launch line: {sample[:1]}")
    if not any(re.match(r"verdict: (PASS|WARN|FAIL)", l) for l in sample):
        fail("README's sample has no verdict line")
    # A column is as wide as its widest figure, so a header's spacing is the run's own: its words are compared.
    printed_words = [l.split() for l in printed]
    for i, line in enumerate(sample):
        if re.match(r"^[a-z_.]+ \(", line):  # a table's title; the next line is its column header
            if line not in printed:
                fail(f"README's sample shows the table {line!r}, which the run does not print: {p.stdout[-2000:]}")
            header = printed.index(line) + 1
            if header >= len(printed) or printed_words[header] != sample[i + 1].split():
                fail(f"README's sample shows {line!r} with the header {sample[i + 1]!r}, the run "
                     f"{printed[header] if header < len(printed) else None!r}")
    if not re.match(r"results: \S+\.json$", sample[-1]):
        fail(f"README's sample does not end with the results line: {sample[-1:]}")


def help_groups(text):
    m = re.search(r"keys or groups \(([^)]*)\)", text)
    return re.findall(r"[a-z_]+", m.group(1).replace("only when named", "")) if m else None


def case_groups():
    p, _ = setup_and_run("--help", np=1)
    if p.returncode != 0 or "setup-and-run: mpirun -np 1 gpuscale run --help" not in p.stdout:
        fail(f"GPUSCALE_NP=1 setup-and-run --help: exit {p.returncode}: {p.stdout[:500]} {p.stderr[-1000:]}")
    from_help = help_groups(" ".join(p.stdout.split()))  # CLI11 wraps the help text
    row = next((l for l in usage().splitlines() if l.startswith("| `--benchmarks")), "")
    m = re.search(r"keys or groups \((.*?)\) \|", row)
    from_readme = re.findall(r"`([a-z_]+)`", m.group(1)) if m else None
    if not from_help or from_help != from_readme:
        fail(f"benchmark groups: run --help names {from_help}, docs/usage.md names {from_readme}")


def parse():
    global ARGS
    ARGS = e2e_common.parse_args("--mpiexec", "--source")
    return ARGS


def main():
    cases = {
        "commands": (case_commands, {}),
        "setup_and_run": (case_setup_and_run, e2e_common.CORES),
        "groups": (case_groups, {}),
    }
    e2e_common.run_case("e2e_quickstart_", {"TIMEOUT": 120, "LABELS": "e2e;cpu"}, cases, parse)


if __name__ == "__main__":
    main()
