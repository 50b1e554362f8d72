"""The rules of docs/analysis.md written again in Python, from the documentation and not from the C++
code in analysis/: what compare, check and report must say about result files. The e2e tests
(e2e_analysis.py) hold gpuscale's output, and the golden files, to these verdicts; a rule here is kept
short enough to read against the documentation's wording.

  compare_verdicts   compare's verdict per matched row ("The noise rule")
  check_verdicts     check's verdict per row, and the reference entries no row matched
  stragglers         the stragglers report names ("Stragglers")
  problem_rows       the rows that are not measured correctly (invalid or failed)
"""
import fnmatch
import json
import statistics

import result_rows

LOWER_IS_BETTER = {"us", "ms", "s", "ns"}
HIGHER_IS_BETTER = {"GB/s", "TB/s", "MB/s", "TFLOP/s", "GFLOP/s", "samples/s", "ops/s"}


def row_key(r):
    """Rows match on (benchmark, params, gpu_count) in compare and in the tests."""
    return (r["benchmark"], json.dumps(r["params"], sort_keys=True), r["gpu_count"])


def band(r):
    """(down, up, reps) of a row: the relative band its median lies in. Over the measured ranks,
    down = max (median - lo) / median and up = max (hi - median) / median (lo and hi the median's
    bounds; min and max in older files); the row's spread where the ranks carry no statistics."""
    entries = result_rows.rank_entries(r)
    if not any("stats" in rv for rv in entries):
        s = r.get("spread", {})
        return s.get("down", 0.0), s.get("up", 0.0), s.get("reps", 0)
    down = up = 0.0
    reps = 0
    for rv in entries:
        s = rv["stats"]
        if rv["value"] is None or s["n"] == 0 or s["median"] <= 0:
            continue
        down = max(down, (s["median"] - s.get("lo", s["min"])) / s["median"])
        up = max(up, (s.get("hi", s["max"]) - s["median"]) / s["median"])
        reps = max(reps, s["n"])
    return down, up, reps


def device_models(doc):
    return {r["device"]["name"] for r in doc["ranks"]}


class Verdict:
    """One matched row: verdict (as compare prints it), on_peak (judged on fraction of peak), and for
    rows that were compared the figures judged (a, b), their ratio B/A and the range noise allows it
    (lo, hi), both on B/A."""

    def __init__(self, verdict, on_peak=False, a=None, b=None, lo=None, hi=None):
        self.verdict, self.on_peak, self.a, self.b, self.lo, self.hi = verdict, on_peak, a, b, lo, hi
        self.ratio = b / a if a else None

    def __repr__(self):
        return f"{self.verdict}{' (peak)' if self.on_peak else ''}"


def compare_verdicts(a, b, threshold=0.05):
    """{row key of A: Verdict} for every row of A that B also holds, in A's order.

    PROBLEM: invalid or failed in either file; skipped: skipped in either; n/a: a unit that changed, or
    has no better direction, or no positive value. Otherwise the goodness ratio g (B/A, or A/B where
    lower is better) lies in [(B/A)(1 - down_B)/(1 + up_A), (B/A)(1 + up_B)/(1 - down_A)] (mirrored for
    lower is better); REGRESSION when all of it is below 1 - t, improvement when all above 1 + t, same
    when it lies within [1 - t, 1 + t], inconclusive otherwise or when a side has under 2 repetitions.
    Different device models: rows where both have a fraction of peak are judged on it."""
    models_differ = device_models(a) != device_models(b)
    bb = {row_key(r): r for r in b["results"]}
    out = {}
    for ra in a["results"]:
        rb = bb.get(row_key(ra))
        if rb is None:
            continue
        if ra["status"] in ("invalid", "failed") or rb["status"] in ("invalid", "failed"):
            out[row_key(ra)] = Verdict("PROBLEM")
            continue
        if "skipped" in (ra["status"], rb["status"]):
            out[row_key(ra)] = Verdict("skipped")
            continue
        on_peak = models_differ and ra["fraction_of_peak"] is not None and rb["fraction_of_peak"] is not None
        va, vb = (ra["fraction_of_peak"], rb["fraction_of_peak"]) if on_peak else (ra["aggregate"], rb["aggregate"])
        unit = ra["unit"]
        lower = unit in LOWER_IS_BETTER and not on_peak  # a fraction of peak is higher-is-better
        if unit != rb["unit"] or not (lower or unit in HIGHER_IS_BETTER or on_peak) or not va or not vb \
                or va <= 0 or vb <= 0:
            out[row_key(ra)] = Verdict("n/a", on_peak)
            continue
        da, ua, na = band(ra)
        db, ub, nb = band(rb)
        ratio = vb / va
        if lower:  # g = A/B; its interval mapped back onto B/A
            g_lo, g_hi = (1 / ratio) * (1 - da) / (1 + ub), (1 / ratio) * (1 + ua) / max(1 - db, 1e-300)
            lo, hi = 1 / g_hi, 1 / max(g_lo, 1e-300)
        else:
            g_lo, g_hi = ratio * (1 - db) / (1 + ua), ratio * (1 + ub) / max(1 - da, 1e-300)
            lo, hi = g_lo, g_hi
        if na < 2 or nb < 2:
            v = "inconclusive"
        elif g_hi < 1 - threshold:
            v = "REGRESSION"
        elif g_lo > 1 + threshold:
            v = "improvement"
        elif g_lo >= 1 - threshold and g_hi <= 1 + threshold:
            v = "same"
        else:
            v = "inconclusive"
        out[row_key(ra)] = Verdict(v, on_peak, va, vb, lo, hi)
    return out


