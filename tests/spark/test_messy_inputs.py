"""Messy real-world inputs through ``hamlet load-events`` and ``hamlet aggregate`` on local Spark, with real
Delta tables in a temporary folder: every row ends up loaded or rejected with its reason, and the job's rows
are exactly what the engine gives on the same events."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

pytestmark = pytest.mark.slow  # end to end: the Spark jobs on real Delta tables


def output_rows(spark, path: str) -> list[tuple]:
    frame = spark.read.format("delta").load(path)
    return sorted((r.query, r.window_end.strftime("%H:%M"), json.loads(r.group_key)["zone"], r.aggregate, r.value_exact)
                  for r in frame.collect())  # fmt: skip


def test_an_attribute_with_a_non_ascii_name_reaches_the_engine(spark, tmp_path, capsys):
    """``T.größe`` is an attribute name of the language; the job took the columns a query names from its text
    with an ASCII-only pattern, so ``größe`` stayed out of the engine's columns, null on every event: the
    predicate held for none and the run wrote 0 rows, without a word."""
    from jobs.aggregate import main

    events, out = str(tmp_path / "events"), str(tmp_path / "out")
    schema = ("event_id string, event_type string, event_time timestamp, zone string, `größe` double, "
              "event_date date, event_hour int")  # fmt: skip
    rows = []
    for i, (kind, minute, zone, size) in enumerate(
        [
            ("Request", 40, "n", None),
            ("Travel", 41, "n", 1.5),
            ("Travel", 42, "n", 2.5),
            ("Travel", 43, "n", 0.5),
        ]
    ):
        moment = datetime(2026, 1, 5, 8, minute, tzinfo=UTC)
        rows.append((f"e{i}", kind, moment, zone, size, moment.date(), moment.hour))
    spark.createDataFrame(rows, schema).write.format("delta").partitionBy("event_date", "event_hour").save(
        events
    )
    workload = tmp_path / "sizes.hamlet"
    workload.write_text("q: RETURN T.zone, COUNT(*), SUM(T.größe) PATTERN SEQ(Request R, Travel T+) "
                        "WHERE T.größe > 1 GROUP-BY T.zone WITHIN 10 min\n", encoding="utf-8")  # fmt: skip
    assert main(["--workload", str(workload), "--start", "2026-01-05T08:00:00Z", "--end", "2026-01-05T09:00:00Z",
                 "--events-table", events, "--output-table", out]) == 0  # fmt: skip
    assert (
        capsys.readouterr()
        .out.strip()
        .splitlines()[-1]
        .startswith(
            "aggregate sizes [2026-01-05T08:00Z, 2026-01-05T09:00Z): 4 rows in, 0 quarantined, 2 rows out"
        )
    )
    # the trends (R, 41), (R, 42), (R, 41, 42): 1.5 + 2.5 + 4.0
    assert output_rows(spark, out) == [
        ("q", "08:50", "n", "COUNT(*)", "3"),
        ("q", "08:50", "n", "SUM(T.größe)", "8.0"),
    ]
