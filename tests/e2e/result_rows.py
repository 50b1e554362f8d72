"""A gpuscale result file's rows as every Python test reads and builds them: the one Python module for
result files (the e2e tests read rows through it; tests/data/analysis/make_synthetic.py builds its
files with it), and the JSON Schema check of a file (results/schema: each version's schema and the
definitions they share).

Files are version 2 (docs/results.md, "The row"): per-rank data as columns aligned by position; a
column that is not an array holds the one value of every rank (or group); a rank's host is an index
into ranks.hosts, a group's hosts indices into the same table; a metric column holds null where a rank
lacks that metric; per-rank stats are there only with --rank-stats (the row's "spread" stands for them
otherwise). Tests work on per-rank entries (rank_entries) and write them back (put_rank_entries).
Version 1 is read only by gpuscale (results/result_upgrade.h), never here."""
import copy
import json
import os
import sys

STAT_KEYS = ("n", "median", "min", "max", "mean", "stddev")
DEFS_SCHEMA = "result-defs.schema.json"  # beside each result-vN.schema.json


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def validate(doc, schema_path):
    """Checks `doc` against the schema at `schema_path` (jsonschema), its references to the shared
    definitions resolved from the file beside it (never fetched)."""
    import jsonschema  # here, so that a --cmake run needs no jsonschema (configure time)
    with open(schema_path) as f:
        schema = json.load(f)
    store = {}
    defs = os.path.join(os.path.dirname(schema_path), DEFS_SCHEMA)
    if os.path.exists(defs):
        with open(defs) as f:
            d = json.load(f)
        store[d["$id"]] = d
    cls = jsonschema.validators.validator_for(schema)
    try:  # jsonschema 4.18 and later resolve through a registry
        from referencing import Registry, Resource
    except ImportError:  # older ones through a RefResolver with a store
        cls(schema, resolver=jsonschema.RefResolver.from_schema(schema, store=store)).validate(doc)
        return
    registry = Registry().with_resources((uri, Resource.from_contents(s)) for uri, s in store.items())
    cls(schema, registry=registry).validate(doc)


def _column(col, n, what):
    """A column as n values: an array as it is (it must have n entries), anything else the one value of
    all n (copied, so that changing one entry's value leaves the others alone)."""
    if isinstance(col, list):
        if len(col) != n:
            fail(f"column {what} has {len(col)} entries for {n}")
        return col
    return [copy.deepcopy(col) for _ in range(n)]


def _host_names(names, indices, what):
    try:
        return [names[i] for i in indices]
    except (IndexError, TypeError):
        fail(f"{what}: host indices {indices} for the {len(names)} hosts {names}")


def _columns(row):
    c = row.get("ranks")
    if not isinstance(c, dict):
        fail(f"row {row.get('benchmark')!r} at {row.get('gpu_count')} GPUs: ranks are not columns (version 2)")
    return c


def rank_entries(row):
    """The row's ranks as entries (copies), one per rank: rank, host (its name), device_index, value,
    valid, error, metrics (only the metrics the rank has) and stats where the file has per-rank stats."""
    c = _columns(row)
    ranks = c["rank"]
    n = len(ranks)
    hosts = _host_names(c["hosts"], _column(c["host"], n, "ranks.host"), "ranks.host")
    cols = {k: _column(c[k], n, f"ranks.{k}") for k in ("device_index", "value", "valid", "error")}
    metrics = {name: _column(col, n, f"ranks.metrics.{name}") for name, col in c.get("metrics", {}).items()}
    stats = {k: _column(col, n, f"ranks.stats.{k}") for k, col in c["stats"].items()} if "stats" in c else None
    out = []
    for i in range(n):
        e = {"rank": ranks[i], "host": hosts[i], **copy.deepcopy({k: v[i] for k, v in cols.items()}),
             "metrics": copy.deepcopy({name: v[i] for name, v in metrics.items() if v[i] is not None})}
        if stats is not None:
            e["stats"] = {k: v[i] for k, v in stats.items()}
        out.append(e)
    return out


def _compact(values):
    """A column of `values`: the one value when all are equal (not for list values, which would read as
    a column), the array otherwise."""
    if values and not isinstance(values[0], list) and all(v == values[0] for v in values):
        return values[0]
    return values


def put_rank_entries(row, entries):
    """Writes `entries` (as rank_entries gives them) into `row` as columns (hosts in first-appearance
    order, equal columns one value); with per-rank statistics, the row's spread made from them again, as
    gpuscale writes it (unrounded here)."""
    hosts = []
    for e in entries:
        if e["host"] not in hosts:
            hosts.append(e["host"])
    names = []
    for e in entries:
        names += [k for k in e["metrics"] if k not in names]
    c = {"rank": [e["rank"] for e in entries], "hosts": hosts,
         "host": _compact([hosts.index(e["host"]) for e in entries]),
         "device_index": _compact([e["device_index"] for e in entries]),
         "value": [e["value"] for e in entries],
         "valid": _compact([e["valid"] for e in entries]),
         "error": _compact([e["error"] for e in entries]),
         "metrics": {k: _compact([copy.deepcopy(e["metrics"].get(k)) for e in entries]) for k in names}}
    if any("stats" in e for e in entries):
        c["stats"] = {k: [e["stats"][k] for e in entries] for k in STAT_KEYS}
        for k in ("lo", "hi"):  # the median's bounds: optional (files before them have min and max)
            if all(k in e["stats"] for e in entries):
                c["stats"][k] = [e["stats"][k] for e in entries]
    row["ranks"] = c
    spread = spread_of(entries)
    if spread is not None:
        row["spread"] = spread


