"""The main job end to end on the embedded default (``scripts/demo``): demo events into the local Delta
events table, the hourly DAG run for each of those hours, a summary of the output table.

    python -m jobs.demo [--hours 3] [--events-per-hour 2000]

Run it with the project's Airflow environment (scripts/demo sets it: ``python -m jobs.airflow_home env``).
Each hour is one ``dag.test()`` run of ``hamlet_trends_hourly`` — the same tasks the scheduler runs (sensor,
validation, spark-submit, commit check, output validation) — in this process, which keeps one Spark session
for the validation tasks instead of starting a JVM per task. Each run is the one the scheduler makes for
its hour (run id, logical date = the hour's start, data interval), so a later backfill or scheduler run of
those hours finds it instead of adding a second run for the hour.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from jobs.logs import quiet
from jobs.pipeline import ROOT, load_config, shown_path

REPORT = ROOT / "var" / "report.html"
# dag.test() logs Airflow's bookkeeping of every task at INFO (the task runner's frames, state updates, rendered
# fields, DAG serialization): 131 of the 258 lines of a one-hour demo. What a user reads stays: each task's
# summary (its print, or the spark-submit output its hook relays) and dag.test's own progress lines.
BOOKKEEPING_LOGGERS = ("task", "airflow.models", "airflow.serialization", "airflow.dag_processing",
                       "airflow.api_fastapi", "airflow.utils.db", "alembic", "airflow.task.operators", "airflow.sdk",
                       "great_expectations")  # fmt: skip


def quiet_bookkeeping() -> None:
    """Airflow's bookkeeping loggers at WARNING for this process, unless ``[logging] namespace_levels`` is set
    (before Airflow is imported: it reads its configuration then)."""
    levels = " ".join(f"{name}=WARNING" for name in BOOKKEEPING_LOGGERS)
    os.environ.setdefault("AIRFLOW__LOGGING__NAMESPACE_LEVELS", levels)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--hours", type=int, default=3, help="hours of events, one DAG run each (default 3)")
    parser.add_argument("--events-per-hour", type=int, default=2000)
    args = parser.parse_args(argv)
    if args.hours < 1 or args.events_per_hour < 0:
        print("error: --hours must be at least 1 and --events-per-hour at least 0", file=sys.stderr)
        return 1
    quiet_bookkeeping()
    quiet()
    config = load_config()
    first = config.start_date
    end = first + timedelta(hours=args.hours)
    from airflow.dag_processing.dagbag import DagBag

    from jobs.generate import generate
    from jobs.session import build_session

    failed = []
    spark = build_session("hamlet-demo")
    try:
        for entry in config.workloads:
            generate(
                spark, entry.scenario, first, args.hours, args.events_per_hour, entry.events_table, seed=2021
            )
            print(f"generated {args.hours} h × {args.events_per_hour} {entry.scenario} events from "
                  f"{first.isoformat()} into {shown_path(entry.events_table)}")  # fmt: skip
        bag = DagBag()
        if bag.import_errors:
            print(f"error: DAG import errors: {bag.import_errors}", file=sys.stderr)
            return 1
        for entry in config.workloads:
            dag = bag.dags[entry.dag_id]
            for scheduled in scheduled_runs(dag, first, args.hours):
                run = run_scheduled(dag, scheduled)
                print(f"{entry.dag_id} {run.run_id} [{run.data_interval_start}, {run.data_interval_end}): "
                      f"{run.state}")  # fmt: skip
                if run.state != "success":
                    failed.append(run.run_id)
    finally:
        spark.stop()
    for entry in config.workloads:
        print(summary(config.output_table, config.quarantine_table, first, end, entry.name))
        print(sharing_summary(config.stats_table, entry.name, first, end))
    from jobs.report import write_report

    report = write_report(config.output_table, config.stats_table, REPORT,
                          workloads=[e.name for e in config.workloads])  # fmt: skip
    print(f"\nreport: {report} (open it in a browser; `hamlet report --table {shown_path(config.output_table)} "
          "--output report.html` makes another)")  # fmt: skip
    if failed:
        print(f"error: failed runs: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


@dataclass(frozen=True)
class ScheduledRun:
    run_id: str
    logical_date: datetime
    data_interval: tuple[datetime, datetime]
    run_after: datetime


def scheduled_runs(dag: Any, first: datetime, hours: int) -> list[ScheduledRun]:
    """The runs of ``dag`` for the ``hours`` hours from ``first``, as its timetable gives them to the
    scheduler and to ``airflow backfill create --from-date FIRST --to-date LAST_HOUR_START`` (the same
    iteration), with the scheduler's run ids. For an hourly CronDataIntervalTimetable the logical date is the
    hour's start, the run id holds its end: [00:00, 01:00) is ``scheduled__2026-01-05T01:00:00+00:00``."""
    from airflow.serialization.serialized_objects import DagSerialization
    from airflow.utils.types import DagRunType

    scheduler_dag = DagSerialization.deserialize_dag(DagSerialization.serialize_dag(dag))
    last = first + timedelta(hours=hours - 1)
    return [
        ScheduledRun(
            run_id=scheduler_dag.timetable.generate_run_id(
                run_type=DagRunType.SCHEDULED, run_after=info.run_after, data_interval=info.data_interval
            ),
            logical_date=info.logical_date,
            data_interval=(info.data_interval.start, info.data_interval.end),
            run_after=info.run_after,
        )
        for info in (scheduler_dag.iter_dagrun_infos_between(first, last) if hours > 0 else [])
    ]


