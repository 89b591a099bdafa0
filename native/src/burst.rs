//! Bursts (HAMLET Definition 4.1) and the per-burst sharing decision (§4: the benefit of Eq. 7, graphlet
//! splits and merges, the choice of the query set).
//!
//! A burst is a maximal run of timestamps of one stream partition that hold only events of one type E,
//! within one pane (so all its events fall into the same windows). For a burst of a Kleene type that two or
//! more queries share, the graphs that read E at a Kleene position are grouped by the events of the burst
//! they match (their local predicates): each group may share one graphlet (`graphlet.rs`), its snapshot
//! coefficients computed once, leaving per graph and window class a snapshot and a commit.
//!
//! The decision weighs, per group, the steps of the two plans in the units the kernel spends them in
//! (one unit: an aggregate added or extended once):
//!
//!   NonShared = Σ_q b · (w_q · (t_q + 1 + f_q) + 1)        every event, in every window class, on its own
//!   Shared    = b + Σ_q (w_q · (t_q + 2) + b · f_q + h_q)   one propagation, then a snapshot and a commit per class
//!
//! with b the burst's events the group matches, w_q the window classes of query q's graph at the burst,
//! t_q the predecessor types of E in q and f_q the fields q aggregates from E's values; an event a graph
//! holds costs it one unit, and h_q is what it holds of a burst it shares: one event where nothing reads the
//! others (`Graph::events_with_bursts`), else b. This is Eq. 7 with s_p = 1 propagated snapshot, s_c = w_q
//! snapshots per query, and n = w_q · (t_q + 1) per event. A query
//! that matches events no other query matches forms a group of its own (no event-level snapshot is ever
//! needed), so the groups are decided independently: by Theorem 4.5 a query joins its group exactly when
//! sharing pays, and by Theorem 4.3 queries that add no snapshot (the same events) are always in it.

use crate::events::RawEvent;
use crate::graph::{positive_of, Graph, RawTimes, Role};
use crate::graphlet::Graphlet;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    None,   // greta: every event on every graph
    Static, // static: every burst of a shared Kleene type shared by every query that reads it there
    Hamlet, // hamlet: shared where the benefit model says it pays
}

impl Sharing {
    pub fn parse(name: &str) -> Option<Sharing> {
        match name {
            "none" => Some(Sharing::None),
            "static" => Some(Sharing::Static),
            "hamlet" => Some(Sharing::Hamlet),
            _ => None,
        }
    }
}

/// What the decisions of one partition were (`hamlet.stats.EvaluationStats`).
#[derive(Default, Clone, Copy)]
pub struct Decisions {
    pub bursts: usize,
    pub shared_bursts: usize,
    pub graphlets: usize,
    pub splits: usize,
    pub merges: usize,
}

impl Decisions {
    pub fn add(&mut self, other: &Decisions) {
        self.bursts += other.bursts;
        self.shared_bursts += other.shared_bursts;
        self.graphlets += other.graphlets;
        self.splits += other.splits;
        self.merges += other.merges;
    }
}

/// One graph of the set as the decision sees it, before its events exist: the raw events it reads (their
/// indexes, ascending).
pub struct Reader<'a> {
    pub graph: &'a Graph,
    pub roles: &'a [Vec<Role>],
    pub mine: &'a [usize],
}

/// The graphlets of one partition, and per graph its shared bursts as (from, to, graphlet), `from..to` a
/// range of its `mine` (`Graph::events_with_bursts` holds them).
pub struct Plan {
    pub graphlets: Vec<Graphlet>,
    pub bursts: Vec<Vec<(usize, usize, usize)>>,
    pub decisions: Decisions,
}

/// The partition's bursts as (type, first, end) over `raw` (sorted by time): maximal runs of timestamps
/// holding only events of one type, within one pane.
pub fn bursts(raw: &[RawEvent], pane: i64) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, i64, usize)> = None; // (type, pane, first)
    let mut i = 0;
    while i < raw.len() {
        let (time, kind) = (raw[i].time, raw[i].kind);
        let mut j = i + 1;
        let mut mixed = false;
        while j < raw.len() && raw[j].time == time {
            mixed |= raw[j].kind != kind;
            j += 1;
        }
        let here = time.div_euclid(pane);
        let continues = !mixed && matches!(current, Some((k, p, _)) if k == kind && p == here);
        if !continues {
            if let Some((k, _, first)) = current.take() {
                out.push((k, first, i));
            }
            if !mixed {
                current = Some((kind, here, i));
            }
        }
        i = j;
    }
    if let Some((k, _, first)) = current {
        out.push((k, first, raw.len()));
    }
    out
}

