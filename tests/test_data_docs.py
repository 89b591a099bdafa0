"""Data Docs kept small and readable offline (jobs/data_docs.py): a real Great Expectations site (pandas
datasource: no Spark needed to build one) localized, opened in headless Chromium, and pruned to the latest runs."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

pytest.importorskip("great_expectations")
pytest.importorskip("websockets")

from browser import Browser, browser_path

from jobs.data_docs import SCRIPT, STYLESHEET, localize, prune


def build_site(site: Path, run: str) -> None:
    """A Data Docs site as the gates build theirs: an ephemeral context, a checkpoint with UpdateDataDocsAction."""
    from jobs.logs import quiet

    quiet()
    import great_expectations as gx
    import pandas as pd

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = {"globally": False}  # type: ignore[assignment]
    context.add_data_docs_site(site_name="hamlet", site_config={
        "class_name": "SiteBuilder",
        "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": str(site)},
        "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
    })  # fmt: skip
    batch = (
        context.data_sources.add_pandas("events")
        .add_dataframe_asset("events")
        .add_batch_definition_whole_dataframe("all")
    )
    suite = context.suites.add(gx.ExpectationSuite(name="events", expectations=[
        gx.expectations.ExpectColumnValuesToNotBeNull(column="event_id"),
        gx.expectations.ExpectColumnValuesToBeBetween(column="speed", min_value=0, max_value=200),
    ]))  # fmt: skip
    definition = context.validation_definitions.add(
        gx.ValidationDefinition(name="events", data=batch, suite=suite)
    )
    checkpoint = context.checkpoints.add(gx.Checkpoint(name="events", validation_definitions=[definition],
        actions=[gx.checkpoint.UpdateDataDocsAction(name="docs", site_names=["hamlet"])]))  # fmt: skip
    frame = pd.DataFrame({"event_id": ["a", "b", "c"], "speed": [10.0, 250.0, 30.0]})
    checkpoint.run(batch_parameters={"dataframe": frame}, run_id=gx.RunIdentifier(run_name=run))


def size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("data_docs")
    for run in ("run1", "run2"):
        site = root / run / "events"
        build_site(site, run)
        assert size(site / "static") > 3_000_000  # what GX writes for every site: 4 MB
        localize(site, root)
    return root


def test_localized_sites_load_nothing_from_elsewhere_and_share_one_copy_of_their_assets(docs):
    assert sorted(p.name for p in (docs / "_static").iterdir()) == [
        "favicon.ico",
        "fonts",
        STYLESHEET,
        SCRIPT,
    ]
    for run in ("run1", "run2"):
        site = docs / run / "events"
        assert not (site / "static").exists()
        assert size(site) < 300_000
        for page in site.rglob("*.html"):
            text = page.read_text(encoding="utf-8")
            assert (
                "<link" in text
                and 'src="http' not in text
                and not any("http" in tag.split("href=")[1][:6] for tag in text.split("<link")[1:])
            ), page
    assert size(docs / "_static") < 1_000_000


def test_chromium_shows_the_local_data_docs(docs):
    browser = Browser(browser_path())
    try:
        page = browser.open((docs / "run1" / "events" / "index.html").as_uri())
        # the validation list (rendered from the page's table data by the local script)
        rows = page.evaluate("[...document.querySelectorAll('#section-1-content-block-2-1-body-table tbody tr')]"
                             ".map(r => [...r.cells].slice(2).map(c => c.textContent.trim().split('\\n')[0]))")  # fmt: skip
        assert rows == [["run1", "events", "events-events", "events"]]
        assert page.evaluate("getComputedStyle(document.querySelector('table')).borderCollapse") == "collapse"
        link = page.evaluate("document.querySelector('tr.clickable-row').dataset.href")
        result = browser.open((docs / "run1" / "events" / link).resolve().as_uri())
        assert "Failed" in result.evaluate("document.body.innerText")  # speed 250 is out of range
    finally:
        browser.close()


def test_shared_assets_of_an_older_version_are_replaced(docs):
    (docs / "_static" / SCRIPT).unlink()
    (docs / "_static" / STYLESHEET).write_text("/* older */")
    site = docs / "run3" / "events"
    build_site(site, "run3")
    localize(site, docs)
    assert (docs / "_static" / SCRIPT).read_text().startswith("/* hamlet-trends: the jQuery")
    assert (docs / "_static" / STYLESHEET).read_text().startswith("/* hamlet-trends: the Data Docs")


def test_prune_keeps_the_latest_runs(tmp_path):
    for i, run in enumerate(("old", "middle", "new")):
        (tmp_path / run / "events").mkdir(parents=True)
        os.utime(tmp_path / run, (time.time() - 100 + i, time.time() - 100 + i))
    (tmp_path / "_static").mkdir()
    assert prune(tmp_path, 2) == [tmp_path / "old"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["_static", "middle", "new"]
    assert prune(tmp_path / "missing", 2) == []
