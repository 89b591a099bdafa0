"""Delta tables read without Spark (the ``deltalake`` package), safe in short processes.

``DeltaTable(path).to_pyarrow_table()`` and ``.to_pandas()`` scan through a pyarrow dataset whose filesystem
is deltalake's Python one (``pyarrow.fs.PyFileSystem`` over ``DeltaStorageHandler``): Arrow's I/O threads
call into Python for every read, and a scan's read-ahead can leave such a call pending when the
interpreter exits. Arrow then destroys a thread that is still joinable and the process aborts after its
work is done: ``terminate called without an active exception``, exit -6 (apache/arrow#34314,
delta-io/delta-rs#2184). Measured on this machine: 14 of 850 short reader processes aborted that way (2 of
100, 1 of 300, 4 of 150, 7 of 300 in four loops); given an Arrow-native filesystem (no Python on Arrow's
threads), 0 of 1,200. So every project read of a Delta table's rows goes through ``read_arrow`` /
``read_pandas``, which hand deltalake Arrow's own filesystem for the table's location
(tests/spark/test_delta_readers.py checks the project's code for any other, and runs 100 processes). Reads of the log only (``schema()``, ``history()``, ``partitions()``) scan no files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pyarrow as pa
    import pyarrow.fs as pa_fs


def arrow_filesystem(location: str) -> pa_fs.FileSystem:
    """Arrow's native filesystem for a table location (a local path or a URI Arrow knows: file://, s3://,
    gs://, abfs://, hdfs://), rooted at the table as deltalake expects. Credentials then come from Arrow's
    own sources (environment, instance metadata), not from deltalake's storage options."""
    import os

    import pyarrow.fs as pa_fs

    if "://" in location:
        filesystem, root = pa_fs.FileSystem.from_uri(location)
    else:
        filesystem, root = pa_fs.LocalFileSystem(), os.path.abspath(location)
    return pa_fs.SubTreeFileSystem(root, filesystem)


def read_arrow(location: str, columns: list[str] | None = None, filters: Any = None) -> pa.Table:
    """The table's rows (``columns``, DNF ``filters`` as ``DeltaTable.to_pyarrow_table`` takes them)."""
    table = _contained(location)
    return table.to_pyarrow_table(columns=columns, filters=filters, filesystem=arrow_filesystem(location))


def read_pandas(location: str, columns: list[str] | None = None, filters: Any = None) -> pd.DataFrame:
    """``read_arrow`` as a pandas DataFrame (as ``DeltaTable.to_pandas`` converts it)."""
    table = _contained(location)
    return table.to_pandas(columns=columns, filters=filters, filesystem=arrow_filesystem(location))


def first_line(error: BaseException) -> str:
    """A deltalake error's first line, or its type's name when it says nothing (with RUST_BACKTRACE set, its
    message carries the Rust backtrace after that line)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


class OutsideTableError(ValueError):
    """A Delta log names a data file outside its table's folder."""


def _contained(location: str) -> Any:
    """The ``DeltaTable`` at ``location``, or an ``OutsideTableError`` where its log adds a file by a path
    that leaves the table's folder (``../x.parquet``, absolute, another scheme): the project writes none,
    and a reader must not be made to read (and a report to publish) a file it was not pointed at."""
    import posixpath
    from urllib.parse import unquote

    from deltalake import DeltaTable

    table = DeltaTable(location)
    for path in table.get_add_actions(flatten=False).column("path").to_pylist():
        plain = unquote(path)
        if "://" in plain or posixpath.isabs(plain) or posixpath.normpath(plain).split("/")[0] == "..":
            raise OutsideTableError(f"its log adds a file outside the table: {path}")
    return table
