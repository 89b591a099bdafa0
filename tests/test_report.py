"""hamlet report: the HTML page of an output table and its run_stats, opened in a real headless Chromium.

The tables are real Delta tables (written with deltalake in a temporary folder, in the aggregation job's
schema); the page is loaded from disk by Chromium (tests/browser.py), which counts the charts it draws and
reads the exact values they show."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

pytest.importorskip("deltalake")
pytest.importorskip("websockets")

from browser import Browser, browser_path


def at(hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 1, 5, hour, minute, tzinfo=UTC)


BIG = str(2**200 + 7)  # a count beyond double precision: the page shows every digit


def write_tables(folder: Path) -> tuple[str, str]:
    import pyarrow as pa
    from deltalake import write_deltalake

    rows = []
    for query, aggregate, group, values in [
        ("warm", "COUNT(*)", '{"line":"L1"}', ["3", "12", BIG]),
        ("warm", "COUNT(*)", '{"line":"L2"}', ["1", "5", "9"]),
        ("warm", "AVG(R.temperature)", '{"line":"L1"}', ["41.5", "50.25", "62"]),
        ("hot", "COUNT(*)", '{"line":"L1"}', ["2", "4", "8"]),
    ]:
        for i, value in enumerate(values):
            end = at(0, 10 * (i + 1))
            rows.append({"workload": "factory_sensors", "query": query, "window_start": at(0), "window_end": end,
                         "group_key": group, "aggregate": aggregate, "value": float(value) if value != BIG else None,
                         "value_exact": value, "strategy": "hamlet", "run_id": "r1", "computed_at": at(1),
                         "window_end_date": end.date()})  # fmt: skip
    rows.append(
        {**rows[0], "workload": "rideshare_trips", "query": "q1", "group_key": '{"district":"Harbor"}'}
    )
    output = str(folder / "trend_aggregates")
    write_deltalake(output, pa.Table.from_pylist(rows), partition_by=["workload", "window_end_date"])
    stats = [{"run_id": run, "workload": "factory_sensors", "strategy": "hamlet", "range_start": at(h),
              "range_end": at(h + 1), "read_start": at(h), "query_set": 0, "queries": ["warm", "hot"],
              "partition_attributes": ["line", "machine"], "events_read": 2000, "set_events": 1990,
              "partitions": 8, "engine_calls": 2, "rows_written": 100,
              "engine_stats": [("bursts", 60.0), ("shared_bursts", shared), ("graphlets", shared + 3.0),
                               ("splits", 1.0), ("merges", 1.0)],
              "read_seconds": 1.5, "shuffle_seconds": 0.25, "engine_seconds": 2.0, "engine_cpu_seconds": 1.0,
              "combine_seconds": 0.5, "write_seconds": 3.0, "total_seconds": 7.25, "computed_at": at(h + 1),
              "status": "committed", "output_version": h}
             for h, run, shared in [(0, "scheduled__2026-01-05T01:00:00+00:00", 40.0),
                                    (1, "scheduled__2026-01-05T02:00:00+00:00", 45.0)]]  # fmt: skip
    # engine_stats is a MAP in run_stats (from_pylist would not guess it)
    engine = pa.array([r.pop("engine_stats") for r in stats], pa.map_(pa.string(), pa.float64()))
    table = pa.Table.from_pylist(stats).append_column("engine_stats", engine)
    write_deltalake(str(folder / "run_stats"), table)
    return output, str(folder / "run_stats")


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    output, _ = write_tables(folder)
    page = folder / "report.html"
    done = subprocess.run([sys.executable, "-m", "hamlet.cli", "report", "--table", output, "--workload",
                           "factory_sensors", "--output", str(page)], capture_output=True, text=True, check=False)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"report written to {page.resolve()}\n"
    return page


@pytest.fixture(scope="module")
def browser():
    chromium = Browser(browser_path())
    yield chromium
    chromium.close()


def test_the_report_is_self_contained(report):
    text = report.read_text(encoding="utf-8")
    # readable offline: nothing is fetched (no script, stylesheet, font or image from elsewhere)
    assert "http://" not in text and "https://" not in text and "<script" not in text and "<link" not in text
    # --workload: the other workload's rows are left out
    assert "rideshare_trips" not in text and "Harbor" not in text


def test_chromium_shows_a_chart_per_query_with_the_exact_values(report, browser):
    page = browser.open(report.as_uri())
    assert page.evaluate("document.title") == "hamlet-trends report"
    # one chart per query (hot, warm), a panel per aggregate of the query: hot COUNT(*); warm AVG and COUNT(*)
    assert page.evaluate("[...document.querySelectorAll('figure.chart')].map(f => f.dataset.query)") == [
        "hot",
        "warm",
    ]
    panels = "[...document.querySelectorAll('svg.panel')].map(s => [s.dataset.query, s.dataset.aggregate, s.dataset.scale])"
    assert page.evaluate(panels) == [["hot", "COUNT(*)", "linear"], ["warm", "AVG(R.temperature)", "linear"],
                                     ["warm", "COUNT(*)", "log10"]]  # fmt: skip
    # drawn: every panel has its size on the page, one line per group and a point per window
    assert page.evaluate("[...document.querySelectorAll('svg.panel')].map(s => { const r = s.getBoundingClientRect();"
                         " return [Math.round(r.width), Math.round(r.height)]; })") == [[560, 220]] * 3  # fmt: skip
    assert (
        page.evaluate(
            "document.querySelectorAll('svg.panel[data-aggregate=\"COUNT(*)\"][data-query=warm] polyline').length"
        )
        == 2
    )
    assert page.evaluate("document.querySelectorAll('circle.point').length") == 12
    # the exact values, as the points' titles show them (every digit of 2^200 + 7)
    title = (
        "[...document.querySelectorAll('svg.panel[data-query=warm][data-aggregate=\"COUNT(*)\"] circle')]"
        ".map(c => c.querySelector('title').textContent)"
    )
    assert page.evaluate(title) == [
        "line=L1, window ending 2026-01-05 00:10 UTC: COUNT(*) = 3",
        "line=L1, window ending 2026-01-05 00:20 UTC: COUNT(*) = 12",
        f"line=L1, window ending 2026-01-05 00:30 UTC: COUNT(*) = {BIG}",
        "line=L2, window ending 2026-01-05 00:10 UTC: COUNT(*) = 1",
        "line=L2, window ending 2026-01-05 00:20 UTC: COUNT(*) = 5",
        "line=L2, window ending 2026-01-05 00:30 UTC: COUNT(*) = 9",
    ]
    # the higher count is drawn higher (smaller y) on its log axis
    ys = page.evaluate("[...document.querySelectorAll('svg.panel[data-query=warm][data-aggregate=\"COUNT(*)\"] circle')]"
                       ".map(c => c.getBoundingClientRect().y)")  # fmt: skip
    assert ys[0] > ys[1] > ys[2]
    # the optimizer's decisions and stage seconds per run, from run_stats
    rows = page.evaluate(
        "[...document.querySelectorAll('table.runs tr.run')].map(r => [...r.cells].map(c => c.textContent))"
    )
    assert rows == [
        ["scheduled__2026-01-05T01:00:00+00:00", "2026-01-05 00:00 to 01:00", "hamlet", "warm, hot", "1990", "8",
         "60", "40", "43", "1", "1", "1.50", "0.25", "2.00", "0.50", "3.00", "7.25", "committed"],
        ["scheduled__2026-01-05T02:00:00+00:00", "2026-01-05 01:00 to 02:00", "hamlet", "warm, hot", "1990", "8",
         "60", "45", "48", "1", "1", "1.50", "0.25", "2.00", "0.50", "3.00", "7.25", "committed"],
    ]  # fmt: skip
    assert page.evaluate("document.querySelector('.shared-bursts').textContent") == "85"


def test_a_missing_table_is_a_clear_error(tmp_path):
    done = subprocess.run([sys.executable, "-m", "hamlet.cli", "report", "--table", str(tmp_path / "none"),
                           "--output", str(tmp_path / "r.html")], capture_output=True, text=True, check=False)  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"error: no Delta table at {tmp_path / 'none'}\n"


def test_a_workload_named_that_has_no_row_is_an_error(tmp_path, capsys):
    """A misspelt --workload wrote an empty report and exit 0 (a CLI audit)."""
    from jobs.report import main

    output, stats = write_tables(tmp_path)
    assert (
        main(["--table", output, "--workload", "factory_sensor", "--output", str(tmp_path / "r.html")]) == 1
    )
    assert capsys.readouterr().err == (
        f"error: no rows of workload factory_sensor in {output} or {stats}: the workload's name is its file's stem "
        "(--workload-name of `hamlet aggregate`)\n"
    )
    assert not (tmp_path / "r.html").exists()


def test_the_demo_summary_says_what_the_optimizer_shared(tmp_path):
    from jobs.demo import sharing_summary
    from jobs.report import SharingTotal, sharing_totals

    _, stats = write_tables(tmp_path)
    assert sharing_totals(stats, "factory_sensors", at(0), at(2)) == [
        SharingTotal("hamlet", ("warm", "hot"), ["scheduled__2026-01-05T01:00:00+00:00",
                     "scheduled__2026-01-05T02:00:00+00:00"], 3980, 120, 85, 91, 2, 2)
    ]  # fmt: skip
    assert sharing_totals(stats, "factory_sensors", at(1), at(2))[0].runs == [
        "scheduled__2026-01-05T02:00:00+00:00"
    ]
    assert sharing_summary(stats, "factory_sensors", at(0), at(2)).endswith(
        "runs):\n  hamlet {warm, hot}: 85 of 120 bursts shared in 91 graphlets (2 splits, 2 merges), 3980 events"
    )
    assert (
        sharing_summary(stats, "rideshare_trips", at(0), at(2))
        == f"rideshare_trips: no committed run in {stats}"
    )


# ------------------------------------------------------------------------- tables the report cannot read


def report_of(table: Path, output: Path, *extra: str) -> list[str]:
    return ["report", "--table", str(table), "--output", str(output), *extra]


def test_a_run_stats_table_of_another_schema_names_every_missing_column(tmp_path, capsys):
    import pyarrow as pa
    from deltalake import write_deltalake

    from hamlet.cli import main

    output, stats = write_tables(tmp_path)
    other = str(tmp_path / "other_stats")
    write_deltalake(other, pa.table({"x": [1, 2], "run_id": ["r1", "r2"]}))
    assert main(report_of(Path(output), tmp_path / "r.html", "--stats-table", other)) == 1
    assert capsys.readouterr() == ("", (f"error: {other}: not a run_stats table: no columns workload, strategy, "
                                   "range_start, range_end, query_set, queries, set_events, partitions, engine_stats, "
                                   "read_seconds, shuffle_seconds, engine_seconds, combine_seconds, write_seconds, "
                                   "total_seconds\n"))  # fmt: skip
    # the default run_stats (beside the table) is checked the same way: once a KeyError 'range_start'
    write_deltalake(stats, pa.table({"x": [1]}), mode="overwrite", schema_mode="overwrite")
    assert main(report_of(Path(output), tmp_path / "r.html")) == 1
    assert capsys.readouterr().err.startswith(f"error: {stats}: not a run_stats table: no columns run_id, ")
    assert not (tmp_path / "r.html").exists()


def test_a_stats_table_that_is_a_file_is_an_error(tmp_path, capsys):
    from hamlet.cli import main

    output, _ = write_tables(tmp_path)
    (tmp_path / "stats.csv").write_text("run_id\nr1\n")
    assert (
        main(report_of(Path(output), tmp_path / "r.html", "--stats-table", str(tmp_path / "stats.csv"))) == 1
    )
    assert capsys.readouterr() == (
        "",
        f"error: {tmp_path / 'stats.csv'}: not a Delta table (a file, not a folder)\n",
    )


def test_a_log_that_adds_a_file_outside_the_table_is_refused_before_a_row_is_read(tmp_path, capsys):
    """A commit whose ``add.path`` leaves the table's folder (``../``) would make the report read, and publish,
    a file it was not pointed at: every project read of a Delta table's rows refuses it (jobs/tables.py)."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from hamlet.cli import main
    from jobs.tables import OutsideTableError, read_arrow

    output, _ = write_tables(tmp_path)
    outside = tmp_path / "outside.parquet"
    secret = pa.Table.from_pylist([{**read_arrow(output).to_pylist()[0], "query": "SECRET"}])
    pq.write_table(secret.drop_columns(["workload", "window_end_date"]), outside)
    log = Path(output) / "_delta_log"
    version = len(list(log.glob("*.json")))
    add = {"path": "../outside.parquet", "partitionValues": {"workload": "factory_sensors",
           "window_end_date": "2026-01-05"}, "size": outside.stat().st_size, "modificationTime": 0,
           "dataChange": True}  # fmt: skip
    (log / f"{version:020d}.json").write_text(json.dumps({"add": add}) + "\n")
    with pytest.raises(OutsideTableError, match="its log adds a file outside the table: ../outside.parquet"):
        read_arrow(output)
    assert main(report_of(Path(output), tmp_path / "r.html")) == 1
    said = f"error: cannot read the trend_aggregates table {output}: OutsideTableError: its log adds a file outside "
    assert capsys.readouterr() == ("", said + "the table: ../outside.parquet\n")
    assert not (tmp_path / "r.html").exists()


