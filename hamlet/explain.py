"""``hamlet explain``: everything the analysis derived from a workload, readable."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hamlet.analysis.automaton import Guard
from hamlet.analysis.query import AnalyzedQuery
from hamlet.analysis.split import SubPattern
from hamlet.analysis.template import canonical, merge_ends
from hamlet.analysis.windows import seconds_text
from hamlet.analysis.workload import Workload, sharing_obstacle
from hamlet.errors import shown_char, source_lines
from hamlet.runtime.aggregates import FloatColumns, algebra_for
from hamlet.runtime.dominance import dominance_applies
from hamlet.runtime.greta import greta_plan
from hamlet.runtime.native import event_grained, graphlet_obstacle, kernel_obstacle, predicates_obstacle
from hamlet.runtime.partition import graph_key, merge_obstacle, merged_groups


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
    out.extend(_sharing_plan(workload))
    out.extend(_time_segments(workload))
    # Each character as an error excerpt shows it (a string literal in the query text and its predicates
    # may hold any character but CR and LF): a separator such as \f or U+2028 would break a line on a
    # terminal, a bidi override reorder it. A tab is kept (no caret follows: a query keeps its layout), and
    # so is a line break a description may hold (neither a query's line nor a string literal holds one).
    return "\n".join("".join(ch if ch in "\t\n" else shown_char(ch) for ch in line) for line in out)


def _time_segments(workload: Workload) -> list[str]:
    """Which sets a hot stream partition may be cut by time for (``hamlet.evaluate_segment``, the job's
    ``--segment-events``), and why the others run each partition whole."""
    from hamlet.api import segment_obstacles  # (the API imports the analysis this module explains)

    out = ["  time segments (dissertation §28.1; the job's --segment-events): a hot stream partition cut by time,",
           "    its segments run in parallel and compose exactly"]  # fmt: skip
    for names, why in segment_obstacles(workload):
        verdict = "composes" if why is None else f"evaluated sequentially: {why}"
        out.append(f"    {{{', '.join(names)}}}: {verdict}")
    return out


def _sharing_plan(workload: Workload) -> list[str]:
    """What the compiled kernel shares (native/src/burst.rs), per sharable set and Kleene type, and why a
    query steps a burst's events one by one."""
    out = [
        "  sharing plan (compiled kernel, native/src/burst.rs): a burst of E (Definition 4.1) is shared in one",
        "    graphlet per set of its events the readers match: coefficients once, then per query and window",
        "    class one snapshot and a commit. static shares every burst; hamlet one where, over its readers q,",
        "      b + Σ_q (w_q·(t_q + 2) + b·f_q + h_q) < Σ_q b·(w_q·(t_q + 1 + f_q) + 1)   (Eq. 7)",
        "    (b events, w_q window classes, t_q predecessor types of E, f_q aggregate fields read from E; each",
        "    event a graph holds costs one, and of a burst it shares q's graph holds h_q: one event where it",
        "    reads none of their values, else b)",
        "  joint graphs (native/src/joint.rs): under an edge predicate, queries of one shape (positions, transitions,",
        "    edge predicates; other windows too, where one graph steps less than one per window) run as one joint",
        "    graph, each event ranked and stepped once for all, each query's aggregate a block of it, zero where",
        "    the query does not match the event; static always,",
        "    hamlet where, per stream partition, C·Σ_e (8 + m_e + z_e/2) < Σ_q C_q·n_q·(8 + w_q)",
        "    (n_q the events of query q, w_q its aggregate fields, C_q the window classes an event of it falls",
        "    into, C those of any of the queries' windows; e an event of any of them, m_e the fields of the",
        "    queries it matches, z_e the others' as zeros, none where it only feeds running totals)",
    ]
    for s in workload.sharable_query_sets():
        queries = [workload.query(name) for name in s.queries]
        outside = {
            q.name: why for q in queries if (why := kernel_obstacle(q) or _set_obstacle(q)) is not None
        }
        if outside:
            reasons = "; ".join(f"{name}: {why}" for name, why in outside.items())
            out.append(f"    {{{', '.join(s.queries)}}}: runs in Python, without graphlets ({reasons})")
            continue
        for pattern, sharers in s.kleene_subpatterns.items():
            if re.fullmatch(r"\w+\+", pattern):
                out.append(_graphlets(workload, pattern, pattern[:-1], sharers))
                continue
            # Over several types (MUSE): the bursts of each of its types that is no E+ of its own.
            positive = set.intersection(*(set(workload.query(q).pattern.template.types) for q in sharers))
            for event_type in dict.fromkeys(re.findall(r"\w+", pattern)):
                if event_type in positive and f"{event_type}+" not in s.kleene_subpatterns:
                    out.append(
                        _graphlets(workload, f"{pattern}, its {event_type} bursts", event_type, sharers)
                    )
        joint = "; ".join(f"{{{', '.join(names)}}}" for names in _joint_graphs(queries)) or "none"
        out.append(f"    {{{', '.join(s.queries)}}}: joint graphs (static; hamlet where they pay): {joint}")
        graphs: dict[tuple, list[str]] = {}
        for q in queries:
            graphs.setdefault(graph_key(q), []).append(q.name)
        shared = "; ".join(f"{{{', '.join(names)}}}" for names in graphs.values() if len(names) > 1) or "none"
        out.append(
            f"    {{{', '.join(s.queries)}}}: one graph for queries that differ only in windows or aggregates: {shared}"
        )
        out.extend(_merged_templates(list(graphs.values()), queries))
    return out


