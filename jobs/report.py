"""``hamlet report``: one HTML page of what the pipeline computed and how, readable offline.

    hamlet report --table PATH [--workload W] [--stats-table PATH] --output report.html

From the output table (``trend_aggregates``): per workload and query one chart, a panel per aggregate with
one line per group over window end, every point titled with its exact value (hover, or read the table under
the chart). From ``run_stats``: per run and sharable query set the optimizer's decisions (bursts, shared
bursts, graphlets, splits, merges) and the stage seconds. Everything is inline (SVG drawn here, CSS in the
page, no script, no font or CDN): the file opens from disk, mailed, or on a machine without a network.

Read with deltalake (``jobs.tables``), no Spark: a report of a day's output takes about a second.
"""

from __future__ import annotations

import argparse
import html
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from hamlet.errors import HamletError, output_file

# Stable colours for the groups of a chart (the Tableau 10 palette); more groups reuse them.
COLOURS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#bab0ac")  # fmt: skip
WIDTH, HEIGHT, MARGIN_LEFT, MARGIN_RIGHT, MARGIN_BOTTOM, MARGIN_TOP = 560, 220, 70, 40, 40, 26
# A panel switches to a log10 axis when its positive values span more than this factor: trend counts grow
# like 2^n, and one long burst would flatten every other point onto the axis.
LOG_SPAN = 1000.0
ENGINE_COUNTERS = ("bursts", "shared_bursts", "graphlets", "splits", "merges")
STAGES = ("read", "shuffle", "engine", "combine", "write", "total")


class ReportError(Exception):
    """The report cannot be made; the message says why (no traceback for the user)."""


# --------------------------------------------------------------------------------------- reading the tables


@dataclass(frozen=True)
class Point:
    window_end: datetime
    # As plotted (a count beyond double range comes from its exact digits); None: not a finite number, not drawn.
    value: float | None
    exact: str  # the exact value as stored (value_exact), shown in titles and the table


@dataclass
class Series:
    group: str
    points: list[Point] = field(default_factory=list)


def _number(value: Any, exact: Any) -> float | None:
    """A plottable number: ``value`` (DOUBLE) unless null or not finite, else from ``value_exact``'s digits;
    None when neither is a finite number (NaN, ±inf, "1e999"): a chart has no place for it."""
    if value is not None and math.isfinite(value):
        return float(value)
    if exact is None:
        return None
    try:
        number = float(exact)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _group_text(group_key: str) -> str:
    """``{"line": "L1"}`` → ``line=L1``; the canonical JSON as it is when it is not a JSON object."""
    import json

    try:
        parsed = json.loads(group_key)
    except (TypeError, ValueError):
        return str(group_key)
    if isinstance(parsed, dict):
        return ", ".join(f"{k}={v}" for k, v in parsed.items()) or "(all)"
    return str(group_key)


Aggregates = dict[
    str, dict[str, dict[str, dict[str, Series]]]
]  # workload → query → aggregate → group → series


@dataclass(frozen=True)
class Column:
    """A column the report reads: its name, the type it must have (in words, for the error) and a test of
    the Arrow type. A table written by hand or by another job can have the name with another type: the
    report says which instead of failing on the first row with a traceback."""

    name: str
    expected: str
    fits: Callable[[pa.DataType], bool]
    nullable: bool = False  # True: the report has a meaning for null (no value, no status)


def _text(t: pa.DataType) -> bool:
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t))


def _number_type(t: pa.DataType) -> bool:
    return bool(pa.types.is_floating(t) or pa.types.is_integer(t))


def _texts(t: pa.DataType) -> bool:
    return bool((pa.types.is_list(t) or pa.types.is_large_list(t)) and _text(t.value_type))


def _counters(t: pa.DataType) -> bool:
    return bool(pa.types.is_map(t) and _text(t.key_type) and _number_type(t.item_type))


