"""Where a command may write: never over one of its own inputs, never inside a table it reads, never into a
FIFO or a device (the write blocks forever or goes nowhere), never into folders it would have to invent.

Found by a hostile-input hunt: `hamlet evaluate --events E --output E` replaced the events with JSON lines
and exited 0; `hamlet report --output T/_delta_log/00000000000000000000.json` wrote HTML over the table's
log; `report --output` made any missing folders; an output FIFO blocked both commands forever."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hamlet.cli import main

WORKLOAD = "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10\n"
EVENTS = "event_type,event_time\nA,1\nB,2\n"


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "w.hamlet").write_text(WORKLOAD)
    (tmp_path / "e.csv").write_text(EVENTS)
    return tmp_path / "w.hamlet", tmp_path / "e.csv"


def evaluate(workload: Path, events: Path, output: Path | str) -> list[str]:
    return ["evaluate", "--workload", str(workload), "--events", str(events), "--output", str(output)]


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """In a child with a timeout: a FIFO the command opened would block this test forever."""
    return subprocess.run([sys.executable, "-m", "hamlet.cli", *argv], capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip


def test_evaluate_refuses_to_write_over_its_events_or_workload(inputs, capsys):
    workload, events = inputs
    assert main(evaluate(workload, events, events)) == 1
    assert capsys.readouterr() == (
        "",
        f"error: cannot write output {events}: it is the events file {events}\n",
    )
    assert main(evaluate(workload, events, workload)) == 1
    assert capsys.readouterr() == (
        "",
        f"error: cannot write output {workload}: it is the workload {workload}\n",
    )
    assert (events.read_text(), workload.read_text()) == (EVENTS, WORKLOAD)


def test_evaluate_refuses_an_output_that_links_to_an_input(inputs, capsys):
    workload, events = inputs
    (events.parent / "link.jsonl").symlink_to(events)
    os.link(events, events.parent / "hard.jsonl")
    for output in ("link.jsonl", "hard.jsonl"):
        assert main(evaluate(workload, events, events.parent / output)) == 1
        assert capsys.readouterr() == (
            "",
            f"error: cannot write output {events.parent / output}: it is the events file {events}\n",
        )
    assert events.read_text() == EVENTS


def test_evaluate_refuses_a_fifo_or_a_device(inputs):
    workload, events = inputs
    os.mkfifo(events.parent / "out.fifo")
    for output in (events.parent / "out.fifo", Path("/dev/null")):
        done = run(evaluate(workload, events, output))
        assert (done.returncode, done.stdout, done.stderr) == (
            1, "", f"error: cannot write output {output}: not a regular file (a device, a FIFO or a socket)\n"
        )  # fmt: skip


def test_evaluate_still_writes_a_new_file_or_replaces_an_old_output(inputs, capsys):
    workload, events = inputs
    output = events.parent / "o.jsonl"
    for _ in range(2):  # new, then replaced
        assert main(evaluate(workload, events, output)) == 0
        assert capsys.readouterr() == ("", f"1 rows written to {output}\n")
        assert output.read_text() == '{"query": "q", "window_start": 0, "window_end": 10, "group": {}, ' \
                                     '"aggregate": "COUNT(*)", "value": 1}\n'  # fmt: skip


# ----------------------------------------------------------------------------------------------- report


def write_table(location: Path) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake

    end = datetime(2026, 1, 5, 0, 10, tzinfo=UTC)
    write_deltalake(str(location), pa.Table.from_pylist([{"workload": "w", "query": "q", "window_end": end,
                    "group_key": "{}", "aggregate": "COUNT(*)", "value": 1.0, "value_exact": "1"}]))  # fmt: skip


def report(table: Path, output: Path | str, *extra: str) -> list[str]:
    return ["report", "--table", str(table), "--output", str(output), *extra]


def test_report_refuses_to_write_inside_a_table_it_reads(tmp_path, capsys):
    pytest.importorskip("deltalake")
    table, stats = tmp_path / "trend_aggregates", tmp_path / "stats"
    write_table(table)
    write_table(stats)  # any Delta table: the check comes before any read
    log = table / "_delta_log" / "00000000000000000000.json"
    before = log.read_bytes()
    assert main(report(table, log)) == 1
    assert capsys.readouterr() == (
        "",
        f"error: cannot write report {log}: it lies inside the table {table}\n",
    )
    assert log.read_bytes() == before
    # through a symbolic link to the table's folder, and inside --stats-table (or run_stats beside the table)
    (tmp_path / "alias").symlink_to(table)
    assert main(report(table, tmp_path / "alias" / "r.html")) == 1
    assert capsys.readouterr() == (
        "", f"error: cannot write report {tmp_path / 'alias' / 'r.html'}: it lies inside the table {table}\n"
    )  # fmt: skip
    assert main(report(table, stats / "r.html", "--stats-table", str(stats))) == 1
    assert capsys.readouterr() == (
        "", f"error: cannot write report {stats / 'r.html'}: it lies inside the stats table {stats}\n"
    )  # fmt: skip
    assert main(report(table, tmp_path / "run_stats" / "r.html")) == 1
    assert capsys.readouterr() == ("", (f"error: cannot write report {tmp_path / 'run_stats' / 'r.html'}: it lies "
                                   f"inside the stats table {tmp_path / 'run_stats'}\n"))  # fmt: skip
    assert sorted(p.name for p in table.iterdir()) == [
        "_delta_log",
        *(p.name for p in table.glob("*.parquet")),
    ]


def test_report_makes_no_missing_folders(tmp_path, capsys):
    pytest.importorskip("deltalake")
    table = tmp_path / "trend_aggregates"
    write_table(table)
    output = tmp_path / "new" / "deep" / "r.html"
    assert main(report(table, output)) == 1
    assert capsys.readouterr() == ("", f"error: cannot write report {output}: No such file or directory\n")
    assert not (tmp_path / "new").exists()
    (tmp_path / "file").write_text("")
    assert main(report(table, tmp_path / "file" / "r.html")) == 1
    assert capsys.readouterr() == (
        "",
        f"error: cannot write report {tmp_path / 'file' / 'r.html'}: Not a directory\n",
    )
    assert main(report(table, tmp_path)) == 1
    assert capsys.readouterr() == ("", f"error: cannot write report {tmp_path}: Is a directory\n")
    assert main(report(table, tmp_path / "r.html")) == 0
    assert capsys.readouterr() == (f"report written to {tmp_path / 'r.html'}\n", "")


def test_report_refuses_a_fifo_or_a_device(tmp_path):
    pytest.importorskip("deltalake")
    table = tmp_path / "trend_aggregates"
    write_table(table)
    os.mkfifo(tmp_path / "r.fifo")
    for output in (tmp_path / "r.fifo", Path("/dev/null")):
        done = run(report(table, output))
        assert (done.returncode, done.stdout, done.stderr) == (
            1, "", f"error: cannot write report {output}: not a regular file (a device, a FIFO or a socket)\n"
        )  # fmt: skip


def test_the_pipeline_still_makes_its_reports_folder(tmp_path):
    """write_report's callers in the pipeline (Airflow's aggregates task, scripts/demo) write into their
    configured reports folder, made on first use: only `hamlet report` refuses to invent folders."""
    pytest.importorskip("deltalake")
    from jobs.report import write_report

    table = tmp_path / "trend_aggregates"
    write_table(table)
    assert (
        write_report(str(table), None, tmp_path / "reports" / "w.html", ["w"])
        == tmp_path / "reports" / "w.html"
    )
    assert (tmp_path / "reports" / "w.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