def test_engine_counters_that_are_not_counts_and_stores_not_reachable_here_are_errors(tmp_path, capsys):
    import pyarrow as pa
    from deltalake import write_deltalake

    from hamlet.cli import main
    from jobs.tables import read_arrow

    output, stats = write_tables(tmp_path)
    rows = read_arrow(stats)
    for bad, shown in [(float("nan"), "nan"), (float("inf"), "inf"), (2.5, "2.5"), (-1.0, "-1.0")]:
        engine = pa.array([[("bursts", bad)], [("bursts", 1.0)]], pa.map_(pa.string(), pa.float64()))
        table = rows.set_column(rows.column_names.index("engine_stats"), "engine_stats", engine)
        write_deltalake(stats, table, mode="overwrite")
        assert main(report_of(Path(output), tmp_path / "r.html")) == 1
        said = f"error: {stats}: run scheduled__2026-01-05T01:00:00+00:00: engine_stats bursts is {shown}"
        assert capsys.readouterr() == ("", said + ", not a count\n")
    # (a store deltalake cannot open here: its first line, no traceback; hdfs:// needs no network to fail)
    assert main(["report", "--table", "hdfs://localhost:1/t", "--output", str(tmp_path / "r.html")]) == 1
    said = "error: hdfs://localhost:1/t: not a readable Delta table: Kernel error -> Generic HdfsObjectStore error"
    assert capsys.readouterr() == ("", said + "\n")
    assert not (tmp_path / "r.html").exists()


