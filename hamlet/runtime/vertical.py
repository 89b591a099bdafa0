"""Vertical graph partitioning by time (dissertation §28.1.1–28.1.2): one stream partition cut into time
segments that run in parallel, then composed in time order.

A segment [t0, t1) runs on the compiled kernel on its own (``native/src/vertical.rs``). The windows that
end inside it and start after its first event are final there. For the others it hands on a record per
graph:
- window class 0 (every window that starts at or before the graph's first event in the segment) as an
  affine map of what flows in from earlier segments. Per window its final, and after the last event its
  running totals, each as a constant plus a coefficient column per variable: a running total per source
  position and field, and, with a leading NOT, whether trends may still start;
- MIN and MAX, which are not linear, per set of live inputs (which source states hold trends), an input's
  own extreme passing through where its count coefficient says it reaches;
- the state of the later windows that outlive the segment;
- the first leading and trailing NOT matched in it.

``compose`` walks a partition's records in time order. It keeps each open window's running totals, final
and whether trends may start, and plugs them into each segment's map: a prefix scan over small affine
maps. The maps are exact integers in the Python algebra's units (a sum over floats in units of 2^-1074),
so the composed finals equal the sequential run's, digit for digit.

Every segment of a set must use the same algebra, so a sum is scaled when its column is of a floating type
(``SchemaFloats``), whatever values one segment holds.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pyarrow as pa

from hamlet.analysis.query import AnalyzedQuery
from hamlet.analysis.windows import as_number
from hamlet.errors import HamletError
from hamlet.events import MICROS
from hamlet.partials import PartialRow, greatest, least
from hamlet.runtime.aggregates import CountAlgebra, FloatColumns, algebra_for

CONSTANT, RUNNING, STARTS, EXTREMES = 0, 1, 2, 3  # what a column is (``vertical::Column``)

# A segment's records: one per (stream partition, graph); the set's number in the workload, the partition's
# key (JSON of its attribute values), the segment's start, the record as JSON (ints as hex: any size).
RECORD_SCHEMA = pa.schema([
    ("query_set", pa.int64()),
    ("partition_key", pa.string()),
    ("segment_start_us", pa.int64()),
    ("record", pa.string()),
])  # fmt: skip

Vector = list[int]  # an aggregate vector in the graph algebra's layout


class SchemaFloats(FloatColumns):
    """Sums scaled by column type: (type, attribute) holds floats when the attribute's column is floating."""

    def __init__(self, floating: Iterable[str]) -> None:  # (not FloatColumns': no events here)
        self.floating = frozenset(floating)
        self.known = {}

    def __contains__(self, key: tuple[str | None, str | None]) -> bool:
        return key[1] in self.floating


def decimal_as_double(kind: pa.DataType) -> bool:
    """Whether the engine reads a decimal column as doubles (``columnar.checked``): those with places after the
    point. It reads whole ones (scale 0 or below) as exact ints, as the events path reads such a Decimal."""
    return pa.types.is_decimal(kind) and kind.scale > 0


def floating_columns(schema: pa.Schema) -> list[str]:
    """The columns an events table's schema holds doubles in, as the engine reads it: floating ones, and the
    decimals it reads as doubles (``decimal_as_double``). ``evaluate_segment`` scales its sums
    over these, so ``compose_segments`` must be given the same (of the table before or after ``checked``)."""
    return sorted(f.name for f in schema if pa.types.is_floating(f.type) or decimal_as_double(f.type))


def segment_algebras(queries: Sequence[AnalyzedQuery], floating: Iterable[str]) -> dict[str, Any]:
    floats = SchemaFloats(floating)
    return {q.name: algebra_for(q, floats) for q in queries}


def float_sums(algebras: dict[str, Any]) -> list[str]:
    """The attributes whose sums the set's algebras keep as floats (their columns' type): a record holds
    such sums scaled, others as ints, so every segment's records of a set, and their composition, must
    agree on them."""
    return sorted({str(attribute) for a in algebras.values() for _, attribute in getattr(a, "scaled", ())})


