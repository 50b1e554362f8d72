"""Reads back what report, compare and check print (docs/analysis.md's layouts), so that the e2e tests can
hold each row's verdict to the one analysis_oracle.py derives: the row lines of compare's and check's
narrow tables, the valid column and the stragglers of report's text and Markdown, and JUnit test cases.
A line that fits none of the layouts fails the test (a parser that skipped it would let a row go
unchecked)."""
import re
import xml.etree.ElementTree as ET

from result_rows import fail

VERDICTS = ("REGRESSION", "improvement", "same", "inconclusive", "PROBLEM", "skipped", "n/a")
VALID_WORDS = ("yes", "no", "invalid", "failed", "skipped")  # report's valid column
_VERDICT_AT_END = re.compile(r"^(.*?)\s*\b(%s)(?:\s+\(.*\))?$" % "|".join(re.escape(v) for v in VERDICTS))


def _between(lines, first, last, what):
    """The lines after the one starting with `first` (stripped of leading spaces) up to the first one
    containing `last`."""
    start = next((i for i, l in enumerate(lines) if l.lstrip().startswith(first)), None)
    if start is None:
        fail(f"{what}: no line starting {first!r}")
    end = next((i for i in range(start + 1, len(lines)) if last in lines[i]), None)
    if end is None:
        fail(f"{what}: no line with {last!r} after the table")
    return lines[start + 1:end], lines[end:]


def compare_rows(text, what):
    """compare's narrow table: ([(benchmark, judged on fraction of peak, point, gpus, figures, verdict)]
    in the order printed, the summary counts {name: n}). A point too long for its column has its
    figures on the next line; a note in parentheses goes on the line after."""
    body, rest = _between(text.splitlines(), "point @ GPUs", " matched: ", what)
    rows, heading, pending = [], None, None
    for l in body:
        if not l.strip():
            continue
        if not l.startswith(" "):
            m = re.fullmatch(r"(\S+) \((fraction of peak, )?[^()]+\)", l)
            if not m:
                fail(f"{what}: not a group heading: {l!r}")
            heading = (m.group(1), bool(m.group(2)))
            continue
        m = re.fullmatch(r"  (\S.*?) @ (\d+)(?:\s{2,}(\S.*))?", l)
        if m and not pending:
            point, gpus, figures = m.group(1), int(m.group(2)), m.group(3)
            if figures is None:
                pending = (point, gpus)
                continue
        elif pending and l.startswith("    ") and not l.strip().startswith("("):
            (point, gpus), figures, pending = pending, l.strip(), None
        elif l.startswith("    (") and rows:
            continue  # a row's note
        else:
            fail(f"{what}: a line that is neither a row nor its figures: {l!r}")
        v = _VERDICT_AT_END.match(figures)
        if heading is None or not v:
            fail(f"{what}: a row without a heading or a verdict: {l!r}")
        rows.append((heading[0], heading[1], point, gpus, v.group(1).split(), v.group(2)))
    if pending:
        fail(f"{what}: the point {pending} has no figures")
    summary = " ".join(" ".join(rest).split())
    m = re.search(r"(\d+) matched: (\d+) regression, (\d+) improvement, (\d+) same, (\d+) inconclusive, (\d+) problem, "
                  r"(\d+) skipped, (\d+) not comparable; (\d+) only in A, (\d+) only in B", summary)
    if not m:
        fail(f"{what}: no summary line: {summary!r}")
    names = ("matched", "REGRESSION", "improvement", "same", "inconclusive", "PROBLEM", "skipped", "n/a", "only in A",
             "only in B")
    return rows, dict(zip(names, map(int, m.groups())))