def run_scheduled(dag: Any, scheduled: ScheduledRun) -> Any:
    """``dag.test()`` of the scheduled run ``scheduled``, replacing any run of its logical date (as
    ``dag.test()`` does); returns the DagRun.

    ``dag.test(logical_date=d)`` makes a manual run whose data interval is the hour that *ends* at ``d``,
    ``d`` being the logical date of the scheduler's run for the next hour: both cannot exist (one run per
    logical date), so the scheduler and backfills skip that next hour, and a backfill of the hour itself runs
    it a second time. So the helper with
    which ``dag.test()`` creates its run (Airflow 3.3) is swapped, for this call, for one that creates the
    scheduler's run; the run id is checked afterwards, which catches an Airflow that no longer calls it.

    Unlike ``dag.test()``'s own run it is made as a manual trigger is: started now (not at the logical date:
    the UI showed durations of months), ``run_after`` now (the UI's Home counts the runs whose run_after
    lies in its time range, the last 24 hours by default: a past hour's run_after, its end, would leave
    "Success 0" there) and triggered by the CLI (``scripts/demo``), not "dag_test"."""
    from unittest import mock

    from airflow.models import dagrun
    from airflow.sdk import timezone
    from airflow.utils.state import DagRunState
    from airflow.utils.types import DagRunTriggeredByType, DagRunType
    from sqlalchemy import select

    def create_scheduled_run(*, dag: Any, session: Any, conf: Any, start_date: datetime, triggered_by: Any,
                             triggering_user_name: str | None, **manual: Any) -> Any:  # fmt: skip
        now = timezone.utcnow()
        existing = session.scalar(
            select(dagrun.DagRun).where(
                dagrun.DagRun.dag_id == dag.dag_id, dagrun.DagRun.logical_date == scheduled.logical_date
            )
        )
        if existing is not None:
            session.delete(existing)
            session.commit()
        return dag.create_dagrun(
            run_id=scheduled.run_id,
            logical_date=scheduled.logical_date,
            data_interval=scheduled.data_interval,
            run_after=now,
            conf=conf,
            run_type=DagRunType.SCHEDULED,
            state=DagRunState.RUNNING,
            triggered_by=DagRunTriggeredByType.CLI,
            triggering_user_name=triggering_user_name,
            start_date=now,
            session=session,
        )

    with mock.patch.object(dagrun, "get_or_create_dagrun", create_scheduled_run):
        run = dag.test(logical_date=scheduled.logical_date, run_after=scheduled.run_after)
    if run.run_id != scheduled.run_id:
        raise RuntimeError(f"dag.test() made the run {run.run_id}, not {scheduled.run_id}: this Airflow "
                           "version creates its run differently; see jobs/demo.py run_scheduled")  # fmt: skip
    return run


def summary(output_table: str, quarantine_table: str, start: datetime, end: datetime, workload: str) -> str:
    """Rows per query of ``workload`` for the windows that end in (start, end], and a sample; read with
    deltalake."""
    from jobs.tables import read_arrow, read_pandas

    frame = read_pandas(output_table, filters=[("workload", "=", workload)])
    frame = frame[(frame.window_end > start) & (frame.window_end <= end)]
    per_query = frame.groupby("query").agg(
        rows=("aggregate", "size"), windows=("window_end", "nunique"), groups=("group_key", "nunique")
    )
    sample = frame.sort_values(["query", "window_end", "group_key", "aggregate"]).head(8)
    columns = ["query", "window_start", "window_end", "group_key", "aggregate", "value_exact"]
    quarantine = read_arrow(quarantine_table)
    quarantined = sum(1 for w in quarantine.column("workload").to_pylist() if w == workload)
    head = (f"\n{workload}: {len(frame)} rows in {shown_path(output_table)} for windows ending in "
            f"({start:%Y-%m-%d %H:%M}, {end:%Y-%m-%d %H:%M}] UTC")  # fmt: skip
    return "\n".join([
        head,
        per_query.to_string(),
        "\nsample:",
        sample[columns].to_string(index=False),
        f"\nquarantined rows: {quarantined} ({shown_path(quarantine_table)})",
    ])  # fmt: skip


def sharing_summary(stats_table: str, workload: str, start: datetime, end: datetime) -> str:
    """What the optimizer did for ``workload`` in the committed runs of [start, end), from ``run_stats``:
    per sharable query set, the bursts, how many it shared and in how many graphlets."""
    from jobs.report import sharing_totals

    totals = sharing_totals(stats_table, workload, start, end)
    if not totals:
        return f"{workload}: no committed run in {shown_path(stats_table)}"
    lines = [f"what the optimizer shared ({shown_path(stats_table)}, {len(totals[0].runs)} runs):"]
    for t in totals:
        lines.append(f"  {t.strategy} {{{', '.join(t.queries)}}}: {t.shared_bursts} of {t.bursts} bursts "
                     f"shared in {t.graphlets} graphlets ({t.splits} splits, {t.merges} merges), "
                     f"{t.events} events")  # fmt: skip
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
