"""``hamlet explain``: everything the analysis derived from a workload, readable."""

from __future__ import annotations

import re

from hamlet.analysis.query import AnalyzedQuery
from hamlet.analysis.split import SubPattern
from hamlet.analysis.template import canonical
from hamlet.analysis.windows import seconds_text
from hamlet.analysis.workload import Workload
from hamlet.optimizer.benefit import CostModel
from hamlet.runtime.aggregates import algebra_for
from hamlet.runtime.native import kernel_obstacle, predicates_obstacle
from hamlet.runtime.partition import graph_key
from hamlet.runtime.shapes import shape_of


def explain(workload: Workload) -> str:
    out: list[str] = []
    for q in workload.queries:
        out.extend(_query(q))
        out.append("")
    out.append("Workload")
    out.append(f"  pane (gcd of all windows and slides): {seconds_text(workload.pane)}")
    merged = workload.merged_template()
    out.append("  merged template (each type once, transitions labelled by their queries):")
    out.append(f"    types: {', '.join(merged.types)}")
    for t in merged.transitions:
        out.append(f"    {t.source} -{t.label}-> {t.target}   {{{', '.join(t.queries)}}}")
    out.append("    start types: " + "; ".join(f"{k} {{{', '.join(v)}}}" for k, v in merged.start.items()))
    out.append("    end types:   " + "; ".join(f"{k} {{{', '.join(v)}}}" for k, v in merged.end.items()))
    sharable = workload.sharable_kleene_subpatterns()
    out.append("  sharable Kleene sub-patterns (Definition 3.1):")
    if not sharable:
        out.append("    none: no Kleene sub-pattern appears in two queries")
    for pattern, queries in sharable.items():
        out.append(f"    {pattern}   {{{', '.join(queries)}}}")
    out.append("  sharable query sets (Definition 3.2):")
    for s in workload.sharable_query_sets():
        shares = (
            "; ".join(f"{p} by {{{', '.join(qs)}}}" for p, qs in s.kleene_subpatterns.items()) or "nothing"
        )
        partition = ", ".join(s.partition_attributes) or "none"
        out.append(f"    {{{', '.join(s.queries)}}}: shares {shares}; partitioned by {partition}; "
                   f"pane {seconds_text(s.pane)}")  # fmt: skip
    out.append("  static plan (strategy static; hamlet decides per burst within it):")
    for s in workload.sharable_query_sets():
        for pattern, queries in s.kleene_subpatterns.items():
            event_type = pattern[:-1]
            if not re.fullmatch(r"\w+", event_type):
                out.append(
                    f"    {pattern}: not shared (only single-type Kleene sub-patterns E+ share graphlets)"
                )
                continue
            obstacles = {q: workload.query(q).burst_obstacle(event_type) for q in queries}
            sharing = [q for q, why in obstacles.items() if why is None]
            line = (
                f"    {pattern}: shared by {{{', '.join(sharing)}}}"
                if len(sharing) > 1
                else f"    {pattern}: not shared"
            )
            alone = "; ".join(f"{q} one event at a time ({why})" for q, why in obstacles.items() if why)
            out.append(line + (f"; {alone}" if alone else ""))
    out.extend(_dynamic_plan(workload))
    return "\n".join(out)


def _dynamic_plan(workload: Workload) -> list[str]:
    """How ``hamlet`` runs each set: which queries keep COUNT(*) columns together, and when it shares."""
    model = CostModel.calibrated()
    out = ["  dynamic plan (strategy hamlet; hamlet/optimizer/calibration.json):",
           "    a stream partition is shared only if its segments save more GRETA steps than the set-up:",
           (f"      Σ over segments of b events of own-graph readers·(b − {model.burst_break_even:.2f}) [b ≥ 2]"
            f" + column readers·b − {model.group_event:.2f}·column positions·windows per event"),
           (f"      − {1 - model.compiled_step:.2f}·the segments' steps on compiled graphs (a step there costs"
            f" {model.compiled_step:.3f} of one in Python)"),
           (f"      > {model.partition_setup:.2f}·queries; else it runs on GRETA's graphs (one per pattern and"
            " predicates), weighed again without the compiled steps where the kernel leaves it to Python;"),
           "    in a shared partition the benefit model (Eq. 7) and the pruning principles (Theorems 4.3, 4.5)",
           "      choose the queries that share each burst"]  # fmt: skip
    for s in workload.sharable_query_sets():
        shapes: dict[object, list[str]] = {}
        for name in s.queries:
            query = workload.query(name)
            shape = shape_of(query, algebra_for(query, []))
            if shape is not None:
                shapes.setdefault(shape, []).append(name)
        groups = "; ".join(f"{{{', '.join(names)}}}" for names in shapes.values()) or "none"
        out.append(f"    {{{', '.join(s.queries)}}}: COUNT(*) queries in columns (one shape each): {groups}")
        graphs: dict[tuple, list[str]] = {}
        for name in s.queries:
            graphs.setdefault(graph_key(workload.query(name)), []).append(name)
        shared = "; ".join(f"{{{', '.join(names)}}}" for names in graphs.values() if len(names) > 1) or "none"
        out.append(
            f"    {{{', '.join(s.queries)}}}: non-shared plan, one graph for queries of other windows or aggregates: {shared}"
        )
    return out


def _query(q: AnalyzedQuery) -> list[str]:
    lines = [f"Query {q.name}"]
    lines.extend("  | " + line for line in q.text.splitlines())
    lines.append(f"  pattern: {canonical(q.syntax.pattern) if q.syntax else '?'}")
    lines.extend(_sub_pattern(q.pattern, "  ", "positive pattern"))
    lines.append("  aggregates: " + ", ".join(a.text for a in q.aggregates))
    lines.append(f"  window: {q.window.describe()}")
    lines.append(f"  GROUP-BY: {', '.join(q.group_by) or 'none'}; equivalence: {', '.join(q.equivalence) or 'none'}"
                 f"; stream partitioned by: {', '.join(q.partition_attributes) or 'nothing'}")  # fmt: skip
    for p in q.local_predicates:
        lines.append(f"  local predicate on {p.event_type}: {p.text}")
    for e in q.edge_predicates:
        how = f"ordered index on {e.key_op}" if e.key_op else "scan"
        lines.append(f"  edge predicate on {e.source} -> {e.target}: {e.text}   ({how})")
    if q.kleene_subpatterns:
        lines.append(f"  Kleene sub-patterns: {', '.join(q.kleene_subpatterns)}")
    obstacle, predicate = kernel_obstacle(q), predicates_obstacle(q)
    if obstacle is not None:
        lines.append(f"  trend graph: in Python ({obstacle})")
    elif predicate is not None:
        lines.append(f"  trend graph: compiled (native/); local predicates in Python ({predicate})")
    else:
        lines.append("  trend graph: compiled (native/), local predicates too")
    return lines


def _sub_pattern(part: SubPattern, indent: str, title: str) -> list[str]:
    t = part.template
    lines = [f"{indent}{title}: {canonical(part.pattern)}"]
    lines.append(f"{indent}  template: start {t.start}, end {t.end}")
    for tr in t.transitions:
        lines.append(f"{indent}    {tr.source} -{tr.label}-> {tr.target}")
    for negation in part.negations:
        before = negation.previous or "window start"
        after = negation.following or "window end"
        title = f"negative sub-pattern {negation.text} (previous: {before}, following: {after})"
        lines.extend(_sub_pattern(negation.part, indent + "  ", title))
    return lines