def expected_regressions(a, b, threshold=0.05):
    """The keys of the rows compare must call a regression (compare_verdicts)."""
    return {k for k, v in compare_verdicts(a, b, threshold).items() if v.verdict == "REGRESSION"}


def _entry_matches(e, r):
    """A reference entry matches a row: benchmark a pattern; params a subset of the row's (a string a
    pattern against the row's value as written in JSON, a number equal); gpu_count an integer, "*" or
    absent."""
    if not fnmatch.fnmatchcase(r["benchmark"], e["benchmark"]):
        return False
    for k, want in (e.get("params") or {}).items():
        if k not in r["params"]:
            return False
        got = r["params"][k]
        if isinstance(want, str):
            if not fnmatch.fnmatchcase(got if isinstance(got, str) else json.dumps(got), want):
                return False
        elif got != want:
            return False
    return e.get("gpu_count", "*") == "*" or e["gpu_count"] == r["gpu_count"]


class Check:
    """One checked row: ok (bool), why ("invalid", "failed", "skipped", "unit", "outside" or "" when
    ok), the entry (cluster pattern, index, entry) and its bounds (lo, hi; None where unbounded)."""

    def __init__(self, ok, why, cluster, index, entry, lo, hi):
        self.ok, self.why, self.cluster, self.index, self.entry, self.lo, self.hi = ok, why, cluster, index, entry, lo, hi

    def __repr__(self):
        return f"{'ok' if self.ok else 'FAIL ' + self.why} (entry {self.index})"


def check_verdicts(doc, ref):
    """({row key: Check} for the rows an entry matches, in the file's order; [(cluster, index, entry)]
    of the entries that matched no row; the number of rows no entry covers). The entries of every
    cluster whose pattern matches the run's cluster name, in file order; each row takes the first
    entry that matches it; it passes when ok, in the entry's unit and value (1 - lower) <= v <= value
    (1 + upper) (null: no bound)."""
    entries = [(c["cluster"], i, e) for c in ref["clusters"] if fnmatch.fnmatchcase(doc["cluster"]["name"], c["cluster"])
               for i, e in enumerate(c["entries"])]
    out, used, uncovered = {}, set(), 0
    for r in doc["results"]:
        hit = next(((c, i, e) for c, i, e in entries if _entry_matches(e, r)), None)
        if hit is None:
            uncovered += 1
            continue
        c, i, e = hit
        used.add((c, i))
        lo = e["value"] * (1 - e["lower"]) if e.get("lower") is not None else None
        hi = e["value"] * (1 + e["upper"]) if e.get("upper") is not None else None
        if r["status"] != "ok":
            why = r["status"]
        elif r["unit"] != e["unit"]:
            why = "unit"
        elif r["aggregate"] is None or (lo is not None and r["aggregate"] < lo) or (hi is not None and r["aggregate"] > hi):
            why = "outside"
        else:
            why = ""
        out[row_key(r)] = Check(not why, why, c, i, e, lo, hi)
    unmatched = [(c, i, e) for c, i, e in entries if (c, i) not in used]
    return out, unmatched, uncovered


def stragglers(doc, threshold=0.10):
    """[(row key, rank, host, value, median, deficit)]: in each ok row of independent work with two or
    more measured ranks, the ranks whose value is below median x (1 - threshold)."""
    out = []
    for r in doc["results"]:
        if r["scope"] != "independent" or r["status"] != "ok":
            continue
        measured = [rv for rv in result_rows.rank_entries(r) if rv["value"] is not None]
        if len(measured) < 2:
            continue
        median = statistics.median(rv["value"] for rv in measured)
        for rv in measured:
            if rv["value"] < median * (1 - threshold):
                out.append((row_key(r), rv["rank"], rv["host"], rv["value"], median, 1 - rv["value"] / median))
    return out


def problem_rows(doc):
    """The keys of the rows that are invalid or failed."""
    return [row_key(r) for r in doc["results"] if r["status"] in ("invalid", "failed")]
