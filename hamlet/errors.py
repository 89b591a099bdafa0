"""The exceptions users see. Each carries enough to point at the offending input."""

from __future__ import annotations

import errno
import os
import re
import stat
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import accumulate

EXCERPT_WIDTH = 100  # characters of the offending line an error shows
# What ends a line of a workload, for the lexer's line numbers and the excerpts alike. Other separators
# (form feed, vertical tab, NEL, U+2028, U+2029) stand inside a line, shown escaped in an excerpt.
LINE_BREAK = re.compile(r"\r\n|\r|\n")
# Shown escaped in an excerpt: control characters (NUL, ESC, ...), format characters (the bidi overrides
# such as U+202E, which make a terminal reorder what it shows; zero-width ones), line and paragraph
# separators and lone surrogates (which stderr cannot encode).
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def source_lines(source: str) -> list[str]:
    """The lines of a workload as the lexer numbers them (``str.splitlines`` with LINE_BREAK only)."""
    lines = LINE_BREAK.split(source)
    if not lines[-1]:  # like splitlines: a final line break does not start another line
        lines.pop()
    return lines


def shown_char(ch: str) -> str:
    """A character as an excerpt shows it: a tab as one space (it is one column), a control or format
    character as its escape (``\\x00``, ``\\u202e``), anything else as itself."""
    if ch == "\t":
        return " "
    if unicodedata.category(ch) not in _ESCAPED_CATEGORIES:
        return ch
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown_names(names: Sequence[str], most: int = 20) -> str:
    """Column names as an error lists them: control characters escaped (a header's bytes reach the terminal
    only so), at most ``most`` of them and a count of the rest ("none" for no name)."""
    listed = ", ".join(
        "".join(map(shown_char, name[:80])) + ("..." if len(name) > 80 else "") for name in names[:most]
    )
    rest = len(names) - most
    return (listed or "none") + (f" and {rest} more" if rest > 0 else "")


# Byte order marks of the Unicode encodings other than UTF-8 (UTF-32's first: the LE one starts as UTF-16's).
# Spreadsheets and Windows tools save "Unicode text" as UTF-16 with one.
_FOREIGN_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def not_utf8_by_its_bom(start: bytes) -> str | None:
    """Why a file whose first bytes are ``start`` is no UTF-8 text when its byte order mark says so (the
    readers of workloads and events take UTF-8, with or without its own mark), or None: "the file is UTF-16
    (it starts with a UTF-16 byte order mark); it must be UTF-8", rather than "byte 0xff is not UTF-8"."""
    for mark, encoding in _FOREIGN_BOMS:
        if start.startswith(mark):
            return f"the file is {encoding} (it starts with a {encoding} byte order mark); it must be UTF-8"
    return None


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
        lines = source_lines(self.source)
        if not 1 <= self.line <= len(lines):
            return ""
        pieces = [shown_char(ch) for ch in lines[self.line - 1]]
        starts = [0, *accumulate(len(piece) for piece in pieces)]  # where each character's piece starts
        total = starts[-1]
        caret = starts[max(0, min(self.column - 1, len(pieces)))]  # the caret under the column's piece
        if total <= EXCERPT_WIDTH:
            return f"  {''.join(pieces)}\n  {' ' * caret}^"
        # A window of the line around the column, not all of a huge line, cut between whole pieces.
        first = max(0, min(caret - EXCERPT_WIDTH // 2, total - EXCERPT_WIDTH))
        a = bisect_left(starts, first)  # the first piece starting in the window
        b = max(a, bisect_right(starts, first + EXCERPT_WIDTH) - 1)  # the pieces ending in it
        head, tail = ("..." if a else ""), ("..." if b < len(pieces) else "")
        text = head + "".join(pieces[a:b]) + tail
        return f"  {text}\n  {' ' * (caret - starts[a] + len(head))}^"


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
