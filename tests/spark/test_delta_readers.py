"""Every project path that reads Delta through ``deltalake`` survives a short process (issue 20, item 11):
300 processes, each reading the events and output tables as the summaries and tests do (``jobs.tables``)
and checking the commit and the input as the Airflow tasks do, all exit 0 with the same counts. Through
deltalake's default Python filesystem about 1 in 40 to 1 in 300 such processes aborted at exit
(``terminate called without an active exception``, exit -6): see jobs/tables.py."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

from spark_env import START

ROOT = Path(__file__).resolve().parents[2]
PROCESSES = 300
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
