"""Validation gates with Great Expectations 1.x: the input events of an interval before the aggregation
job, the aggregates it wrote after it.

    hamlet validate events|aggregates --start ISO --end ISO [--run-id ID] [--conf conf/pipeline.toml]

The suites are JSON files in ``expectations/`` (``events.json`` plus ``events_<scenario>.json`` for the
input, ``trend_aggregates.json`` for the output), loaded into an ephemeral GX context per run, so no GX state
lives anywhere but in the files. Per-run values (the workload's event types, the interval) are GX suite
parameters (``{"$PARAMETER": ...}``).

Row-level failures are identified by a fingerprint of the whole row (``jobs.schema.row_fingerprint``; a row
with a null or duplicate id has no other identity) and written to the ``quarantine`` Delta table with the
reason, the expectation and the run id; the aggregation job leaves quarantined rows out, so the good rows are
processed. The gate fails (ValidationFailed, naming the failed expectations) when a table-level expectation
fails or when the fraction of bad rows exceeds the threshold in ``conf/pipeline.toml``. Data Docs HTML goes to
``<data_docs>/<run id>/<stage>/``.

GX is imported inside the functions: it takes seconds to import and the DAG files import this package.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

if __name__ == "__main__" and __package__ in (None, ""):  # spark-submit jobs/validate.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hamlet.analysis.workload import Workload, load_workload_file
from hamlet.errors import HamletError
from hamlet.events import TYPE_SPACE
from jobs.pipeline import (
    PipelineConfig,
    PipelineError,
    checked_name,
    instant,
    load_config,
    resolve,
    workload_name,
)
from jobs.schema import (
    FINGERPRINT,
    column,
    event_type_as_read,
    hour_partition_filter,
    hours_read,
    interval_problem,
    row_fingerprint,
    row_json,
    timestamp_sql,
)
from jobs.summary import Summary

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

EVENTS = "events"
AGGREGATES = "trend_aggregates"
# A Java regex (GX on Spark matches with rlike) of one character an event type keeps: every engine path strips
# TYPE_SPACE from a type, and refuses one left empty; such a row is quarantined here, not failing the job.
A_TYPE_CHARACTER = "[^" + "".join(f"\\u{ord(c):04x}" for c in TYPE_SPACE) + "]"


# The gate's own columns beside the data's: names starting with '#', which no attribute of the language and
# no table of `hamlet generate` has. An events table with a column _row_fingerprint or _partition_start (the
# names they had) failed the gate with "AMBIGUOUS_REFERENCE", one named non_finite or nul_bytes with a GX
# error; an events table made elsewhere that has a column of one of these names is refused in one line.
PARTITION_START, NON_FINITE, NUL_BYTES = "#partition_start", "#non_finite", "#nul_bytes"
OWN_COLUMNS = (FINGERPRINT, PARTITION_START, NON_FINITE, NUL_BYTES)


class ValidationFailed(PipelineError):
    """The gate refused the data: the message names every failed expectation."""


@dataclass(frozen=True)
class Failure:
    """One failed expectation of a run."""

    expectation: str  # e.g. expect_column_values_to_be_unique(event_id)
    unexpected: int | None  # rows that failed it; None for a table-level expectation
    detail: str


@dataclass(frozen=True)
class Scope:
    """What one validation covers: a stage of a workload's data over [start, end), for one run."""

    stage: str  # EVENTS or AGGREGATES
    workload: str  # the name the aggregation job stores (the workload file's stem)
    start: datetime
    end: datetime
    run_id: str