def _joint_graphs(queries: list[AnalyzedQuery]) -> list[list[str]]:
    """The queries of each joint graph the compiled set kernel forms (``native/src/joint.rs``: it alone decides
    which graphs have one shape, and which windows join), from the set's plan as static and hamlet compile it."""
    floats = FloatColumns([])
    plan = greta_plan(
        queries, {q.name: algebra_for(q, floats) for q in queries}, share_graphs=True, native=True
    )
    if plan.compiled_set is None:
        return []
    graphs = plan.compiled_set.graphs
    return [[n for g in group for n in graphs[g].names] for group in plan.compiled_set.kernel.joint_groups()]


def _graphlets(workload: Workload, what: str, event_type: str, sharers: Sequence[str]) -> str:
    """Which of ``sharers`` take the bursts of ``event_type`` in shared graphlets, and why the others step
    them one event at a time (``graphlet_obstacle``)."""
    obstacles = {q: graphlet_obstacle(workload.query(q), event_type) for q in sharers}
    readers = [q for q, why in obstacles.items() if why is None]
    line = (
        f"    {what}: graphlets shared by {{{', '.join(readers)}}}"
        if len(readers) > 1
        else f"    {what}: no graphlet (fewer than two queries take its bursts at once)"
    )
    by_reason: dict[str, list[str]] = {}
    for q, why in obstacles.items():
        if why:
            by_reason.setdefault(why, []).append(q)
    # (one clause per reason: twenty queries with the same edge predicate make one line, not twenty)
    alone = "; ".join(
        f"{{{', '.join(names)}}} one event at a time ({why})" for why, names in by_reason.items()
    )
    return line + (f"; {alone}" if alone else "")


def _merged_templates(graphs: list[list[str]], queries: list[AnalyzedQuery]) -> list[str]:
    """Which graphs ``static`` and ``hamlet`` merge into one of a merged template (``partition.merged_groups``),
    and why a query's graph is never merged (``partition.merge_obstacle``)."""
    by_name = {q.name: q for q in queries}
    out = [
        "    one graph of a merged template for queries that share every position but the end, each reading"
        + " its own end's finals (static and hamlet; greta keeps one graph per query):"
    ]
    merged = [part for part in merged_groups([[by_name[n] for n in g] for g in graphs]) if len(part) > 1]
    for part in merged:
        names = ", ".join(q.name for group in part for q in group)
        template = merge_ends([group[0].pattern.template for group in part])
        out.append(f"      {{{names}}}: {template.describe()}")
    if not merged:
        out.append("      none")
    for q in queries:
        why = merge_obstacle(q)
        if why is not None:
            out.append(f"      {q.name} not merged: {why}")
    return out


def _set_obstacle(query: AnalyzedQuery) -> str | None:
    predicate = predicates_obstacle(query)
    return None if predicate is None else f"local predicate {predicate}"


_SEMANTICS_TEXT = {
    "ANY": "skip-till-any-match (any event may be skipped; Definition 2.2)",
    "NEXT": "skip-till-next-match (a trend only where no longer trend has its first and last events: "
    "Definition 2.3)",
    "CONT": "contiguous (skip-till-next-match and no event of the partition, of any type, between a trend's "
    "events: Definition 2.4)",
}


