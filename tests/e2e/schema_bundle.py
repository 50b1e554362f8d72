#!/usr/bin/env python3
"""results/schema/result-v2.bundled.schema.json, the result schema whole in one file (docs/results.md):
it is what this gpuscale validates with (`gpuscale list --schema`, byte for byte: scripts/schema-bundle
writes it), and two standard validators given only that file, Python's jsonschema (Debian) and ajv-cli
(npm, tests/schema_checkers), accept a real result file and refuse broken copies of it.
"""
import copy
import json
import os
import shutil
import sys

import e2e_common
from e2e_common import fail, run

ARGS = None
BUNDLE = "results/schema/result-v2.bundled.schema.json"


def case_current():
    """The committed bundle is the build's `gpuscale list --schema`."""
    p = e2e_common.gs("list", "--schema")
    if p.returncode != 0:
        fail(f"gpuscale list --schema: exit {p.returncode}: {p.stderr}")
    with open(os.path.join(ARGS.source, BUNDLE)) as f:
        committed = f.read()
    if committed != p.stdout:
        fail(f"{BUNDLE} is not this gpuscale's schema: run scripts/schema-bundle and commit it")
    refs = []

    def walk(j):
        if isinstance(j, dict):
            refs.extend(v for k, v in j.items() if k == "$ref")
            for v in j.values():
                walk(v)
        elif isinstance(j, list):
            for v in j:
                walk(v)
    walk(json.loads(committed))
    outside = sorted({r for r in refs if not r.startswith("#/")})
    if not refs or outside:
        fail(f"the bundle refers outside itself: {outside}" if outside else "the bundle has no references: not the real schema")
    print(f"ok: {BUNDLE} is gpuscale list --schema; {len(refs)} references, all local")


def broken_copies(doc, bundle):
    """(what, broken copy of doc): each breaks one rule the bundle holds, one of them a metric type that
    only the row-field table gives (not in result-v2.schema.json itself)."""
    with open(os.path.join(ARGS.source, "results/schema/result-v2.schema.json")) as f:
        own = set(json.load(f)["definitions"]["row"]["properties"]["metrics"].get("properties", {}))
    filled = bundle["definitions"]["row"]["properties"]["metrics"]["properties"]
    out = []
    d = copy.deepcopy(doc)
    d["schema_version"] = "2"
    out.append(("schema_version a string", d))
    d = copy.deepcopy(doc)
    del d["results"][0]["ranks"]
    out.append(("a row without ranks", d))
    d = copy.deepcopy(doc)
    d["results"][0]["ranks"]["gpu_name"] = "x"
    out.append(("a field the rank columns do not have", d))
    numeric = [(i, k) for i, row in enumerate(doc["results"]) for k, v in row.get("metrics", {}).items()
               if k not in own and filled.get(k, {}).get("type") in ("number", "integer")
               and isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not numeric:
        fail("no row has a numeric metric typed by the row-field table alone")
    i, key = numeric[0]
    d = copy.deepcopy(doc)
    d["results"][i]["metrics"][key] = "fast"
    out.append((f"row {i}'s metric {key} a string", d))
    return out


def case_standard_validators():
    """Given only the bundle: jsonschema and ajv-cli accept a real run's file and refuse broken ones."""
    import jsonschema
    alone = e2e_common.work("schema-bundle-alone")
    shutil.rmtree(alone, ignore_errors=True)
    os.makedirs(alone)
    schema_path = os.path.join(alone, os.path.basename(BUNDLE))
    shutil.copy(os.path.join(ARGS.source, BUNDLE), schema_path)  # nothing beside it
    with open(schema_path) as f:
        bundle = json.load(f)
    result = e2e_common.work("schema-bundle-run.json", fresh=True)
    p = e2e_common.mpirun(2, ["run", "--backend", "cpu", "--quick", "--benchmarks", "stream,all_reduce", "-o", result])
    if p.returncode != 0:
        fail(f"gpuscale run: exit {p.returncode}: {p.stderr[-2000:]}")
    with open(result) as f:
        doc = json.load(f)
    validator = jsonschema.Draft7Validator(bundle)

    def ajv(path):
        return run([ARGS.node, os.path.join(ARGS.checkers, "node_modules/ajv-cli/dist/index.js"), "validate",
                    "--spec=draft7", "-s", schema_path, "-d", path], echo=False)

    errors = sorted(validator.iter_errors(doc), key=str)
    if errors:
        fail(f"jsonschema refuses a real result file: {errors[0].message} at {list(errors[0].absolute_path)}")
    p = ajv(result)
    if p.returncode != 0:
        fail(f"ajv-cli refuses a real result file: {p.stdout}{p.stderr}")
    print(f"ok: a real result ({len(doc['results'])} rows) passes jsonschema and ajv-cli")
    for what, broken in broken_copies(doc, bundle):
        path = os.path.join(alone, "broken.json")
        with open(path, "w") as f:
            json.dump(broken, f)
        errs = list(validator.iter_errors(broken))
        if not errs:
            fail(f"jsonschema accepts {what}")
        p = ajv(path)
        if p.returncode == 0 or "invalid" not in p.stdout + p.stderr:
            fail(f"ajv-cli accepts {what}: exit {p.returncode}")
        print(f"ok: {what}: refused by jsonschema ({errs[0].message[:80]}) and ajv-cli")


def parse():
    global ARGS
    ARGS = e2e_common.parse_args("--mpiexec", "--source", "--node", "--checkers")
    return ARGS


def main():
    cases = {"current": (case_current, {}),
             "standard_validators": (case_standard_validators, {**e2e_common.CORES, "FIXTURES_REQUIRED": "schema_checkers_npm"})}
    e2e_common.run_case("schema_bundle_", {"TIMEOUT": 300, "LABELS": "schema"}, cases, parse)


if __name__ == "__main__":
    sys.exit(main())
