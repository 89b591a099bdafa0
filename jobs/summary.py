"""The last line of every job and pipeline task: what went in, what was held back, what came out, how long.

    aggregate rideshare_trips [2026-01-05T09:00Z, 2026-01-05T10:00Z): 4000 rows in, 3 quarantined,
        1708 rows out, 0 shared bursts, 21.4 s

(one line). A field that does not apply to a step (shared bursts of a validation) is left out rather than
shown as 0, which would claim something. No Spark, Airflow or GX import: the DAG files import this.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime


@dataclass(frozen=True)
class Summary:
    step: str  # the task id (aggregate, validate_events, ...) or the command
    workload: str  # or what else the step works on (a scenario, a file)
    start: datetime | None  # the interval, when the step has one
    end: datetime | None
    seconds: float
    rows_in: int | None = None
    quarantined: int | None = None
    rows_out: int | None = None
    shared_bursts: int | None = None
    note: str = ""  # what else the step has to say in a few words (a Delta version, "waiting")

    def line(self) -> str:
        counts = [(self.rows_in, "rows in"), (self.quarantined, "quarantined"), (self.rows_out, "rows out"),
                  (self.shared_bursts, "shared bursts")]  # fmt: skip
        parts = [f"{value} {label}" for value, label in counts if value is not None]
        parts += [self.note] if self.note else []
        parts.append(f"{self.seconds:.1f} s")
        subject = self.workload
        if self.start is not None and self.end is not None:
            subject += f" [{_instant(self.start)}, {_instant(self.end)})"
        return f"{self.step} {subject}: {', '.join(parts)}"


def _instant(moment: datetime) -> str:
    """A UTC instant, short when it is on the minute (every hourly run's is)."""
    moment = moment.astimezone(UTC)
    if moment.second or moment.microsecond:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ").replace(".000000Z", "Z")
    return moment.strftime("%Y-%m-%dT%H:%MZ")
