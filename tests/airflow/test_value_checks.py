"""One bad value never refuses a whole hour (issue 20, item 5): NaN and ±infinity in a number column, an
empty event_id, a blank event_type and a NUL byte in a string are quarantined row by row with their reason by
the real Great Expectations gate on local Spark, and the hour's good rows pass."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from airflow_env import START, WORK, write_conf

HOUR_START, HOUR_END = START + timedelta(hours=1), START + timedelta(hours=2)  # 09:00-10:00
NAN, INF = float("nan"), float("inf")
BAD = [  # (event_id, event_type, speed, driver suffix, expected reasons)
    ("nan-1", "Travel", NAN, "", {"not a finite number: 'speed = NaN'"}),
    ("inf-1", "Travel", INF, "", {"not a finite number: 'speed = Infinity'"}),
    ("inf-2", "Travel", -INF, "", {"not a finite number: 'speed = -Infinity'"}),
    ("", "Travel", 10.0, "", {"event_id '' is empty"}),
    ("nul-1", "Travel", 10.0, "\x00", {"a NUL byte in 'driver'"}),
    # only what every engine path strips from a type (hamlet.events.TYPE_SPACE): the engine refuses a type left
    # empty (the reason shows the value with its invisible characters escaped)
    ("blank-1", " \u3000\t", 10.0, "", {r"event_type ' \u3000\t' is empty"}),
    ("blank-2", "", 10.0, "", {"event_type '' is empty"}),
]


@pytest.fixture(scope="module")
def values_config(spark, clean_events):
    """The 09:00 hour of the clean events plus BAD, on a real trip of that hour, in a table of its own."""
    from jobs.pipeline import load_config
    from jobs.schema import scenario_schema

    config = load_config(write_conf(WORK / "values.toml", WORK / "values-tables"))
    clean = spark.read.format("delta").load(clean_events).where("event_hour = 9")
    clean.write.format("delta").partitionBy("event_date", "event_hour").save(config.events_table)
    trip = clean.where("event_type = 'Travel'").orderBy("event_time").first()
    rows = [(i, t, HOUR_START + timedelta(minutes=30 + n), trip.driver + suffix, trip.rider, trip.district, None,
             speed, 20, HOUR_START.date(), 9) for n, (i, t, speed, suffix, _) in enumerate(BAD)]  # fmt: skip
    schema = scenario_schema("rideshare")
    spark.createDataFrame(rows, schema).select(*clean.columns).write.format("delta").mode("append").save(
        config.events_table
    )
    return config


def test_a_start_inside_the_hour_quarantines_no_row_of_it_for_its_time(spark, values_config):
    """A start at 09:20 reads the whole 09:00 hour, as the job does: the gate quarantined every row before
    09:20 as "outside the interval read" (19 of 19 good rows in the helper's case, and the job then left them
    out); now only BAD's rows, and an end before the start is refused before Spark."""
    from jobs.pipeline import PipelineError
    from jobs.validate import validate_events

    report = validate_events(
        values_config, HOUR_START + timedelta(minutes=20), HOUR_END, "inside-run", spark=spark
    )
    assert report.passed and report.bad_rows == len(BAD)
    with pytest.raises(
        PipelineError, match="^start 2026-01-05T10:00:00[+]00:00 must be before end 2026-01-05T09:00"
    ):
        validate_events(values_config, HOUR_END, HOUR_START, "backwards-run")


def test_nan_infinity_empty_ids_and_nul_bytes_are_quarantined_and_the_hour_goes_on(spark, values_config):
    from jobs.validate import validate_events

    report = validate_events(values_config, HOUR_START, HOUR_END, "values-run", spark=spark)
    assert report.passed and report.bad_rows == len(BAD)
    found: dict[str, set[str]] = {}
    for q in spark.read.format("delta").load(values_config.quarantine_table).collect():
        found.setdefault(json.loads(q.row)["event_id"], set()).add(q.reason)
    assert found == {event_id: reasons for event_id, *_, reasons in BAD}
    # the row is kept as it was: NaN and infinity are in the quarantined JSON, not nulls
    row = spark.read.format("delta").load(values_config.quarantine_table).where("reason LIKE '%NaN%'").first()
    assert json.loads(row.row)["speed"] == "NaN"
    # and the aggregation job leaves exactly those rows out
    from jobs.aggregate import build_parser, make_plan, read_events

    argv = ["--workload", "conf/workloads/rideshare_trips.hamlet", "--start", HOUR_START.isoformat(), "--end",
            HOUR_END.isoformat(), "--events-table", values_config.events_table, "--output-table",
            str(WORK / "values-tables" / "out"), "--quarantine-table", values_config.quarantine_table]  # fmt: skip
    guarded, unguarded = (
        make_plan(build_parser().parse_args(argv)),
        make_plan(build_parser().parse_args(argv[:-2])),
    )
    # (the two blank types are no type of the workload: the job never reads them, quarantined or not)
    assert read_events(spark, unguarded).count() - read_events(spark, guarded).count() == len(BAD) - 2
