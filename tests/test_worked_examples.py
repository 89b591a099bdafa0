"""SEMANTICS.md's worked examples, through the API (every GRETA path) and through the command line."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from functools import partial

import pandas
import pytest
from streams import stream

from hamlet import STRATEGIES, evaluate, parse_workload
from hamlet.api import evaluate_with
from hamlet.cli import main
from hamlet.optimizer.benefit import CostModel
from hamlet.runtime.greta import run_greta
from hamlet.runtime.shared import run_shared

FIGURE_4 = "a1 a2 c3 b4 b5 b6 b7 a8 a9 c10 c11 c12 b13 b14"
FIGURE_6 = "a1 b2 c2 a3 e3 a4 c5 d6 b7 a8 b9"
FIGURE_12 = "a1 b2 a3 a4 b7"
FIGURE_12_X = {"a1": 5, "a3": 6, "a4": 4}
FIGURE_2_3 = "a1 b2 a3 a4 c5 b6 a7 b8"  # the dissertation's Figure 2.3 (event matching semantics)
FIGURE_12_2 = "a1 b2 a3 a4 b5"  # the dissertation's Figure 12.2 (multiple occurrences of an event type)

# (workload, stream, {query: [values in RETURN order]})
EXAMPLES = [
    (
        (
            "q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 100 SLIDE 100\n"
            "q2: RETURN COUNT(*) PATTERN SEQ(C, B+) WITHIN 100 SLIDE 100"
        ),
        FIGURE_4,
        {"q1": [132], "q2": [72]},
    ),
    (
        (
            "q: RETURN COUNT(*), COUNT(A), MIN(A.x), MAX(A.x), SUM(A.x), AVG(A.x) "
            "PATTERN (SEQ(A+, B))+ WITHIN 100 SLIDE 100"
        ),
        FIGURE_12,
        {"q": [11, 20, 4, 6, 100, 5.0]},
    ),
    ("q: RETURN COUNT(*) PATTERN (SEQ(A+, B))+ WITHIN 100 SLIDE 100", FIGURE_6, {"q": [43]}),
    (
        "q: RETURN COUNT(*) PATTERN (SEQ(A+, NOT SEQ(C, NOT E, D), B))+ WITHIN 100 SLIDE 100",
        FIGURE_6,
        {"q": [13]},
    ),
    ("q: RETURN COUNT(*) PATTERN SEQ(A+, NOT E) WITHIN 100 SLIDE 100", FIGURE_6, {"q": [14]}),
    ("q: RETURN COUNT(*) PATTERN SEQ(NOT E, A+) WITHIN 100 SLIDE 100", FIGURE_6, {"q": [12]}),
    # Issue 16: the two in one workload, in either order. Both have the positive pattern A+ and read A and E
    # alike; a graph shared on that alone gave both queries the first one's count (12, 12 or 14, 14).
    (
        (
            "lead: RETURN COUNT(*) PATTERN SEQ(NOT E, A+) WITHIN 100 SLIDE 100\n"
            "trail: RETURN COUNT(*) PATTERN SEQ(A+, NOT E) WITHIN 100 SLIDE 100"
        ),
        FIGURE_6,
        {"lead": [12], "trail": [14]},
    ),
    (
        (
            "trail: RETURN COUNT(*) PATTERN SEQ(A+, NOT E) WITHIN 100 SLIDE 100\n"
            "lead: RETURN COUNT(*) PATTERN SEQ(NOT E, A+) WITHIN 100 SLIDE 100"
        ),
        FIGURE_6,
        {"trail": [14], "lead": [12]},
    ),
    # Dissertation Figure 2.3, (SEQ(A+, B))+ under the three semantics in one workload: 43 (Example 2.5), 8
    # (Example 16.1: one trend per START a and END b, holding every a and b between them; COUNT(A) 1 + 3 + 4
    # + 2 + 3 + 1 + 2 + 1 = 17) and 2 ((a1,b2) and (a7,b8): c5 breaks contiguity, Example 2.7).
    (
        (
            "qa: RETURN COUNT(*) PATTERN (SEQ(A+, B))+ WITHIN 100 SLIDE 100\n"
            "qn: RETURN COUNT(*), COUNT(A) PATTERN (SEQ(A+, B))+ SEMANTICS skip-till-next-match WITHIN 100 SLIDE 100\n"
            "qc: RETURN COUNT(*), COUNT(A) PATTERN (SEQ(A+, B))+ SEMANTICS contiguous WITHIN 100 SLIDE 100"
        ),
        FIGURE_2_3,
        {"qa": [43], "qn": [8, 17], "qc": [2, 2]},
    ),
    # (a1,b2) and (a1,b3) are each the only trend of their first and last events: both NEXT; b2 lies between
    # a1 and b3: CONT keeps (a1,b2) alone.
    (
        (
            "qn: RETURN COUNT(*) PATTERN (SEQ(A+, B))+ SEMANTICS NEXT WITHIN 100 SLIDE 100\n"
            "qc: RETURN COUNT(*) PATTERN (SEQ(A+, B))+ SEMANTICS CONT WITHIN 100 SLIDE 100"
        ),
        "a1 b2 b3",
        {"qn": [2], "qc": [1]},
    ),
    # NEXT: (a1,b2), (a1,b2,a3,b4), (a3,b4). CONT: c2 shares b2's time, so b2 cannot stand in a trend's
    # middle: (a1,b2), (a3,b4).
    (
        (
            "qn: RETURN COUNT(*) PATTERN (SEQ(A+, B))+ SEMANTICS NEXT WITHIN 100 SLIDE 100\n"
            "qc: RETURN COUNT(*) PATTERN (SEQ(A+, B))+ SEMANTICS CONT WITHIN 100 SLIDE 100"
        ),
        "a1 b2 c2 a3 b4",
        {"qn": [3], "qc": [2]},
    ),
    # NOTs side by side each hold on the same interval. Over a1 c2 b3 a4 d5 b6 a7 b8: between two parts only
    # (a7,b8) has neither a C nor a D between its events; leading, only a1 has none before it: (a1,b3), (a1,b6),
    # (a1,b8); trailing, d5 cuts b3 off, so every a before b6 or b8 ends a trend there: 2 + 3. One NOT of the
    # sequence, NOT SEQ(C, D), is another query: only a C followed by a D cuts, so (a1,b3), (a4,b6), (a4,b8),
    # (a7,b8) are its 4. In an operand of OR: SEQ(B, A) adds (b3,a4), (b3,a7), (b6,a7) to a1 with any of the
    # 7 non-empty sets of b's (leading), or to the trailing 5.
    (
        (
            "middle: RETURN COUNT(*) PATTERN SEQ(A, NOT C, NOT D, B) WITHIN 100 SLIDE 100\n"
            "leading: RETURN COUNT(*) PATTERN SEQ(NOT C, NOT D, A, B) WITHIN 100 SLIDE 100\n"
            "trailing: RETURN COUNT(*) PATTERN SEQ(A, B, NOT C, NOT D) WITHIN 100 SLIDE 100\n"
            "sequence: RETURN COUNT(*) PATTERN SEQ(A, NOT SEQ(C, D), B) WITHIN 100 SLIDE 100\n"
            "leading_or: RETURN COUNT(*) PATTERN SEQ(NOT C, NOT D, A, B+) OR SEQ(B, A) WITHIN 100 SLIDE 100\n"
            "trailing_or: RETURN COUNT(*) PATTERN SEQ(A, B, NOT C, NOT D) OR SEQ(B, A) WITHIN 100 SLIDE 100"
        ),
        "a1 c2 b3 a4 d5 b6 a7 b8",
        {
            "middle": [1],
            "leading": [3],
            "trailing": [5],
            "sequence": [4],
            "leading_or": [10],
            "trailing_or": [8],
        },
    ),
]

# Dissertation chapter 12. Figure 12.2: SEQ(A+, B, A, A+, B+) over a1 b2 a3 a4 b5 has the one trend
# (a1, b2, a3, a4, b5): a4 runs in the sub-graphs of A1, A3 and A4, b5 in those of B2 and B5.
CHAPTER_12 = [
    (
        "q: RETURN COUNT(*), COUNT(A) PATTERN SEQ(A+, B, A, A+, B+) WITHIN 100 SLIDE 100",
        FIGURE_12_2,
        {"q": [1, 3]},
    ),
    # The minimal trend length of §12: A+ of length 3 or more is SEQ(A, A, A+): the 4 triples and the quadruple.
    ("q: RETURN COUNT(*), COUNT(A) PATTERN A{3,} WITHIN 100 SLIDE 100", "a1 a2 a3 a4", {"q": [5, 16]}),
    # Over Figure 12.1's stream (x: a1=5 a3=6 a4=4): SEQ(A+, B) has 8 trends (COUNT(A) 13, SUM 65), SEQ(A, B+)
    # 5 (COUNT(A) 5, SUM 25); both match the 4 of one a and one b, (a1,b2) (a1,b7) (a3,b7) (a4,b7) (COUNT(A) 4,
    # SUM 20). OR: 8 + 5 − 4 = 9 trends, COUNT(A) 13 + 5 − 4 = 14, SUM 65 + 25 − 20 = 70, AVG 5.0. AND: C_i = 4,
    # C_j = 1, C_ij = 4, so 4·1 + 4·4 + 1·4 + C(4, 2) = 30 pairs.
    (
        (
            "qo: RETURN COUNT(*), COUNT(A), COUNT(B), MIN(A.x), MAX(A.x), SUM(A.x), AVG(A.x) "
            "PATTERN SEQ(A+, B) OR SEQ(A, B+) WITHIN 100 SLIDE 100\n"
            "qa: RETURN COUNT(*) PATTERN SEQ(A+, B) AND SEQ(A, B+) WITHIN 100 SLIDE 100"
        ),
        FIGURE_12,
        {"qo": [9, 14, 10, 4, 6, 70, 5.0], "qa": [30]},
    ),
    # A type at several places (issue 18's examples): SEQ(A+, B, A): a1 b2 then a3 or a4; SEQ(A, B, A+): a1 b2
    # then a non-empty subset of {a3, a4}; SEQ(A+, A+) parses (a1, a3, a4) twice yet counts it once: 4 trends.
    (
        (
            "q1: RETURN COUNT(*), COUNT(A), SUM(A.x) PATTERN SEQ(A+, B, A) WITHIN 100 SLIDE 100\n"
            "q2: RETURN COUNT(*), COUNT(A), SUM(A.x) PATTERN SEQ(A, B, A+) WITHIN 100 SLIDE 100\n"
            "q3: RETURN COUNT(*) PATTERN SEQ(A+, A+) WITHIN 100 SLIDE 100"
        ),
        FIGURE_12,
        {"q1": [2, 4, 20], "q2": [3, 7, 35], "q3": [4]},
    ),
]
EXAMPLES += CHAPTER_12

EXECUTORS = {
    "greta": run_greta,
    "greta-plain-scan": partial(run_greta, plain_scan=True),
    "static": STRATEGIES["static"],
    "hamlet": STRATEGIES["hamlet"],
    "hamlet-shared-path": partial(run_shared, sharing="hamlet", model=CostModel(partition_setup=-math.inf)),
    # The graphs the kernel would take, in Python (greta's own, and hamlet's non-shared plan's shared graphs).
    "greta-python": partial(run_greta, native=False),
    "hamlet-python": partial(run_shared, sharing="hamlet", native=False),
}


def _events(text: str):
    return stream(text, x=FIGURE_12_X) if text == FIGURE_12 else stream(text)


@pytest.mark.parametrize("executor", EXECUTORS.values(), ids=EXECUTORS.keys())
@pytest.mark.parametrize("workload, events, expected", EXAMPLES)
def test_worked_example(workload, events, expected, executor):
    rows = evaluate_with(parse_workload(workload), _events(events), executor)
    got: dict[str, list] = {}
    for row in rows:
        assert (row.window_start, row.window_end, row.group) == (0, 100, {})
        got.setdefault(row.query, []).append(row.value)
    assert got == expected


def test_worked_examples_through_the_command_line(tmp_path):
    for i, (workload, events, expected) in enumerate(EXAMPLES):
        (tmp_path / f"w{i}.hamlet").write_text(workload)
        lines = ["event_type,event_time,x"]
        for e in _events(events):
            lines.append(f"{e.type},{e.time},{e.get('x') if e.get('x') is not None else ''}")
        (tmp_path / f"e{i}.csv").write_text("\n".join(lines) + "\n")
        out = tmp_path / f"o{i}.jsonl"
        assert main(["evaluate", "--workload", str(tmp_path / f"w{i}.hamlet"), "--events",
                     str(tmp_path / f"e{i}.csv"), "--strategy", "greta", "--output", str(out)]) == 0  # fmt: skip
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        got: dict[str, list] = {}
        for row in rows:
            assert set(row) == {"query", "window_start", "window_end", "group", "aggregate", "value"}
            got.setdefault(row["query"], []).append(row["value"])
        assert got == expected


def test_console_script_prints_table_and_errors_without_traceback(tmp_path):
    (tmp_path / "w.hamlet").write_text(EXAMPLES[0][0])
    (tmp_path / "e.csv").write_text("event_type,event_time\n" + "\n".join(
        f"{e.type},{e.time}" for e in stream(FIGURE_4)) + "\n")  # fmt: skip
    run = partial(subprocess.run, capture_output=True, text=True, cwd=tmp_path)
    ok = run([sys.executable, "-m", "hamlet.cli", "evaluate", "--workload", "w.hamlet", "--events", "e.csv"])
    assert ok.returncode == 0, ok.stderr
    table = ok.stdout.splitlines()
    assert table[0].split() == ["query", "window", "group", "aggregate", "value"]
    assert table[2].split() == ["q1", "[0,", "100)", "-", "COUNT(*)", "132"]
    assert table[3].split() == ["q2", "[0,", "100)", "-", "COUNT(*)", "72"]
    bad = run([sys.executable, "-m", "hamlet.cli", "evaluate", "--workload", "w.hamlet", "--events", "e.csv",
               "--strategy", "fastest"])  # fmt: skip
    assert bad.returncode == 1
    assert bad.stderr == "error: unknown strategy 'fastest'; choose one of: greta, static, hamlet\n"
    stats = run([sys.executable, "-m", "hamlet.cli", "evaluate", "--workload", "w.hamlet", "--events", "e.csv",
                 "--strategy", "hamlet", "--stats"])  # fmt: skip
    assert stats.returncode == 0 and stats.stdout == ok.stdout
    lines = stats.stderr.splitlines()
    # Both graphs run on the compiled kernel, which decides per burst (native/src/burst.rs, Eq. 7 in its
    # units). Burst b4..b7 (b = 4 events both queries match, one window class, B has 2 predecessor types):
    # Shared = 4 + 2·1·(2 + 2) = 12 < NonShared = 2·4·1·(2 + 1) = 24; burst b13 b14: 2 + 8 = 10 < 12. Both
    # are shared, in one graphlet each, with one graphlet-level snapshot per query each (x and y, Table 4).
    assert lines[:11] == ["strategy: hamlet", "events: 14", "partitions: 1", "bursts: 2", "shared_bursts: 2",
                          "graphlets: 2", "splits: 0", "merges: 0", "graphlet_snapshots: 4",
                          "event_snapshots: 0", "decision_seconds: 0.0"]  # fmt: skip
    assert lines[11:] == ["merged_graphs: 0", "python_partitions: 0"]  # (every graph on the kernel)


def test_api_accepts_dicts_and_dataframes():
    workload = EXAMPLES[1][0]
    records = [{"event_type": e.type, "event_time": e.time, "x": e.get("x")} for e in _events(FIGURE_12)]
    from_dicts = [r.value for r in evaluate(workload, records)]
    assert from_dicts == [11, 20, 4, 6, 100, 5.0]
    # A nullable integer column keeps ints; numpy scalars and pandas' NA never leak into the engine.
    frame = pandas.DataFrame(records).astype({"x": "Int64"})
    from_frame = evaluate(workload, frame)
    assert [r.value for r in from_frame] == from_dicts
    assert [type(r.value) for r in from_frame] == [int, int, int, int, int, float]
    # A float column (NaN for missing) is a float attribute: SUM/MIN/MAX are floats, exactly the same numbers.
    floats = evaluate(workload, pandas.DataFrame(records))
    assert [r.value for r in floats] == [11, 20, 4.0, 6.0, 100.0, 5.0]
    assert [type(r.value) for r in floats] == [int, int, float, float, float, float]
