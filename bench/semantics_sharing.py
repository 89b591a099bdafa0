"""Sharing among queries of one semantics: the same workload under ANY, NEXT and CONT, every strategy.

    .venv/bin/python bench/semantics_sharing.py [--queries 20] [--events 20000] [--burst 30] [--repeat 3]
        [--output bench/results/semantics.md]

Workload: ``--queries`` queries SEQ(S<k>, B+, E) WHERE B.v > t<k> (S<k> one of 8 start types, thresholds
0..9), COUNT(*), WITHIN 60 SLIDE 30, all under one semantics. Stream: rounds of one event of each start
type and E, then a burst of ``--burst`` B events, one per second, B.v in 0..9 (seed 2021). Under ANY the
queries share the B bursts (HAMLET's graphlets: static always, hamlet where Eq. 7 says it pays); under
NEXT and CONT a query's edges depend on its whole pattern and sub-stream, so the analysis shares nothing
(``workload.sharing_obstacle``) and every strategy runs GRETA's graphs: the ratios show what sharing buys
under one semantics and that the others pay nothing for a plan they cannot use. CPU seconds, strategies
interleaved in one process, best of ``--repeat`` (``timing.measure_all``); results asserted identical.
"""

from __future__ import annotations

import random

from timing import append_report, load, machine, measure_all, one_stream_arguments

from hamlet import Event, parse_workload

STARTS = [f"S{i}" for i in range(8)]


def workload(queries: int, semantics: str) -> str:
    return "\n".join(
        f"q{k}: RETURN COUNT(*) PATTERN SEQ({STARTS[k % len(STARTS)]}, B+, E) SEMANTICS {semantics} "
        f"WHERE B.v > {k % 10} WITHIN 60 SLIDE 30"
        for k in range(queries)
    )


def stream(events: int, burst: int) -> list[Event]:
    rng, out = random.Random(2021), []
    while len(out) < events:
        for t in [*STARTS, "E"]:
            out.append(Event(t, len(out), {}))
        out.extend(Event("B", len(out) + j, {"v": rng.randrange(10)}) for j in range(burst))
    return out[:events]


def main() -> None:
    args = one_stream_arguments(__doc__, more=(("--queries", 20), ("--burst", 30)))
    events = stream(args.events, args.burst)
    title = (f"## Sharing among queries of one semantics: {args.queries} queries, {args.events} events, "
             f"bursts of {args.burst} (`bench/semantics_sharing.py`)")  # fmt: skip
    header = ("| semantics | greta CPU s | static CPU s | hamlet CPU s | hamlet × greta | hamlet × static "
              "| shared bursts (hamlet) |")  # fmt: skip
    lines = [title, "", f"{machine()}, {load()} before", "", header, "|---|---|---|---|---|---|---|"]
    for semantics in ("ANY", "NEXT", "CONT"):
        results = measure_all(parse_workload(workload(args.queries, semantics)), events,
                              ["greta", "static", "hamlet"], args.repeat)  # fmt: skip
        rows = [r for _, r, _ in results.values()]
        assert all(r == rows[0] for r in rows), f"{semantics}: the strategies disagree"
        (g, _, _), (s, _, _), (h, _, stats) = results["greta"], results["static"], results["hamlet"]
        lines.append(f"| {semantics} | {g:.3f} | {s:.3f} | {h:.3f} | {g / h:.2f} | {s / h:.2f} "
                     f"| {stats.shared_bursts}/{stats.bursts} |")  # fmt: skip
        print(lines[-1], flush=True)
    lines += ["", f"{load()} after", ""]
    append_report(lines, args.output)


if __name__ == "__main__":
    main()
