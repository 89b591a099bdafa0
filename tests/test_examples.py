"""The example workloads in conf/: golden outputs of ``hamlet evaluate``, each checked against the oracle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from oracle import evaluate_bruteforce

from hamlet import parse_workload
from hamlet.api import evaluate
from hamlet.cli import main
from hamlet.io import read_events_csv

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ["rideshare", "stock", "cluster", "traffic", "heartbeat"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_workload_matches_oracle_and_golden_file(name, tmp_path):
    workload_path, events_path = ROOT / f"conf/workloads/{name}.hamlet", ROOT / f"conf/events/{name}.csv"
    out = tmp_path / "out.jsonl"
    assert (
        main(
            ["evaluate", "--workload", str(workload_path), "--events", str(events_path), "--output", str(out)]
        )
        == 0
    )
    golden = (Path(__file__).parent / "golden" / f"{name}.jsonl").read_text()
    assert out.read_text() == golden
    workload = parse_workload(workload_path.read_text())
    with events_path.open() as f:
        events = read_events_csv(f, name).events
    rows = evaluate(workload, events)
    assert [row.as_dict() for row in rows] == [json.loads(line) for line in golden.splitlines()]
    assert rows == evaluate_bruteforce(workload, events)
    # Every query of every example produces rows, in at least two windows and two groups.
    for query in workload.queries:
        mine = [r for r in rows if r.query == query.name]
        assert len({r.window_start for r in mine}) >= 2 and len({tuple(r.group.items()) for r in mine}) >= 2
