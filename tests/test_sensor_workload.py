"""The second example workload, conf/workloads/factory_sensors.hamlet over the generator's sensor scenario:
the workload where HAMLET's sharing pays (issue 17, item 4). No Spark: the generator's chunks are plain
Python, evaluated by the engine directly. And ``hamlet explain --format dot|svg``, the merged template."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from hamlet import parse_workload
from hamlet.api import evaluate
from hamlet.cli import main
from hamlet.stats import EvaluationStats
from jobs.generate import sensor_chunk
from jobs.schema import SCENARIOS

ROOT = Path(__file__).resolve().parent.parent
WORKLOAD = ROOT / "conf" / "workloads" / "factory_sensors.hamlet"
HOUR = 491_832  # 2026-01-05T00:00Z in hours since the epoch


def events(size: int = 2000) -> list[dict]:
    names = ["event_id", "event_type", "event_time", *SCENARIOS["sensor"]]
    return [dict(zip(names, row, strict=True)) for row in sensor_chunk(2021, HOUR, 0, size)]


def test_sensor_events_are_long_bursts_of_readings_per_machine():
    rows = sensor_chunk(2021, HOUR, 0, 2000)
    assert rows == sensor_chunk(2021, HOUR, 0, 2000)  # deterministic for (seed, hour, chunk)
    assert len(rows) == 2000 and len({r[0] for r in rows}) == 2000
    assert Counter(r[1] for r in rows) == {
        "Reading": 1889,
        "Alarm": 55,
        "Start": 30,
        "Stop": 22,
        "Service": 4,
    }
    machines = Counter(r[3] for r in rows)
    assert len(machines) == 8 and set(machines.values()) == {250}  # 250 events per machine and hour
    for machine in machines:  # distinct times per machine, all inside the hour
        times = [r[2] for r in rows if r[3] == machine]
        assert len(set(times)) == 250 and HOUR * 3600 <= min(times) and max(times) < (HOUR + 1) * 3600
    assert {r[4] for r in rows} == {"L1", "L2", "L3"}


def test_hamlet_shares_the_bursts_of_readings_and_every_strategy_agrees():
    workload = parse_workload(WORKLOAD.read_text())
    stream = events()
    results, stats = {}, {}
    for strategy in ("greta", "static", "hamlet"):
        stats[strategy] = EvaluationStats()
        results[strategy] = evaluate(workload, stream, strategy=strategy, stats=stats[strategy])
    assert results["greta"] == results["static"] == results["hamlet"]
    assert len(results["hamlet"]) == 179
    counters = {
        s: (st.bursts, st.shared_bursts, st.graphlets, st.splits, st.merges) for s, st in stats.items()
    }
    assert counters == {
        "greta": (0, 0, 0, 0, 0),
        "static": (118, 91, 108, 0, 0),
        "hamlet": (118, 88, 105, 8, 8),
    }
    # the counts are those of long bursts: far beyond 64 bits
    warm = [r for r in results["hamlet"] if r.query == "warm" and r.aggregate == "COUNT(*)"]
    assert max(int(r.value) for r in warm).bit_length() == 107


# HAMLET's Figure 3(b): q1 = SEQ(A, B+), q2 = SEQ(C, B+); B+ is their sharable Kleene sub-pattern.
FIGURE_3 = """q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 SLIDE 10
q2: RETURN COUNT(*) PATTERN SEQ(C, B+) WITHIN 10 SLIDE 10
"""

FIGURE_3_DOT = """digraph merged_template {
  rankdir=LR;
  label="merged template of figure3: 2 queries\\nsharable B+ by 2 queries: q1, q2"; labelloc=b; fontname=Helvetica; fontsize=11;
  node [shape=box, fontname=Helvetica, fontsize=12, style=filled, fillcolor=white];
  edge [fontname=Helvetica, fontsize=9];
  "A" [id="type-A"];
  "B" [id="type-B", peripheries=2, fillcolor="#d9d9d9"];
  "C" [id="type-C"];
  "start0" [shape=point, width=0.08, style=filled, fillcolor=black];
  "start0" -> "A" [tooltip="starts q1"];
  "start1" [shape=point, width=0.08, style=filled, fillcolor=black];
  "start1" -> "C" [tooltip="starts q2"];
  "B" -> "B" [label="q1, q2", id="edge-B-B", color="#7f7f7f", penwidth=3, class=shared];
  "A" -> "B" [label="q1", id="edge-A-B"];
  "C" -> "B" [label="q2", id="edge-C-B"];
}
"""


def test_explain_draws_the_merged_template_of_figure_3(tmp_path, capsys):
    path = tmp_path / "figure3.hamlet"
    path.write_text(FIGURE_3)
    assert main(["explain", "--format", "dot", str(path)]) == 0
    assert capsys.readouterr().out == FIGURE_3_DOT


def test_explain_svg_is_the_drawing_of_the_dot_text(tmp_path, capsys):
    assert shutil.which("dot"), "Graphviz's dot is missing: scripts/system-deps installs it"
    path = tmp_path / "figure3.hamlet"
    path.write_text(FIGURE_3)
    assert main(["explain", "--format", "svg", str(path)]) == 0
    svg = capsys.readouterr().out
    assert svg.startswith('<?xml version="1.0" encoding="UTF-8" standalone="no"?>')
    # the types as boxes (B gray) and the shared B -> B loop thick and gray
    assert svg.count('<g id="type&#45;') == 3 and svg.count('fill="#d9d9d9"') == 1
    assert svg.count('stroke="#7f7f7f" stroke-width="3"') == 2  # the loop's line and its arrowhead


def test_explain_svg_without_graphviz_says_how_to_get_it(tmp_path, capsys, monkeypatch):
    path = tmp_path / "figure3.hamlet"
    path.write_text(FIGURE_3)
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot on this PATH
    assert main(["explain", "--format", "svg", str(path)]) == 1
    assert capsys.readouterr().err == (
        "error: --format svg needs Graphviz's dot on PATH (Debian: apt-get install graphviz); "
        "--format dot prints the DOT text instead\n"
    )


def test_a_dot_that_crashes_silently_is_named_with_its_signal(tmp_path, capsys, monkeypatch):
    """Graphviz's dot segfaults on a SEQ of 20,000 types after about 30 s and says nothing (the message was
    "dot -Tsvg failed: " and no more). Here a dot that ends itself with SIGSEGV stands for it."""
    path = tmp_path / "figure3.hamlet"
    path.write_text(FIGURE_3)
    dot = tmp_path / "dot"
    dot.write_text("#!/bin/sh\nkill -SEGV $$\n")
    dot.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["explain", "--format", "svg", str(path)]) == 1
    assert capsys.readouterr().err == (
        "error: dot -Tsvg failed: it was killed by signal 11 (SIGSEGV); --format dot prints the DOT text instead\n"
    )


def test_the_labels_of_a_workload_of_thousands_of_queries_name_some_and_count_the_rest(tmp_path, capsys):
    """3,000 queries sharing B+: the caption, each edge and the start's tooltip listed every name, a string
    past the 16,384 characters Graphviz reads (dot failed with a syntax error)."""
    path = tmp_path / "many.hamlet"
    path.write_text("".join(f"q{i}: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10\n" for i in range(3000)))
    assert main(["explain", "--format", "dot", str(path)]) == 0
    dot = capsys.readouterr().out
    first = ", ".join(f"q{i}" for i in range(24))
    assert f"sharable B+ by 3000 queries: {first} and 2976 more" in dot
    assert dot.count(" and 2976 more") == 4  # the caption, the start's tooltip, A -> B and B -> B
    assert main(["explain", "--format", "svg", str(path)]) == 0
    assert "and 2976 more" in capsys.readouterr().out


@pytest.mark.parametrize("scenario", ["sensor"])
def test_the_sensor_workload_fits_its_scenario(scenario, capsys):
    assert main(["check", str(WORKLOAD), "--scenario", scenario]) == 0
    assert capsys.readouterr().out == (
        f"{WORKLOAD}: 8 queries OK (warm, warm_to_stop, warm_after_alarm, warm_after_service, hot, hot_to_stop, "
        f"hot_after_alarm, hot_after_service); its attributes fit the {scenario} scenario\n"
    )
