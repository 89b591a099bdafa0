"""Predecessor sources: where a new event finds the combined aggregate of its predecessor events.

GRETA scans every earlier event of a predecessor type (O(n) per event). Most transitions need less:

* ``RunningSource`` — no edge predicate, no negation: every earlier event of the predecessor type in the
  window is a predecessor, so one running aggregate per window answers in O(1).
* ``QueueSource`` — a negation on the transition: the valid predecessors are those at or after the latest
  start L of a negative match (``x.time >= L``), and L only grows, so they form a queue whose front is
  dropped as L advances; a two-stack queue keeps its aggregate in O(1) amortised, MIN/MAX included.
* ``IndexedSource`` — one comparison ``f(x) op g(y)`` as edge predicate: an ordered index over the ranks
  of f(x) (a Fenwick tree per window, or a hash map for ``=``) answers in O(log n).
* ``ScanSource`` — anything else: the plain scan, predicates evaluated once per pair across all windows.

Sources are filled only after every event of a timestamp has been computed, so events with equal
timestamps never see each other (they are never adjacent in a trend).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from hamlet.analysis.predicates import EdgeFn, LocalFn, instant
from hamlet.analysis.predicates import kind as value_kind
from hamlet.analysis.windows import before
from hamlet.events import Event, Time
from hamlet.runtime.aggregates import Algebra

Threshold = Callable[[], Any]  # the current latest negative-match start, or None
Admits = Callable[[Any], bool]  # whether a predecessor at that time may precede the new event (its NOTs)


class RunningSource:
    kind = "running"

    def __init__(self, predecessor_type: str, algebra: Algebra) -> None:
        self.predecessor_type = predecessor_type
        self.algebra = algebra
        self.totals: dict[int, Any] = {}

    def collect(self, event: Event, windows: Sequence[int]) -> list[Any]:
        zero, totals = self.algebra.zero, self.totals
        return [totals.get(k, zero) for k in windows]

    def insert(self, event: Event, aggregates: dict[int, Any]) -> None:
        totals, add = self.totals, self.algebra.add
        for k, agg in aggregates.items():
            current = totals.get(k)
            totals[k] = agg if current is None else add(current, agg)

    def close(self, window: int) -> None:
        self.totals.pop(window, None)


class _TwoStackQueue:
    """A FIFO of (time, aggregate) whose combined aggregate is O(1) amortised, for any associative add."""

    __slots__ = ("add", "back", "back_total", "front", "zero")

    def __init__(self, add: Callable[[Any, Any], Any], zero: Any) -> None:
        self.add, self.zero = add, zero
        self.front: list[tuple[Time, Any]] = []  # (time, aggregate of this and all newer items in front)
        self.back: list[tuple[Time, Any]] = []
        self.back_total = zero

    def push(self, time: Time, agg: Any) -> None:
        self.back.append((time, agg))
        self.back_total = agg if len(self.back) == 1 else self.add(self.back_total, agg)

    def drop_before(self, time: Any) -> None:
        while True:
            if not self.front:
                if not self.back:
                    return
                if self.back[0][0] >= time:
                    return
                running = None
                for t, agg in reversed(self.back):
                    running = agg if running is None else self.add(agg, running)
                    self.front.append((t, running))
                self.back.clear()
                self.back_total = self.zero
            if self.front[-1][0] >= time:
                return
            self.front.pop()

    def total(self) -> Any:
        if not self.front:
            return self.back_total if self.back else self.zero
        if not self.back:
            return self.front[-1][1]
        return self.add(self.front[-1][1], self.back_total)


class QueueSource:
    kind = "queue"

    def __init__(self, predecessor_type: str, algebra: Algebra, threshold: Threshold) -> None:
        self.predecessor_type = predecessor_type
        self.algebra = algebra
        self.threshold = threshold
        self.queues: dict[int, _TwoStackQueue] = {}

    def collect(self, event: Event, windows: Sequence[int]) -> list[Any]:
        limit = self.threshold()
        out = []
        for k in windows:
            queue = self.queues.get(k)
            if queue is None:
                out.append(self.algebra.zero)
                continue
            if limit is not None:
                queue.drop_before(limit)
            out.append(queue.total())
        return out

    def insert(self, event: Event, aggregates: dict[int, Any]) -> None:
        for k, agg in aggregates.items():
            queue = self.queues.get(k)
            if queue is None:
                queue = self.queues[k] = _TwoStackQueue(self.algebra.add, self.algebra.zero)
            queue.push(event.time, agg)

    def close(self, window: int) -> None:
        self.queues.pop(window, None)


class _Fenwick:
    """Prefix-combine over ranks 0..size-1 for an insert-only multiset; sparse (a dict), so cheap to open."""

    __slots__ = ("add", "size", "tree")

    def __init__(self, size: int, add: Callable[[Any, Any], Any]) -> None:
        self.size, self.add = size, add
        self.tree: dict[int, Any] = {}

    def insert(self, rank: int, agg: Any) -> None:
        tree, add = self.tree, self.add
        i = rank + 1
        while i <= self.size:
            current = tree.get(i)
            tree[i] = agg if current is None else add(current, agg)
            i += i & -i

    def prefix(self, count: int, zero: Any) -> Any:
        """Combined aggregate of ranks 0..count-1."""
        tree, add = self.tree, self.add
        result = None
        i = count
        while i > 0:
            value = tree.get(i)
            if value is not None:
                result = value if result is None else add(result, value)
            i -= i & -i
        return zero if result is None else result


def _kind(value: Any) -> str | None:
    """Values compare only within a kind (numbers with numbers, strings with strings, dates with dates, as
    ``predicates.compare`` has them); null never, and
    neither does NaN (``A.x % 1.5`` of an int past the largest double), which no ``<``, ``<=``, ``>``, ``>=``
    or ``=`` holds for, but which would take some rank in a sorted index (``!=`` is never indexed)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value_kind(value)


