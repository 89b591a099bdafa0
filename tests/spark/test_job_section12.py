"""The aggregation job on the dissertation's §12 constructs (a type at several places, P{n,}, OR, AND, one
under skip-till-next-match, one with a NOT between two parts, NOTs over a type the pattern matches too or
over a pattern with a type at several places) next to an ordinary query: their graphs run
inside the job's tasks, a conjunction's C_i, C_j, C_ij cross the shuffle as partial states and become pairs
only in stage 2, and the job equals ``hamlet evaluate``."""

from __future__ import annotations

from datetime import timedelta

import pytest
from spark_env import START
from test_job_aggregate import aggregate, evaluated_rows, table

pytestmark = pytest.mark.slow  # end to end: the Spark job on real Delta tables

SECTION_12_WORKLOAD = """
qany: RETURN T.district, COUNT(*), SUM(T.duration)
    PATTERN SEQ(Request R, Travel T+, Dropoff D)
    WHERE [driver, rider] GROUP-BY T.district WITHIN 20 min SLIDE 5 min
qor: RETURN T.district, COUNT(*), SUM(T.duration), MAX(T.speed)
    PATTERN SEQ(Request R, Travel T+, Dropoff D) OR SEQ(Request, Travel{2,})
    WHERE [driver, rider] GROUP-BY T.district WITHIN 20 min SLIDE 5 min
qand: RETURN COUNT(*)
    PATTERN SEQ(Request, Travel+) AND SEQ(Travel, Travel+)
    WHERE [driver, rider] WITHIN 15 min SLIDE 5 min
qtwice: RETURN COUNT(*), COUNT(Travel)
    PATTERN SEQ(Travel+, Pickup, Travel)
    WHERE [driver] WITHIN 30 min SLIDE 10 min
qnext: RETURN COUNT(*), SUM(Travel.duration)
    PATTERN SEQ(Travel+, Pickup, Travel) OR SEQ(Travel, Travel) SEMANTICS NEXT
    WHERE [driver] WITHIN 30 min SLIDE 10 min
qnot: RETURN COUNT(*), MIN(Travel.speed)
    PATTERN SEQ(Request, Travel+, NOT Cancel, Dropoff, Travel)
    WHERE [driver] WITHIN 30 min SLIDE 10 min
qnotor: RETURN COUNT(*), SUM(Travel.duration)
    PATTERN SEQ(Travel+, NOT Cancel, Travel) OR SEQ(Request, Travel+)
    WHERE [driver] WITHIN 30 min SLIDE 10 min
qlast: RETURN T.district, COUNT(*), SUM(T.duration)
    PATTERN SEQ(Request, Travel T+, NOT Travel, Pickup)
    WHERE [driver, rider] GROUP-BY T.district WITHIN 20 min SLIDE 5 min
qnear: RETURN COUNT(*), MAX(Travel.speed)
    PATTERN SEQ(Request, Travel+, NOT SEQ(Travel, Travel), Dropoff)
    WHERE [driver] WITHIN 30 min SLIDE 10 min
"""


def test_the_job_equals_hamlet_evaluate_on_section_12_constructs(spark, events_table, tmp_path):
    from pyspark.testing import assertDataFrameEqual

    workload = tmp_path / "section12.hamlet"
    workload.write_text(SECTION_12_WORKLOAD, encoding="utf-8")
    out = tmp_path / "trend_aggregates"
    start, end = START + timedelta(hours=2), START + timedelta(hours=3)
    assert aggregate(events_table, out, workload, start, end) == 0
    expected = evaluated_rows(workload, events_table, tmp_path, start, end)
    assert {r.query for r in expected} == {
        "qany", "qor", "qand", "qtwice", "qnext", "qnot", "qnotor", "qlast", "qnear"
    }  # fmt: skip
    assert any(r.query == "qand" and r.value > 0 for r in expected)
    schema = "query string, window_start timestamp, window_end timestamp, `group` map<string,string>, " \
             "aggregate string, value double, value_exact string"  # fmt: skip
    actual = table(spark, out).select(
        "query", "window_start", "window_end", "group", "aggregate", "value", "value_exact"
    )
    assertDataFrameEqual(actual, spark.createDataFrame(expected, schema))
