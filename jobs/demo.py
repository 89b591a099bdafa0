"""The main job end to end on the embedded default (``scripts/demo``): demo events into the local Delta
events table, the hourly DAG run for each of those hours, a summary of the output table.

    python -m jobs.demo [--hours 3] [--events-per-hour 2000]

Run it with the project's Airflow environment (scripts/demo sets it: ``python -m jobs.airflow_home env``).
Each hour is one ``dag.test()`` run of ``hamlet_trends_hourly`` — the same tasks the scheduler runs (sensor,
validation, spark-submit, commit check, output validation) — in this process, which keeps one Spark session
for the validation tasks instead of starting a JVM per task.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timedelta

from jobs.pipeline import load_config, shown_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--hours", type=int, default=3, help="hours of events, one DAG run each (default 3)")
    parser.add_argument("--events-per-hour", type=int, default=2000)
    args = parser.parse_args(argv)
    config = load_config()
    first = config.start_date
    from airflow.dag_processing.dagbag import DagBag

    from jobs.generate import generate
    from jobs.session import build_session

    spark = build_session("hamlet-demo")
    try:
        generate(spark, "rideshare", first, args.hours, args.events_per_hour, config.events_table, seed=2021)
        print(f"generated {args.hours} h × {args.events_per_hour} rideshare events from {first.isoformat()} "
              f"into {shown_path(config.events_table)}")  # fmt: skip
        bag = DagBag()
        if bag.import_errors:
            print(f"error: DAG import errors: {bag.import_errors}", file=sys.stderr)
            return 1
        dag = bag.dags["hamlet_trends_hourly"]
        failed = []
        for hour in range(1, args.hours + 1):
            run = dag.test(logical_date=first + timedelta(hours=hour))
            print(f"hamlet_trends_hourly [{run.data_interval_start}, {run.data_interval_end}): {run.state}")
            if run.state != "success":
                failed.append(run.run_id)
    finally:
        spark.stop()
    print(summary(config.output_table, config.quarantine_table, first, first + timedelta(hours=args.hours)))
    if failed:
        print(f"error: failed runs: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def summary(output_table: str, quarantine_table: str, start: datetime, end: datetime) -> str:
    """Rows per query of the windows that end in (start, end], and a sample; read with deltalake."""
    from deltalake import DeltaTable

    frame = DeltaTable(output_table).to_pandas()
    frame = frame[
        (frame.window_end > start) & (frame.window_end <= end)
    ]
    per_query = frame.groupby("query").agg(
        rows=("aggregate", "size"), windows=("window_end", "nunique"), groups=("group_key", "nunique")
    )
    sample = frame.sort_values(["query", "window_end", "group_key", "aggregate"]).head(8)
    columns = ["query", "window_start", "window_end", "group_key", "aggregate", "value_exact"]
    quarantined = DeltaTable(quarantine_table).to_pyarrow_table().num_rows
    head = (f"\n{shown_path(output_table)}: {len(frame)} rows for windows ending in ({start:%Y-%m-%d %H:%M}, "
            f"{end:%Y-%m-%d %H:%M}] UTC")  # fmt: skip
    return "\n".join([
        head,
        per_query.to_string(),
        "\nsample:",
        sample[columns].to_string(index=False),
        f"\nquarantined rows: {quarantined} ({shown_path(quarantine_table)})",
    ])  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
