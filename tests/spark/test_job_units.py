"""The pieces of the jobs that need no JVM: Arrow to events, exact state transport and combine, the
generator's determinism, the CSV loader's reasons, partition predicates, settings."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from fractions import Fraction

import pyarrow as pa
import pytest

from hamlet import parse_workload
from hamlet.partials import AggregateState
from hamlet.runtime.columnar import events_of, sorted_events
from jobs import engine
from jobs.generate import chunk_sizes, chunk_table, rideshare_chunk, stock_chunk
from jobs.load_events import LoadError, content_id, parse_csv
from jobs.schema import SCENARIOS, hour_partition_filter, table_location
from jobs.session import settings


def events_table(rows: list[tuple], attributes: dict[str, pa.DataType]) -> pa.Table:
    ids, types, micros, *values = zip(*rows)
    data = {"event_id": pa.array(ids), "event_type": pa.array(types),
            "event_time": pa.array(micros, pa.int64()).cast(pa.timestamp("us", tz="UTC"))}  # fmt: skip
    for (name, kind), column in zip(attributes.items(), values):
        data[name] = pa.array(column, kind)
    return pa.table(data)


def test_arrow_events_keep_int64_exact_nulls_and_sub_second_times():
    big = 2**63 - 1
    table = events_table([("b", "A", 1_500_000, big, None), ("a", "A", 1_000_000, -(2**63), 2.5),
                          ("c", "B", 1_000_000, None, 0.1)], {"n": pa.int64(), "x": pa.float64()})  # fmt: skip
    events = events_of(sorted_events(table), ("n", "x"))
    assert [(e.type, e.time, e.attributes["n"], e.attributes["x"]) for e in events] == [
        ("A", 1, -(2**63), 2.5),
        ("B", 1, None, 0.1),
        ("A", 1.5, big, None),
    ]  # sorted by (time, event_id)
    assert type(events[0].time) is int and type(events[0].attributes["n"]) is int


def test_states_travel_as_text_exactly_even_with_thousands_of_digits():
    count = 3**20000  # ~9,500 digits: beyond Python's default int/str conversion limit
    states = [AggregateState("COUNT", count=count),
              AggregateState("SUM", count=3, total=Fraction(2**-1074) + 7, floats=1),
              AggregateState("AVG", count=4, total=Fraction(10)),
              AggregateState("MIN", extreme="Downtown"), AggregateState("MAX", extreme=2**62 + 1),
              AggregateState("MAX", extreme=None), AggregateState("MIN", extreme=-0.5)]  # fmt: skip
    for state in states:
        assert AggregateState.from_text(state.to_text()) == state


def test_combine_merges_partials_exactly_and_finalises():
    huge = 2**2000
    rows = [
        ("q", 0, 600_000_000, '{"district":"A"}', "COUNT(*)", AggregateState("COUNT", count=huge)),
        ("q", 0, 600_000_000, '{"district":"A"}', "COUNT(*)", AggregateState("COUNT", count=1)),
        ("q", 0, 600_000_000, '{"district":"A"}', "AVG(T.speed)", AggregateState("AVG", count=2, total=Fraction(7))),
        ("q", 0, 600_000_000, '{"district":"A"}', "AVG(T.speed)", AggregateState("AVG", count=1, total=Fraction(2))),
        ("q", 0, 600_000_000, '{"district":"A"}', "MIN(T.speed)", AggregateState("MIN", extreme=None)),
        ("q", 0, 600_000_000, '{"district":"A"}', "MIN(T.speed)", AggregateState("MIN", extreme=4.5)),
        ("q", 0, 600_000_000, '{"district":"A"}', "SUM(T.d)", AggregateState("SUM", count=0)),
        ("r", 5, 10, "{}", "COUNT(*)", AggregateState("COUNT", count=7)),
    ]  # fmt: skip
    names = ["query", "window_start_us", "window_end_us", "group_key", "aggregate", "state"]
    table = pa.table({n: [r[i] if n != "state" else r[5].to_text() for r in rows]
                      for i, n in enumerate(names)})  # fmt: skip
    out = {(r["query"], r["aggregate"]): r for r in engine.combine(table).to_pylist()}
    assert out["q", "COUNT(*)"]["value_exact"] == str(huge + 1)
    assert out["q", "COUNT(*)"]["value"] is None  # beyond double range
    assert out["q", "COUNT(*)"]["group"] == [("district", "A")]
    assert out["q", "AVG(T.speed)"]["value"] == 3.0 and out["q", "AVG(T.speed)"]["value_exact"] == "3.0"
    assert out["q", "MIN(T.speed)"]["value_exact"] == "4.5"
    assert out["q", "SUM(T.d)"]["value"] is None and out["q", "SUM(T.d)"]["value_exact"] is None
    assert out["r", "COUNT(*)"]["group"] == [] and out["r", "COUNT(*)"]["value_exact"] == "7"
    assert engine.combine(table).schema == engine.RESULT_SCHEMA


def test_run_partitions_keeps_windows_ending_in_the_range_and_reports_statistics():
    workload = parse_workload(
        "q: RETURN g, COUNT(*) PATTERN SEQ(A, B+) WHERE [k] GROUP-BY g WITHIN 10 SLIDE 5"
    )
    rows = [(f"e{t}", "A" if t % 4 == 0 else "B", t * 1_000_000, "x", t % 2) for t in range(40)]
    table = events_table(rows, {"g": pa.string(), "k": pa.int64()})
    task = engine.SetTask(workload.queries[0].text, "greta", ("g", "k"), ("g", "k"), 10_000_000, 25_000_000)
    out = engine.run_partitions(task, table).to_pylist()
    partials, stats = out[:-1], out[-1]
    assert {(p["window_start_us"], p["window_end_us"]) for p in partials} == {
        (5_000_000, 15_000_000),
        (10_000_000, 20_000_000),
        (15_000_000, 25_000_000),
    }  # ends in (10 s, 25 s]
    assert stats["kind"] == engine.STATS
    import json

    summary = json.loads(stats["state"])
    assert (summary["events"], summary["partitions"], summary["calls"]) == (40, 2, 1)
    assert summary["engine"]["events"] > 0
    assert engine.add_summaries([summary, summary])["partitions"] == 4
    idle = {**summary, "events": 0, "calls": 0}  # a call of the shared shuffle with none of the set's events
    skew = engine.add_summaries([summary, idle, {**summary, "events": 7}, {**summary, "events": 900}])
    assert skew["call_events"] == {"min": 7, "median": 40, "max": 900}
    assert skew["calls"] == 3


def test_the_generator_is_deterministic_and_bursty():
    assert rideshare_chunk(1, 500000, 0, 2000) == rideshare_chunk(1, 500000, 0, 2000)
    assert rideshare_chunk(1, 500000, 0, 500) != rideshare_chunk(2, 500000, 0, 500)
    rows = rideshare_chunk(1, 500000, 0, 2000)
    assert len(rows) == 2000 and len({r[0] for r in rows}) == 2000
    assert all(500000 * 3600 <= r[2] < 500001 * 3600 for r in rows)
    trips: dict[str, list[str]] = {}
    for r in rows:
        trips.setdefault(r[4], []).append(r[1])
    assert all(types[0] == "Request" for types in trips.values())  # each trip begins with its request
    assert max(types.count("Travel") for types in trips.values()) >= 8  # bursts of Travel
    assert {"Pickup", "Dropoff", "Cancel"} <= {r[1] for r in rows}
    stock = stock_chunk(3, 1, 2, 300)
    assert stock == stock_chunk(3, 1, 2, 300) and {r[1] for r in stock} == {"Stock"}
    assert chunk_sizes(120_001) == [40_001, 40_000, 40_000] and sum(chunk_sizes(1_000_000)) == 1_000_000
    table = chunk_table("rideshare", 1, 500000, 0, 100)
    assert table.column_names == ["event_id", "event_type", "event_time", *SCENARIOS["rideshare"], "event_date",
                                  "event_hour"]  # fmt: skip
    assert set(table.column("event_hour").to_pylist()) == {8}  # hour 500000 is 2027-01-15T08:00Z


def test_the_loader_rejects_rows_with_their_reasons():
    text = "\n".join([  # noqa: FLY002
        "event_type,event_time,event_id,driver,speed,duration",
        "Request,600,e1,d1,,",
        "Travel,abc,e2,d1,8,30",
        "Travel,630,e3,d1,fast,30",
        "Travel,640,e4,d1,8,3.5",
        ",650,e5,d1,8,3",
        "Travel,660,e6,d1,8",
        "Travel,670,e1,d1,8,3",
        "Travel,2026-01-05T08:00:00.25Z,e7,d1,8,99999999999999999999",
        "Travel,2026-01-05T08:00:00.25Z,e8,,9.5,-4",
    ])  # fmt: skip
    parsed = parse_csv(
        io.StringIO(text), "x.csv", {"driver": "string", "speed": "double", "duration": "bigint"}
    )
    assert [(r.line, r.reason) for r in parsed.rejected] == [
        (3, "event_time 'abc' is neither a number of seconds nor an ISO-8601 time"),
        (4, "speed 'fast' is not a number"),
        (5, "duration '3.5' is not an integer"),
        (6, "event_type is empty"),
        (7, "5 fields, but the header has 6"),
        (8, "event_id 'e1' was already used on line 2"),
        (9, "duration '99999999999999999999' does not fit in 64 bits"),
    ]
    assert parsed.rejected[0].row == "Travel,abc,e2,d1,8,30"
    assert [
        (r["event_id"], r["event_time"], r["driver"], r["speed"], r["duration"]) for r in parsed.rows
    ] == [
        ("e1", datetime(1970, 1, 1, 0, 10, tzinfo=UTC), "d1", None, None),
        ("e8", datetime(2026, 1, 5, 8, 0, 0, 250000, tzinfo=UTC), None, 9.5, -4),
    ]
    assert parsed.rows[1]["event_date"].isoformat() == "2026-01-05" and parsed.rows[1]["event_hour"] == 8


def test_the_loader_refuses_a_header_that_does_not_fit():
    with pytest.raises(LoadError, match="column\\(s\\) vehicle are not columns of the events table"):
        parse_csv(io.StringIO("event_type,event_time,vehicle\nA,1,v\n"), "x.csv", {"driver": "string"})
    with pytest.raises(LoadError, match="no event_time column"):
        parse_csv(io.StringIO("event_type,time\nA,1\n"), "x.csv", {})
    with pytest.raises(LoadError, match="^x.csv:1: more than one column named driver, v$"):
        parse_csv(
            io.StringIO("event_type,event_time,v,driver,v,driver\nA,1,2,d,3,e\n"),
            "x.csv",
            {"driver": "string"},
        )
    renamed = parse_csv(io.StringIO("event_type,event_time,type\nA,1,Pool\n"), "x.csv", {"request_type": "string"},
                        {"type": "request_type"})  # fmt: skip
    assert renamed.rows[0]["request_type"] == "Pool"
    # no event_id column: the id is the content's, whatever the file's name or the row's line
    assert renamed.rows[0]["event_id"] == content_id("A", 1_000_000, {"request_type": "Pool"})


def test_hour_partition_filters():
    def at(hour: int, minute: int = 0, day: int = 5) -> datetime:
        return datetime(2026, 1, day, hour, minute, tzinfo=UTC)

    assert (
        hour_partition_filter(at(7), at(9))
        == "event_date = DATE'2026-01-05' AND event_hour >= 7 AND event_hour <= 8"
    )
    assert hour_partition_filter(at(7, 30), at(9, 1)).endswith("event_hour >= 7 AND event_hour <= 9")
    assert hour_partition_filter(at(23), at(1, day=6)) == (
        "event_date >= DATE'2026-01-05' AND event_date <= DATE'2026-01-06'"
        " AND (event_date > DATE'2026-01-05' OR event_hour >= 23)"
        " AND (event_date < DATE'2026-01-06' OR event_hour <= 0)")  # fmt: skip


def test_settings_come_from_conf_then_environment_then_arguments(monkeypatch):
    monkeypatch.delenv("HAMLET_SPARK_MASTER", raising=False)
    monkeypatch.delenv("HAMLET_SPARK_CONF", raising=False)
    master, conf = settings(env="test")
    assert master == "local[2]" and conf["spark.sql.shuffle.partitions"] == "2"
    monkeypatch.setenv("HAMLET_SPARK_MASTER", "spark://127.0.0.1:7077")
    monkeypatch.setenv("HAMLET_SPARK_CONF", "spark.sql.shuffle.partitions=5; spark.a=b")
    master, conf = settings(env="test")
    assert (
        master == "spark://127.0.0.1:7077"
        and conf["spark.sql.shuffle.partitions"] == "5"
        and conf["spark.a"] == "b"
    )
    master, conf = settings("local[1]", {"spark.a": "c"}, env="test")
    assert master == "local[1]" and conf["spark.a"] == "c"
    with pytest.raises(ValueError, match="no .*nowhere.toml"):
        settings(env="nowhere")


def test_table_locations_keep_uris_and_make_local_paths_absolute(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert table_location("var/tables/events") == str(tmp_path / "var/tables/events")
    assert table_location("s3a://bucket/events") == "s3a://bucket/events"
    assert table_location("file:/data/events") == "file:/data/events"
    from jobs.aggregate import JobError, build_parser, make_plan

    args = build_parser().parse_args(["--workload", "missing.hamlet", "--start", "2026-01-05T08:00:00Z", "--end",
                                      "2026-01-05T09:00:00Z", "--events-table", "e", "--output-table", "o"])  # fmt: skip
    with pytest.raises(JobError, match="cannot read workload missing.hamlet"):
        make_plan(args)
