"""Small helpers to write streams the way the papers do: ``a1 b2 c2`` is an a at 1, a b at 2, a c at 2."""

from __future__ import annotations

from hamlet import Event


def stream(text: str, **attributes: dict[str, dict]) -> list[Event]:
    """``stream("a1 b2", x={"a1": 5})`` gives A@1 with x=5 and B@2."""
    events = []
    for token in text.split():
        values = {name: per_event[token] for name, per_event in attributes.items() if token in per_event}
        events.append(Event(token[0].upper(), int(token[1:]), values))
    return events
