"""Measure the constants of HAMLET's cost model on this machine and write hamlet/optimizer/calibration.json.

    .venv/bin/python bench/calibrate_costs.py [--write]

Each constant is seconds per operation of the executor as built (see hamlet/optimizer/benefit.py):
``evaluate`` a local predicate on one event, ``factor`` one timestamp group folded into a burst's factor,
``apply`` one burst committed to one window of one query (snapshot x, advance, commit; one slot of a
shape group for the COUNT(*) queries of ``hamlet/runtime/shapes.py``), ``snapshot`` one
rejected event folded into a query's own factor. Measured through the real code paths, best of 5.
"""

from __future__ import annotations

import argparse
import json
import timeit
from math import prod

from hamlet import Event, parse_workload
from hamlet.api import evaluate
from hamlet.optimizer.benefit import CALIBRATION
from hamlet.stats import EvaluationStats


def per_op(statement, number: int) -> float:
    return min(timeit.repeat(statement, number=1, repeat=5)) / number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help=f"write {CALIBRATION}")
    args = parser.parse_args()
    query = parse_workload("q: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE B.x < 5 WITHIN 100").queries[0]
    test = query.local_predicates[0].test
    events = [Event("B", t, {"x": t % 10}) for t in range(10_000)]
    evaluate_cost = per_op(lambda: [test(e) for e in events], len(events))
    sizes = [1] * 10_000
    factor_cost = per_op(lambda: prod(1 + m for m in sizes), len(sizes))
    # apply: a workload whose every event is its own burst for 20 queries, minus the per-event share.
    n, k = 4_000, 20
    text = "\n".join(f"q{i}: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 100000" for i in range(k))
    stream = [Event("A" if t % 2 else "B", t) for t in range(n)]
    apply_cost = per_op(lambda: evaluate(text, stream, "static", EvaluationStats()), n * k)
    rejected = [(2, 1)] * 10_000
    snapshot_cost = per_op(lambda: prod(1 + m for m, _ in rejected) * prod(1 + c for _, c in rejected), len(rejected))
    constants = {"evaluate": evaluate_cost, "factor": factor_cost, "apply": apply_cost, "snapshot": snapshot_cost}
    print(json.dumps(constants, indent=2))
    if args.write:
        CALIBRATION.write_text(json.dumps(constants, indent=2) + "\n")


if __name__ == "__main__":
    main()
