"""hamlet_trends_adhoc: reprocess any range with any workload and strategy, triggered from the UI."""

from __future__ import annotations

from datetime import timedelta

from airflow.sdk import DAG, Param

from hamlet import STRATEGIES
from jobs import airflow_tasks as tasks
from jobs.pipeline import ISO_WITH_OFFSET, load_config, shown_path, workload_choices

config = load_config()

START = "{{ params.start }}"
END = "{{ params.end }}"

with DAG(
    dag_id="hamlet_trends_adhoc",
    schedule=None,
    start_date=config.start_date,
    catchup=False,
    max_active_runs=config.max_active_runs,
    default_args=tasks.default_args(config),
    tags=["hamlet", "trends", "adhoc"],
    params={
        # An enum: any other file is refused when the run is triggered (and again by every task).
        "workload": Param(
            shown_path(config.workload),
            type="string",
            enum=workload_choices(config),
            description="workload file (conf/workloads/)",
        ),
        # The pattern is enforced at trigger time; check_params also checks start < end and the range.
        # Defaults: the first two hours of the settings' start_date, which scripts/demo fills with events.
        "start": Param(
            config.start_date.isoformat(),
            type="string",
            format="date-time",
            pattern=ISO_WITH_OFFSET,
            description="start (ISO-8601 with an offset, e.g. 2026-01-05T08:00:00+00:00)",
        ),
        "end": Param(
            (config.start_date + timedelta(hours=2)).isoformat(),
            type="string",
            format="date-time",
            pattern=ISO_WITH_OFFSET,
            description="end, exclusive: the windows that end in (start, end] are written",
        ),
        "strategy": Param(config.strategy, enum=list(STRATEGIES), description="engine strategy"),
    },
    doc_md=f"""
### Reprocess a range

**Trigger** this DAG and fill in the form: a workload of `conf/workloads/`, a range `[start, end)` (ISO-8601
with an offset, at most {config.max_range_hours} hours) and a strategy (`greta`, `static` or `hamlet`: same
results, different cost). `check_params` refuses anything else before a file or table is touched. It runs the same steps as `hamlet_trends_hourly` —
validate the input with Great Expectations (bad rows to quarantine), the Spark job, the check of its
Delta commit, the validation of the output — over the whole range at once, and replaces exactly the
windows that end in `(start, end]`.
""",
) as dag:
    tasks.pipeline(config, "{{ params.workload }}", START, END, "{{ params.strategy }}", checked=True)
