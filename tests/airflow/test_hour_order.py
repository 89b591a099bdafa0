"""Hours in order on every path (issue 17, item 6): a backfill brings its own max active runs (10 by default),
so the DAG's max_active_runs=1 does not hold there; the hourly aggregate's depends_on_past does. Checked with
Airflow's own dependency rule (PrevDagrunDep, the one the scheduler evaluates) on a real backfill created in
the metadata DB, as `airflow backfill create --max-active-runs 10` creates it; no scheduler, no Spark."""

from __future__ import annotations

from datetime import UTC, datetime

DAG_ID = "hamlet_trends_hourly_factory_sensors"


def hour(h: int) -> datetime:
    return datetime(2026, 2, 1, h, tzinfo=UTC)


def statuses(ti, session) -> list[tuple[bool, str]]:
    from airflow.ti_deps.dep_context import DepContext
    from airflow.ti_deps.deps.prev_dagrun_dep import PrevDagrunDep

    return [(s.passed, s.reason) for s in PrevDagrunDep().get_dep_statuses(ti, DepContext(), session=session)]


def test_a_backfill_of_any_parallelism_aggregates_the_hours_in_order(airflow_home):
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import DagBag, sync_bag_to_db
    from airflow.models import DagRun
    from airflow.models.backfill import ReprocessBehavior, _create_backfill
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.utils.session import create_session
    from airflow.utils.state import TaskInstanceState
    from sqlalchemy import select

    DagBundlesManager().sync_bundles_to_db()
    bag = DagBag()
    assert bag.import_errors == {}
    sync_bag_to_db(bag, "dags-folder", None)
    # (with depends_on_past, Airflow requires a reprocess behavior: failed = "missing and errored runs")
    backfill = _create_backfill(dag_id=DAG_ID, from_date=hour(0), to_date=hour(2), max_active_runs=10,
                                reverse=False, dag_run_conf={}, triggering_user_name="test",
                                reprocess_behavior=ReprocessBehavior.FAILED)  # fmt: skip
    assert backfill.max_active_runs == 10
    with create_session() as session:
        dag = session.scalar(SerializedDagModel.latest_item_select_object(DAG_ID)).dag
        runs = session.scalars(
            select(DagRun).where(DagRun.backfill_id == backfill.id).order_by(DagRun.logical_date)
        ).all()
        assert [r.logical_date for r in runs] == [hour(0), hour(1), hour(2)]
        aggregates = []
        for run in runs:
            ti = run.get_task_instance("aggregate", session=session)
            ti.task = dag.get_task("aggregate")
            aggregates.append(ti)
        session.flush()
        # 00:00 may start (the first run of the backfill); 01:00 waits for 00:00's aggregate, 02:00 for 01:00's
        assert statuses(aggregates[0], session) == [(True, "Task instance is first run in a backfill.")]
        waiting = "depends_on_past is true for this task, but 1 previous task instance(s) are not in a successful state."
        assert statuses(aggregates[1], session) == [(False, waiting)]
        assert statuses(aggregates[2], session) == [(False, waiting)]
        # validations are not held back: only the aggregate reads the previous hour
        validate = runs[2].get_task_instance("validate_events", session=session)
        validate.task = dag.get_task("validate_events")
        assert statuses(validate, session) == [(True, "The task did not have depends_on_past set.")]
        aggregates[0].state = TaskInstanceState.SUCCESS
        session.flush()
        assert statuses(aggregates[1], session) == []  # met: no failing status
        assert statuses(aggregates[2], session) == [(False, waiting)]
        session.rollback()