def index_keys(values: Sequence[Any]) -> dict[str, list[Any]] | None:
    """The predecessors' distinct ``values`` per kind in order, the ranks of an ordered index; None where a
    kind's values are not hashable or not totally ordered (lists), which are compared one by one
    (``ScanSource``). Dates, timestamps, durations and bytes rank as numbers and texts do, a zoned datetime by
    its instant (``predicates.instant``)."""
    by_kind: dict[str, set[Any]] = {}
    try:
        for value in values:
            kind = _kind(value)
            if kind is not None:
                by_kind.setdefault(kind, set()).add(instant(value))
        return {kind: sorted(found) for kind, found in by_kind.items()}
    except TypeError:
        return None


class IndexedSource:
    """Edge predicate ``f(x) op g(y)`` answered from an ordered index over f(x), per window."""

    kind = "indexed"

    def __init__(self, predecessor_type: str, algebra: Algebra, op: str, source_key: LocalFn,
                 target_key: LocalFn, keys: dict[str, list[Any]]) -> None:  # fmt: skip
        self.predecessor_type = predecessor_type
        self.algebra = algebra
        self.op, self.source_key, self.target_key = op, source_key, target_key
        self.keys = keys  # (``index_keys``)
        self.windows: dict[int, dict[str, Any]] = {}  # window → kind → Fenwick (or dict for '=')

    def _rank(self, kind: str, value: Any) -> int:
        """Rank in the index; for > and >= the order is reversed so that both read a prefix."""
        keys = self.keys[kind]
        rank = bisect_left(keys, value)
        return len(keys) - 1 - rank if self.op in (">", ">=") else rank

    def collect(self, event: Event, windows: Sequence[int]) -> list[Any]:
        zero = self.algebra.zero
        value = self.target_key(event)
        kind = _kind(value)
        if kind is None or kind not in self.keys:
            return [zero for _ in windows]
        value = instant(value)
        keys, op = self.keys[kind], self.op
        if op == "=":
            return [self.windows.get(k, {}).get(kind, {}).get(value, zero) for k in windows]
        # How many ranks (in the index's order) satisfy f(x) op value.
        if op == "<":
            count = bisect_left(keys, value)
        elif op == "<=":
            count = bisect_right(keys, value)
        elif op == ">":
            count = len(keys) - bisect_right(keys, value)
        else:
            count = len(keys) - bisect_left(keys, value)
        out = []
        for k in windows:
            tree = self.windows.get(k, {}).get(kind)
            out.append(zero if tree is None else tree.prefix(count, zero))
        return out

    def insert(self, event: Event, aggregates: dict[int, Any]) -> None:
        value = self.source_key(event)
        kind = _kind(value)
        if kind is None:
            return
        value = instant(value)
        add = self.algebra.add
        for k, agg in aggregates.items():
            per_kind = self.windows.setdefault(k, {})
            if self.op == "=":
                table = per_kind.setdefault(kind, {})
                current = table.get(value)
                table[value] = agg if current is None else add(current, agg)
            else:
                tree = per_kind.get(kind)
                if tree is None:
                    tree = per_kind[kind] = _Fenwick(len(self.keys[kind]), add)
                tree.insert(self._rank(kind, value), agg)

    def close(self, window: int) -> None:
        self.windows.pop(window, None)