@dataclass
class Record:
    """One graph's record of one segment (``vertical::SegmentRecord``), decoded."""

    end: int  # the segment's end, in the kernel's microseconds
    graph: int
    groups: list[str]  # the partition's group key in each grouping of the set
    leading: int | None
    trailing: int | None
    columns: list[tuple[int, int, int]]
    windows: list[tuple[int, int, list[Vector | None]]]
    running: list[list[Vector | None] | None]
    carry: list[tuple[int, int, list[Vector | None], Vector | None, bool]]
    float_sums: list[str] | None = None  # (``float_sums`` of the segment's algebras; None: not recorded)

    def to_json(self) -> str:
        return json.dumps([self.end, self.graph, self.groups, self.leading, self.trailing, self.columns,
                           _hex(self.windows), _hex(self.running), _hex(self.carry), self.float_sums])  # fmt: skip

    @staticmethod
    def from_json(text: str) -> Record:
        end, graph, groups, leading, trailing, columns, windows, running, carry, *sums = json.loads(text)
        return Record(end, graph, groups, leading, trailing, [tuple(c) for c in columns], _ints(windows),
                      _ints(running), _ints(carry), sums[0] if sums else None)  # fmt: skip


def _hex(value: Any) -> Any:
    """Ints as hex text (JSON and Python's str(int) limit neither); bools, floats (MIN/MAX: JSON writes
    their shortest round-trip text) and None kept."""
    if isinstance(value, (bool, float)) or value is None:
        return value
    if isinstance(value, int):
        return format(value, "x")
    return [_hex(v) for v in value]


def _ints(value: Any) -> Any:
    if isinstance(value, str):
        return int(value, 16)
    if isinstance(value, list):
        return [_ints(v) for v in value]
    return value


def decode_records(raw: Sequence[tuple], end: int, groups_of: Any) -> Iterator[tuple[int, Record]]:
    """The kernel's records (``run_columns(segment=...)``) as (partition number, ``Record``);
    ``groups_of(partition)``: its group keys."""
    for p, g, leading, trailing, columns, windows, running, carry in raw:
        yield p, Record(end, g, groups_of(p), leading, trailing, [tuple(c) for c in columns],
                        [(m, k, list(f)) for m, k, f in windows], running,
                        [(m, k, r, f, s) for m, k, r, f, s in carry])  # fmt: skip


@dataclass
class WindowState:
    """What a window holds between segments: its running totals per position, its final, and whether
    trends may still start in it (no leading NOT matched since it started)."""

    running: list[Vector | None] = field(default_factory=list)
    final: Vector | None = None
    may_start: bool = True


@dataclass(frozen=True)
class Layout:
    """A graph's aggregate vector: its length, and its MIN/MAX fields with ``min`` or ``max`` (not linear:
    combined by their extreme, None for no value)."""

    width: int
    extremes: dict[int, Any]

    def zero(self) -> Vector:
        return [None if i in self.extremes else 0 for i in range(self.width)]  # type: ignore[misc]

    def add(self, total: Vector, vector: Vector | None, factor: int) -> None:
        """total += factor · vector on the linear fields."""
        if vector is not None and factor:
            for i, v in enumerate(vector):
                if i not in self.extremes:
                    total[i] += factor * v

    def extreme(self, total: Vector, vector: Vector | None) -> None:
        """total's MIN/MAX fields combined with vector's."""
        if vector is not None:
            for i, pick in self.extremes.items():
                if vector[i] is not None:
                    total[i] = vector[i] if total[i] is None else pick(total[i], vector[i])


def _factor(column: tuple[int, int, int], state: WindowState) -> int:
    kind, position, field_ = column
    if kind == CONSTANT:
        return 1
    if kind == STARTS:
        return int(state.may_start)
    if kind == EXTREMES:
        return 0
    vector = state.running[position] if position < len(state.running) else None
    return 0 if vector is None else vector[field_]


