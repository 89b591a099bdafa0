"""``hamlet load-events`` on local Spark (and, for some, over a Spark Connect server) into real Delta tables
in a temporary folder: every row of a file is inserted, replaced, found unchanged or rejected with its
reason, and the command says how many of each (issue 20, item 4)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from spark_env import ROOT

from jobs.load_events import main

HAMLET = str(Path(sys.executable).parent / "hamlet")
HEADER = "event_type,event_time,driver,speed,duration"


def write(path: Path, *lines: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def load(capsys, *argv: str) -> tuple[int, str, str]:
    """(exit status, the load's report, stderr); the report is followed by the one-line summary every
    command ends with (its format: test_jars_and_logs.py)."""
    status = main(list(argv))
    out = capsys.readouterr()
    lines = out.out.strip().splitlines()
    if status == 0:
        assert len(lines) == 2 and lines[1].startswith("load-events "), lines
    return status, lines[0] if lines else "", out.err.strip()


@pytest.fixture(params=["local", "connect"])
def loader(request, capsys):
    """``load`` in this process (the test run's session), or ``hamlet load-events`` as a client of the test
    run's Spark Connect server (``[spark] server = true``): the same report either way."""
    if request.param == "local":
        return lambda *argv: load(capsys, *argv)
    env = request.getfixturevalue("spark_server")

    def remote(*argv: str) -> tuple[int, str, str]:
        done = subprocess.run([HAMLET, "load-events", *argv], env=env, cwd=ROOT, capture_output=True, text=True,
                              timeout=300, check=False)  # fmt: skip
        lines = done.stdout.strip().splitlines()
        assert "Traceback" not in done.stderr and len(lines) == 2 and lines[1].startswith("load-events "), (
            done
        )
        return done.returncode, lines[0], done.stderr.strip()

    return remote


def rows(spark, table: str) -> list[tuple]:
    frame = spark.read.format("delta").load(table)
    return sorted(tuple(r) for r in frame.select("event_type", "event_time", "driver", "speed").collect())


def test_files_with_the_same_name_in_the_same_hour_both_load(spark, tmp_path, capsys):
    table = str(tmp_path / "events")
    first = write(tmp_path / "a" / "trips.csv", HEADER, "Travel,2026-01-05T08:00:00Z,d1,10.0,5",
                  "Travel,2026-01-05T08:00:01Z,d1,11.0,5")  # fmt: skip
    second = write(tmp_path / "b" / "trips.csv", HEADER, "Travel,2026-01-05T08:00:00Z,d2,20.0,5",
                   "Travel,2026-01-05T08:00:01Z,d2,21.0,5")  # fmt: skip
    assert load(capsys, "--csv", first, "--table", table, "--scenario", "rideshare")[:2] == (
        0, f"2 events loaded into {table}: 2 new, 0 replaced, 0 unchanged (already loaded), 0 rejected")  # fmt: skip
    assert load(capsys, "--csv", second, "--table", table)[:2] == (
        0, f"2 events loaded into {table}: 2 new, 0 replaced, 0 unchanged (already loaded), 0 rejected")  # fmt: skip
    assert len(rows(spark, table)) == 4
    # reloading a file changes nothing, and says so
    assert load(capsys, "--csv", second, "--table", table)[:2] == (
        0, f"0 events loaded into {table}: 0 new, 0 replaced, 2 unchanged (already loaded), 0 rejected")  # fmt: skip
    assert len(rows(spark, table)) == 4
    ids = {r.event_id for r in spark.read.format("delta").load(table).select("event_id").collect()}
    assert len(ids) == 4 and all(i.startswith("sha256:") and len(i) == 39 for i in ids)


def test_a_corrected_re_export_replaces_the_rows_it_changes_or_is_rejected_on_request(
    spark, tmp_path, loader
):
    table = str(tmp_path / "events")
    header = "event_id,event_type,event_time,driver,speed"
    original = write(tmp_path / "v1.csv", header, "e1,Travel,2026-01-05T08:00:00Z,d1,10.0",
                     "e2,Travel,2026-01-05T08:10:00Z,d1,11.0")  # fmt: skip
    corrected = write(tmp_path / "v2.csv", header, "e1,Travel,2026-01-05T08:00:00Z,d1,12.5",
                      "e2,Travel,2026-01-05T09:10:00Z,d1,11.0", "e3,Travel,2026-01-05T08:20:00Z,d1,9.0")  # fmt: skip
    loader("--csv", original, "--table", table, "--scenario", "rideshare")
    status, out, err = loader("--csv", corrected, "--table", table, "--existing", "reject")
    assert (status, out) == (
        1, f"1 events loaded into {table}: 1 new, 0 replaced, 0 unchanged (already loaded), 2 rejected")  # fmt: skip
    assert err.splitlines() == [
        (
            f"{corrected}:2: rejected: event_id 'e1' is already in the table with other values (--existing reject): "
            "e1,Travel,2026-01-05T08:00:00Z,d1,12.5"
        ),
        (
            f"{corrected}:3: rejected: event_id 'e2' is already in the table with other values (--existing reject): "
            "e2,Travel,2026-01-05T09:10:00Z,d1,11.0"
        ),
    ]
    assert loader("--csv", corrected, "--table", table)[:2] == (
        0, f"2 events loaded into {table}: 0 new, 2 replaced, 1 unchanged (already loaded), 0 rejected")  # fmt: skip
    frame = spark.read.format("delta").load(table)
    assert sorted(tuple(r) for r in frame.select("event_id", "speed", "event_hour").collect()) == [
        ("e1", 12.5, 8), ("e2", 11.0, 9), ("e3", 9.0, 8)]  # fmt: skip
    assert frame.where("event_id = 'e2'").count() == 1  # moved to its new hour, not duplicated


def test_reloading_a_file_keeps_its_rejects_once(spark, tmp_path, loader):
    table, rejects = str(tmp_path / "events"), str(tmp_path / "rejects")
    source = write(tmp_path / "bad.csv", HEADER, "Travel,2026-01-05T08:00:00Z,d1,fast,5",
                   "Travel,2026-01-05T08:00:01Z,d1,11.0,5")  # fmt: skip
    for _ in range(2):
        status, out, _err = loader("--csv", source, "--table", table, "--scenario", "rideshare",
                                   "--rejects", rejects, "--max-rejects", "1")  # fmt: skip
        assert status == 0 and out.endswith(", 1 rejected")
    kept = spark.read.format("delta").load(rejects).select("source", "line", "row", "reason").collect()
    assert [tuple(r) for r in kept] == [
        (
            str(Path(source).resolve()),
            2,
            "Travel,2026-01-05T08:00:00Z,d1,fast,5",
            "speed 'fast' is not a number",
        )
    ]
    # fixed: its rejects go, another file's stay
    other = write(tmp_path / "other.csv", HEADER, "Travel,x,d1,1.0,5")
    loader("--csv", other, "--table", table, "--rejects", rejects, "--max-rejects", "1")
    write(tmp_path / "bad.csv", HEADER, "Travel,2026-01-05T08:00:00Z,d1,10.0,5")
    assert loader("--csv", source, "--table", table, "--rejects", rejects)[0] == 0
    kept = spark.read.format("delta").load(rejects).select("source", "line").collect()
    assert [tuple(r) for r in kept] == [(str(Path(other).resolve()), 2)]


@pytest.mark.parametrize("given_id", [False, True])
def test_a_second_identical_row_in_one_file_is_rejected_with_its_reason(tmp_path, given_id):
    import io

    from jobs.load_events import parse_csv

    header = ("event_id," if given_id else "") + "event_type,event_time,speed"
    prefix = "e1," if given_id else ""
    text = "\n".join([header, f"{prefix}Travel,60,1.5", f"{prefix}Travel,60,1.5", "\n"])
    parsed = parse_csv(io.StringIO(text), "x.csv", {"speed": "double"})
    reason = ("event_id 'e1' was already used on line 2" if given_id else
              "the same event as line 2 (same type, time and values; an event_id column tells identical events apart)")  # fmt: skip
    assert [(r.line, r.reason) for r in parsed.rejected] == [(3, reason)]
    assert len(parsed.rows) == 1


NUMBERS = ["7", "+7", "-7", " 7 ", "1.5", ".5", "5.", "1e3", "-2.5E-3", "1_000", "١٢٣", "²", "nan", "inf",
           "-Infinity", "0x10", "1e", "e3", "+", "7 7", "１２"]  # fmt: skip


@pytest.mark.parametrize("text", NUMBERS)
def test_the_loader_and_the_engine_agree_on_what_a_number_is(text):
    from hamlet.io import parse_value
    from jobs.load_events import _cell

    engine = parse_value(text)
    for kind in ("bigint", "double"):
        try:
            loaded = _cell(kind, "x", text)
        except ValueError:
            loaded = None
        if isinstance(engine, str):  # not a number for the engine: no number for the loader either
            assert loaded is None
        elif kind == "double" or isinstance(engine, int):
            assert loaded == engine and type(loaded) is (float if kind == "double" else int)
        else:
            assert loaded is None  # a decimal in an integer column


def test_nul_bytes_and_empty_ids_are_rejected_by_the_loader():
    import io

    from jobs.load_events import parse_csv

    text = "event_id,event_type,event_time,driver\ne1,Travel,60,d\x001\n ,Travel,61,d1\ne\x002,Travel,62,d1\ne4,Tr\x00,63,d1\n"
    parsed = parse_csv(io.StringIO(text), "x.csv", {"driver": "string"})
    assert [(r.line, r.reason) for r in parsed.rejected] == [
        (2, "driver holds a NUL byte"),
        (3, "event_id is empty"),
        (4, "event_id holds a NUL byte"),
        (5, "event_type holds a NUL byte"),
    ]
    assert parsed.rows == []


EXTREME_TIMES = [  # (event_time as written, reason)
    ("0001-01-01T00:00:00Z", ("event_time '0001-01-01T00:00:00Z' lies outside 1970-01-01T00:00:00+00:00 to "
     "2200-01-01T00:00:00+00:00 (--earliest, --latest)")),
    ("1582-10-15T00:00:00Z", ("event_time '1582-10-15T00:00:00Z' lies outside 1970-01-01T00:00:00+00:00 to "
     "2200-01-01T00:00:00+00:00 (--earliest, --latest)")),
    ("9999-12-31T23:59:59Z", ("event_time '9999-12-31T23:59:59Z' lies outside 1970-01-01T00:00:00+00:00 to "
     "2200-01-01T00:00:00+00:00 (--earliest, --latest)")),
    ("2200-01-01T00:00:00Z", ("event_time '2200-01-01T00:00:00Z' lies outside 1970-01-01T00:00:00+00:00 to "
     "2200-01-01T00:00:00+00:00 (--earliest, --latest)")),
    ("-1", ("event_time '-1' lies outside 1970-01-01T00:00:00+00:00 to 2200-01-01T00:00:00+00:00 (--earliest, "
     "--latest)")),
    ("1e300", "event_time 1e+300 lies outside the years 1 to 9999 (-62135596800 to 253402300799 s)"),
]  # fmt: skip


def test_times_outside_the_range_are_rejected_and_the_table_stays_readable(spark, tmp_path, capsys):
    from jobs.tables import read_pandas

    table = str(tmp_path / "events")
    lines = [HEADER, "Travel,2199-12-31T23:59:59Z,d1,10.0,5", "Travel,1970-01-01T00:00:00Z,d1,10.0,5"]
    source = write(tmp_path / "times.csv", *lines, *(f"Travel,{t},d1,10.0,5" for t, _ in EXTREME_TIMES))
    status, out, err = load(capsys, "--csv", source, "--table", table, "--scenario", "rideshare")
    assert (status, out) == (
        1, f"2 events loaded into {table}: 2 new, 0 replaced, 0 unchanged (already loaded), 6 rejected")  # fmt: skip
    assert err.splitlines() == [f"{source}:{4 + i}: rejected: {reason}: Travel,{t},d1,10.0,5"
                                for i, (t, reason) in enumerate(EXTREME_TIMES)]  # fmt: skip
    frame = read_pandas(table)  # raised for a table holding years 1, 1582 or 9999
    assert sorted(str(t) for t in frame["event_time"]) == [
        "1970-01-01 00:00:00+00:00",
        "2199-12-31 23:59:59+00:00",
    ]
    # the range is a setting; it cannot reach beyond what deltalake and pandas read
    narrow = write(tmp_path / "narrow.csv", HEADER, "Travel,2026-01-05T08:00:00Z,d1,10.0,5")
    status, out, err = load(capsys, "--csv", narrow, "--table", table, "--earliest", "2027-01-01")
    assert (status, err.splitlines()[0]) == (1, (f"{narrow}:2: rejected: event_time '2026-01-05T08:00:00Z' lies "
        "outside 2027-01-01T00:00:00+00:00 to 2200-01-01T00:00:00+00:00 (--earliest, --latest): "
        "Travel,2026-01-05T08:00:00Z,d1,10.0,5"))  # fmt: skip
    assert load(capsys, "--csv", narrow, "--table", table, "--latest", "3000-01-01") == (1, "", (
        "error: --earliest 1970-01-01T00:00:00+00:00 and --latest 3000-01-01T00:00:00+00:00: need 1970-01-01 <= "
        "earliest < latest <= 2262-04-11T00:00:00+00:00"))  # fmt: skip


def test_generate_refuses_hours_outside_the_range_before_spark_starts(capsys):
    from jobs.generate import main as generate

    argv = [
        "--scenario",
        "rideshare",
        "--start",
        "9999-01-01T00:00:00Z",
        "--events-per-hour",
        "1",
        "--table",
        "x",
    ]
    assert generate(argv) == 1
    assert capsys.readouterr().err == ("error: the hours from --start 9999-01-01T00:00:00+00:00 must lie in "
        "1970-01-01T00:00:00+00:00 to 2200-01-01T00:00:00+00:00 (readable by deltalake and pandas)\n")  # fmt: skip


RANGE = ("the hours from --start 2026-01-05T00:00:00+00:00 must lie in 1970-01-01T00:00:00+00:00 to "
         "2200-01-01T00:00:00+00:00 (readable by deltalake and pandas)")  # fmt: skip
TOO_MANY = (
    "--hours × --events-per-hour is {} events, more than 10,000,000,000 in one run: generate them in several"
)


@pytest.mark.parametrize(
    "hours, rate, message",
    [
        (
            "99999999",
            "1",
            RANGE,
        ),  # (a date past the range: a Python OverflowError before, with its traceback)
        # (a plan of a row per 50,000 events, built in the driver: it had filled the machine's memory)
        ("1", "99999999999999", TOO_MANY.format("99,999,999,999,999")),
        ("1000", "10000001", TOO_MANY.format("10,000,001,000")),
    ],
)
def test_generate_refuses_unbounded_runs_before_spark_starts(hours, rate, message, capsys):
    from jobs.generate import main as generate

    argv = ["--scenario", "rideshare", "--start", "2026-01-05T00:00:00Z", "--hours", hours, "--events-per-hour",
            rate, "--table", "x"]  # fmt: skip
    assert generate(argv) == 1
    assert capsys.readouterr().err == f"error: {message}\n"


def test_a_bom_is_read_and_an_unreadable_line_is_rejected_alone(tmp_path):
    from hamlet.io import open_csv
    from jobs.load_events import describe_rejects, parse_csv

    path = tmp_path / "e.csv"
    path.write_bytes(b"\xef\xbb\xbfevent_type,event_time,speed,driver\nTravel,60,1.5,d\xff1\n"
                     b"Travel,61,\"" + b"9" * 200_000 + b"\",d1\nTravel,62,1e400,d1\nTravel,63,"
                     + b"9" * 5000 + b",d1\nTravel,64,2.5,d1\n")  # fmt: skip
    with open_csv(str(path)) as f:
        parsed = parse_csv(f, str(path), {"speed": "double", "driver": "string"})
    assert [(r.line, r.reason) for r in parsed.rejected] == [
        (2, "column 4: byte 0xff is not UTF-8"),
        (3, "not CSV: field larger than field limit (131072)"),
        (4, "speed '1e400' is beyond the range of a double"),
        (
            5,
            "speed '9999999999999999999999999999999999999999...' has 5000 digits (an integer may have at most 4300)",
        ),
    ]
    assert parsed.rejected[0].row == "Travel,60,1.5,d\\xff1"  # storable text, the byte shown
    assert parsed.rejected[1].row == 'Travel,61,"' + "9" * 200_000 + '",d1'  # kept whole, though unsplit
    assert [(r["event_type"], r["speed"], r["driver"]) for r in parsed.rows] == [("Travel", 2.5, "d1")]
    # printed shorter: the rejects table keeps the row, the terminal needs its start
    assert list(describe_rejects(parsed, "e.csv"))[1] == (
        'e.csv:3: rejected: not CSV: field larger than field limit (131072): Travel,61,"' + "9" * 189
        + "... (200,015 characters)"
    )  # fmt: skip


def test_a_rejected_row_is_printed_with_its_control_characters_escaped(tmp_path):
    """The rejects table keeps the row as it was; the terminal gets a NUL or a bidi override as its escape
    (printed raw, they corrupt what follows on the screen)."""
    from hamlet.io import open_csv
    from jobs.load_events import describe_rejects, parse_csv

    path = tmp_path / "e.csv"
    path.write_text("event_type,event_time,speed,driver\nTravel,60,1.5,d\x001\u202e\nTravel,61,2.5,d1\n")
    with open_csv(str(path)) as f:
        parsed = parse_csv(f, str(path), {"speed": "double", "driver": "string"})
    assert [r.row for r in parsed.rejected] == ["Travel,60,1.5,d\x001\u202e"]
    assert list(describe_rejects(parsed, "e.csv")) == [
        "e.csv:2: rejected: driver holds a NUL byte: Travel,60,1.5,d\\x001\\u202e"
    ]


def test_a_quote_never_closed_is_rejected_where_it_opens_not_read_as_one_long_value(tmp_path):
    """Without strict CSV, the record of line 3 took lines 3-5 as its last field and kept the header's width:
    a Travel with a driver of three lines, and the two events after it gone without a reason."""
    from hamlet.io import open_csv
    from jobs.load_events import parse_csv

    path = tmp_path / "e.csv"
    path.write_text('event_type,event_time,speed,driver\nTravel,60,1.5,d1\nTravel,61,2.5,"d2\nTravel,62,3.5,d3\n'
                    "Travel,63,4.5,d4\n")  # fmt: skip
    with open_csv(str(path)) as f:
        parsed = parse_csv(f, str(path), {"speed": "double", "driver": "string"})
    assert [(r.line, r.reason, r.row) for r in parsed.rejected] == [
        (3, "a quoted field starts here and is never closed (its closing quote is missing)",
         'Travel,61,2.5,"d2\nTravel,62,3.5,d3\nTravel,63,4.5,d4')  # the lines it took, for the rejects table
    ]  # fmt: skip
    assert [(r["event_type"], r["speed"], r["driver"]) for r in parsed.rows] == [("Travel", 1.5, "d1")]


def test_a_folder_or_a_negative_max_rejects_is_refused_before_spark_starts(tmp_path, capsys):
    """A folder was "no file"; --max-rejects -1 was taken, so that every load exited 1 (a CLI audit)."""
    assert main(["--csv", str(tmp_path), "--table", str(tmp_path / "events")]) == 1
    assert capsys.readouterr().err == f"error: no regular file {tmp_path}\n"
    source = write(tmp_path / "e.csv", HEADER, "Travel,2026-01-05T08:00:00Z,d1,10.0,5")
    with pytest.raises(SystemExit) as refused:
        main(["--csv", source, "--table", str(tmp_path / "events"), "--max-rejects", "-1"])
    assert refused.value.code == 2
    assert capsys.readouterr().err.endswith("error: --max-rejects takes 0 or more\n")
    assert not (tmp_path / "events").exists()
