"""``hamlet explain --format dot|svg``: the merged workload template (HAMLET, SIGMOD 2021, Figure 3(b)) as a
Graphviz drawing.

States are event types (a double box: an end type; an arrow from a dot: a start type), transitions carry the
queries whose templates hold them, and every sharable Kleene sub-pattern (Definition 3.1) is filled gray with
its transitions drawn thick and gray, as the paper highlights ``B+``. The DOT text is made here, without
Graphviz; ``svg`` runs Graphviz's ``dot`` when it is installed (Debian: ``apt-get install graphviz``).
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess

from hamlet.analysis.workload import Workload
from hamlet.errors import HamletError

SHARED_FILL = "#d9d9d9"  # the paper's gray
SHARED_EDGE = "#7f7f7f"
NAMES_PER_LINE = 3  # query names per line of an edge label: eight sharers would make one very wide label
# Names a label lists before "and N more": Graphviz refuses a quoted string past 16,384 characters, and
# hundreds of names make no picture anyone reads.
NAMES_SHOWN = 24
DOT_SECONDS = 60  # a template too large to lay out in this time is not drawn (--format dot prints its text)


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _shown(queries: tuple[str, ...] | list[str]) -> tuple[list[str], str]:
    """The names a label lists, and what it says of the rest."""
    more = len(queries) - NAMES_SHOWN
    return list(queries[:NAMES_SHOWN]), (f" and {more} more" if more > 0 else "")


def _names(queries: tuple[str, ...] | list[str]) -> str:
    shown, rest = _shown(queries)
    lines = [", ".join(shown[i : i + NAMES_PER_LINE]) for i in range(0, len(shown), NAMES_PER_LINE)]
    return ",\n".join(lines) + rest


def shared_types(workload: Workload) -> dict[str, tuple[str, ...]]:
    """Each sharable Kleene sub-pattern → the event types of the merged template inside it."""
    types = set(workload.merged_template().types)
    return {
        pattern: tuple(t for t in dict.fromkeys(re.findall(r"\w+", pattern)) if t in types)
        for pattern in workload.sharable_kleene_subpatterns()
    }


def workload_dot(workload: Workload, title: str = "workload") -> str:
    """The merged template of ``workload`` as DOT text (deterministic: the order of the workload file)."""
    merged = workload.merged_template()
    sharable = workload.sharable_kleene_subpatterns()
    inside = shared_types(workload)
    gray_types = {t for types in inside.values() for t in types}
    caption = [f"merged template of {title}: {len(workload.queries)} queries"]
    caption += [f"sharable {p} by {len(qs)} queries: {', '.join(_shown(qs)[0])}{_shown(qs)[1]}"
                for p, qs in sharable.items()]  # fmt: skip
    if not sharable:
        caption.append("no sharable Kleene sub-pattern")
    out = [
        "digraph merged_template {",
        "  rankdir=LR;",
        f"  label={_quoted(chr(10).join(caption))}; labelloc=b; fontname=Helvetica; fontsize=11;",
        "  node [shape=box, fontname=Helvetica, fontsize=12, style=filled, fillcolor=white];",
        "  edge [fontname=Helvetica, fontsize=9];",
    ]
    for t in merged.types:
        attributes = [f"id={_quoted('type-' + t)}"]
        if t in merged.end:
            attributes.append("peripheries=2")
        if t in gray_types:
            attributes.append(f"fillcolor={_quoted(SHARED_FILL)}")
        out.append(f"  {_quoted(t)} [{', '.join(attributes)}];")
    for i, t in enumerate(merged.start):
        point = f"start{i}"
        out.append(f"  {_quoted(point)} [shape=point, width=0.08, style=filled, fillcolor=black];")
        out.append(
            f"  {_quoted(point)} -> {_quoted(t)} [tooltip={_quoted('starts ' + _names(merged.start[t]))}];"
        )
    for tr in merged.transitions:
        shared_by = [
            qs for p, qs in sharable.items()
            if tr.source in inside[p] and tr.target in inside[p] and len(set(qs) & set(tr.queries)) > 1
        ]  # fmt: skip
        attributes = [
            f"label={_quoted(_names(tr.queries))}",
            f"id={_quoted(f'edge-{tr.source}-{tr.target}')}",
        ]
        if shared_by:
            attributes += [f"color={_quoted(SHARED_EDGE)}", "penwidth=3", "class=shared"]
        out.append(f"  {_quoted(tr.source)} -> {_quoted(tr.target)} [{', '.join(attributes)}];")
    out.append("}")
    return "\n".join(out) + "\n"


def render_svg(dot_text: str) -> str:
    """The DOT text drawn as SVG by Graphviz's ``dot``; a HamletError saying how to install it when missing."""
    dot = shutil.which("dot")
    if dot is None:
        raise HamletError(
            "--format svg needs Graphviz's dot on PATH (Debian: apt-get install graphviz); "
            "--format dot prints the DOT text instead"
        )
    try:
        done = subprocess.run([dot, "-Tsvg"], input=dot_text, capture_output=True, text=True, check=False,
                              timeout=DOT_SECONDS)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise HamletError(
            f"dot -Tsvg did not lay out the merged template in {DOT_SECONDS} s (too large to draw); "
            "--format dot prints the DOT text instead"
        ) from None
    if done.returncode != 0:
        said = done.stderr.strip() or (
            f"it was killed by signal {-done.returncode} ({signal.Signals(-done.returncode).name})"
            if done.returncode < 0 and -done.returncode in signal.valid_signals()
            else f"it exited with status {done.returncode} and said nothing"
        )
        raise HamletError(f"dot -Tsvg failed: {said}; --format dot prints the DOT text instead")
    return done.stdout