@dataclass
class ValidationReport:
    scope: Scope
    rows: int
    bad_rows: int
    threshold: float
    failures: list[Failure] = field(default_factory=list)
    docs: Path | None = None
    seconds: float = 0.0  # the gate's wall time, its session's start included when it started one

    @property
    def bad_fraction(self) -> float:
        return self.bad_rows / self.rows if self.rows else 0.0

    @property
    def passed(self) -> bool:
        table_level = any(f.unexpected is None for f in self.failures)
        return not table_level and self.bad_fraction <= self.threshold

    def summary(self) -> str:
        s = self.scope
        head = (f"{s.stage} of {s.workload} [{s.start.isoformat()}, {s.end.isoformat()}) run {s.run_id}: "
                f"{self.rows} rows, {self.bad_rows} quarantined ({self.bad_fraction:.2%}, threshold "
                f"{self.threshold:.2%})")  # fmt: skip
        lines = [head] + [f"  failed {f.expectation}: {f.detail}" for f in self.failures]
        if self.docs:
            lines.append(f"  Data Docs: {self.docs / 'index.html'}")
        return "\n".join([*lines, self.line()])

    def line(self) -> str:
        """The one-line summary (``jobs.summary``): rows checked, quarantined, passed on."""
        s = self.scope
        step = "validate_events" if s.stage == EVENTS else "validate_aggregates"
        return Summary(step, s.workload, s.start, s.end, self.seconds, rows_in=self.rows,
                       quarantined=self.bad_rows, rows_out=self.rows - self.bad_rows,
                       note="" if self.passed else "refused").line()  # fmt: skip


# ---------------------------------------------------------------------------------------------- the gates


def validate_events(config: PipelineConfig, start: str | datetime, end: str | datetime, run_id: str,
                    spark: SparkSession | None = None, workload: str | None = None) -> ValidationReport:  # fmt: skip
    """Validate the events of the hours of [start, end) for ``workload`` (default: the configured one):
    quarantine bad rows, raise ValidationFailed when the gate closes. Returns the report when it passes."""
    started = time.perf_counter()
    name, parsed = _workload(workload or config.workload)
    _fits_events(parsed, workload or config.workload, config.events_table)
    scope = _scope(EVENTS, name, start, end, run_id)
    # An event of a type no query reads is no bad row: the job leaves it out by its type, and an events table
    # may hold types for other workloads. Quarantining such events refused every hour in which they passed
    # max_bad_fraction, an hour holding only them (nothing to aggregate, as an hour without events) above all.
    with _session(spark, "hamlet-validate-events") as session:
        frame = _read_events(session, config.events_table, scope.start, scope.end)
        suites = [config.expectations / "events.json", config.expectations / f"events_{config.scenario}.json"]
        # (the hours read, not [start, end): a start inside an hour reads the rows of all of it, which belong
        # there and which the job reads too; those before the start were quarantined as outside the interval)
        first, last = hours_read(scope.start, scope.end)
        parameters = {
            "interval_start": first,
            "interval_end": last,
            "a_type_character": A_TYPE_CHARACTER,
        }
        return _gate(session, config, scope, frame, suites, parameters, config.max_bad_fraction, started)


def validate_aggregates(config: PipelineConfig, start: str | datetime, end: str | datetime, run_id: str,
                        spark: SparkSession | None = None, workload: str | None = None) -> ValidationReport:  # fmt: skip
    """Validate the ``trend_aggregates`` rows of ``workload`` whose window ends in (start, end]."""
    started = time.perf_counter()
    name, parsed = _workload(workload or config.workload)
    scope = _scope(AGGREGATES, name, start, end, run_id)
    with _session(spark, "hamlet-validate-aggregates") as session:
        frame = _aggregates_view(session, config.output_table, scope, parsed, config.events_table)
        suites = [config.expectations / "trend_aggregates.json"]
        return _gate(session, config, scope, frame, suites, {}, config.max_bad_output_fraction, started)


GATES = {"events": validate_events, "aggregates": validate_aggregates}


def _workload(path: str | Path) -> tuple[str, Workload]:
    """The workload's name (its file's stem, as the aggregation job stores it) and its queries."""
    name = checked_name(workload_name(path))  # it reaches the quarantine's replaceWhere as SQL text
    try:
        return name, load_workload_file(str(resolve(path)))
    except HamletError as error:
        raise PipelineError(str(error)) from None


def _fits_events(workload: Workload, path: str | Path, events_table: str) -> None:
    """The workload's attributes against the events table's schema, before any Spark work: a workload that
    does not fit fails the gate at once (ValidationFailed: rerunning cannot change it), naming every
    attribute at fault with its line and column. So does a table with a column named as one of the gate's
    own (``OWN_COLUMNS``)."""
    from hamlet.analysis.attributes import check_attributes
    from jobs.schema import table_attributes

    try:
        attributes = table_attributes(events_table, partitioned=True)
        check_attributes(workload, str(path), attributes, f"the events table {events_table}")
    except HamletError as error:
        raise ValidationFailed(str(error)) from None
    taken = [c for c in OWN_COLUMNS if c in attributes]
    if taken:
        raise ValidationFailed(f"the events table {events_table} has a column {', '.join(taken)}: the input gate "
                               "names a column of its own so; rename that column of the table")  # fmt: skip


