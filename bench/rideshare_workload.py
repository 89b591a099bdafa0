"""Write the 50-query rideshare workload of the job benchmark: conf/workloads/rideshare50.hamlet.

    .venv/bin/python bench/rideshare_workload.py [--queries 50] [--seed 2021] [--output conf/workloads/rideshare50.hamlet]

Variations of the HAMLET paper's q1-q3 over the attributes of `hamlet generate --scenario rideshare`: five
patterns around the shared Kleene sub-pattern Travel+ (with and without negation), local predicates on
speed and request type, GROUP-BY district or none, COUNT/SUM/AVG/MIN/MAX, windows of 10-30 minutes sliding
every 1-10 minutes (the paper's 30 min SLIDE 1 min among them). Deterministic for a seed.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

PATTERNS = [
    ("SEQ(Request R, Travel T+, NOT Pickup P)", "requests driven towards but not picked up"),
    ("SEQ(Request R, Travel T+, Dropoff D)", "trips that ended with a drop-off"),
    ("SEQ(Request R, Travel T+, Cancel C)", "requests cancelled while the driver travelled"),
    ("SEQ(Request R, Travel T+, Pickup P)", "requests followed by a pickup"),
    ("SEQ(Pickup P, Travel T+, Dropoff D)", "rides from pickup to drop-off"),
]
AGGREGATES = [
    ["COUNT(*)"],
    ["COUNT(*)", "SUM(T.duration)"],
    ["COUNT(*)", "AVG(T.speed)"],
    ["COUNT(T)", "SUM(T.duration)"],
    ["COUNT(*)", "MIN(T.speed)", "MAX(T.duration)"],
]
WINDOWS = [(30, 1), (30, 5), (20, 1), (20, 5), (15, 5), (10, 5), (10, 10), (30, 10)]


def make(queries: int, seed: int) -> str:
    rng = random.Random(seed)
    lines = [
        f"-- {queries} ridesharing queries for the Spark job benchmark (bench/job_throughput.py), written by",
        f"-- bench/rideshare_workload.py --queries {queries} --seed {seed}. All share Travel+ and the",
        "-- equivalence [driver, rider]; most group by district.",
        "",
    ]
    for i in range(1, queries + 1):
        pattern, meaning = PATTERNS[(i - 1) % len(PATTERNS)]
        predicates = ["[driver, rider]"]
        if rng.random() < 0.5:
            predicates.append(f"T.speed < {rng.choice([10, 20, 30])}")
        if pattern.startswith("SEQ(Request") and rng.random() < 0.3:
            predicates.append(f"R.request_type = {rng.choice(['Pool', 'Single'])}")
        grouped = rng.random() < 0.8
        aggregates = rng.choice(AGGREGATES)
        within, slide = rng.choice(WINDOWS)
        returns = (["T.district"] if grouped else []) + aggregates
        lines.append(f"-- q{i}: {meaning}")
        lines.append(f"q{i}: RETURN {', '.join(returns)}")
        lines.append(f"    PATTERN {pattern}")
        lines.append(f"    WHERE {' AND '.join(predicates)}")
        if grouped:
            lines.append("    GROUP-BY T.district")
        lines.append(f"    WITHIN {within} min SLIDE {slide} min")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--seed", type=int, default=2021)
    parser.add_argument(
        "--output", default=str(Path(__file__).resolve().parent.parent / "conf/workloads/rideshare50.hamlet")
    )
    args = parser.parse_args()
    Path(args.output).write_text(make(args.queries, args.seed), encoding="utf-8")
    print(f"{args.queries} queries written to {args.output}")


if __name__ == "__main__":
    main()
