"""Figures like the HAMLET paper's 8, 10 and 11 from the grid's JSON lines (``hamlet_grid.py``).

    .venv/bin/python bench/plot_hamlet.py bench/results/hamlet_grid.jsonl [--out bench/results]

Needs the ``bench`` extra (matplotlib): ``bash scripts/bootstrap dev,bench``. Writes
* ``hamlet_fig8_rideshare.png``: ridesharing-like stream — latency and throughput vs events per window and
  vs the number of queries (the paper's Figure 8);
* ``hamlet_fig10_authors.png``: the authors' synthetic shape, the same four panels (Figure 10);
* ``hamlet_fig11_bursts.png``: latency vs burst size on both, and static vs dynamic sharing on the
  mixed-predicate workload (Figure 11).
Latency is the CPU seconds to evaluate the whole stream (every query, every window); throughput is events of
the stream per second. Log scale, as in the paper.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt

STYLE = {"greta": ("tab:red", "s"), "static": ("tab:blue", "^"), "hamlet": ("tab:green", "o")}
Row = dict[str, Any]


def load(path: str) -> list[Row]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def series(rows: list[Row], keep: Callable[[Row], bool], x: str, y: Callable[[Row], float]) -> dict:
    out: dict[str, list[tuple[float, float]]] = {}
    for r in rows:
        if keep(r):
            out.setdefault(r["strategy"], []).append((r[x], y(r)))
    return {s: sorted(points) for s, points in out.items()}


def panel(ax: Any, data: dict, title: str, xlabel: str, ylabel: str) -> None:
    for strategy, points in data.items():
        color, marker = STYLE.get(strategy, ("gray", "x"))
        ax.plot([p[0] for p in points], [p[1] for p in points], marker=marker, color=color, label=strategy)
    ax.set_yscale("log")
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)


def four_panels(
    rows: list[Row], workload: str, title: str, queries: int, events: int, burst: int, path: Path
) -> None:
    mine = [r for r in rows if r["workload"] == workload]

    def by_events(r: Row) -> bool:
        return r["queries"] == queries and r["burst"] == burst

    def by_queries(r: Row) -> bool:
        return r["events"] == events and r["burst"] == burst

    def latency(r: Row) -> float:
        return r["seconds"]

    def throughput(r: Row) -> float:
        return r["stream_events"] / r["seconds"]

    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5))
    panel(axes[0][0], series(mine, by_events, "events", latency), f"(a) latency, {queries} queries",
          "events per window", "latency (CPU s)")  # fmt: skip
    panel(axes[0][1], series(mine, by_queries, "queries", latency), f"(b) latency, {events:,} events per window",
          "queries", "latency (CPU s)")  # fmt: skip
    panel(axes[1][0], series(mine, by_events, "events", throughput), f"(c) throughput, {queries} queries",
          "events per window", "events/s")  # fmt: skip
    panel(axes[1][1], series(mine, by_queries, "queries", throughput),
          f"(d) throughput, {events:,} events per window", "queries", "events/s")  # fmt: skip
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def burst_figure(rows: list[Row], path: Path) -> None:
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    for ax, workload, label in (
        (axes[0], "authors", "authors' shape"),
        (axes[1], "rideshare", "ridesharing"),
    ):
        mine = [r for r in rows if r["workload"] == workload and r["queries"] == 50 and r["events"] == 20_000]
        panel(ax, series(mine, lambda r: True, "burst", lambda r: r["seconds"]),
              f"latency vs burst size, {label}, 50 queries", "events per burst", "latency (CPU s)")  # fmt: skip
    mixed = [r for r in rows if r["workload"] == "mixed"]
    panel(axes[2], series(mixed, lambda r: True, "queries", lambda r: r["seconds"]),
          "static vs dynamic sharing, mixed predicates", "queries", "latency (CPU s)")  # fmt: skip
    fig.suptitle("greta / static / hamlet (like the paper's Figure 11)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("results")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    args = parser.parse_args()
    rows = load(args.results)
    out = Path(args.out)
    four_panels(rows, "rideshare", "Ridesharing-like stream with predicates (like the paper's Figure 8)", 50,
                20_000, 20, out / "hamlet_fig8_rideshare.png")  # fmt: skip
    four_panels(rows, "authors", "The authors' synthetic shape, SEQ(Ea, E2+, Eb) (like the paper's Figure 10)", 50,
                20_000, 30, out / "hamlet_fig10_authors.png")  # fmt: skip
    burst_figure(rows, out / "hamlet_fig11_bursts.png")
    print(f"figures written to {out}")


if __name__ == "__main__":
    main()