def _session(spark: SparkSession | None, app_name: str):  # type: ignore[no-untyped-def]
    from contextlib import nullcontext

    from jobs.session import command_session

    return nullcontext(spark) if spark is not None else command_session(app_name, None)


# ------------------------------------------------------------------------------------- what is validated


def _scope(stage: str, workload: str, start: str | datetime, end: str | datetime, run_id: str) -> Scope:
    scope = Scope(stage, workload, instant(start, "start"), instant(end, "end"), run_id)
    problem = interval_problem(scope.start, scope.end, ("start", "end"))
    if problem:
        raise PipelineError(problem)
    return scope


def _read_events(spark: SparkSession, events_table: str, start: datetime, end: datetime) -> DataFrame:
    """The hour partitions of [start, end) as stored (times outside the interval included: catching them is
    one of the expectations), each row with its fingerprint and the start of its hour partition (columns
    ``FINGERPRINT`` and ``PARTITION_START``)."""
    from pyspark.sql import functions as F

    table = spark.read.format("delta").load(events_table)
    hour = F.make_timestamp_ntz(
        F.year("event_date"), F.month("event_date"), F.dayofmonth("event_date"), F.col("event_hour"),
        F.lit(0), F.lit(0),
    )  # fmt: skip
    return table.where(hour_partition_filter(start, end)).select(
        "*", row_fingerprint(table.columns).alias(FINGERPRINT), F.to_timestamp(hour).alias(PARTITION_START)
    )


def _aggregates_view(spark: SparkSession, output_table: str, scope: Scope, workload: Workload,
                     events_table: str) -> DataFrame:  # fmt: skip
    """The run's output rows plus the columns the suite checks: the query's WITHIN, the window's length, the
    exact value of counts and of numeric aggregates, on AVG rows the MIN and MAX of the same window, and
    ``required_value`` (``_required_values``)."""
    from pyspark.sql import functions as F

    from jobs.aggregate import replace_where_sql

    table = spark.read.format("delta").load(output_table)
    rows = table.where(replace_where_sql(scope.workload, scope.start, scope.end))
    withins = spark.createDataFrame([(q.name, float(q.window.within)) for q in workload.queries],
                                    "query STRING, within_seconds DOUBLE")  # fmt: skip
    kind = F.regexp_extract("aggregate", r"^([A-Z]+)\(", 1)
    target = F.regexp_extract("aggregate", r"\((.*)\)$", 1)
    window = ["query", "window_start", "window_end", "group_key"]
    extremes = (
        rows.where(kind.isin("MIN", "MAX"))
        .groupBy(*window, target.alias("_target"))
        .agg(
            F.max(F.when(kind == "MIN", F.col("value"))).alias("avg_min"),
            F.max(F.when(kind == "MAX", F.col("value"))).alias("avg_max"),
        )
    )
    view = (
        rows.select("*", kind.alias("_kind"), target.alias("_target"))
        .join(withins, "query", "left")
        .join(extremes, [*window, "_target"], "left")
    )
    view = _required_values(spark, view, scope, workload, events_table)
    return view.select(
        *table.columns,
        "within_seconds",
        ((F.unix_micros("window_end") - F.unix_micros("window_start")) / 1_000_000).alias("window_seconds"),
        F.when(F.col("_kind") == "COUNT", F.col("value_exact")).alias("count_exact"),
        F.when(~F.col("_kind").isin("MIN", "MAX") | F.col("value").isNotNull(), F.col("value_exact")).alias(
            "numeric_exact"
        ),
        F.when(F.col("_kind") == "AVG", F.col("avg_min")).alias("avg_min"),
        F.when(F.col("_kind") == "AVG", F.col("avg_max")).alias("avg_max"),
        "required_value",
        row_fingerprint(table.columns).alias(FINGERPRINT),
        F.col("window_end").alias(PARTITION_START),
    )


NOT_REQUIRED = "(may be null)"