/// Which bursts of the partition each graph takes at once, and the graphlets they share. `shared`: per type
/// number, whether two or more queries of the set have it at a Kleene position.
pub fn plan(raw: &[RawEvent], pane: i64, shared: &[bool], readers: &[Reader], sharing: Sharing) -> Plan {
    let mut plan = Plan {
        graphlets: Vec::new(),
        bursts: vec![Vec::new(); readers.len()],
        decisions: Decisions::default(),
    };
    if sharing == Sharing::None || pane <= 0 {
        return plan;
    }
    // What the decision reads per burst, set up once per partition: per graph and type number, the Kleene
    // position at which the graph takes the type's bursts at once (`Graph::burst_position`), and per
    // graph and type whether it shared its last burst (0: none yet, for splits and merges).
    let types = shared.len();
    let kleene: Vec<Option<usize>> = readers
        .iter()
        .flat_map(|reader| {
            (0..types).map(move |kind| {
                let p = reader.roles.get(kind).and_then(|roles| positive_of(roles));
                p.filter(|&p| shared[kind] && reader.graph.burst_position(p))
            })
        })
        .collect();
    let mut last = vec![0u8; readers.len() * types];
    let mut cursor = vec![0usize; readers.len()]; // per graph: its first raw event after the last burst
    let mut classes: Vec<(i64, usize)> = vec![(i64::MIN, 0); readers.len()]; // per graph: (pane, classes)

    // Per burst, the graphs that read it at a Kleene position as (graph, position, from, to), and each one's
    // group: the first of them that matches the same events (buffers reused from burst to burst).
    let mut members: Vec<(usize, usize, usize, usize)> = Vec::new();
    let mut group_of: Vec<usize> = Vec::new();
    let mut group: Vec<(usize, usize, usize, usize)> = Vec::new();
    let mut times: Vec<i64> = Vec::new();
    for (kind, first, end) in bursts(raw, pane) {
        if !shared[kind] {
            continue;
        }
        plan.decisions.bursts += 1;
        members.clear();
        group_of.clear();
        for (g, reader) in readers.iter().enumerate() {
            let Some(p) = kleene[g * types + kind] else { continue };
            let mine = reader.mine;
            // (bursts come in order: each graph's raw events are searched from where the last burst ended)
            let from = gallop(mine, cursor[g], first);
            let to = gallop(mine, from, end);
            cursor[g] = to;
            if from == to {
                continue;
            }
            let linked = reader.graph.linked(p);
            let here = &mine[from..to];
            let same = |&(h, q, f, t): &(usize, usize, usize, usize)| {
                let there = &readers[h].mine[f..t];
                readers[h].graph.linked(q) == linked && (std::ptr::eq(there, here) || there == here)
            };
            // (a group is named by its first member, which comes first: readers are in order)
            let leader = (0..members.len()).find(|&m| group_of[m] == m && same(&members[m]));
            group_of.push(leader.unwrap_or(members.len()));
            members.push((g, p, from, to));
        }
        let time = raw[first].time;
        let mut any = false;
        for leader in 0..members.len() {
            if group_of[leader] != leader {
                continue;
            }
            group.clear();
            group.extend(
                (leader..members.len())
                    .filter(|&m| group_of[m] == leader)
                    .map(|m| members[m]),
            );
            let share = match sharing {
                Sharing::Hamlet => pays(&group, raw, readers, time, &mut classes, pane),
                _ => true,
            };
            for &(g, ..) in &group {
                let before = std::mem::replace(&mut last[g * types + kind], if share { 1 } else { 2 });
                match before {
                    1 if !share => plan.decisions.splits += 1,
                    2 if share => plan.decisions.merges += 1,
                    _ => {}
                }
            }
            if !share {
                continue;
            }
            any = true;
            let (g, p, from, to) = group[0];
            times.clear();
            if readers[g].graph.linked(p) {
                times.extend(readers[g].mine[from..to].iter().map(|&i| raw[i].time));
            } else {
                // (no event of the burst precedes another: as if all had one time, C = b)
                times.resize(to - from, 0);
            }
            plan.graphlets.push(Graphlet::new(&times));
            plan.decisions.graphlets += 1;
            for &(g, _, from, to) in &group {
                plan.bursts[g].push((from, to, plan.graphlets.len() - 1));
            }
        }
        plan.decisions.shared_bursts += usize::from(any);
    }
    plan
}

/// The first of `sorted[start..]` at or after `bound`, found by galloping from `start`: bursts and the events
/// between them are short next to a graph's events, which a binary search over the rest would walk anew
/// from the middle for each burst.
fn gallop(sorted: &[usize], start: usize, bound: usize) -> usize {
    let mut step = 1;
    let mut lo = start;
    while lo + step <= sorted.len() && sorted[lo + step - 1] < bound {
        lo += step;
        step *= 2;
    }
    let hi = (lo + step).min(sorted.len());
    lo + sorted[lo..hi].partition_point(|&i| i < bound)
}

