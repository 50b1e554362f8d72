#!/usr/bin/env python3
"""The layering check itself (check_layers.py) on tiny trees made here: a clean one passes; an include
planted upward, one beside, one of a folder off the floor map, a picture unlike the table and a long
file each fail, named with their line; inside harness/, an include up its own floor map, one into
another family's folder and one of a sub-folder off that map fail too."""
import os
import subprocess
import sys
import tempfile

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_layers.py")


def tree(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)


def check(files):
    with tempfile.TemporaryDirectory() as root:
        tree(root, files)
        p = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True, timeout=60)
        return p.returncode, p.stderr


CLEAN = {
    "core/units.h": "#pragma once\n",
    "kernels/device.h": '#pragma once\n#include "core/units.h"\n',
    "health/probe.cpp": '#include "health/probe.h"\n#include "kernels/device.h"\n#include <vector>\n',
    "cli/main.cpp": '#include "harness/run/runner.h"\n#include "health/probe.h"\n',
    "tests/unit/test_any.cpp": '#include "cli/main.h"\n',  # tests/ may include any room
    # harness/'s own floors: run/ over benchmarks/ over plan/ over the top level over options/.
    "harness/options/options.h": "#pragma once\n",
    "harness/benchmark.h": '#pragma once\n#include "harness/options/options.h"\n',
    "harness/plan/plan.h": '#pragma once\n#include "harness/benchmark.h"\n',
    "harness/benchmarks/collective_plan.h": '#pragma once\n#include "harness/plan/plan.h"\n',
    "harness/benchmarks/burn/burn.cpp": '#include "harness/benchmarks/burn/burn_plan.h"\n#include "harness/benchmarks/collective_plan.h"\n',
    "harness/benchmarks/fleet/pairs.cpp": '#include "harness/benchmarks/fleet/pairs.h"\n',
    "harness/run/runner.cpp": '#include "harness/benchmarks/burn/burn_plan.h"\n#include "harness/plan/plan.h"\n',
}


def expect_fail(name, planted, needle):
    rc, err = check({**CLEAN, **planted})
    if rc != 1 or needle not in err:
        print(f"FAIL: {name}: expected exit 1 naming {needle!r}, got {rc}: {err}", file=sys.stderr)
        sys.exit(1)


def main():
    rc, err = check(CLEAN)
    if rc != 0:
        print(f"FAIL: the clean tree did not pass (exit {rc}): {err}", file=sys.stderr)
        sys.exit(1)
    expect_fail("upward", {"health/probe.cpp": CLEAN["health/probe.cpp"] + '#include "backends/cuda_module/cuda_loader.h"\n'},
                'health/probe.cpp:4: includes "backends/cuda_module/cuda_loader.h" (backends/ is above health/')
    expect_fail("beside", {"kernels/device.h": '#pragma once\n  #  include "world/world.h"\n'},
                "kernels/device.h:2: includes \"world/world.h\" (world/ is beside kernels/")
    expect_fail("off the map", {"core/units.h": '#pragma once\n#include "tests/helpers.h"\n'},
                "core/units.h:2: includes tests/, which is not on the floor map")
    expect_fail("picture", {"docs/architecture.md": "```\n cli/\n  ▼\n core/   harness/\n```\n"},
                "docs/architecture.md: the picture's floors")
    expect_fail("long file", {"core/long.cpp": "\n" * 401}, "core/long.cpp: 401 lines")
    expect_fail("harness: up its floors",
                {"harness/plan/plan.h": CLEAN["harness/plan/plan.h"] + '#include "harness/run/runner.h"\n'},
                'harness/plan/plan.h:3: includes "harness/run/runner.h" (harness/run/ is above harness/plan/')
    expect_fail("harness: another family",
                {"harness/benchmarks/fleet/pairs.cpp": '#include "harness/benchmarks/burn/burn_plan.h"\n'},
                'harness/benchmarks/fleet/pairs.cpp:1: includes "harness/benchmarks/burn/burn_plan.h" (another family')
    expect_fail("harness: off its map", {"harness/misc/thing.cpp": '#include "harness/benchmark.h"\n'},
                "harness/misc/thing.cpp is in harness/misc/, which is not on the harness floor map")
    print("PASS: the layering check passes a clean tree and names each planted offence")


if __name__ == "__main__":
    main()