def _required_values(spark: SparkSession, view: DataFrame, scope: Scope, workload: Workload,
                     events_table: str) -> DataFrame:  # fmt: skip
    """``required_value``: ``value_exact`` where the row must have a value, ``NOT_REQUIRED`` elsewhere (the
    suite expects it not null).

    What is exactly checkable from the output and the events table: a row appears only when a trend
    matched, so a COUNT always has a value. Every trend holds at least one event of each positive type of
    its pattern (the language has no optional parts), so SUM, AVG, MIN and MAX over ``E.a`` have a value
    when every ``E`` event of the window has one for ``a`` (whichever of them the trends took: groups,
    predicates, quarantine). When some ``E`` event of the window lacks ``a`` the value may be null (all
    trends may be made of such events) and the row is not checked: knowing would mean matching the trends
    again. An attribute that is not a column of the events table is null on every event: never required
    (``hamlet check --events-table`` and the jobs refuse such workloads before they run)."""
    from functools import reduce

    from pyspark.sql import functions as F

    targets = [(q.name, a.text, a.event_type, a.attribute) for q in workload.queries for a in q.aggregates
               if a.function in ("SUM", "AVG", "MIN", "MAX") and a.event_type and a.attribute]  # fmt: skip
    required = F.col("_kind") == "COUNT"
    if targets:
        longest = max(timedelta(seconds=float(q.window.within)) for q in workload.queries)
        first = scope.start - longest
        events = spark.read.format("delta").load(events_table)
        events = events.where(hour_partition_filter(first, scope.end)).where(
            F.col("event_time") >= F.lit(first)
        )
        events = events.withColumn("event_type", event_type_as_read())  # (as the job reads it: read_events)
        nulls = [
            events.where((F.col("event_type") == event_type) & F.col(attribute).isNull()).select(
                F.lit(event_type).alias("_type"), F.lit(attribute).alias("_attribute"), "event_time"
            )
            for event_type, attribute in sorted({(t, a) for _, _, t, a in targets})
            if attribute in events.columns
        ]
        known = spark.createDataFrame([t for t in targets if t[3] in events.columns],
                                      "query STRING, aggregate STRING, _type STRING, _attribute STRING")  # fmt: skip
        keys = ["query", "aggregate", "window_start", "window_end", "group_key"]
        checked = view.join(known, ["query", "aggregate"]).select(*keys, "_type", "_attribute")
        if nulls:
            gaps = reduce(lambda a, b: a.unionByName(b), nulls)
            lacking = checked.join(gaps, ["_type", "_attribute"]).where(
                (F.col("event_time") >= F.col("window_start")) & (F.col("event_time") < F.col("window_end"))
            )
            checked = checked.join(lacking.select(*keys).distinct(), keys, "left_anti")
        view = view.join(checked.select(*keys).withColumn("_required", F.lit(True)), keys, "left")
        required = required | F.col("_required").isNotNull()
    return view.withColumn(
        "required_value", F.when(required, F.col("value_exact")).otherwise(F.lit(NOT_REQUIRED))
    )


# ------------------------------------------------------------------------------------------------- the gate


def _gate(spark: SparkSession, config: PipelineConfig, scope: Scope, frame: DataFrame, suites: list[Path],
          parameters: dict[str, Any], threshold: float, started: float) -> ValidationReport:  # fmt: skip
    frame = frame.persist()
    try:
        rows = frame.count()
        # per workload: the hourly DAGs of two workloads give their runs of one hour the same run id
        docs = docs_folder(config.data_docs / scope.workload, scope.run_id) / scope.stage
        checked = _value_checks(frame) if scope.stage == EVENTS else frame
        result = _run_gx(scope, checked, suites, parameters, docs) if rows else None
        if result is not None:  # local assets, one shared copy; the latest runs only (jobs/data_docs.py)
            from jobs.data_docs import localize, prune

            localize(docs, config.data_docs)
            prune(config.data_docs / scope.workload, config.data_docs_keep_runs)
        failures, flagged = _failures(result) if result is not None else ([], [])
        bad_rows = _quarantine(spark, config.quarantine_table, scope, frame, flagged)
    finally:
        frame.unpersist()
    report = ValidationReport(scope, rows, bad_rows, threshold, failures, docs if rows else None,
                              time.perf_counter() - started)  # fmt: skip
    if not report.passed:
        raise ValidationFailed(report.summary())
    return report


