"""Windows per event are bounded (issue 20, item 8): a query whose windows would hold each event more than
``--max-windows-per-event`` times (10,000 by default) is refused at its SLIDE, before any event is read."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

from hamlet import QueryError, parse_workload
from hamlet.cli import main

HEAD = "q: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B+) "


@pytest.mark.parametrize(
    "window, column, message",
    [
        ("WITHIN 100000 h SLIDE 1 sec", 71,
         "WITHIN 100000 h SLIDE 1 sec puts every event in 360000000 windows; at most 10000 (--max-windows-per-event)"),
        ("WITHIN 1 s SLIDE 0.000001 sec", 66,
         "WITHIN 1 s SLIDE 0.000001 sec puts every event in 1000000 windows; at most 10000 (--max-windows-per-event)"),
        ("WITHIN 10001 SLIDE 1", 68,
         "WITHIN 10001 SLIDE 1 puts every event in 10001 windows; at most 10000 (--max-windows-per-event)"),
    ],
)  # fmt: skip
def test_too_many_windows_per_event_is_refused_at_the_slide(window, column, message):
    with pytest.raises(QueryError) as caught:
        parse_workload(HEAD + window)
    assert (caught.value.query, caught.value.line, caught.value.column, caught.value.message) == (
        "q", 1, column, message)  # fmt: skip


def test_the_bound_is_inclusive_and_configurable(tmp_path, capsys):
    assert parse_workload(HEAD + "WITHIN 10000 SLIDE 1").queries[0].window.per_event() == 10_000
    assert parse_workload(HEAD + "WITHIN 100000 h SLIDE 1 sec", max_windows_per_event=None).queries
    path = tmp_path / "w.hamlet"
    path.write_text(HEAD + "WITHIN 2 h SLIDE 1 min\n")
    assert main(["check", str(path)]) == 0
    assert main(["check", "--max-windows-per-event", "100", str(path)]) == 1
    assert capsys.readouterr().err.splitlines()[0] == (
        f"error: {path}:1:66: query 'q': WITHIN 2 h SLIDE 1 min puts every event in 120 windows; at most 100 "
        "(--max-windows-per-event)")  # fmt: skip


EVALUATE = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))
from hamlet.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_evaluate_refuses_before_reading_events_instead_of_growing_past_gigabytes(tmp_path):
    (tmp_path / "w.hamlet").write_text(HEAD + "WITHIN 100000 h SLIDE 1 sec\n")
    rows = "".join(f"{'A' if t % 10 == 0 else 'B'},{t},{t}\n" for t in range(150))
    (tmp_path / "e.csv").write_text("event_type,event_time,x\n" + rows)
    argv = ["evaluate", "--workload", str(tmp_path / "w.hamlet"), "--events", str(tmp_path / "e.csv")]
    out, err = tmp_path / "out", tmp_path / "err"
    with out.open("w") as stdout, err.open("w") as stderr:
        child = subprocess.Popen([sys.executable, "-c", EVALUATE, *argv], stdout=stdout, stderr=stderr)
    killer = threading.Timer(120, child.kill)
    killer.start()
    # This child's own peak (wait4), not RUSAGE_CHILDREN's: that is the largest of every child the test run
    # reaped before, a Spark JVM among them.
    _, status, usage = os.wait4(child.pid, 0)
    killer.cancel()
    child.returncode = os.waitstatus_to_exitcode(status)
    done = subprocess.CompletedProcess(child.args, child.returncode, out.read_text(), err.read_text())
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines()[0] == (
        f"error: {tmp_path / 'w.hamlet'}:1:71: query 'q': WITHIN 100000 h SLIDE 1 sec puts every event in "
        "360000000 windows; at most 10000 (--max-windows-per-event)")  # fmt: skip
    assert usage.ru_maxrss < 1_500_000  # KiB: far below the limit
