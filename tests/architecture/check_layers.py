#!/usr/bin/env python3
"""The rooms keep their shape (docs/architecture.md): every `#include "room/..."` in a source file outside
tests/ names its own room or a room on a floor below it (FLOORS, the one floor map; the picture in
docs/architecture.md draws it), and no source file outside tests/ is longer than 400 lines. Prints
every offence (file:line), exits 1. `check_layers.py ROOT` checks the tree at ROOT."""
import os
import re
import sys

# The floor map, top floor first: a room may include its own headers and those of rooms on lower floors
# only, never a room beside it or above it. docs/architecture.md's picture is this table.
FLOORS = [
    ["cli", "tools"],
    ["harness"],
    ["backends", "history", "planning"],
    ["training", "analysis", "health", "import"],
    ["collectives", "peaks"],
    ["kernels", "results", "world"],
    ["text"],
    ["core"],
]
FLOOR = {room: n for n, rooms in enumerate(FLOORS) for room in rooms}  # 0 = the top floor

# Inside harness/, the same rule one level down: its sub-rooms stand on floors of their own, top first,
# and "" is its top level, the room's shared vocabulary (benchmark.h, registry) that every sub-room may
# include. A family's folder under benchmarks/ (benchmarks/fleet/, burn/, checkpoint/) is part of
# benchmarks/: it may include benchmarks/'s shared helpers and the floors below, never another family's
# folder. docs/architecture.md's "Inside harness/" draws this table.
HARNESS_FLOORS = [
    ["run"],
    ["guard"],
    ["benchmarks"],
    ["rows"],
    ["plan"],
    [""],
    ["options"],
]
HARNESS_FLOOR = {room: n for n, rooms in enumerate(HARNESS_FLOORS) for room in rooms}

# Upward includes accepted for now, each with why: {(file, included room): reason}. Empty: none today.
ALLOWED = {}

SOURCE = (".cpp", ".h", ".cu", ".cuh", ".py", ".cmake")
CXX = (".cpp", ".h", ".cu", ".cuh", ".c", ".hpp")
MAX_LINES = 400
INCLUDE = re.compile(r'^\s*#\s*include\s*"(([A-Za-z0-9_.-]+)/[^"]*)"')  # (the path, its room)


def harness_place(path):
    """(sub-room, family) of a path inside harness/: ("run", None), ("benchmarks", "burn"), ("", None)."""
    parts = path.split("/")[1:-1]  # the folders between harness/ and the file
    sub = parts[0] if parts else ""
    family = parts[1] if sub == "benchmarks" and len(parts) > 1 else None
    return sub, family


def harness_problem(rel, path):
    """Why harness file `rel` may not include harness header `path`, or None (HARNESS_FLOORS)."""
    (sub, family), (target, target_family) = harness_place(rel), harness_place(path)
    for s, what in ((sub, rel), (target, path)):
        if s not in HARNESS_FLOOR:
            return f"{what} is in harness/{s}/, which is not on the harness floor map"
    if sub == target:
        if target_family and target_family != family:
            return f"includes \"{path}\" (another family's folder: shared code lives in benchmarks/ itself)"
        return None
    if HARNESS_FLOOR[target] <= HARNESS_FLOOR[sub]:
        where = "beside" if HARNESS_FLOOR[target] == HARNESS_FLOOR[sub] else "above"
        return f"includes \"{path}\" (harness/{target}/ is {where} harness/{sub}/ on the harness floor map)"
    return None


def include_problem(root, rel, room, line):
    """Why `line` of `rel` (a file of `room` in the tree at `root`) may not include what it includes, or None."""
    m = INCLUDE.match(line)
    if not m:
        return None
    path, target = m.group(1), m.group(2)
    if (rel, target) in ALLOWED:
        return None
    if target == room:
        return harness_problem(rel, path) if room == "harness" else None
    if target not in FLOOR:
        # A folder of the tree that is not a room (tests/, scripts/...) is no library to include.
        return f"includes {target}/, which is not on the floor map" if os.path.isdir(os.path.join(root, target)) else None
    if room not in FLOOR:
        return f"includes {target}/ from {room}/, which is not on the floor map"
    if FLOOR[target] <= FLOOR[room]:
        where = "beside" if FLOOR[target] == FLOOR[room] else "above"
        return f"includes \"{path}\" ({target}/ is {where} {room}/ on the floor map)"
    return None


def picture_floors(text):
    """The floors docs/architecture.md's first picture draws, top first: the rooms named at a word's
    start and followed by a space or the line's end ("harness/  the run loop"), between its arrows."""
    block = text.split("```", 2)[1] if text.count("```") >= 2 else ""
    floors = []
    for part in block.split("▼"):
        floors.append(sorted({r for r in re.findall(r"(?:^|\s)([a-z_]+)/(?=\s|$)", part, re.M) if r in FLOOR}))
    return [f for f in floors if f]


def main(root):
    problems = []
    doc = os.path.join(root, "docs", "architecture.md")
    if os.path.exists(doc):
        with open(doc) as f:
            drawn = picture_floors(f.read())
        if drawn != [sorted(f) for f in FLOORS]:
            problems.append(f"docs/architecture.md: the picture's floors {drawn} are not FLOORS {FLOORS}")
    for top in sorted(os.listdir(root)):
        if top.startswith(".") or top.startswith("build") or top == "tests" or not os.path.isdir(os.path.join(root, top)):
            continue
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                path = os.path.join(d, f)
                rel = os.path.relpath(path, root)
                executable_script = os.access(path, os.X_OK) and not f.endswith((".so", ".a"))
                cxx = f.endswith(CXX)
                if not (cxx or f.endswith(SOURCE) or f == "CMakeLists.txt" or (top == "scripts" and executable_script)):
                    continue
                with open(path, errors="replace") as fh:
                    lines = fh.readlines()
                if len(lines) > MAX_LINES:
                    problems.append(f"{rel}: {len(lines)} lines (at most {MAX_LINES})")
                if cxx:
                    for n, line in enumerate(lines, 1):
                        why = include_problem(root, rel, top, line)
                        if why:
                            problems.append(f"{rel}:{n}: {why}")
    for p in problems:
        print(f"FAIL: {p}", file=sys.stderr)
    if problems:
        return 1
    print("PASS: layers (every include points down the floor map) and file sizes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