def compose(records: Iterable[Record], layouts: Sequence[Layout],
            end_of: Any) -> Iterator[tuple[int, int, int, Vector]]:  # fmt: skip
    """One stream partition's records, in time order, composed: (graph, member, window, final) of every
    window with a trend. ``layouts``: per graph, its vector's; ``end_of(graph, member, k)``: the end of
    window k in the records' microseconds."""
    states: dict[int, dict[tuple[int, int], WindowState]] = {}
    by_segment: dict[int, list[Record]] = {}
    for record in records:
        by_segment.setdefault(record.end, []).append(record)
    for end in sorted(by_segment):
        present = {r.graph: r for r in by_segment[end]}
        for g, open_windows in states.items():
            if g not in present:  # (no event of the graph here: only the windows that ended are final)
                for key in [key for key in open_windows if end_of(g, *key) <= end]:
                    yield from _final(g, key, open_windows.pop(key).final)
        for g, record in present.items():
            yield from _step(states.setdefault(g, {}), record, layouts[g], end_of)
    for g, open_windows in states.items():
        for key, state in open_windows.items():
            yield from _final(g, key, state.final)


def _step(open_windows: dict[tuple[int, int], WindowState], record: Record, layout: Layout,
          end_of: Any) -> Iterator[tuple[int, int, int, Vector]]:  # fmt: skip
    """One segment of one graph: every window of class 0 or open before it through the segment's map."""
    g = record.graph
    maps = {(m, k): finals for m, k, finals in record.windows}
    positions = max((len(r) for r in record.running if r is not None), default=0)
    extremes = _Extremes(record) if layout.extremes else None
    for key in sorted(set(maps) | set(open_windows)):
        state = open_windows.pop(key, None) or WindowState()
        window_end = end_of(g, *key)
        finals = maps.get(key, [None] * len(record.columns))
        total = layout.zero()
        if record.trailing is None or record.trailing >= window_end:  # (else a trailing NOT voids it)
            layout.add(total, state.final, 1)
            layout.extreme(total, state.final)
        factors = [_factor(c, state) for c in record.columns]
        for factor, final in zip(factors, finals):
            layout.add(total, final, factor)
        if extremes is not None:
            extremes.apply(layout, total, state, finals, lambda vector: vector)
        if window_end <= record.end:
            yield from _final(g, key, total)
            continue
        running: list[Vector | None] = [layout.zero() for _ in range(positions)]
        for factor, by_position in zip(factors, record.running):
            for p, vector in enumerate(by_position or ()):
                layout.add(running[p], vector, factor)  # type: ignore[arg-type]
        if extremes is not None:
            for p in range(positions):
                extremes.apply(layout, running[p], state, record.running,  # type: ignore[arg-type]
                               lambda by_position, p=p: None if by_position is None else by_position[p])  # fmt: skip
        open_windows[key] = WindowState(running, total, state.may_start and record.leading is None)
    for m, k, running, final, may_start in record.carry:
        open_windows[(m, k)] = WindowState(running, final, may_start)