def _value_checks(frame: DataFrame) -> DataFrame:
    """The events as the suites check them: NaN and ±infinity in number columns become nulls and are named
    in ``#non_finite`` (e.g. ``speed = NaN``), string columns holding a NUL byte in ``#nul_bytes``. GX on
    Spark counts a NaN outside a range but does not list its row, so the range check alone could only refuse
    the whole interval; ``expect_column_values_to_be_null(#non_finite)`` lists it, and it is quarantined.
    Every column of the table is checked (those named with a leading '_' were left out)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import DoubleType, FloatType, StringType

    data = [f for f in frame.schema.fields if f.name not in OWN_COLUMNS]
    numbers = {f.name for f in data if isinstance(f.dataType, (DoubleType, FloatType))}
    strings = [f.name for f in data if isinstance(f.dataType, StringType)]

    def bad(name: str):  # type: ignore[no-untyped-def]
        return F.isnan(column(name)) | (F.abs(column(name)) == F.lit(float("inf")))

    # (``column``: a table made elsewhere may name a column ``a.b``)
    non_finite = F.concat_ws(", ", *[F.when(bad(c), F.concat(F.lit(f"{c} = "), column(c).cast("string")))
                                     for c in sorted(numbers)])  # fmt: skip
    nul = F.concat_ws(", ", *[F.when(F.instr(column(c), "\x00") > 0, F.lit(c)) for c in strings])
    columns = [F.when(bad(c), F.lit(None)).otherwise(column(c)).alias(c) if c in numbers else column(c)
               for c in frame.columns]  # fmt: skip
    return frame.select(*columns, F.when(non_finite != "", non_finite).alias(NON_FINITE),
                        F.when(nul != "", nul).alias(NUL_BYTES))  # fmt: skip


def _load_suite(path: Path) -> dict[str, Any]:
    try:
        suite = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise PipelineError(f"cannot read expectation suite {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise PipelineError(f"{path}:{e.lineno}:{e.colno}: not JSON: {e.msg}") from None
    if not isinstance(suite, dict) or not isinstance(suite.get("expectations"), list):
        raise PipelineError(f"{path}: an expectation suite needs a list 'expectations'")
    return suite


# Most hours are clean. A first pass counts each expectation's unexpected rows without listing them (GX's BASIC
# result: no Spark job per expectation to collect the rows' fingerprints; a clean hour's gate 3.4–4.0 → 2.3 s warm);
# its result is the one Data Docs show. Only the expectations that failed run again, with their unexpected rows
# listed by fingerprint (COMPLETE), for the quarantine and the report (`_failures`).
COUNTED = {"result_format": "BASIC"}
LISTED = {"result_format": "COMPLETE", "unexpected_index_column_names": [FINGERPRINT]}
PLACE = "hamlet_place"  # an expectation's meta: its place among the suites' expectations, in both passes


def _run_gx(
    scope: Scope, frame: DataFrame, suites: list[Path], parameters: dict[str, Any], docs: Path
) -> list[Any]:
    """The suites' outcomes over ``frame`` (Data Docs into ``docs``), the failed ones listing their rows."""
    specs = [_load_suite(p) for p in suites]
    every = [x for spec in specs for x in spec["expectations"]]
    expectations = [{**x, "meta": {**(x.get("meta") or {}), PLACE: i}} for i, x in enumerate(every)]
    counted = _checkpoint(scope, frame, expectations, suites, parameters, COUNTED, docs).results
    again = sorted(_place(o) for o in counted if not o.success)
    if not again:
        return counted
    listed = _checkpoint(scope, frame, [expectations[i] for i in again], suites, parameters, LISTED, None)
    by_place = {_place(o): o for o in listed.results}
    return [by_place.get(_place(o), o) for o in counted]


def _place(outcome: Any) -> int:
    return int((outcome.expectation_config.meta or {})[PLACE])