def spread_of(entries):
    """The row's "spread" from its entries' statistics, as gpuscale computes it (results/result_file.h,
    spread_of_ranks): the largest relative distance of a rank's median from its bounds (lo and hi, or min
    and max), and the most repetitions; None when no entry has statistics."""
    with_stats = [e for e in entries if "stats" in e and e["stats"]["n"] > 0]
    if not with_stats:
        return None
    down = up = 0.0
    for e in with_stats:
        s = e["stats"]
        if e["value"] is None or not s["median"] > 0:
            continue
        down = max(down, (s["median"] - s.get("lo", s["min"])) / s["median"])
        up = max(up, (s.get("hi", s["max"]) - s["median"]) / s["median"])
    return {"down": down, "up": up, "reps": max(e["stats"]["n"] for e in with_stats)}


def group_entries(row):
    """The row's groups as entries (copies): hosts (names), ranks, value, status, and spread_down /
    spread_up where the file has them; [] for a row without groups."""
    g = row.get("groups")
    if not g:
        return []
    n = len(g["value"])
    names = _columns(row)["hosts"]
    cols = {k: _column(g[k], n, f"groups.{k}") for k in ("value", "status", "spread_down", "spread_up") if k in g}
    if "ranks" in g:
        members = [list(g["ranks"][i]) for i in range(n)]
        hosts = [_host_names(names, g["hosts"][i], f"groups.hosts[{i}]") for i in range(n)]
    else:
        # The groups tile the row's ranks in order, gpu_count each (docs/results.md).
        k, entries = row["gpu_count"], rank_entries(row)
        if n * k != len(entries):
            fail(f"groups: {n} group(s) of {k} do not tile the row's {len(entries)} ranks")
        members = [[e["rank"] for e in entries[i * k:(i + 1) * k]] for i in range(n)]
        hosts = [list(dict.fromkeys(e["host"] for e in entries[i * k:(i + 1) * k])) for i in range(n)]
    return [{"hosts": hosts[i], "ranks": members[i], **{k: v[i] for k, v in cols.items()}} for i in range(n)]


def put_group_entries(row, groups):
    """Writes `groups` (as group_entries gives them) into `row` as columns, after its ranks
    (put_rank_entries): each group's ranks and its hosts as indices into ranks.hosts (a host no rank of
    the row is on is added there)."""
    names = _columns(row)["hosts"]
    for g in groups:
        names += [h for h in g["hosts"] if h not in names]
    row["groups"] = {"ranks": [list(g["ranks"]) for g in groups],
                     "hosts": [[names.index(h) for h in g["hosts"]] for g in groups],
                     "value": [g["value"] for g in groups],
                     "status": _compact([g["status"] for g in groups]),
                     "spread_down": [g.get("spread_down", 0.0) for g in groups],
                     "spread_up": [g.get("spread_up", 0.0) for g in groups]}


def rank_rel(row, numbers=1):
    """The relative difference allowed between a figure of `row` kept in full and the same figure made
    from `numbers` of its per-rank numbers: gpuscale writes those rounded to 6 significant digits (each
    off by at most 5e-6 of itself), so 1e-5 per number."""
    return numbers * 1e-5


def agree(doc, complete=None):
    """`doc`'s header made to say what its rows are, as a run writes it (the semantic validator,
    results/result_semantics.h, refuses a file that contradicts itself): the summary's counts and
    validity, the plan's benchmarks, GPU counts and point list holding every row's, and no straggler
    of a row the file no longer has. `complete` False: the file of a run that died (complete false, no
    exit code); True or None: as it was. Returns doc."""
    rows = doc["results"]
    counts = {s: sum(r["status"] == s for r in rows) for s in ("ok", "invalid", "failed", "skipped")}
    s = doc["summary"]
    s.update(counts, rows=len(rows), valid=counts["invalid"] + counts["failed"] == 0)
    if complete is False:
        s.update(complete=False, exit_code=None, interrupted=None)
        for ending in ("stalled", "lost_rank"):
            s.pop(ending, None)
    elif s.get("exit_code") == 0 and not s["valid"]:
        s["exit_code"] = 1
    plan = doc["plan"]
    for r in rows:
        if r["benchmark"] not in plan["benchmarks"]:
            plan["benchmarks"].append(r["benchmark"])
    plan["gpu_counts"] = sorted(set(plan["gpu_counts"]) | {r["gpu_count"] for r in rows})
    if "point_list" in plan:
        listed = {(p["benchmark"], json.dumps(p["params"], sort_keys=True)) for p in plan["point_list"]}
        for r in rows:
            key = (r["benchmark"], json.dumps(r["params"], sort_keys=True))
            if key not in listed:
                listed.add(key)
                plan["point_list"].append({"benchmark": r["benchmark"], "params": r["params"]})
        plan["points"] = len(plan["point_list"])
    keys = {(r["benchmark"], json.dumps(r["params"], sort_keys=True), r["gpu_count"]) for r in rows}
    if "analysis" in doc:
        doc["analysis"]["stragglers"] = [
            x for x in doc["analysis"]["stragglers"]
            if (x["benchmark"], json.dumps(x["params"], sort_keys=True), x["gpu_count"]) in keys]
    return doc
