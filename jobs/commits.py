"""Delta commits that are tried again when a concurrent writer won the race.

Two runs that write the same partition at once (two hours of one day: ``window_end_date``) conflict:
Delta's optimistic concurrency lets the first commit win and fails the other (``ConcurrentAppendException``
and its siblings, ``_conflicts``). The table is
intact and the loser's work is still valid, so the commit is simply made again from the table's new state,
after a growing, jittered pause that lets concurrent writers drift apart. Only operations that are correct
when repeated go through here: replaceWhere overwrites, merges, updates and appends of one run's rows.

Over Spark Connect (``[spark] server = true``) a conflict reaches the client as a gRPC error, which PySpark
turns into a Python class by the server's exception class names: without Delta's names registered, a
``ConcurrentAppendException`` arrives as ``pyspark.errors.exceptions.connect.UnknownException`` whose message
starts with ``(io.delta.exceptions.ConcurrentAppendException)``, and would not be retried. Importing
``delta.connect.exceptions`` registers them (before the commit runs: the class is chosen when the error
arrives), so the client raises ``delta.connect.exceptions.ConcurrentAppendException``, a subclass of the same
``delta.exceptions`` classes the classic (py4j) client's conflicts subclass
(tests/spark/test_spark_server.py commits concurrent hours over a real server).
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

ATTEMPTS = 8  # the last pause is ~64 s (0.5 s doubled 7 times, plus up to as much jitter)
FIRST_PAUSE_SECONDS = 0.5


def retried(commit: Callable[[], T], what: str, attempts: int = ATTEMPTS,
            first_pause: float = FIRST_PAUSE_SECONDS, also: tuple[str, ...] = ()) -> T:  # fmt: skip
    """``commit()``, again after a conflict with a concurrent Delta commit (``what`` names it in the note
    printed to stderr), at most ``attempts`` times; ``also``: error conditions that mean the same race here.
    Any other failure, or the last conflict, is raised."""
    conflicts = _conflicts()
    jitter = random.Random()
    for attempt in range(1, attempts + 1):
        try:
            return commit()
        except Exception as conflict:
            condition = _condition(conflict)
            if not isinstance(conflict, conflicts) and condition not in also:
                raise
            if attempt == attempts:
                raise
            pause = first_pause * 2 ** (attempt - 1) * (1 + jitter.random())
            name = type(conflict).__name__ + (f"[{condition}]" if condition in also else "")
            print(f"{what}: {name} (a concurrent commit won); trying again in {pause:.1f} s "
                  f"({attempt + 1} of {attempts})", file=sys.stderr)  # fmt: skip
            time.sleep(pause)
    raise AssertionError("unreachable")  # the loop returns or raises


def _condition(error: Exception) -> str | None:
    """A Spark error's condition (its error class), e.g. DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION."""
    condition = getattr(error, "getCondition", None)
    return condition() if callable(condition) else None


def _conflicts() -> tuple[type[Exception], ...]:
    """Delta's conflicts with a concurrent commit. delta-spark raises them as subclasses of these (one class
    per kind, no common base), ProtocolChangedException being two writers creating one table. Spark
    Connect clients get them too once ``delta.connect.exceptions`` has registered the server's names."""
    from importlib import import_module

    from delta import exceptions as delta

    import_module("delta.connect.exceptions")  # registers Delta's conflicts with PySpark's Connect client

    return (delta.DeltaConcurrentModificationException, delta.ConcurrentWriteException,
            delta.MetadataChangedException, delta.ProtocolChangedException, delta.ConcurrentAppendException,
            delta.ConcurrentDeleteReadException, delta.ConcurrentDeleteDeleteException,
            delta.ConcurrentTransactionException)  # fmt: skip
