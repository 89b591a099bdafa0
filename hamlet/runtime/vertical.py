"""Vertical graph partitioning by time (dissertation §28.1.1–28.1.2): one stream partition cut into time
segments that run in parallel, then composed in time order.

A segment [t0, t1) runs on the compiled kernel on its own (``native/src/vertical.rs``). The windows that
end inside it and start after its first event are final there. For the others it hands on a record per
graph:
- window class 0 (every window that starts at or before the graph's first event in the segment) as an
  affine map of what flows in from earlier segments. Per window its final, and after the last event its
  running totals, each as a constant plus a coefficient column per variable: a running total per source
  position and field, and, with a leading NOT, whether trends may still start;
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
from hamlet.partials import PartialRow
from hamlet.runtime.aggregates import CountAlgebra, FloatColumns, algebra_for

CONSTANT, RUNNING, STARTS = 0, 1, 2  # what a column multiplies (``vertical::Column``)

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


def floating_columns(schema: pa.Schema) -> list[str]:
    return sorted(f.name for f in schema if pa.types.is_floating(f.type))


def segment_algebras(queries: Sequence[AnalyzedQuery], floating: Iterable[str]) -> dict[str, Any]:
    floats = SchemaFloats(floating)
    return {q.name: algebra_for(q, floats) for q in queries}


@dataclass
class Record:
    """One graph's record of one segment (``vertical::SegmentRecord``), decoded."""

    end: int  # the segment's end, in seconds
    graph: int
    groups: list[str]  # the partition's group key in each grouping of the set
    leading: int | None
    trailing: int | None
    columns: list[tuple[int, int, int]]
    windows: list[tuple[int, int, list[Vector | None]]]
    running: list[list[Vector | None] | None]
    carry: list[tuple[int, int, list[Vector | None], Vector | None, bool]]

    def to_json(self) -> str:
        return json.dumps([self.end, self.graph, self.groups, self.leading, self.trailing, self.columns,
                           _hex(self.windows), _hex(self.running), _hex(self.carry)])  # fmt: skip

    @staticmethod
    def from_json(text: str) -> Record:
        end, graph, groups, leading, trailing, columns, windows, running, carry = json.loads(text)
        return Record(end, graph, groups, leading, trailing, [tuple(c) for c in columns], _ints(windows),
                      _ints(running), _ints(carry))  # fmt: skip


def _hex(value: Any) -> Any:
    """Ints as hex text (JSON and Python's str(int) limit neither), bools and the rest kept."""
    if isinstance(value, bool) or value is None:
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


def _add(total: Vector, vector: Vector | None, factor: int) -> None:
    if vector is not None and factor:
        for i, v in enumerate(vector):
            total[i] += factor * v


def _factor(column: tuple[int, int, int], state: WindowState) -> int:
    kind, position, field_ = column
    if kind == CONSTANT:
        return 1
    if kind == STARTS:
        return int(state.may_start)
    vector = state.running[position] if position < len(state.running) else None
    return 0 if vector is None else vector[field_]


def compose(
    records: Iterable[Record], width: Sequence[int], end_of: Any
) -> Iterator[tuple[int, int, int, Vector]]:
    """One stream partition's records, in time order, composed: (graph, member, window, final) of every
    window with a trend. ``width``: per graph, its vector's length; ``end_of(graph, member, k)``: the end
    of window k in seconds."""
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
            yield from _step(states.setdefault(g, {}), record, width[g], end_of)
    for g, open_windows in states.items():
        for key, state in open_windows.items():
            yield from _final(g, key, state.final)


def _step(open_windows: dict[tuple[int, int], WindowState], record: Record, width: int,
          end_of: Any) -> Iterator[tuple[int, int, int, Vector]]:  # fmt: skip
    """One segment of one graph: every window of class 0 or open before it through the segment's map."""
    g = record.graph
    maps = {(m, k): finals for m, k, finals in record.windows}
    for key in sorted(set(maps) | set(open_windows)):
        state = open_windows.pop(key, None) or WindowState()
        window_end = end_of(g, *key)
        total = [0] * width
        if record.trailing is None or record.trailing >= window_end:  # (else a trailing NOT voids it)
            _add(total, state.final, 1)
        factors = [_factor(c, state) for c in record.columns]
        for factor, final in zip(factors, maps.get(key, ())):
            _add(total, final, factor)
        if window_end <= record.end:
            yield from _final(g, key, total)
            continue
        positions = max((len(r) for r in record.running if r is not None), default=0)
        running: list[Vector | None] = [[0] * width for _ in range(positions)]
        for factor, by_position in zip(factors, record.running):
            for p, vector in enumerate(by_position or ()):
                _add(running[p], vector, factor)  # type: ignore[arg-type]
        open_windows[key] = WindowState(running, total, state.may_start and record.leading is None)
    for m, k, running, final, may_start in record.carry:
        open_windows[(m, k)] = WindowState(running, final, may_start)


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
    width = [1 if _count_only(group.algebra) else len(group.algebra.fields) for group in groups]

    def end_of(g: int, m: int, k: int) -> Fraction:
        return groups[g].queries[m].window.end(k)

    for g, m, k, vector in compose(records, width, end_of):
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


def check_segment(segment_us: tuple[int, int], panes: Sequence[Fraction]) -> tuple[int, int]:
    """The segment in whole seconds, its bounds on every set's pane (no window starts or ends inside a
    pane, so every window lies on one side of a cut or holds it)."""
    t0_us, t1_us = segment_us
    if not t0_us < t1_us:
        raise HamletError(f"segment [{t0_us}, {t1_us}) µs: its start must lie before its end")
    for pane in panes:
        for bound in segment_us:
            if Fraction(bound, 1_000_000) % pane:
                raise HamletError(f"segment bound {bound} µs is not on a pane boundary (pane {pane} s)")
    return t0_us // 1_000_000, t1_us // 1_000_000