TEXT, TIME, NUMBER, INTEGER = "a string", "a timestamp", "a number (double)", "an integer"
AGGREGATE_COLUMNS = (
    Column("workload", TEXT, _text), Column("query", TEXT, _text), Column("window_end", TIME, pa.types.is_timestamp),
    Column("group_key", TEXT, _text, nullable=True), Column("aggregate", TEXT, _text),
    Column("value", NUMBER, _number_type, nullable=True), Column("value_exact", TEXT, _text, nullable=True),
)  # fmt: skip
RUN_COLUMNS = (
    Column("run_id", TEXT, _text), Column("workload", TEXT, _text), Column("strategy", TEXT, _text),
    Column("range_start", TIME, pa.types.is_timestamp), Column("range_end", TIME, pa.types.is_timestamp),
    Column("query_set", INTEGER, pa.types.is_integer), Column("queries", "a list of strings", _texts),
    Column("set_events", INTEGER, pa.types.is_integer), Column("partitions", INTEGER, pa.types.is_integer),
    Column("engine_stats", "a map of string to number", _counters),
    *(Column(f"{s}_seconds", NUMBER, _number_type) for s in STAGES),
)  # fmt: skip
OPTIONAL_RUN_COLUMNS = (Column("status", TEXT, _text, nullable=True),)  # older run_stats have none: committed


def _read_table(location: str, kind: str, columns: Sequence[Column], optional: Sequence[Column],
                workload: str | None) -> list[dict[str, Any]] | None:  # fmt: skip
    """The rows of the Delta table at ``location`` (``kind``: its name in errors), ``columns`` (and those of
    ``optional`` it has) only, of ``workload`` when given; None when there is no table there. Checks the
    schema from the log before reading a row, so a wrong table is one error naming every missing column and
    every wrong type."""
    from deltalake import DeltaTable
    from deltalake.exceptions import DeltaError, TableNotFoundError

    from jobs.tables import first_line, read_arrow

    if "://" not in location and os.path.exists(location) and not os.path.isdir(location):
        raise ReportError(f"{location}: not a Delta table (a file, not a folder)")
    try:
        schema = pa.schema(DeltaTable(location).schema().to_arrow())
    except TableNotFoundError:
        return None
    except (DeltaError, OSError) as e:  # (OSError: a store deltalake cannot open here, such as s3://)
        raise ReportError(f"{location}: not a readable Delta table: {first_line(e)}") from None
    missing = [c.name for c in columns if c.name not in schema.names]
    if missing:
        raise ReportError(f"{location}: not a {kind} table: no column{'s' if len(missing) > 1 else ''} "
                          f"{', '.join(missing)}")  # fmt: skip
    wanted = [*columns, *(c for c in optional if c.name in schema.names)]
    wrong = [f"{c.name} is {schema.field(c.name).type}, expected {c.expected}" for c in wanted
             if not c.fits(schema.field(c.name).type)]  # fmt: skip
    if wrong:
        raise ReportError(f"{location}: column {'; column '.join(wrong)}")
    filters = [("workload", "=", workload)] if workload else None
    try:
        table = read_arrow(location, columns=[c.name for c in wanted], filters=filters)
    except Exception as e:  # noqa: BLE001 (deltalake raises several kinds: report which table, not a traceback)
        raise ReportError(
            f"cannot read the {kind} table {location}: {type(e).__name__}: {first_line(e)}"
        ) from None
    for c in wanted:
        column = table.column(c.name)
        nulls = column.null_count + sum(_nested_nulls(chunk) for chunk in column.chunks)
        if nulls and not c.nullable:
            raise ReportError(
                f"{location}: column {c.name} holds {nulls} null value{'s' if nulls > 1 else ''}"
            )
    try:
        return table.to_pylist()
    except (ValueError, OverflowError) as e:  # e.g. a timestamp past the year 9999, which Python cannot hold
        raise ReportError(f"{location}: {e}") from None


def _nested_nulls(chunk: pa.Array) -> int:
    """Nulls inside a list or map column (a query named null, a counter without a value)."""
    if isinstance(chunk, pa.MapArray):
        return int(chunk.items.null_count)
    if isinstance(chunk, pa.ListArray | pa.LargeListArray):
        return int(chunk.flatten().null_count)
    return 0


def read_aggregates(table: str, workload: str | None) -> Aggregates:
    """workload → query → aggregate → group → series over window end, sorted; from the output table."""
    rows = _read_table(table, "trend_aggregates", AGGREGATE_COLUMNS, (), workload)
    if rows is None:
        raise ReportError(f"no Delta table at {table}")
    found: Aggregates = {}
    for row in rows:
        value, exact = row["value"], row["value_exact"]
        if value is None and exact is None:  # nothing to show
            continue
        group = _group_text(row["group_key"])
        series = (
            found.setdefault(row["workload"], {}).setdefault(row["query"], {}).setdefault(row["aggregate"], {})
            .setdefault(group, Series(group))
        )  # fmt: skip
        end = row["window_end"]
        series.points.append(Point(end if end.tzinfo else end.replace(tzinfo=UTC), _number(value, exact),
                                   str(exact if exact is not None else value)))  # fmt: skip
    for queries in found.values():
        for aggregates in queries.values():
            for groups in aggregates.values():
                for series in groups.values():
                    series.points.sort(key=lambda p: p.window_end)
    return found


