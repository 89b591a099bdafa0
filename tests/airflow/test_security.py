"""What a trigger can do (issue 20, Security): the ad hoc DAG's Params cannot name a file outside
conf/workloads/ or a time that is not one, a name cannot leave its SQL string, a run id cannot move Data
Docs elsewhere."""

from __future__ import annotations

import pytest
from airflow_env import WORK

OFFERED = ("conf/workloads/cluster.hamlet, conf/workloads/factory_sensors.hamlet, conf/workloads/heartbeat.hamlet, "
           "conf/workloads/rideshare.hamlet, conf/workloads/rideshare50.hamlet, "
           "conf/workloads/rideshare_trips.hamlet, conf/workloads/stock.hamlet, conf/workloads/traffic.hamlet")  # fmt: skip
GOOD = {
    "workload": "conf/workloads/rideshare_trips.hamlet",
    "start": "2026-01-05T09:00:00+00:00",
    "end": "2026-01-05T10:00:00+00:00",
    "strategy": "greta",
}


def adhoc_dag():
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag()
    assert bag.import_errors == {}
    return bag.dags["hamlet_trends_adhoc"]


def trigger_check(conf: dict[str, str]) -> None:
    """What the API server does with a trigger's conf (POST .../dagRuns answers 400 when this raises): the
    serialized DAG's Params merged with the conf and validated."""
    from airflow.serialization.serialized_objects import DagSerialization

    serialized = DagSerialization.from_dict(DagSerialization.to_dict(adhoc_dag()))
    serialized.params.deep_merge(conf).validate()


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("workload", "/etc/passwd"),
        ("workload", "conf/workloads/../../../etc/shadow"),
        ("workload", "/proc/self/environ"),
        ("start", "not a date"),
        ("start", "2026-01-05T09:00:00"),  # no offset
        ("end", "2026-01-05"),
    ],
)
def test_a_trigger_with_a_file_outside_the_workloads_or_a_bad_time_is_refused(airflow_home, key, value):
    from airflow.exceptions import ParamValidationError

    trigger_check(GOOD)  # the good request passes
    with pytest.raises(ParamValidationError) as refused:
        trigger_check({**GOOD, key: value})
    assert f"Invalid input for param {key}" in str(refused.value)
    assert "root:" not in str(refused.value)


def run_adhoc(conf: dict[str, str]):
    run = adhoc_dag().test(run_conf=conf)
    return run, {ti.task_id: ti.state for ti in run.get_task_instances()}


def test_check_params_fails_the_run_at_once_on_a_range_the_schema_cannot_judge(airflow_home, capfd):
    # start after end, and a range longer than [adhoc] max_range_hours (744): both valid ISO-8601 strings
    for start, end, message in [
        ("2026-01-05T10:00:00+00:00", "2026-01-05T09:00:00+00:00",
         "start 2026-01-05T10:00:00+00:00 must be before end 2026-01-05T09:00:00+00:00"),
        ("2026-01-05T09:00:00+00:00", "2027-01-05T09:00:00+00:00",
         ("[2026-01-05T09:00:00+00:00, 2027-01-05T09:00:00+00:00) is longer than 744 hours ([adhoc] "
          f"max_range_hours in {WORK / 'pipeline.toml'}): split it into several runs")),
        ("2026-01-05T09:00:00+00:00", "2026-02-30T09:00:00+00:00",
         "end '2026-02-30T09:00:00+00:00' is not an ISO-8601 time such as 2026-01-05T08:00:00+00:00"),
    ]:  # fmt: skip
        run, states = run_adhoc({**GOOD, "start": start, "end": end})
        assert run.state == "failed"
        assert states == {"check_params": "failed", "validate_events": "upstream_failed",
                          "aggregate": "upstream_failed", "verify_commit": "upstream_failed",
                          "validate_aggregates": "upstream_failed"}  # fmt: skip
        log = capfd.readouterr()
        assert message in log.out + log.err


def test_every_task_that_reads_the_workload_checks_it_against_the_offered_ones(tmp_path):
    """A Param that got past the trigger form (a task run alone, a run whose check was marked done) still
    never makes a task open another file: the validation gate and the Spark job refuse it first."""
    from jobs.aggregate import JobError, build_parser, make_plan
    from jobs.pipeline import PipelineError, allowed_workload, clipped, load_config, workload_choices

    config = load_config()
    with pytest.raises(PipelineError) as refused:
        allowed_workload("/etc/passwd", workload_choices(config))
    assert str(refused.value) == f"workload '/etc/passwd' is not one of the workloads offered: {OFFERED}"
    assert (
        allowed_workload("conf/workloads/stock.hamlet", workload_choices(config)).read_text().startswith("--")
    )

    secret = tmp_path / "secret.hamlet"
    secret.write_text("password=hunter2\n")
    argv = ["--workload", str(secret), "--start", GOOD["start"], "--end", GOOD["end"], "--events-table", "e",
            "--output-table", "o"]  # fmt: skip
    with pytest.raises(JobError) as quoted:  # the command line alone reads what its user names ...
        make_plan(build_parser().parse_args(argv))
    assert "hunter2" in str(quoted.value)
    allowed = ["--allowed-workload", "conf/workloads/rideshare_trips.hamlet"]
    with pytest.raises(JobError) as refused_job:  # ... the Airflow task passes the DAG's choices
        make_plan(build_parser().parse_args(argv + allowed))
    assert str(refused_job.value) == (
        f"workload {clipped(str(secret))!r} is not one of the workloads offered: "
        "conf/workloads/rideshare_trips.hamlet"
    )


def test_names_and_run_ids_cannot_leave_their_sql_string_or_folder(tmp_path):
    from datetime import UTC, datetime

    from jobs.pipeline import PipelineError
    from jobs.validate import EVENTS, Scope, docs_folder, quarantine_scope

    docs = tmp_path / "data_docs"
    assert docs_folder(docs, "..") == docs / "_."
    assert docs_folder(docs, ".") == docs / "_"
    assert docs_folder(docs, "../../etc") == docs / "_._.._etc"
    assert docs_folder(docs, "") == docs / "_"
    assert (
        docs_folder(docs, "manual__2026-01-05T09:00:00+00:00") == docs / "manual__2026-01-05T09_00_00_00_00"
    )
    moment = datetime(2026, 1, 5, 9, tzinfo=UTC)
    scope = Scope(EVENTS, "x' OR '1'='1", moment, moment, "run")
    with pytest.raises(PipelineError) as refused:
        quarantine_scope(scope)
    assert str(refused.value) == "workload name \"x' OR '1'='1\": use letters, digits, '_', '.', '-'"


def test_a_bad_time_reaches_no_task_as_a_raw_value_error():
    from jobs.pipeline import PipelineError, instant

    with pytest.raises(PipelineError) as refused:
        instant("not a date", "start")
    assert (
        str(refused.value) == "start 'not a date' is not an ISO-8601 time such as 2026-01-05T08:00:00+00:00"
    )