def _checkpoint(scope: Scope, frame: DataFrame, expectations: list[dict[str, Any]], suites: list[Path],
                parameters: dict[str, Any], result_format: dict[str, Any], docs: Path | None) -> Any:  # fmt: skip
    """One run of ``expectations`` (from ``suites``) over ``frame`` in a context of its own, Data Docs into
    ``docs`` (None: none): the validation result."""
    from jobs.logs import quiet

    quiet()  # before GX is imported: its import logs ~50 lines at INFO
    import great_expectations as gx

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = {"globally": False}  # type: ignore[assignment]
    stage = scope.stage
    if docs is not None:
        context.add_data_docs_site(
            site_name="hamlet",
            site_config={
                "class_name": "SiteBuilder",
                "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(docs)},
                "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
            },
        )
    batch = (
        context.data_sources.add_spark(stage)
        .add_dataframe_asset(stage)
        .add_batch_definition_whole_dataframe("interval")
    )
    suite = context.suites.add(gx.ExpectationSuite(
        name=stage,
        expectations=expectations,
        meta={"sources": [str(p) for p in suites]},
    ))  # fmt: skip
    definition = context.validation_definitions.add(
        gx.ValidationDefinition(name=stage, data=batch, suite=suite)
    )
    checkpoint = context.checkpoints.add(gx.Checkpoint(
        name=stage,
        validation_definitions=[definition],
        actions=[gx.checkpoint.UpdateDataDocsAction(name="data_docs", site_names=["hamlet"])] if docs is not None else [],
        result_format=result_format,
    ))  # fmt: skip
    result = checkpoint.run(batch_parameters={"dataframe": frame}, expectation_parameters=parameters,
                            run_id=gx.RunIdentifier(run_name=scope.run_id))  # fmt: skip
    (validation,) = result.run_results.values()
    return validation


def docs_folder(data_docs: Path, run_id: str) -> Path:
    """The Data Docs folder of a run: one folder inside ``data_docs`` whatever the run id (Airflow's hold
    ':' and '+'; '.', '..' or '/' must not lead elsewhere)."""
    name = re.sub(r"[^A-Za-z0-9_.\-]+", "_", run_id)
    name = re.sub(r"^\.", "_", name) or "_"  # no hidden folder, no '.' or '..'
    return data_docs / name


def _failures(outcomes: list[Any]) -> tuple[list[Failure], list[tuple[str, str, str, str]]]:
    """The failed expectations, and per unexpected row (fingerprint, expectation, column, reason)."""
    failures: list[Failure] = []
    flagged: list[tuple[str, str, str, str]] = []
    for outcome in outcomes:
        if outcome.success:
            continue
        config = outcome.expectation_config
        kwargs = {k: v for k, v in config.kwargs.items() if k != "batch_id"}
        column = kwargs.get("column") or ",".join(
            str(kwargs[k]) for k in ("column_A", "column_B") if k in kwargs
        )
        name = f"{config.type}({column})" if column else config.type
        result = outcome.result or {}
        if outcome.exception_info and outcome.exception_info.get("raised_exception"):
            message = outcome.exception_info.get("exception_message") or "raised an exception"
            failures.append(Failure(name, None, message.splitlines()[0]))
            continue
        indexed = result.get("unexpected_index_list")
        if indexed is None:  # a table- or column-level expectation
            failures.append(Failure(name, None, f"observed {result.get('observed_value')!r}"))
            continue
        count = result.get("unexpected_count", len(indexed))
        if count > len(indexed):
            # GX counted rows it could not list (seen with NaN in a range check): quarantining only some of
            # them would let the others through, so the whole interval is refused.
            failures.append(Failure(name, None, f"{count} unexpected rows, of which GX identified only "
                                                f"{len(indexed)}: the interval cannot be split"))  # fmt: skip
            continue
        template = (config.meta or {}).get("reason") or f"{name} failed"
        for entry in indexed:
            values = {k: _shown(v) for k, v in entry.items() if k != FINGERPRINT}
            if column in values:
                values.setdefault("value", values[column])
            values.setdefault("value", next(iter(values.values()), "?"))
            flagged.append((entry[FINGERPRINT], name, column, _fill(template, values)))
        failures.append(Failure(name, count, f"{count} of {result.get('element_count')} rows"))
    return failures, flagged


def _shown(value: Any) -> str:
    return "null" if value is None else repr(value) if isinstance(value, str) else str(value)


