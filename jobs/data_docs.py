"""Great Expectations Data Docs made fit to keep: local assets, one shared copy of them, a bounded history.

GX writes, for every site it builds, 4 MB of static files (logos and animations, fonts, a stylesheet) and
pages that load Bootstrap, jQuery, Font Awesome and Vega from CDNs: two sites per run (events, aggregates)
were 8 MB a run, and offline the pages came unstyled. After a gate has built its site, ``localize``

- keeps one copy of the fonts and favicon in ``<data_docs>/_static/`` (the pages point there) and deletes
  the site's own ``static/``;
- removes every tag that loads a script or stylesheet from elsewhere and links ``_static/hamlet-docs.css``, a
  small local stylesheet for the pages' Bootstrap classes, and ``_static/hamlet-docs.js``, the few jQuery
  and bootstrap-table calls the pages make (the index lists the validations from a table's data in a
  script); sorting, filtering and paging of those tables are gone, every row is shown;

and ``prune`` keeps the Data Docs of the latest ``[validation] data_docs_keep_runs`` runs.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

SHARED = "_static"
STYLESHEET = "hamlet-docs.css"
SCRIPT = "hamlet-docs.js"
# <link ... href="https://...">, <script src="https://..."></script>, <img src="https://...">: all GX loads from elsewhere.
REMOTE_LINK = re.compile(r"<link\b[^>]*\bhref=[\"']https?://[^>]*>\s*", re.IGNORECASE)
REMOTE_IMAGE = re.compile(r"<img\b[^>]*\bsrc=[\"']https?://[^>]*>", re.IGNORECASE)  # the GX logo
REMOTE_SCRIPT = re.compile(r"<script\b[^>]*\bsrc=[\"']https?://[^>]*>\s*</script>\s*", re.IGNORECASE)
# References into the site's own static folder, at any depth: ./static/, static/, ../../static/
LOCAL_STATIC = re.compile(r"(?<![\w/])(?:\./|(?:\.\./)+)?static/")
STYLE = """/* hamlet-trends: the Data Docs' Bootstrap classes, local (jobs/data_docs.py) */
body { font-family: system-ui, sans-serif; margin: 0; color: #212529; line-height: 1.4; }
.container, .container-fluid { max-width: 1200px; margin: 0 auto; padding: 16px; }
nav, .navbar { background: #f5f5f5; padding: 8px 16px; border-bottom: 1px solid #ddd; }
.row { display: flex; flex-wrap: wrap; gap: 16px; } .col-md-2, .col-md-3 { flex: 0 0 220px; }
.col, .col-md-8, .col-md-9, .col-md-10, .col-12 { flex: 1 1 600px; min-width: 0; }
.card { border: 1px solid #ddd; border-radius: 4px; margin-bottom: 16px; }
.card-header { background: #f7f7f7; padding: 8px 12px; border-bottom: 1px solid #ddd; }
.card-body { padding: 8px 12px; }
table { border-collapse: collapse; width: 100%; font-size: 14px; margin-bottom: 8px; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; }
.badge { display: inline-block; padding: 1px 6px; border-radius: 4px; font-size: 12px; background: #e9ecef; }
.text-danger, .fa-times { color: #dc3545; } .text-success, .fa-check-circle { color: #28a745; }
.alert { padding: 8px 12px; border: 1px solid #ddd; border-radius: 4px; margin: 8px 0; }
.alert-danger { background: #f8d7da; } .alert-success { background: #d4edda; }
.d-none, .modal, .popover, .tooltip, .cooltip .top { display: none; }
pre, code { font-size: 13px; background: #f7f7f7; }
.fa-check-circle::before { content: "\\2714"; } .fa-times::before, .fa-times-circle::before { content: "\\2718"; }
#ge-cta-footer { display: none; }
"""


SHIM = """/* hamlet-trends: the jQuery and bootstrap-table calls of GX's Data Docs, local (jobs/data_docs.py) */
(function () {
  function cell(value) { return value === undefined || value === null ? "" : String(value); }
  function wrap(nodes) {
    var self = {
      bootstrapTable: function (options) {
        if (!options || typeof options !== "object") { return self; }
        var columns = (options.columns || []).filter(function (c) { return String(c.visible) !== "false"; });
        nodes.forEach(function (table) {
          var head = "<thead><tr>" + columns.map(function (c) { return "<th>" + cell(c.title) + "</th>"; }).join("") + "</tr></thead>";
          var rows = (options.data || []).map(function (row) {
            var link = row._table_row_link_path;
            var open = link ? '<tr class="clickable-row" style="cursor: pointer" data-href="' + link + '" onclick="window.location = this.dataset.href">' : "<tr>";
            return open + columns.map(function (c) { return "<td>" + cell(row[c.field]) + "</td>"; }).join("") + "</tr>";
          });
          table.innerHTML = head + "<tbody>" + rows.join("") + "</tbody>";
        });
        return self;
      },
      ready: function (fn) {
        if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", fn); } else { fn(); }
        return self;
      },
      fadeIn: function () { nodes.forEach(function (n) { n.style.display = ""; }); return self; },
      fadeOut: function () { nodes.forEach(function (n) { n.style.display = "none"; }); return self; },
      parent: function () { return wrap(nodes.map(function (n) { return n.parentNode; }).filter(Boolean)); },
      data: function (key) { return nodes[0] && nodes[0].dataset ? nodes[0].dataset[key] : undefined; },
      on: function () { return self; }, modal: function () { return self; },
      removeClass: function (name) { nodes.forEach(function (n) { n.classList && n.classList.remove(name); }); return self; }
    };
    return self;
  }
  window.jQuery = window.$ = function (selector) {
    if (typeof selector === "function") { return wrap([document]).ready(selector); }
    if (typeof selector !== "string") { return wrap([selector]); }
    try { return wrap(Array.prototype.slice.call(document.querySelectorAll(selector))); } catch (e) { return wrap([]); }
  };
})();
"""


def _relative(target: Path, start: Path) -> str:
    return Path(os.path.relpath(target, start)).as_posix()


def localize(site: Path, data_docs: Path) -> None:
    """Point the pages of the Data Docs site at ``site`` to local assets shared under ``data_docs``."""
    shared = data_docs / SHARED
    own = site / "static"
    shared.mkdir(parents=True, exist_ok=True)
    if not (shared / "fonts").is_dir() and (own / "fonts").is_dir():
        shutil.copytree(own / "fonts", shared / "fonts", dirs_exist_ok=True)
    if not (shared / "favicon.ico").is_file() and (own / "images" / "favicon.ico").is_file():
        shutil.copy2(own / "images" / "favicon.ico", shared / "favicon.ico")
    for name, text in ((STYLESHEET, STYLE), (SCRIPT, SHIM)):  # rewritten when this module changed them
        path = shared / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        prefix = _relative(shared, page.parent)
        text = REMOTE_IMAGE.sub("", REMOTE_SCRIPT.sub("", REMOTE_LINK.sub("", text)))
        text = text.replace("static/images/favicon.ico", "static/favicon.ico")
        text = LOCAL_STATIC.sub(prefix + "/", text)
        local = f'<link rel="stylesheet" href="{prefix}/{STYLESHEET}">\n<script src="{prefix}/{SCRIPT}"></script>\n'
        text = text.replace("</head>", local + "</head>", 1)
        page.write_text(text, encoding="utf-8")
    shutil.rmtree(own, ignore_errors=True)


def prune(data_docs: Path, keep: int) -> list[Path]:
    """Delete the Data Docs of all but the ``keep`` most recently written runs; returns what was deleted."""
    if not data_docs.is_dir():
        return []
    runs = sorted((p for p in data_docs.iterdir() if p.is_dir() and p.name != SHARED),
                  key=lambda p: p.stat().st_mtime, reverse=True)  # fmt: skip
    gone = runs[keep:]
    for run in gone:
        shutil.rmtree(run, ignore_errors=True)
    return gone