class ScanSource:
    """The general case: every stored predecessor is tested (GRETA's scan), once across all windows."""

    kind = "scan"

    def __init__(self, predecessor_type: str, algebra: Algebra, tests: Sequence[EdgeFn],
                 threshold: Threshold | None, horizon: Any, admits: Admits | None = None) -> None:  # fmt: skip
        self.predecessor_type = predecessor_type
        self.algebra = algebra
        self.tests = tuple(tests)
        self.threshold = threshold
        self.admits = admits  # (a position template's guard that a match may open as well as close)
        self.horizon = horizon  # events this much older than the new one share no window with it
        self.stored: deque[tuple[Event, dict[int, Any]]] = deque()

    def collect(self, event: Event, windows: Sequence[int]) -> list[Any]:
        stored = self.stored
        limit = self.threshold() if self.threshold is not None else None
        oldest = before(event.time, self.horizon)
        while stored and (stored[0][0].time <= oldest or (limit is not None and stored[0][0].time < limit)):
            stored.popleft()
        add, tests = self.algebra.add, self.tests
        totals: dict[int, Any] = {}
        admits = self.admits
        for previous, aggregates in stored:  # in time order: the front pruning left none before the limit
            if (admits is None or admits(previous.time)) and all(test(previous, event) for test in tests):
                for k, agg in aggregates.items():
                    current = totals.get(k)
                    totals[k] = agg if current is None else add(current, agg)
        zero = self.algebra.zero
        return [totals.get(k, zero) for k in windows]

    def matching(self, event: Event, since: Any = None) -> list[tuple[Event, dict[int, Any]]]:
        """The stored predecessors ``event`` has an edge from (GRETA's graph edges, what ``collect`` sums),
        with their aggregates per window: the skip-till-next-match and contiguous semantics choose among
        them (graph.py's ``SemanticsEdges``); ``since``: only those at or after that time (read from the
        newest back, so a contiguous query looks at one timestamp's events, not at the window's)."""
        stored = self.stored
        limit = self.threshold() if self.threshold is not None else None
        oldest = before(event.time, self.horizon)
        while stored and (stored[0][0].time <= oldest or (limit is not None and stored[0][0].time < limit)):
            stored.popleft()
        tests, admits = self.tests, self.admits

        def edge(previous: Event) -> bool:
            return (admits is None or admits(previous.time)) and all(test(previous, event) for test in tests)

        if since is not None:
            recent = []
            for previous, aggregates in reversed(stored):
                if previous.time < since:
                    break
                if edge(previous):
                    recent.append((previous, aggregates))
            return recent[::-1]
        return [(previous, aggregates) for previous, aggregates in stored if edge(previous)]

    def insert(self, event: Event, aggregates: dict[int, Any]) -> None:
        self.stored.append((event, aggregates))

    def close(self, window: int) -> None:
        pass  # expired events leave with the horizon


Source = RunningSource | QueueSource | IndexedSource | ScanSource