def test_wrongly_typed_columns_are_named_with_the_type_expected(tmp_path, capsys):
    import pyarrow as pa
    from deltalake import write_deltalake

    from hamlet.cli import main

    table = tmp_path / "trend_aggregates"
    write_deltalake(str(table), pa.table({"workload": ["w"], "query": ["q"], "window_end": ["not a time"],
                                          "group_key": ["{}"], "aggregate": ["COUNT(*)"], "value": ["1"],
                                          "value_exact": ["1"]}))  # fmt: skip
    assert main(report_of(table, tmp_path / "r.html")) == 1
    assert capsys.readouterr() == ("", (f"error: {table}: column window_end is string, expected a timestamp; "
                                   "column value is string, expected a number (double)\n"))  # fmt: skip
    # run_stats: engine_stats a string, partitions a double
    output, stats = write_tables(tmp_path / "t")
    import pyarrow.compute as pc
    from deltalake import DeltaTable

    rows = DeltaTable(stats).to_pyarrow_table()
    rows = rows.set_column(
        rows.schema.get_field_index("partitions"), "partitions", pc.cast(rows["partitions"], pa.float64())
    )
    rows = rows.set_column(
        rows.schema.get_field_index("engine_stats"), "engine_stats", pa.array(["{}", "{}"])
    )
    write_deltalake(stats, rows, mode="overwrite", schema_mode="overwrite")
    assert main(report_of(Path(output), tmp_path / "r.html")) == 1
    assert capsys.readouterr() == ("", (f"error: {stats}: column partitions is double, expected an integer; "
                                   "column engine_stats is string, expected a map of string to number\n"))  # fmt: skip


