#!/usr/bin/env python3
"""The rooms keep their shape (docs/architecture.md): no folder below the run loop includes a harness/
header, and no source file outside tests/ is longer than 400 lines. Prints every offence, exits 1."""
import os
import re
import sys

LOWER = ["backends", "kernels", "collectives", "training", "health", "analysis", "results", "core", "world", "peaks",
         "history"]
SOURCE = (".cpp", ".h", ".cu", ".cuh", ".py", ".cmake")
MAX_LINES = 400
INCLUDE = re.compile(r'^\s*#\s*include\s+"harness/')


def main(root):
    problems = []
    for top in sorted(os.listdir(root)):
        if top.startswith(".") or top.startswith("build") or top == "tests" or not os.path.isdir(os.path.join(root, top)):
            continue
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                path = os.path.join(d, f)
                rel = os.path.relpath(path, root)
                executable_script = os.access(path, os.X_OK) and not f.endswith((".so", ".a"))
                if not (f.endswith(SOURCE) or f == "CMakeLists.txt" or (top == "scripts" and executable_script)):
                    continue
                with open(path, errors="replace") as fh:
                    lines = fh.readlines()
                if len(lines) > MAX_LINES:
                    problems.append(f"{rel}: {len(lines)} lines (at most {MAX_LINES})")
                if top in LOWER:
                    for n, line in enumerate(lines, 1):
                        if INCLUDE.match(line):
                            problems.append(f"{rel}:{n}: includes {line.strip()[9:]} (a harness/ header below the run loop)")
    for p in problems:
        print(f"FAIL: {p}", file=sys.stderr)
    if problems:
        return 1
    print("PASS: layers and file sizes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
