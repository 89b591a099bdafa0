"""An Airflow plugin (loaded from ``plugins/``, the plugins folder ``jobs.airflow_home`` sets): the API server serves the pipeline's
Data Docs and reports under ``/hamlet/`` to logged-in users, so that the tasks' extra links open them.

    /hamlet/data_docs/<run folder>/<stage>/index.html    a run's Great Expectations Data Docs
    /hamlet/reports/<workload>.html                      the workload's report (``hamlet report``)

Only files inside the configured folders are served (``[validation] data_docs`` and ``reports`` of
conf/pipeline.toml), and only to a request that carries the UI's session or an API token: the pages show
quarantined rows, which are as private as the tables. Browsers do not follow ``file://`` links from an
``http://`` page, hence a route instead of links to the files.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Literal

from airflow.api_fastapi.core_api.security import GetUserDep
from airflow.plugins_manager import AirflowPlugin
from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse, HTMLResponse

from jobs.pipeline import load_config

app = FastAPI(title="hamlet-trends: Data Docs and reports")


def _inside(kind: str, path: str) -> Path:
    config = load_config()
    base = (config.data_docs if kind == "data_docs" else config.reports).resolve()
    target = (base / path).resolve()
    if not target.is_relative_to(base):
        raise HTTPException(status_code=404, detail=f"no {kind} file {path}")
    return target


def served_file(kind: str, path: str) -> Path:
    """The file ``path`` inside the folder of ``kind``; a 404 for anything else (``..``, links out)."""
    target = _inside(kind, path)
    if not target.is_file():
        raise HTTPException(status_code=404, detail=f"no {kind} file {path}")
    return target


def served_folder(kind: str, path: str) -> Path:
    """The folder ``path`` inside the folder of ``kind`` (or that folder); a 404 for anything else."""
    target = _inside(kind, path)
    if not target.is_dir():
        raise HTTPException(status_code=404, detail=f"no {kind} folder {path}")
    return target


@app.get("/{kind}/{path:path}", response_model=None)
def serve(kind: Literal["data_docs", "reports"], path: str, user: GetUserDep) -> FileResponse | HTMLResponse:
    del user  # (the dependency refuses requests without a valid session or token)
    if path == "" or path.endswith(
        "/"
    ):  # a folder: its list (the ad hoc DAG's links before a run rendered them)
        folder = served_folder(kind, path)
        names = sorted(
            p.name + ("/" if p.is_dir() else "") for p in folder.iterdir() if not p.name.startswith("_")
        )
        items = "".join(f'<li><a href="{html.escape(n)}">{html.escape(n)}</a></li>' for n in names)
        return HTMLResponse(f"<!DOCTYPE html><title>{kind}</title><h1>{kind}/{html.escape(path)}</h1>"
                            f"<ul>{items or '<li>none yet</li>'}</ul>")  # fmt: skip
    return FileResponse(served_file(kind, path))


class HamletPlugin(AirflowPlugin):
    name = "hamlet_trends"
    fastapi_apps = [{"app": app, "url_prefix": "/hamlet", "name": "hamlet-trends Data Docs and reports"}]  # noqa: RUF012 (Airflow reads this class attribute)