def test_nulls_where_the_report_needs_a_value_are_an_error(tmp_path, capsys):
    import pyarrow as pa
    from deltalake import write_deltalake

    from hamlet.cli import main

    table = tmp_path / "trend_aggregates"
    write_deltalake(str(table), pa.table({"workload": ["w", "w"], "query": ["q", None],
                                          "window_end": [at(0, 10), at(0, 20)], "group_key": ["{}", "{}"],
                                          "aggregate": ["COUNT(*)", "COUNT(*)"], "value": [1.0, 2.0],
                                          "value_exact": ["1", "2"]}))  # fmt: skip
    assert main(report_of(table, tmp_path / "r.html")) == 1
    assert capsys.readouterr() == ("", f"error: {table}: column query holds 1 null value\n")


def test_values_that_are_not_finite_are_left_out_of_the_chart_and_said_so(tmp_path, capsys):
    """A NaN, an inf, or value_exact "1e999" beside a null value: once drawn at y="nan", breaking the line."""
    import re

    import pyarrow as pa
    from deltalake import write_deltalake

    from hamlet.cli import main

    table, page = tmp_path / "trend_aggregates", tmp_path / "r.html"
    rows = [{"workload": "w", "query": q, "window_end": at(0, m), "group_key": '{"line":"L1"}', "aggregate": "SUM(R.v)",
             "value": v, "value_exact": x}
            for q, m, v, x in [("q", 10, 2.0, "2"), ("q", 20, None, "1e999"), ("q", 30, 4.0, "4"),
                               ("nan", 10, float("nan"), None), ("nan", 20, None, "nan")]]  # fmt: skip
    write_deltalake(str(table), pa.Table.from_pylist(rows))
    assert main(report_of(table, page)) == 0
    assert capsys.readouterr() == (f"report written to {page.resolve()}\n", "")
    text = page.read_text(encoding="utf-8")
    assert re.findall(r"<svg.*?</svg>", text) == [
        (
            '<svg class="panel" role="img" viewBox="0 0 560 220" width="560" height="220" data-query="nan" '
            'data-aggregate="SUM(R.v)" data-scale="none"><title>nan: SUM(R.v) per window end</title>'
            '<text class="aggregate" x="70" y="16">SUM(R.v)</text><text class="note" x="520" y="16" text-anchor="end">'
            "2 values not drawn (not a finite number): see the table</text></svg>"
        ),
        (
            '<svg class="panel" role="img" viewBox="0 0 560 220" width="560" height="220" data-query="q" '
            'data-aggregate="SUM(R.v)" data-scale="linear"><title>q: SUM(R.v) per window end</title>'
            '<line class="axis" x1="70" y1="180" x2="520" y2="180"/><line class="axis" x1="70" y1="26" x2="70" y2="180"/>'
            '<text class="aggregate" x="70" y="16">SUM(R.v)</text><text class="note" x="520" y="16" text-anchor="end">'
            "1 value not drawn (not a finite number): see the table</text>"
            '<text class="tick" x="66" y="183.0" text-anchor="end">0</text>'
            '<text class="tick" x="66" y="144.5" text-anchor="end">1</text>'
            '<text class="tick" x="66" y="106.0" text-anchor="end">2</text>'
            '<text class="tick" x="66" y="67.5" text-anchor="end">3</text>'
            '<text class="tick" x="66" y="29.0" text-anchor="end">4</text>'
            '<text class="tick" x="70.0" y="194" text-anchor="middle">01-05 00:10</text>'
            '<text class="tick" x="220.0" y="194" text-anchor="middle">01-05 00:16</text>'
            '<text class="tick" x="370.0" y="194" text-anchor="middle">01-05 00:23</text>'
            '<text class="tick" x="520.0" y="194" text-anchor="middle">01-05 00:30</text>'
            '<text class="tick" x="295" y="214" text-anchor="middle">window end (UTC)</text>'
            '<polyline class="series" fill="none" stroke="#4e79a7" stroke-width="1.5" points="70.0,103.0 520.0,26.0" '
            'data-group="line=L1"/>'
            '<circle class="point" cx="70.0" cy="103.0" r="2.5" fill="#4e79a7" data-group="line=L1" '
            'data-window-end="2026-01-05T00:10:00Z" data-value="2"><title>line=L1, window ending 2026-01-05 00:10 UTC: '
            "SUM(R.v) = 2</title></circle>"
            '<circle class="point" cx="520.0" cy="26.0" r="2.5" fill="#4e79a7" data-group="line=L1" '
            'data-window-end="2026-01-05T00:30:00Z" data-value="4"><title>line=L1, window ending 2026-01-05 00:30 UTC: '
            "SUM(R.v) = 4</title></circle></svg>"
        ),
    ]
    # every value stays in the chart's table, exactly as stored (the NaN without value_exact as its double)
    cells = re.findall(r'<td class="num">([^<]*)</td>', text)
    assert cells == ["nan", "nan", "2", "1e999", "4"]