def check_rows(text, what):
    """check's narrow table: ([(benchmark, "ok" or "FAIL", point, gpus, figures, reason lines)] in the
    order printed, [(cluster, entry index)] of the entries it says matched no row, the summary counts)."""
    body, rest = _between(text.splitlines(), "point @ GPUs", "row(s) checked:", what)
    rows, unmatched, heading, pending, last = [], [], None, None, None
    for l in body:
        if not l.strip():
            continue
        if not l.startswith(" "):
            m = re.fullmatch(r"(\S+) \([^()]+\)", l)
            if not m:
                fail(f"{what}: not a group heading: {l!r}")
            heading = m.group(1)
            continue
        u = re.match(r"  FAIL reference cluster '([^']*)' entry (\d+) \(", l)
        if u:
            unmatched.append((u.group(1), int(u.group(2))))
            last = None  # its wrapped rest follows
            continue
        m = re.fullmatch(r"  (ok|FAIL) +(\S.*?) @ (\d+)(?:\s{2,}(\S.*))?", l)
        if m and not pending:
            if heading is None:
                fail(f"{what}: a row before any heading: {l!r}")
            if m.group(4) is None:
                pending = m.groups()[:3]
                continue
            last = [heading, m.group(1), m.group(2), int(m.group(3)), m.group(4).split(), []]
            rows.append(last)
        elif pending and l.startswith("      "):
            last = [heading, pending[0], pending[1], int(pending[2]), l.split(), []]
            rows.append(last)
            pending = None
        elif l.startswith("       "):
            if last is not None:
                last[5].append(l.strip())
            elif not unmatched:
                fail(f"{what}: a reason line without its row: {l!r}")
        else:
            fail(f"{what}: a line that is neither a row nor its reason: {l!r}")
    summary = " ".join(" ".join(rest).split())
    m = re.search(r"(\d+) row\(s\) checked: (\d+) passed, (\d+) failed; (\d+) reference entr(?:y|ies) matched no row; "
                  r"(\d+) row\(s\) not covered", summary)
    if not m:
        fail(f"{what}: no summary line: {summary!r}")
    counts = dict(zip(("checked", "passed", "failed", "unmatched", "not covered"), map(int, m.groups())))
    return [tuple(r) for r in rows], unmatched, counts


def junit_cases(xml_text, what):
    """[(classname, name, "failure" / "skipped" / "", message)] of a JUnit document's test cases."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as e:
        fail(f"{what}: JUnit XML does not parse: {e}")
    out = []
    for c in root.iter("testcase"):
        f, s = c.find("failure"), c.find("skipped")
        kind = "failure" if f is not None else "skipped" if s is not None else ""
        out.append((c.get("classname"), c.get("name"), kind, (f.get("message") if f is not None else "") or ""))
    return out


def report_valid_cells(text, what):
    """{(benchmark, gpus): valid column} of report's terminal tables (the section before the first
    nccl-tests table or list below them). Columns are counted from the right: the point's cells hold
    spaces and digits, and a long point takes a line of its own."""
    cells, lines, i = {}, text.splitlines(), 0
    while i < len(lines):
        head = re.fullmatch(r"(\S+) \([^()]+\)", lines[i])
        if not head or i + 1 >= len(lines) or not lines[i + 1].startswith("  point "):
            i += 1
            continue
        columns = lines[i + 1].replace("% peak", "%peak").split()
        if columns[-1] != "valid" or columns[1] != "GPUs":
            fail(f"{what}: table {head.group(1)} has columns {columns}")
        n = len(columns) - 1  # the cells right of the point, GPUs first
        i += 2
        while i < len(lines) and lines[i].strip():
            cols = lines[i].split()
            if cols[-1] in VALID_WORDS:  # otherwise a point's own line (the caller finds a row missing)
                if len(cols) < n or not re.fullmatch(r"\d+", cols[-n]):
                    fail(f"{what}: a row of {head.group(1)} without its GPU count: {lines[i]!r}")
                cells[(head.group(1), int(cols[-n]))] = cols[-1]
            i += 1
    return cells


def report_stragglers(text, what):
    """report's straggler table: (the count its title gives, [(point, gpus, rank, host, value, median,
    below, gpu)]) and the rank -> UUID and rank -> PCI bus id tables under it."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("stragglers (")), None)
    if start is None:
        return 0, [], {}, {}
    count = int(lines[start].rsplit(":", 1)[1])
    tables, cur = [], None
    for l in lines[start + 1:]:
        if not l.strip():
            if cur is not None:
                tables.append(cur)
                cur = None
            if len(tables) == 3:
                break
            continue
        if cur is None:
            cur = []  # the header line
            continue
        cur.append(l.split())
    if cur is not None:
        tables.append(cur)
    if len(tables) != 3:
        fail(f"{what}: the straggler section has {len(tables)} tables, expected 3 (values, UUIDs, PCI bus ids)")
    rows = [(" ".join(c[:-7]), int(c[-7]), int(c[-6]), c[-5], c[-4], c[-3], c[-2], c[-1]) for c in tables[0]]
    uuid = {int(c[-3]): c[-1] for c in tables[1]}
    pci = {int(c[-3]): c[-1] for c in tables[2]}
    return count, rows, uuid, pci


def markdown_tables(text):
    """[(the ### heading above it, [{column: cell}])] of every Markdown table (\\_ unescaped)."""
    out, heading, lines, i = [], None, text.splitlines(), 0
    cells = lambda l: [c.strip().replace("\\_", "_") for c in l.strip()[1:-1].split("|")]
    while i < len(lines):
        if lines[i].startswith("### "):
            heading = lines[i][4:].replace("\\_", "_")
        if lines[i].startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            cols, rows, i = cells(lines[i]), [], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(dict(zip(cols, cells(lines[i]))))
                i += 1
            out.append((heading, rows))
            continue
        i += 1
    return out
