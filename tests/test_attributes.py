"""Workloads checked against the attributes of their events: unknown names and type mismatches, each at its
line and column; the shipped workloads against the generator's scenarios; `hamlet check --scenario`."""

from __future__ import annotations

from pathlib import Path

import pytest

from hamlet import parse_workload
from hamlet.analysis.attributes import attribute_errors, kind
from hamlet.cli import main
from jobs.schema import SCENARIOS

ROOT = Path(__file__).resolve().parent.parent
RIDESHARE = SCENARIOS["rideshare"]
KNOWN = "driver, rider, district, request_type, speed, duration"

WRONG = """\
q1: RETURN COUNT(*), SUM(T.duraton)
    PATTERN SEQ(Request R, Travel T+, NOT Pickup P)
    WHERE [driver, ridr] AND T.district < 10
    GROUP-BY T.distrct
    WITHIN 30 min
q2: RETURN COUNT(*), AVG(R.request_type), MAX(T.speed)
    PATTERN SEQ(Request R, Travel T+)
    WHERE R.request_type = Pool AND (T.speed + T.district > 3 OR -T.rider < 2) AND T.speed = fast
    WITHIN 30 min
"""


def messages(text: str, schema: dict[str, str], where: str = "the rideshare scenario") -> list[str]:
    return [e.describe() for e in attribute_errors(parse_workload(text), schema, where)]


def test_every_unknown_attribute_and_mismatch_is_named_at_its_line_and_column():
    assert messages(WRONG, RIDESHARE) == [
        (
            f"query 'q1', line 1, column 26: T.duraton: the rideshare scenario has no attribute duraton (did you mean "
            f"duration?); its attributes: {KNOWN}"
        ),
        (
            f"query 'q1', line 3, column 20: ridr: the rideshare scenario has no attribute ridr (did you mean rider?); "
            f"its attributes: {KNOWN}"
        ),
        (
            "query 'q1', line 3, column 30: the condition T.district < 10 compares T.district (string) with the "
            "number 10: it is false for every event"
        ),
        (
            f"query 'q1', line 4, column 14: T.distrct: the rideshare scenario has no attribute distrct (did you mean "
            f"district?); its attributes: {KNOWN}"
        ),
        (
            "query 'q2', line 6, column 26: AVG(R.request_type): AVG takes a number attribute; request_type is string "
            "in the rideshare scenario"
        ),
        "query 'q2', line 8, column 48: '+' takes numbers; T.district (string) is not one: the result is null",
        "query 'q2', line 8, column 67: '-' takes numbers; T.rider (string) is not one: the result is null",
        (
            "query 'q2', line 8, column 84: the condition T.speed = 'fast' compares T.speed (double) with the string "
            "'fast': it is false for every event"
        ),
    ]


def test_a_workload_that_uses_its_attributes_as_their_types_allow_fits():
    text = """\
q: RETURN T.district, COUNT(T), SUM(T.duration), MIN(T.speed), AVG(T.duration)
   PATTERN SEQ(Request R, Travel T+)
   WHERE [driver, rider] AND R.request_type = 'Pool' AND T.speed * 2 > T.duration % 7 AND T.speed > NEXT(T).speed
     AND (T.district = Harbor OR T.district != T.driver)
   GROUP-BY T.district
   WITHIN 1 h
"""
    assert messages(text, RIDESHARE) == []


def test_types_of_other_kinds_are_compared_only_with_their_kind():
    schema = {"k": "string", "at": "timestamp", "ok": "boolean", "tags": "array", "n": "decimal(10,2)"}
    text = (
        "q: RETURN COUNT(*), SUM(A.n) PATTERN SEQ(A, B+) WHERE [k] AND B.ok = true AND B.tags = 1 WITHIN 10\n"
    )
    assert messages(text, schema, "t") == [
        (
            "query 'q', line 1, column 63: the condition B.ok = 'true' compares B.ok (boolean) with the string 'true': "
            "it is false for every event"
        )
    ]
    assert [kind(t) for t in ("long", "integer", "decimal(38,0)", "varchar(8)", "timestamp_ntz", "map")] == [
        "number", "number", "number", "string", "timestamp without a zone", "other",
    ]  # fmt: skip


def test_a_date_and_a_timestamp_are_two_kinds_and_a_struct_groups_nothing():
    """A date is no datetime and a zoned timestamp no naive one (``predicates.kind``: the engine compares them
    as only unequal); a GROUP-BY or equivalence list over a struct or a list, which the engine refuses event by
    event, is refused by ``check`` too (it passed, and the job failed)."""
    schema = {
        "day": "date",
        "at": "timestamp",
        "local": "timestamp_ntz",
        "s": "struct<a:int>",
        "l": "array<int>",
    }
    text = (
        "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE A.day < NEXT(B).at AND B.at = B.local WITHIN 10\n"
        "r: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [l] AND B.at > NEXT(B).at GROUP-BY s WITHIN 10\n"
    )
    assert messages(text, schema, "t") == [
        (
            "query 'q', line 1, column 45: the condition A.day < NEXT(B).at compares A.day (date) with NEXT(B).at "
            "(timestamp): it is false for every event"
        ),
        (
            "query 'q', line 1, column 68: the condition B.at = B.local compares B.at (timestamp) with B.local "
            "(timestamp_ntz): it is false for every event"
        ),
        (
            "query 'r', line 2, column 46: l: l is array<int> in t; GROUP-BY and equivalence lists take an attribute "
            "of single values (a number, a text, a bool, a date or a time)"
        ),
        (
            "query 'r', line 2, column 80: s: s is struct<a:int> in t; GROUP-BY and equivalence lists take an "
            "attribute of single values (a number, a text, a bool, a date or a time)"
        ),
    ]


@pytest.mark.parametrize(
    ("workload", "scenario"),
    [("rideshare_trips", "rideshare"), ("rideshare50", "rideshare"), ("stock", "stock")],
)
def test_the_shipped_workloads_fit_the_scenario_they_are_written_for(workload, scenario):
    text = (ROOT / "conf" / "workloads" / f"{workload}.hamlet").read_text(encoding="utf-8")
    assert messages(text, SCENARIOS[scenario]) == []


def test_hamlet_check_against_a_scenario(tmp_path, capsys):
    good = ROOT / "conf" / "workloads" / "rideshare_trips.hamlet"
    assert main(["check", str(good), "--scenario", "rideshare"]) == 0
    assert capsys.readouterr().out == (
        f"{good}: 4 queries OK (q1, q2, q3, q4); its attributes fit the rideshare scenario\n"
    )
    bad = tmp_path / "bad.hamlet"
    bad.write_text("q: RETURN COUNT(*), SUM(T.duraton) PATTERN SEQ(Request R, Travel T+) WITHIN 10 min\n")
    assert main(["check", str(bad), "--scenario", "rideshare"]) == 1
    assert capsys.readouterr().err == (
        f"error: {bad}:1:25: query 'q': T.duraton: the rideshare scenario has no attribute duraton (did you mean "
        f"duration?); its attributes: {KNOWN}\n"
        "  q: RETURN COUNT(*), SUM(T.duraton) PATTERN SEQ(Request R, Travel T+) WITHIN 10 min\n"
        "                          ^\n"
    )
    for name in ("weather", ""):  # (an empty name had skipped the check: "OK")
        assert main(["check", str(good), "--scenario", name]) == 1
        assert (
            capsys.readouterr().err == f"error: unknown scenario {name!r}; known: rideshare, stock, sensor\n"
        )