def test_values_at_the_ends_of_the_double_range_are_drawn_inside_the_panel(tmp_path, capsys):
    """-1e308 to 1e308: high - low overflowed to inf, and every tick and point was drawn at y="nan"."""
    import re

    import pyarrow as pa
    from deltalake import write_deltalake

    from hamlet.cli import main

    table, page = tmp_path / "trend_aggregates", tmp_path / "r.html"
    rows = [{"workload": "w", "query": "q", "window_end": at(0, m), "group_key": "{}", "aggregate": "SUM(R.v)",
             "value": v, "value_exact": repr(v)} for m, v in [(10, -1e308), (20, 1e308)]]  # fmt: skip
    write_deltalake(str(table), pa.Table.from_pylist(rows))
    assert main(report_of(table, page)) == 0
    capsys.readouterr()
    text = page.read_text(encoding="utf-8")
    assert re.findall(r'class="tick" x="66" y="([^"]*)" text-anchor="end">([^<]*)<', text) == [
        ("183.0", "-1e+308"),
        ("144.5", "-5e+307"),
        ("106.0", "0"),
        ("67.5", "5e+307"),
        ("29.0", "1e+308"),
    ]
    assert re.findall(r'<circle class="point" cx="([^"]*)" cy="([^"]*)"', text) == [
        ("70.0", "180.0"),
        ("520.0", "26.0"),
    ]


def test_a_closed_browser_leaves_no_process_behind():
    """Chromium's zygote and renderers outlive a terminated browser process: before ``Browser.close`` ended
    its whole process group, every browser test left about ten of them (100 MB each) running."""
    chromium = Browser(browser_path())
    chromium.open("about:blank")
    group = chromium._process.pid
    os.killpg(group, 0)  # (the group is there: the signal 0 only checks)
    chromium.close()
    with pytest.raises(ProcessLookupError):
        os.killpg(group, 0)
