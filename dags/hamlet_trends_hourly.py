"""hamlet_trends_hourly_<workload>: one DAG per workload of conf/pipeline.toml ([[workloads]]); every hour of
its events becomes per-window trend aggregates (see doc_md below). A factory: the tasks are built in
jobs/airflow_tasks.py, the settings read by jobs/pipeline.py."""

from __future__ import annotations

from airflow.sdk import DAG, CronDataIntervalTimetable

from jobs import airflow_tasks as tasks
from jobs.pipeline import PipelineConfig, WorkloadEntry, load_config, shown_path

# Airflow 3: a plain cron string or @hourly gives zero-length data intervals; this timetable gives [h, h+1).
START = "{{ data_interval_start.isoformat() }}"
END = "{{ data_interval_end.isoformat() }}"


def hourly_dag(config: PipelineConfig, entry: WorkloadEntry) -> DAG:
    config = config.for_workload(entry.workload)
    workload = shown_path(entry.workload)  # as the ad hoc DAG offers it (jobs.pipeline.workload_choices)
    with DAG(
        dag_id=entry.dag_id,
        schedule=CronDataIntervalTimetable("0 * * * *", timezone="UTC"),
        start_date=config.start_date,
        catchup=config.catchup,
        max_active_runs=config.max_active_runs,
        default_args=tasks.default_args(config),
        tags=["hamlet", "trends", "hourly", entry.name],
        doc_md=tasks.hourly_doc(config, entry),
    ) as dag:
        (
            tasks.wait_for_events(config, START, END)
            >> tasks.pipeline(config, workload, START, END, config.strategy)[0]
        )
    return dag


settings = load_config()
for listed in settings.workloads:
    globals()[listed.dag_id] = hourly_dag(settings, listed)
