"""scripts/demo runs each hour as the run the scheduler makes for it (jobs/demo.py); test_pipeline.py runs
one such run for real and checks that a backfill finds it."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def hour(h: int) -> datetime:
    return datetime(2026, 1, 5, h, tzinfo=UTC)


def test_the_demo_runs_are_the_runs_the_scheduler_makes_for_its_hours():
    from airflow.dag_processing.dagbag import DagBag

    from jobs.demo import ScheduledRun, scheduled_runs

    bag = DagBag()
    assert bag.import_errors == {}
    dag = bag.dags["hamlet_trends_hourly_rideshare_trips"]
    # logical date: the hour's start (dag.test(logical_date=01:00) would run [00:00, 01:00) under 01:00, the
    # logical date of the scheduler's run for [01:00, 02:00)); run id: scheduled__ and the hour's end
    assert scheduled_runs(dag, hour(0), 3) == [
        ScheduledRun("scheduled__2026-01-05T01:00:00+00:00", hour(0), (hour(0), hour(1)), hour(1)),
        ScheduledRun("scheduled__2026-01-05T02:00:00+00:00", hour(1), (hour(1), hour(2)), hour(2)),
        ScheduledRun("scheduled__2026-01-05T03:00:00+00:00", hour(2), (hour(2), hour(3)), hour(3)),
    ]
    assert scheduled_runs(dag, hour(23), 2)[1] == ScheduledRun(
        "scheduled__2026-01-06T01:00:00+00:00",
        datetime(2026, 1, 6, 0, tzinfo=UTC),
        (datetime(2026, 1, 6, 0, tzinfo=UTC), datetime(2026, 1, 6, 1, tzinfo=UTC)),
        datetime(2026, 1, 6, 1, tzinfo=UTC),
    )
    assert scheduled_runs(dag, hour(0), 0) == []


def test_the_demo_quiets_airflows_bookkeeping_and_keeps_the_tasks_summaries():
    """In a process of its own, as scripts/demo runs (Airflow reads its configuration when first imported): the
    loggers of the task runner and the models at WARNING, spark-submit's relayed output (the aggregate task's
    summary) at INFO."""
    code = (
        "from jobs.demo import quiet_bookkeeping\n"
        "quiet_bookkeeping()\n"
        "import airflow, structlog\n"
        "structlog.get_logger('task').info('runner-line')\n"
        "structlog.get_logger('airflow.models.dagrun.DagRun').info('dagrun-line')\n"
        "structlog.get_logger('airflow.task.hooks.airflow.providers.apache.spark.hooks.spark_submit.SparkSubmitHook')"
        ".info('summary-line')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "AIRFLOW__LOGGING__NAMESPACE_LEVELS"}
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "summary-line" in out and "runner-line" not in out and "dagrun-line" not in out, out
