"""The exceptions users see. Each carries enough to point at the offending input."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence

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


def output_file(
    path: str,
    what: str,
    *,
    inputs: Sequence[tuple[str, str]] = (),
    folders: Sequence[tuple[str, str]] = (),
    create_folder: bool = False,
) -> None:
    """Refuse to write ``path`` (``what``: "output", "report") where the write would destroy an input or never
    end. ``inputs`` and ``folders`` are (description, path) pairs: input files (an output that is one of them,
    through a symbolic or hard link too, would be emptied before it is read or replace it) and input folders,
    such as a Delta table (a file written inside one corrupts it). Opening a FIFO for writing blocks until
    someone reads it and a device swallows the output, so an existing output must be a regular file. The
    folder the output goes in must exist unless ``create_folder``: a typo would otherwise make folders
    anywhere. Where open() would fail the same way, the error has its words ("Is a directory", "No such file
    or directory"), as the commands have always said."""
    try:
        mode: int | None = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None  # a new file (or a link to one that does not exist yet): its folder is checked below
    except OSError as e:
        raise HamletError(f"cannot write {what} {path}: {e.strerror}") from None
    if mode is not None and stat.S_ISDIR(mode):  # the OS's words, as open() would say them
        raise HamletError(f"cannot write {what} {path}: {os.strerror(errno.EISDIR)}")
    if mode is not None and not stat.S_ISREG(mode):
        raise HamletError(f"cannot write {what} {path}: not a regular file (a device, a FIFO or a socket)")
    real = os.path.realpath(path)  # where the bytes would go, through every symbolic link
    for description, source in inputs:
        if mode is not None and _same_file(path, source):
            raise HamletError(f"cannot write {what} {path}: it is {description} {source}")
    for description, table in folders:
        if "://" in table:  # a remote table: a local output cannot land in it
            continue
        inside = os.path.realpath(table)
        if real == inside or real.startswith(inside.rstrip(os.sep) + os.sep):
            raise HamletError(f"cannot write {what} {path}: it lies inside {description} {table}")
    folder = os.path.dirname(real)
    if not create_folder and not os.path.isdir(folder):  # what open() would say, but before any work is done
        why = errno.ENOTDIR if os.path.exists(folder) else errno.ENOENT
        raise HamletError(f"cannot write {what} {path}: {os.strerror(why)}")


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # the input is missing or unreadable: its own read reports that
        return False