/// Eq. 7 for one group of graphs that match the same events of a burst at `time` (module docstring);
/// `classes` caches each graph's window classes per pane. Shared − NonShared is linear in each query's
/// window classes w_q, which lie between 1 (0 where no window of the graph holds the burst) and the windows
/// that hold it: where its least and greatest values over those bounds agree in sign, the decision needs no
/// class counted (a search among the graph's events per window start, per graph and pane: 4 % of hamlet's
/// time on rideshare graphs of several windows). Else the classes decide.
fn pays(
    members: &[(usize, usize, usize, usize)],
    raw: &[RawEvent],
    readers: &[Reader],
    time: i64,
    classes: &mut [(i64, usize)],
    pane: i64,
) -> bool {
    let (_, _, from, to) = members[0];
    let b = to - from;
    let costs: Vec<Cost> = members
        .iter()
        .map(|&(g, p, ..)| {
            let graph = readers[g].graph;
            let windows = graph.windows.iter().map(|m| {
                let (lo, hi) = m.indexes(time);
                (hi - lo).max(0) as usize
            });
            Cost {
                t: graph.predecessors[p].len(),
                f: graph.updates[p].len(),
                held: if graph.reads_burst_events(p) { b } else { 1 },
                windows: windows.sum(),
            }
        })
        .collect();
    if let Some(decided) = decided_by_bounds(b, &costs) {
        return decided;
    }
    let here = time.div_euclid(pane);
    let mut difference = b as i128;
    for (&(g, ..), cost) in members.iter().zip(&costs) {
        if classes[g].0 != here {
            let times = RawTimes {
                raw,
                indexes: readers[g].mine,
            };
            classes[g] = (here, readers[g].graph.class_count(&times, time));
        }
        difference += cost.term(b, classes[g].1);
    }
    difference < 0
}

/// What one query of a group costs in Eq. 7 (module docstring): t predecessor types, f fields read, `held`
/// events of a shared burst held (h), and the windows that hold the burst (at least its window classes).
#[derive(Clone, Copy, Debug)]
struct Cost {
    t: usize,
    f: usize,
    held: usize,
    windows: usize,
}

impl Cost {
    /// The query's part of Shared − NonShared with w window classes: w·(t + 2) + b·f + h − b·(w·(t + 1 + f) + 1).
    fn term(&self, b: usize, w: usize) -> i128 {
        let (b, w) = (b as i128, w as i128);
        let (t, f, h) = (self.t as i128, self.f as i128, self.held as i128);
        w * (t + 2) + b * f + h - b * (w * (t + 1 + f) + 1)
    }
}

/// The decision where every count of window classes allowed (1 to the windows, 0 without any) gives the
/// same: Shared − NonShared = b + Σ_q term_q(w_q) is linear in each w_q, so its extremes lie at the bounds.
fn decided_by_bounds(b: usize, costs: &[Cost]) -> Option<bool> {
    let (mut least, mut most) = (b as i128, b as i128);
    for cost in costs {
        let (low, high) = (cost.term(b, cost.windows.min(1)), cost.term(b, cost.windows));
        least += low.min(high);
        most += low.max(high);
    }
    (most < 0 || least >= 0).then_some(most < 0)
}

#[cfg(test)]
mod tests {
    use super::{decided_by_bounds, gallop, Cost};

    #[test]
    fn decides_by_the_bounds_only_what_every_count_of_classes_decides() {
        // Every group of one to three queries over small costs: where the bounds decide, each count of
        // window classes each query may have (1 to its windows) gives the same decision.
        let costs: Vec<Cost> = (0..3)
            .flat_map(|t| (0..3).flat_map(move |f| (0..4).map(move |windows| (t, f, windows))))
            .flat_map(|(t, f, windows)| [true, false].map(|one| (t, f, windows, one)))
            .map(|(t, f, windows, one)| Cost {
                t,
                f,
                held: usize::from(one),
                windows,
            })
            .collect();
        let mut decided = 0;
        for b in 1..6 {
            let held = |c: &Cost| Cost {
                held: if c.held == 1 { 1 } else { b },
                ..*c
            };
            for (i, x) in costs.iter().enumerate() {
                for y in &costs[i..] {
                    for group in [vec![held(x)], vec![held(x), held(y)], vec![held(x), held(y), held(y)]] {
                        let Some(decision) = decided_by_bounds(b, &group) else {
                            continue;
                        };
                        decided += 1;
                        let ranges: Vec<Vec<usize>> =
                            group.iter().map(|c| (c.windows.min(1)..=c.windows).collect()).collect();
                        let mut counts = vec![Vec::new()];
                        for range in &ranges {
                            counts = counts
                                .iter()
                                .flat_map(|prefix| range.iter().map(move |&w| [prefix.clone(), vec![w]].concat()))
                                .collect();
                        }
                        for ws in counts {
                            let difference: i128 =
                                b as i128 + group.iter().zip(&ws).map(|(c, &w)| c.term(b, w)).sum::<i128>();
                            assert_eq!(difference < 0, decision, "b {b}, {group:?}, w {ws:?}");
                        }
                    }
                }
            }
        }
        assert_eq!(decided, 34510); // (of the 39,420 groups: the rest count their classes)
    }

    #[test]
    fn gallops_to_the_first_at_or_after_the_bound() {
        let sorted: Vec<usize> = (0..100).map(|i| 3 * i).collect();
        for start in [0, 1, 7, 50, 99, 100] {
            for bound in 0..310 {
                let expected = start + sorted[start..].partition_point(|&i| i < bound);
                assert_eq!(gallop(&sorted, start, bound), expected, "start {start}, bound {bound}");
            }
        }
        assert_eq!(gallop(&[], 0, 5), 0);
    }
}