def _query(q: AnalyzedQuery) -> list[str]:
    lines = [f"Query {q.name}"]
    # The query's lines as the lexer numbers them (CR, LF, CRLF; str.splitlines also breaks at \f, \v,
    # \x1c-\x1e, NEL, U+2028, U+2029, which a string or a comment may hold: ``explain`` escapes them).
    lines.extend("  | " + line for line in source_lines(q.text))
    lines.append(f"  pattern: {canonical(q.syntax.pattern) if q.syntax else '?'}")
    if q.states is None:
        lines.extend(_sub_pattern(q.pattern, "  ", "positive pattern"))
    else:  # (the type template only says which types follow which; the graph runs the states)
        lines.extend(_sub_pattern(q.pattern, "  ", "pattern on types"))
        lines.extend(_states(q))
    lines.append("  aggregates: " + ", ".join(a.text for a in q.aggregates))
    lines.append(f"  window: {q.window.describe()}")
    lines.append(f"  semantics: {_SEMANTICS_TEXT[q.semantics]}")
    why_alone = sharing_obstacle(q)
    if why_alone is not None:
        lines.append(f"  shares nothing: {why_alone}")
    lines.append(f"  GROUP-BY: {', '.join(q.group_by) or 'none'}; equivalence: {', '.join(q.equivalence) or 'none'}"
                 f"; stream partitioned by: {', '.join(q.partition_attributes) or 'nothing'}")  # fmt: skip
    for p in q.local_predicates:
        lines.append(f"  local predicate on {p.event_type}: {p.text}")
    for e in q.edge_predicates:
        # (under NEXT and CONT the kernel tests each candidate predecessor: native/src/reach.rs)
        how = f"ordered index on {e.key_op}" if e.key_op and q.semantics == "ANY" else "scan"
        lines.append(f"  edge predicate on {e.source} -> {e.target}: {e.text}   ({how})")
    if q.kleene_subpatterns:
        lines.append(f"  Kleene sub-patterns: {', '.join(q.kleene_subpatterns)}")
    obstacle, predicate = kernel_obstacle(q), predicates_obstacle(q)
    compiled = "compiled (native/)"
    if q.states is not None:  # (native/src/graph.rs, ``Graph::events``)
        compiled += " on its states, each event at every state of its type"
        if q.choice == "AND":
            compiled += (
                "; it sums C_i, C_j, C_ij per window and group, the pairs are counted from them at the end"
            )
    if q.semantics == "NEXT" and dominance_applies(q.states):  # (native/src/dominance.rs)
        compiled += ("; its NEXT trends kept by the states a longer trend may stand at (each event's aggregate "
                     "split by them, every predecessor event tested)")  # fmt: skip
    elif q.semantics != "ANY":  # (native/src/graph.rs ``NextState``, native/src/reach.rs)
        if not event_grained(q):
            compiled += f"; its {q.semantics} edges read off positions and times"
        elif q.semantics == "NEXT":
            compiled += "; its NEXT edges chosen event by event, by reach sets (edge predicates or a NOT between two types)"
        else:
            compiled += "; its CONT edges from the previous time's events, each tested (edge predicates or a NOT between two types)"
    if obstacle is not None:
        lines.append(f"  trend graph: in Python ({obstacle})")
    elif predicate is not None:
        lines.append(f"  trend graph: {compiled}; local predicates in Python ({predicate})")
    else:
        lines.append(f"  trend graph: {compiled}, local predicates too")
    return lines


_CHOICE_TEXT = {
    None: "each trend runs along one path of these states, so it counts once however the pattern parses it",
    "OR": "a trend any operand matches, once: COUNT = C_P + C_Q − C_PQ (dissertation §12), the trends both "
    "match ending in a state of both",
    "AND": "pairs of distinct trends, one of P and one of Q: C_i·C_j + C_i·C_ij + C_j·C_ij + C_ij·(C_ij − 1)/2 "
    "(dissertation §12), C_i, C_j, C_ij the trends ending in a state of P only, Q only, both",
}


def _states(q: AnalyzedQuery) -> list[str]:
    """The position template (automaton.py) the query's graph runs: its states, of which type, and, for
    end states, which operands end there."""
    states = q.states
    assert states is not None
    t = states.template
    lines = [f"  position template (dissertation §12, made deterministic): {_CHOICE_TEXT[q.choice]}"]
    lines.append(f"    states: {', '.join(f'{s} ({states.state_type[s]} events)' for s in t.types)}")
    ends = [s + (f" (operands {', '.join(str(i + 1) for i in sorted(states.accepts[s]))})"
                 if states.operands > 1 else "") for s in t.ends]  # fmt: skip
    lines.append(f"    start {' | '.join(t.starts)}, end {' | '.join(ends)}")
    texts = [n.text for n in q.pattern.negations]

    def when(guard: Guard, between: str) -> str:
        """The outcomes of the NOTs that take a guarded step: which of them have a match ``between``."""
        cases = ["; ".join(f"{texts[k]}: {'a match' if m >> j & 1 else 'no match'}" for j, k in enumerate(guard.negations))
                 for m in sorted(guard.outcomes)]  # fmt: skip
        return f" (where {' or '.join(cases)} {between})"

    for state, guard in states.start_guards.items():
        lines.append(f"    starts at {state}{when(guard, 'from the window start to its first event')}")
    for tr in t.transitions:
        crossing = states.guards.get((tr.source, tr.target))
        between = when(crossing, "between the two events") if crossing else ""
        lines.append(f"    {tr.source} -> {tr.target}{between}")
    for operand, ks in enumerate(states.trailing):
        if ks:
            nots = " and ".join(texts[k] for k in ks)
            lines.append(f"    operand {operand + 1} ends a trend where {nots} {'has' if len(ks) == 1 else 'have'} "
                         "no match after it")  # fmt: skip
    return lines


def _sub_pattern(part: SubPattern, indent: str, title: str) -> list[str]:
    t = part.template
    lines = [f"{indent}{title}: {canonical(part.pattern)}"]
    lines.append(f"{indent}  template: start {' | '.join(t.starts)}, end {' | '.join(t.ends)}")
    for tr in t.transitions:
        lines.append(f"{indent}    {tr.source} -{tr.label}-> {tr.target}")
    for negation in part.negations:
        before = negation.previous or "window start"
        after = negation.following or "window end"
        title = f"negative sub-pattern {negation.text} (previous: {before}, following: {after})"
        lines.extend(_sub_pattern(negation.part, indent + "  ", title))
    return lines