@dataclass(frozen=True)
class RunSet:
    """One row of run_stats: a run's sharable query set."""

    run_id: str
    workload: str
    strategy: str
    range_start: datetime
    range_end: datetime
    status: str
    queries: tuple[str, ...]
    events: int
    partitions: int
    engine: dict[str, float]
    seconds: dict[str, float]


def read_runs(stats_table: str, workload: str | None) -> list[RunSet]:
    """The rows of run_stats (of ``workload``), by range start, then run and query set; none when the table
    does not exist (yet: the page says so)."""
    rows = _read_table(stats_table, "run_stats", RUN_COLUMNS, OPTIONAL_RUN_COLUMNS, workload) or []
    runs = []
    for row in sorted(rows, key=lambda r: (r["range_start"], r["run_id"], r["query_set"])):
        engine = row["engine_stats"]
        engine = dict(engine) if not isinstance(engine, dict) else engine
        for counter in ENGINE_COUNTERS:  # (a double in the table: the report sums and prints them as counts)
            value = engine.get(counter, 0)
            if value is None or not (math.isfinite(value) and value >= 0 and value == int(value)):
                raise ReportError(f"{stats_table}: run {row['run_id']}: engine_stats {counter} is {value}, "
                                  "not a count")  # fmt: skip
        runs.append(RunSet(
            run_id=row["run_id"], workload=row["workload"], strategy=row["strategy"],
            range_start=row["range_start"], range_end=row["range_end"], status=row.get("status") or "committed",
            queries=tuple(row["queries"]), events=int(row["set_events"]), partitions=int(row["partitions"]),
            engine={k: float(v) for k, v in engine.items() if v is not None},
            seconds={s: float(row[f"{s}_seconds"]) for s in STAGES},
        ))  # fmt: skip
    return runs


@dataclass
class SharingTotal:
    """What the optimizer did for one sharable query set over several runs (``jobs.demo``'s summary)."""

    strategy: str
    queries: tuple[str, ...]
    runs: list[str] = field(default_factory=list)
    events: int = 0
    bursts: int = 0
    shared_bursts: int = 0
    graphlets: int = 0
    splits: int = 0
    merges: int = 0


def sharing_totals(stats_table: str, workload: str, start: datetime, end: datetime) -> list[SharingTotal]:
    """Per strategy and query set, the engine's counters summed over the committed runs inside [start, end)."""
    totals: dict[tuple[str, tuple[str, ...]], SharingTotal] = {}
    for r in read_runs(stats_table, workload):
        first, last = (t if t.tzinfo else t.replace(tzinfo=UTC) for t in (r.range_start, r.range_end))
        if r.status != "committed" or first < start or last > end:
            continue
        total = totals.setdefault((r.strategy, r.queries), SharingTotal(r.strategy, r.queries))
        total.runs.append(r.run_id)
        total.events += r.events
        for counter in ENGINE_COUNTERS:
            setattr(total, counter, getattr(total, counter) + int(r.engine.get(counter, 0)))
    return list(totals.values())


# ------------------------------------------------------------------------------------------------- drawing


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _ticks(low: float, high: float, count: int = 4) -> list[float]:
    """``count`` + 1 evenly spaced ticks from low to high, each a weighted mean of the two: ``high - low``
    overflows to inf when the values span -1e308 to 1e308."""
    if high <= low:
        return [low]
    return [low * (1 - i / count) + high * (i / count) for i in range(count + 1)]


