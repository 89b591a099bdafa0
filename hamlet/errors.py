"""The exceptions users see. Each carries enough to point at the offending input."""

from __future__ import annotations

import os
import stat

EXCERPT_WIDTH = 100  # characters of the offending line an error shows


class HamletError(Exception):
    """Base class of every error the engine raises on purpose."""


class QueryError(HamletError):
    """A workload that cannot be parsed or analysed.

    ``line`` and ``column`` are 1-based positions in the workload text; ``query`` is the name of the query
    being read (None before the first name), ``expected`` what the parser wanted at that spot, if known.
    """

    def __init__(
        self,
        message: str,
        *,
        line: int,
        column: int,
        query: str | None = None,
        expected: str | None = None,
        source: str | None = None,
    ) -> None:
        self.message = message
        self.line = line
        self.column = column
        self.query = query
        self.expected = expected
        self.source = source
        super().__init__(self.describe())

    def describe(self) -> str:
        where = f"line {self.line}, column {self.column}"
        if self.query is not None:
            where = f"query {self.query!r}, {where}"
        return f"{where}: {self.message}"

    def excerpt(self) -> str:
        """The offending source line with a caret under the column (empty without source)."""
        if self.source is None:
            return ""
        lines = self.source.splitlines()
        if not 1 <= self.line <= len(lines):
            return ""
        text, caret = lines[self.line - 1].expandtabs(1), self.column - 1
        if len(text) > EXCERPT_WIDTH:  # a window of the line around the column, not all of a huge line
            first = max(0, min(caret - EXCERPT_WIDTH // 2, len(text) - EXCERPT_WIDTH))
            window = text[first : first + EXCERPT_WIDTH]
            head, tail = ("..." if first else ""), ("..." if first + EXCERPT_WIDTH < len(text) else "")
            text, caret = head + window + tail, caret - first + len(head)
        return f"  {text}\n  {' ' * caret}^"


class EventError(HamletError):
    """An event that cannot be read: ``where`` names the file and line or the position in the input."""

    def __init__(self, message: str, *, where: str) -> None:
        self.message = message
        self.where = where
        super().__init__(f"{where}: {message}")


class EvaluationError(HamletError):
    """Data that breaks a query at run time, e.g. a non-numeric value summed by SUM."""


def regular_file(path: str, what: str) -> None:
    """Refuse to read ``path`` (``what``: "workload", "events") unless it is a regular file: a device such as
    /dev/zero never ends and a FIFO blocks until someone writes to it."""
    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise HamletError(f"cannot read {what} {path}: {e.strerror}") from None
    if stat.S_ISDIR(mode):
        raise HamletError(f"cannot read {what} {path}: is a directory")
    if not stat.S_ISREG(mode):
        raise HamletError(f"cannot read {what} {path}: not a regular file (a device, a FIFO or a socket)")
