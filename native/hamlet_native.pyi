# The compiled graph kernel (src/lib.rs); hamlet/runtime/native.py is its one user (the CLI names its panics).
from typing import Any

# A panic of the kernel as PyO3 raises it: a bug of ours, never the input's (a BaseException).
class PanicException(BaseException): ...

class GraphKernel:
    def __init__(
        self,
        types: list[str],  # event types by position: a type at several positions on a position template
        starts: list[int],
        ends: list[int],
        transitions: list[tuple[int, int]],
        negations: list[tuple],
        fields: list[tuple[str, list[int], str | None, bool]],  # (kind, positions that update it, attribute, scaled)
        count_only: bool,
        members: list[tuple[int, int, int, int]],
        # (source, target, predicates, index, guard: (negation numbers, outcomes as a bit set) or None)
        edges: list[tuple[int, int, list[tuple], tuple[str, tuple, tuple] | None, tuple[list[int], int] | None]],
        semantics: int = 0,  # 0 skip-till-any-match, 1 skip-till-next-match (plain transitions only)
        required: list[int] | None = None,  # positions whose type every trend holds (default: all)
        member_ends: list[int] | None = None,  # per member its end position, on a merged template
        # P OR Q, P AND Q: (per position the operands it ends as bits, per operand its trailing NOT's number,
        # (position, negation numbers, outcomes as bits) per start position the operands' leading NOTs guard)
        operands: tuple[list[int], list[list[int]], list[tuple[int, list[int], int]]] | None = None,
    ) -> None: ...
    def run(self, events: list[Any], substream: list[int] | None = None) -> list[tuple[int, int, int, Any]] | None: ...

class SetKernel:
    def __init__(
        self, graphs: list[GraphKernel], keys: list[dict[str, list[tuple]]], key_of: list[int], grouping_of: list[list[int]]
    ) -> None: ...
    def run(
        self, events: list[Any], groups: list[int] | None = None, whole: bool = False, sharing: str = "none"
    ) -> tuple[list[tuple[int, int, int, int, Any]], list[int], int, tuple[int, int, int, int, int, int]] | None: ...
    def joint_groups(self) -> list[list[int]]: ...
    def summed(self) -> list[tuple[int, int, int, bool, list[tuple[int, Any]]]]: ...
    def run_columns(
        self, type_names: list[str], types: Any, times: Any, partitions: Any, count: int, groups: list[Any],
        group_offsets: list[int], columns: list[tuple[str, Any]], members: list[Any],
        texts: tuple[list[str], list[str], list[str]], window_ends: tuple[int, int],
        sharing: str = "none", segment: tuple[int, int] | None = None,
    ) -> tuple[Any, ...]: ...
    def segment_obstacle(self) -> str | None: ...

class SegmentCosts:
    def __init__(
        self, readers: dict[str, tuple[int, int, int, int]], sharers: list[str], pane: int, burst_break_even: float,
        group_event: float,
    ) -> None: ...
    def saved(self, events: list[Any]) -> tuple[float, int, int] | None: ...

def plain_events(
    events: list[Any], event_class: type, space: str, decimal: type, time_range: tuple[int, int]
) -> bool: ...
def floor_micros_column(seconds: Any) -> bytes | None: ...
def clashing_partitions(seconds: Any, micros: Any, partitions: Any, count: int) -> list[int]: ...