def _short(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 1e6 or abs(value) < 1e-2:
        return f"{value:.3g}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def panel_svg(query: str, aggregate: str, groups: dict[str, Series], colours: dict[str, str]) -> str:
    """One aggregate of one query: a line per group (in its colour) over window end, every point a circle
    titled with its exact value. A value that is not a finite number (NaN, ±inf, beyond a double) has no
    place on an axis: it is left out of the drawing, which says how many were, and stays in the table."""
    all_points = [p for s in groups.values() for p in s.points]
    points = [p for p in all_points if p.value is not None]
    left_out = len(all_points) - len(points)
    note = (f'<text class="note" x="{WIDTH - MARGIN_RIGHT}" y="16" text-anchor="end">{left_out} value'
            f"{'s' if left_out > 1 else ''} not drawn (not a finite number): see the table</text>"
            if left_out else "")  # fmt: skip
    head = (f'<svg class="panel" role="img" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
            f'data-query="{_e(query)}" data-aggregate="{_e(aggregate)}"')  # fmt: skip
    if not points:  # nothing to draw: no axes to scale, only the note
        return (f'{head} data-scale="none"><title>{_e(query)}: {_e(aggregate)} per window end</title>'
                f'<text class="aggregate" x="{MARGIN_LEFT}" y="16">{_e(aggregate)}</text>{note}</svg>')  # fmt: skip
    times = [p.window_end.timestamp() for p in points]
    t0, t1 = min(times), max(times)
    if t1 == t0:
        t0, t1 = t0 - 1800, t1 + 1800
    values = [p.value for p in points if p.value is not None]
    positive = [v for v in values if v > 0]
    log = len(positive) == len(values) and max(positive) / min(positive) > LOG_SPAN
    scale = (lambda v: math.log10(v)) if log else (lambda v: v)
    low, high = min(scale(v) for v in values), max(scale(v) for v in values)
    if not log:
        low = min(low, 0.0)
    if high == low:  # one value: a span its own size (low + 1 is low again past 2^53)
        high = low + max(1.0, abs(low))
    plot_w, plot_h = WIDTH - MARGIN_LEFT - MARGIN_RIGHT, HEIGHT - MARGIN_TOP - MARGIN_BOTTOM

    def x(t: float) -> float:
        return MARGIN_LEFT + (t - t0) / (t1 - t0) * plot_w

    def height(v: float) -> float:
        """The y of ``v`` already scaled; halves first, as ``high - low`` can overflow to inf."""
        return MARGIN_TOP + plot_h - (v / 2 - low / 2) / (high / 2 - low / 2) * plot_h

    def y(v: float | None) -> float:
        assert v is not None  # only drawn points
        return height(scale(v))

    out = [f'{head} data-scale="{"log10" if log else "linear"}">',
           f"<title>{_e(query)}: {_e(aggregate)} per window end{' (log10 axis)' if log else ''}</title>",
           f'<line class="axis" x1="{MARGIN_LEFT}" y1="{MARGIN_TOP + plot_h}" x2="{WIDTH - MARGIN_RIGHT}" y2="{MARGIN_TOP + plot_h}"/>',
           f'<line class="axis" x1="{MARGIN_LEFT}" y1="{MARGIN_TOP}" x2="{MARGIN_LEFT}" y2="{MARGIN_TOP + plot_h}"/>',
           f'<text class="aggregate" x="{MARGIN_LEFT}" y="16">{_e(aggregate)}</text>{note}']  # fmt: skip
    for tick in _ticks(low, high):
        ty = height(tick)
        label = f"1e{tick:.1f}" if log else _short(tick)
        out.append(
            f'<text class="tick" x="{MARGIN_LEFT - 4}" y="{ty + 3:.1f}" text-anchor="end">{label}</text>'
        )
    for tick in _ticks(t0, t1, 3):
        moment = datetime.fromtimestamp(tick, UTC)
        out.append(f'<text class="tick" x="{x(tick):.1f}" y="{HEIGHT - MARGIN_BOTTOM + 14}" text-anchor="middle">'
                   f"{moment:%m-%d %H:%M}</text>")  # fmt: skip
    out.append(f'<text class="tick" x="{MARGIN_LEFT + plot_w / 2:.0f}" y="{HEIGHT - 6}" text-anchor="middle">'
               f"window end (UTC){' · log10 axis' if log else ''}</text>")  # fmt: skip
    for group in sorted(groups):
        series, colour = groups[group], colours[group]
        drawn = [p for p in series.points if p.value is not None]
        path = " ".join(f"{x(p.window_end.timestamp()):.1f},{y(p.value):.1f}" for p in drawn)
        if drawn:  # a group whose every value is left out has no line
            out.append(f'<polyline class="series" fill="none" stroke="{colour}" stroke-width="1.5" points="{path}" '
                       f'data-group="{_e(series.group)}"/>')  # fmt: skip
        for p in drawn:
            out.append(f'<circle class="point" cx="{x(p.window_end.timestamp()):.1f}" cy="{y(p.value):.1f}" r="2.5" '
                       f'fill="{colour}" data-group="{_e(series.group)}" data-window-end="{p.window_end:%Y-%m-%dT%H:%M:%SZ}" '
                       f'data-value="{_e(p.exact)}"><title>{_e(series.group)}, window ending '
                       f"{p.window_end:%Y-%m-%d %H:%M} UTC: {_e(aggregate)} = {_e(p.exact)}</title></circle>")  # fmt: skip
    out.append("</svg>")
    return "".join(out)


def _legend(colours: dict[str, str]) -> str:
    items = [f'<span class="key"><span class="swatch" style="background:{colour}"></span>{_e(group)}</span>'
             for group, colour in colours.items()]  # fmt: skip
    return f'<p class="legend">{"".join(items)}</p>'


def query_figure(workload: str, query: str, aggregates: dict[str, dict[str, Series]]) -> str:
    """A chart per query: its panels (one per aggregate), the legend, the exact values in a table."""
    groups = sorted({g for per_group in aggregates.values() for g in per_group})
    colours = {g: COLOURS[i % len(COLOURS)] for i, g in enumerate(groups)}  # the same in every panel
    panels = "".join(panel_svg(query, a, aggregates[a], colours) for a in sorted(aggregates))
    rows = []
    for aggregate in sorted(aggregates):
        for group, series in aggregates[aggregate].items():
            for p in series.points:
                rows.append(f"<tr><td>{p.window_end:%Y-%m-%d %H:%M}</td><td>{_e(group)}</td><td>{_e(aggregate)}</td>"
                            f'<td class="num">{_e(p.exact)}</td></tr>')  # fmt: skip
    return (f'<figure class="chart" data-workload="{_e(workload)}" data-query="{_e(query)}">'
            f"<figcaption>{_e(query)}</figcaption>{_legend(colours)}{panels}"
            f"<details><summary>the values ({len(rows)})</summary><table class=\"values\"><tr><th>window end (UTC)"
            f"</th><th>group</th><th>aggregate</th><th>value</th></tr>{''.join(rows)}</table></details></figure>")  # fmt: skip


def runs_table(runs: Sequence[RunSet]) -> str:
    if not runs:
        return "<p>No run statistics (run_stats is empty or missing).</p>"
    head = ("<tr><th>run</th><th>range (UTC)</th><th>strategy</th><th>queries</th><th>events</th>"
            "<th>partitions</th>" + "".join(f"<th>{c.replace('_', ' ')}</th>" for c in ENGINE_COUNTERS)
            + "".join(f"<th>{s} s</th>" for s in STAGES) + "<th>status</th></tr>")  # fmt: skip
    body = []
    for r in runs:
        counters = "".join(f'<td class="num">{int(r.engine.get(c, 0))}</td>' for c in ENGINE_COUNTERS)
        seconds = "".join(f'<td class="num">{r.seconds[s]:.2f}</td>' for s in STAGES)
        body.append(f'<tr class="run" data-run="{_e(r.run_id)}"><td>{_e(r.run_id)}</td>'
                    f"<td>{r.range_start:%Y-%m-%d %H:%M} to {r.range_end:%H:%M}</td><td>{_e(r.strategy)}</td>"
                    f"<td>{_e(', '.join(r.queries))}</td><td class=\"num\">{r.events}</td>"
                    f'<td class="num">{r.partitions}</td>{counters}{seconds}<td>{_e(r.status)}</td></tr>')  # fmt: skip
    return f'<table class="runs">{head}{"".join(body)}</table>'


STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.2em; border-bottom: 1px solid #ccc; margin-top: 2em; }
figure.chart { display: inline-block; vertical-align: top; margin: 0 1.5em 1.5em 0; }
figcaption { font-weight: 600; } svg.panel { display: block; margin-bottom: .3em; background: #fafafa; }
svg .axis { stroke: #888; } svg .tick { font-size: 10px; fill: #555; } svg .aggregate { font-size: 12px; }
.legend .key { margin-right: 1em; font-size: .85em; white-space: nowrap; }
.swatch { display: inline-block; width: .8em; height: .8em; margin-right: .3em; vertical-align: middle; }
table { border-collapse: collapse; font-size: .8em; } td, th { border: 1px solid #ddd; padding: 2px 6px; }
td.num { text-align: right; font-variant-numeric: tabular-nums; max-width: 24em; overflow-wrap: anywhere; }
"""


def render(aggregates: Aggregates, runs: Sequence[RunSet], table: str,
           stats_table: str, generated: datetime) -> str:  # fmt: skip
    sections = []
    for workload in sorted(set(aggregates) | {r.workload for r in runs}):
        queries = aggregates.get(workload, {})
        figures = "".join(query_figure(workload, q, queries[q]) for q in sorted(queries))
        mine = [r for r in runs if r.workload == workload]
        shared = sum(int(r.engine.get("shared_bursts", 0)) for r in mine)
        bursts = sum(int(r.engine.get("bursts", 0)) for r in mine)
        sections.append(
            f'<section class="workload" data-workload="{_e(workload)}"><h2>{_e(workload)}</h2>'
            f"<p>{len(queries)} queries; {len({r.run_id for r in mine})} runs; the optimizer shared "
            f'<span class="shared-bursts">{shared}</span> of {bursts} bursts.</p>{figures}'
            f"<h3>Runs: the optimizer's decisions and stage seconds</h3>{runs_table(mine)}</section>"
        )
    if not sections:
        sections.append("<p>The output table holds no rows for this selection.</p>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>hamlet-trends report</title>"
            f"<style>{STYLE}</style></head><body><h1>Trend aggregates</h1><p>From <code>{_e(table)}</code> and "
            f"<code>{_e(stats_table)}</code>, {generated:%Y-%m-%d %H:%M} UTC. Hover a point for its exact value; "
            f"each chart's table lists them all.</p>{''.join(sections)}</body></html>\n")  # fmt: skip


def write_report(
    table: str,
    stats_table: str | None,
    output: str | Path,
    workloads: Sequence[str] | None = None,
    *,
    create_folder: bool = True,
    named: bool = False,
) -> Path:
    """Write the report of ``table`` (restricted to ``workloads`` when given) to ``output``; returns its path.
    ``create_folder``: make the output's missing folders (the pipeline's own reports folder, configured);
    ``hamlet report`` passes False, so a mistyped --output is an error rather than new folders anywhere.
    ``named``: the user named ``workloads`` (not a pipeline's run, whose workload may have no row yet), so
    none of them in either table is an error."""
    if stats_table:
        stats = stats_table
    else:  # beside the output table, as the aggregation job's default
        stats = (
            table.rstrip("/").rsplit("/", 1)[0] + "/run_stats"
            if "://" in table
            else str(Path(table).parent / "run_stats")
        )
    try:  # before reading: the report must not land inside a table it reads, nor block on a FIFO
        output_file(str(output), "report", folders=[("the table", table), ("the stats table", stats)],
                    create_folder=create_folder)  # fmt: skip
    except HamletError as e:
        raise ReportError(str(e)) from None
    aggregates: Aggregates = {}
    runs: list[RunSet] = []
    for workload in workloads or [None]:  # type: ignore[list-item]
        aggregates.update(read_aggregates(table, workload))
        runs.extend(read_runs(stats, workload))
    if named and workloads and not aggregates and not runs:  # (a misspelt name wrote an empty report, exit 0)
        raise ReportError(f"no rows of workload {', '.join(workloads)} in {table} or {stats}: the workload's name "
                          "is its file's stem (--workload-name of `hamlet aggregate`)")  # fmt: skip
    path = Path(output)
    try:
        if create_folder:
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(aggregates, runs, table, stats, datetime.now(UTC)), encoding="utf-8")
    except OSError as e:
        raise ReportError(f"cannot write {output}: {e.strerror}") from None
    return path.resolve()


def main(argv: list[str] | None = None, prog: str = "hamlet report") -> int:
    parser = argparse.ArgumentParser(prog=prog, description="An HTML report (charts per query, the optimizer's "
                                     "decisions and stage seconds per run) of a trend_aggregates table.")  # fmt: skip
    parser.add_argument("--table", required=True, help="the output Delta table (trend_aggregates)")
    parser.add_argument("--workload", help="only this workload's rows (its name: the workload file's stem)")
    parser.add_argument("--stats-table", help="run_stats (default: run_stats beside the output table)")
    parser.add_argument("--output", required=True, help="the HTML file to write")
    args = parser.parse_args(argv)
    try:
        path = write_report(args.table, args.stats_table, args.output, [args.workload] if args.workload else None,
                            create_folder=False, named=True)  # fmt: skip
    except ReportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"report written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(prog="python -m jobs.report"))