def _fill(template: str, values: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), template)


def _quarantine(spark: SparkSession, quarantine_table: str, scope: Scope, frame: DataFrame,
                flagged: list[tuple[str, str, str, str]]) -> int:  # fmt: skip
    """Replace this stage's quarantine rows of [start, end) by the rows flagged now (a rerun after a fix
    leaves none behind); return how many distinct rows are bad."""
    from pyspark.sql import functions as F

    from jobs.commits import retried
    from jobs.schema import QUARANTINE_DDL, create_table

    create_table(spark, quarantine_table, QUARANTINE_DDL, ("stage",))
    scope_rows = quarantine_scope(scope)
    if not flagged and spark.read.format("delta").load(quarantine_table).where(scope_rows).isEmpty():
        return 0  # (nothing flagged, nothing of this scope to replace: no commit for a clean interval)
    reasons = spark.createDataFrame(flagged, f"`{FINGERPRINT}` STRING, expectation STRING, `column` STRING, "
                                             "reason STRING")  # fmt: skip
    # the row as stored: every column of the table (an events column named with a leading '_', or as a column
    # the output gate derives, was left out of it), none of the gate's
    derived = _DERIVED if scope.stage == AGGREGATES else set()
    data = [c for c in frame.columns if c not in OWN_COLUMNS and c not in derived]
    bad = frame.select(FINGERPRINT, PARTITION_START, row_json(data).alias("row")).dropDuplicates(
        [FINGERPRINT]
    )
    rows = reasons.join(bad, FINGERPRINT).select(
        F.lit(scope.stage).alias("stage"),
        F.lit(scope.workload).alias("workload"),
        F.lit(scope.run_id).alias("run_id"),
        F.col(PARTITION_START).alias("partition_start"),
        "expectation",
        "column",
        "reason",
        F.col(FINGERPRINT).alias("row_fingerprint"),
        "row",
        F.lit(datetime.now(UTC).replace(microsecond=0)).alias("quarantined_at"),
    )
    writer = rows.write.format("delta").mode("overwrite").option("replaceWhere", scope_rows)
    retried(lambda: writer.save(quarantine_table), f"writing {quarantine_table}")
    return len({f[0] for f in flagged})


_DERIVED = {
    "within_seconds",
    "window_seconds",
    "count_exact",
    "numeric_exact",
    "avg_min",
    "avg_max",
    "required_value",
}


def quarantine_scope(scope: Scope) -> str:
    """The quarantine rows one validation owns (a rerun replaces them): events by the start of their hour
    partition (the hours overlapping [start, end) were read), aggregates by their window end in (start, end]."""
    first = scope.start.replace(minute=0, second=0, microsecond=0) if scope.stage == EVENTS else scope.start
    s, e = timestamp_sql(first), timestamp_sql(scope.end)
    checked_name(scope.workload)  # the aggregation job's rule: nothing that could end the SQL string
    within = (f"partition_start >= {s} AND partition_start < {e}" if scope.stage == EVENTS
              else f"partition_start > {s} AND partition_start <= {e}")  # fmt: skip
    return f"stage = '{scope.stage}' AND workload = '{scope.workload}' AND {within}"


# ------------------------------------------------------------------------------------------ command line


def build_parser(prog: str = "hamlet validate") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("stage", choices=["events", "aggregates"])
    parser.add_argument("--start", required=True, help="ISO-8601 start of the interval (UTC if naive)")
    parser.add_argument("--end", required=True, help="ISO-8601 end of the interval (exclusive)")
    parser.add_argument("--run-id", help="recorded with quarantined rows (default: validate-<start>)")
    parser.add_argument(
        "--conf", help="pipeline settings (default: $HAMLET_PIPELINE_CONF or conf/pipeline.toml)"
    )
    return parser


def main(argv: list[str] | None = None, prog: str = "hamlet validate") -> int:
    args = build_parser(prog).parse_args(argv)
    try:
        config = load_config(args.conf)
        start, end = instant(args.start, "--start"), instant(args.end, "--end")
        run_id = args.run_id or f"validate-{start:%Y%m%dT%H%M%S}"
        gate = validate_events if args.stage == "events" else validate_aggregates
        report = gate(config, start, end, run_id)
    except (PipelineError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(report.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
