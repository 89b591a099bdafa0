"""Every project path that reads Delta through ``deltalake`` survives a short process (issue 20, item 11).
Through deltalake's default Python filesystem about 1 in 40 to 1 in 300 such processes aborted at exit
(``terminate called without an active exception``, exit -6): see jobs/tables.py.

* Every time: no project code scans a Delta table's rows without Arrow's own filesystem (an AST check; it
  found the one read that still did, the Airflow task's ``_finished_without_rows``).
* As a user runs them: 40 processes, each reading the events and output tables as the summaries and tests
  do (``jobs.tables``) and checking the commit and the input as the Airflow tasks do, all exit 0 with the
  same counts. (It ran 300 while it was the only guard: a cost of 104 s in the suite, for a regression
  caught 99 % of the time instead of 81 % with 100; the AST check now catches that one every time, and these
  processes stay to catch an abort from elsewhere, a new deltalake or Arrow: 40, about 25 s, catch one in
  40 processes 64 % of the time.)"""

from __future__ import annotations

import ast
import collections
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

from spark_env import START

ROOT = Path(__file__).resolve().parents[2]
PROCESSES = 40
SCANS = {"to_pyarrow_table", "to_pyarrow_dataset", "to_pandas"}  # DeltaTable's reads of rows (not its log)
READER = """
import sys
from jobs.schema import table_attributes
from jobs.pipeline import input_ready, verify_commit
from jobs.tables import read_arrow, read_pandas
events, output, run_id, start, end = sys.argv[1:]
commit = verify_commit(output, run_id, "trips", start, end)
print(read_arrow(events).num_rows, len(read_pandas(output)), commit["rows"], input_ready(events, start, end),
      sorted(table_attributes(events)))
"""


def test_hundreds_of_short_reader_processes_all_exit_cleanly(spark, events_table, workload_file, tmp_path):
    from jobs.aggregate import build_parser, make_plan, run
    from jobs.schema import table_attributes

    output = str(tmp_path / "trend_aggregates")
    start, end = START + timedelta(hours=2), START + timedelta(hours=3)
    argv = ["--workload", str(workload_file), "--start", start.isoformat(), "--end", end.isoformat(),
            "--events-table", events_table, "--output-table", output, "--workload-name", "trips",
            "--run-id", "reader-run", "--strategy", "greta"]  # fmt: skip
    result = run(spark, make_plan(build_parser().parse_args(argv)))
    events = spark.read.format("delta").load(events_table).count()
    expected = (
        f"{events} {result.rows_written} {result.rows_written} True {sorted(table_attributes(events_table))}"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def reader(_: int) -> tuple[int, str]:
        done = subprocess.run([sys.executable, "-c", READER, events_table, output, "reader-run", start.isoformat(),
                               end.isoformat()], env=env, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        return done.returncode, done.stdout.strip() or done.stderr.strip()[-200:]

    # Two at a time (the machine's cores): each process is its own interpreter, as the Airflow tasks are.
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = collections.Counter(pool.map(reader, range(PROCESSES)))
    assert outcomes == {(0, expected): PROCESSES}


def scans_without_arrow_filesystem(tree: ast.AST) -> list[int]:
    """Lines where a ``DeltaTable`` (made in place, or a name bound to one in the same scope) scans its rows
    without a ``filesystem=``: deltalake's Python filesystem, which can abort a short process at exit."""
    tables: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _makes_delta_table(node.value):
            tables |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in SCANS
        and (
            _makes_delta_table(node.func.value)
            or (isinstance(node.func.value, ast.Name) and node.func.value.id in tables)
        )
        and not any(k.arg == "filesystem" for k in node.keywords)
    ]


def _makes_delta_table(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "DeltaTable"


def test_no_project_code_scans_a_delta_table_through_deltalakes_python_filesystem():
    """What the processes above catch 1 time in 40 to 300, caught every time: every read of a Delta table's
    rows in the project (jobs, DAGs, plugins, the engine, scripts) goes through ``jobs.tables``."""
    found = {
        str(path.relative_to(ROOT)): lines
        for folder in ("jobs", "dags", "plugins", "hamlet", "scripts")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (lines := scans_without_arrow_filesystem(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert found == {}


def test_the_check_finds_a_scan_through_deltalakes_python_filesystem():
    source = """
from deltalake import DeltaTable
rows = DeltaTable(a).to_pyarrow_table(columns=c)
table = DeltaTable(b)
frame = table.to_pandas()
safe = DeltaTable(a).to_pyarrow_table(filesystem=fs)
log = DeltaTable(a).history()
other = arrow_table.to_pandas()
"""
    assert scans_without_arrow_filesystem(ast.parse(source)) == [3, 5]
