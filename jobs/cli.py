"""``hamlet generate|aggregate|load-events|validate|report``: the Spark commands, dispatched here from ``hamlet.cli`` so that
``import hamlet`` never imports Spark (their one-line descriptions are ``hamlet.cli.SPARK_COMMANDS``)."""

from __future__ import annotations


def main(argv: list[str]) -> int:
    command, rest = argv[0], argv[1:]
    if command == "generate":
        from jobs.generate import main as generate

        return generate(rest)
    if command == "aggregate":
        from jobs.aggregate import main as aggregate

        return aggregate(rest)
    if command == "load-events":
        from jobs.load_events import main as load_events

        return load_events(rest)
    if command == "validate":
        from jobs.validate import main as validate

        return validate(rest)
    if command == "report":
        from jobs.report import main as report

        return report(rest)
    raise ValueError(f"unknown command {command!r}")
