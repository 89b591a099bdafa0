"""hamlet_trends_hourly: every hour of events becomes per-window trend aggregates (see doc_md below)."""

from __future__ import annotations

from airflow.sdk import DAG, CronDataIntervalTimetable

from jobs import airflow_tasks as tasks
from jobs.pipeline import load_config, shown_path

config = load_config()

# Airflow 3: a plain cron string or @hourly gives zero-length data intervals; this timetable gives [h, h+1).
START = "{{ data_interval_start.isoformat() }}"
END = "{{ data_interval_end.isoformat() }}"
WORKLOAD = shown_path(config.workload)  # as the ad hoc DAG offers it (jobs.pipeline.workload_choices)

with DAG(
    dag_id="hamlet_trends_hourly",
    schedule=CronDataIntervalTimetable("0 * * * *", timezone="UTC"),
    start_date=config.start_date,
    catchup=config.catchup,
    max_active_runs=config.max_active_runs,
    default_args=tasks.default_args(config),
    tags=["hamlet", "trends", "hourly"],
    doc_md=f"""
### Trend aggregates, hour by hour

Each run covers one hour of events, its data interval `[start, end)`, and writes the aggregates of every
window of the workload **`{config.workload.name}`** that ends in `(start, end]` — so the runs of
consecutive hours together equal one run over the whole range, and rerunning an hour replaces its rows.

1. **wait_for_events** — waits (reschedule mode, up to {config.sensor_timeout_minutes} min) until the events
   table holds the hour: its partition, or a later one.
2. **validate_events** — Great Expectations (`expectations/events.json`, `events_{config.scenario}.json`):
   rows that fail (null ids, unknown event types, duplicate ids, values out of range, times outside the
   hour) go to the quarantine table with the reason; above {config.max_bad_fraction:.0%} bad rows the run fails.
3. **aggregate** — `spark-submit jobs/aggregate.py` on the connection `spark_default` (edit it to run on a
   cluster), strategy `{config.strategy}`, leaving quarantined rows out.
4. **verify_commit** — the Delta commit of this run for this hour must exist in the output table.
5. **validate_aggregates** — Great Expectations on the rows written (`expectations/trend_aggregates.json`);
   success updates the Asset `hamlet_trend_aggregates`, which downstream DAGs can be scheduled on.

Tables: events `{config.events_table}`, output `{config.output_table}`, quarantine
`{config.quarantine_table}`; Data Docs per run under `{config.data_docs}`. Settings: `{config.source}`.
Catchup is **{"on" if config.catchup else "off"}** (`[schedule] catchup`): unpausing this DAG runs
{"every hour since the start date" if config.catchup else "only the latest complete hour"}, then each new
hour. Backfill past hours: **Trigger → Backfill** in this DAG's page, or
`airflow backfill create --dag-id hamlet_trends_hourly --from-date 2026-01-05T00:00:00+00:00 --to-date 2026-01-05T05:00:00+00:00` (both bounds inclusive: the hours 00:00 to 05:00).
""",
) as dag:
    (
        tasks.wait_for_events(config, START, END)
        >> tasks.pipeline(config, WORKLOAD, START, END, config.strategy)[0]
    )