class _Extremes:
    """A segment's MIN/MAX fields for a window: the column of its live inputs (which source positions hold
    trends, whether trends may start), and each live input's own extremes where it reaches."""

    def __init__(self, record: Record) -> None:
        self.sources = sorted({position for kind, position, _ in record.columns if kind == RUNNING})
        self.own_starts = not any(kind == STARTS for kind, _, _ in record.columns)
        self.column = {(alive, bool(starts)): i for i, (kind, alive, starts) in enumerate(record.columns)
                       if kind == EXTREMES}  # fmt: skip
        self.reach = {position: i for i, column in enumerate(record.columns) if column[0] == RUNNING
                      and column[2] == 0 for position in [column[1]]}  # fmt: skip

    def apply(
        self, layout: Layout, total: Vector, state: WindowState, columns: Sequence[Any], pick: Any
    ) -> None:
        """total's extremes from ``columns`` (per column a final, or per column running totals by position,
        read with ``pick``)."""
        live = [p for p in self.sources if p < len(state.running) and state.running[p] is not None
                and state.running[p][0] > 0]  # type: ignore[index]  # fmt: skip
        alive = sum(1 << self.sources.index(p) for p in live)
        starts = state.may_start or self.own_starts
        index = 0 if (alive == 0 and starts == self.own_starts) else self.column[(alive, starts)]
        layout.extreme(total, pick(columns[index]))
        for p in live:
            reached = pick(columns[self.reach[p]])
            if reached is not None and reached[0] > 0:
                layout.extreme(total, state.running[p])


def _final(g: int, key: tuple[int, int], final: Vector | None) -> Iterator[tuple[int, int, int, Vector]]:
    if final is not None and final[0] > 0:
        yield g, key[0], key[1], final


def partial_rows(groups: Sequence[Any], records: Sequence[Record], algebras: dict[str, Any],
                 grouping_of: dict[str, int]) -> Iterator[PartialRow]:  # fmt: skip
    """The partial rows of one stream partition's composed windows. ``groups``: the set's graph groups in
    the kernel's order (``CompiledSet.groups``); ``grouping_of``: per query, the number of its GROUP-BY."""
    if not records:
        return
    group_keys = records[0].groups
    layouts = [_layout(group.algebra) for group in groups]

    def end_of(g: int, m: int, k: int) -> Fraction:
        return groups[g].queries[m].window.end(k) * MICROS  # (the kernel's microseconds, as Record.end)

    for g, m, k, vector in compose(records, layouts, end_of):
        graph = groups[g]
        value = vector[0] if _count_only(graph.algebra) else tuple(vector)
        name, _, agg = graph.native.answer(m, k, k, value)
        query = graph.queries[m]
        group = json.loads(group_keys[grouping_of[name]])
        start, end = as_number(query.window.start(k)), as_number(query.window.end(k))
        for spec, state in zip(query.aggregates, algebras[name].states(agg, query.aggregates)):
            yield PartialRow(name, start, end, group, spec.text, state)


def _count_only(algebra: Any) -> bool:
    return isinstance(algebra, CountAlgebra)


def _layout(algebra: Any) -> Layout:
    if _count_only(algebra):
        return Layout(1, {})
    picks = {"min": least, "max": greatest}
    return Layout(
        len(algebra.fields), {i: picks[f[0]] for i, f in enumerate(algebra.fields) if f[0] in picks}
    )


def microsecond_pair(value: Any, what: str) -> tuple[int, int]:
    """``value`` as (lo, hi) whole microseconds, or a ``HamletError`` that says what it is instead."""
    if not (isinstance(value, (tuple, list)) and len(value) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) and -(1 << 63) <= v < 1 << 63 for v in value)):  # fmt: skip
        raise HamletError(f"{what} must be a pair (lo, hi) of whole microseconds in 64 bits, not {value!r}")
    return value[0], value[1]


def check_segment(segment_us: tuple[int, int], panes: Sequence[Fraction]) -> tuple[int, int]:
    """The segment in whole microseconds (the kernel's times), its bounds on every set's pane (no window
    starts or ends inside a pane, so every window lies on one side of a cut or holds it)."""
    t0_us, t1_us = microsecond_pair(segment_us, "segment")
    if not t0_us < t1_us:
        raise HamletError(f"segment [{t0_us}, {t1_us}) µs: its start must lie before its end")
    for pane in panes:
        for bound in segment_us:
            if Fraction(bound, MICROS) % pane:
                raise HamletError(f"segment bound {bound} µs is not on a pane boundary (pane {pane} s)")
    return t0_us, t1_us
