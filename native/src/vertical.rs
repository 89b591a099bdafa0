//! Vertical graph partitioning by time (dissertation §28.1.1–28.1.2): one stream partition's events cut into
//! time segments, each evaluated on its own, with a variable for every aggregate that flows in from earlier
//! segments; the segments' contributions composed afterwards, in time order (`hamlet/runtime/vertical.py`).
//!
//! In a segment [t0, t1) (cut at pane boundaries), window class 0 holds every window that starts before the
//! graph's first event there: the windows open at t0, whose state flows in, and those that start in
//! [t0, first event] with nothing flowing in. Each of them holds every event of the segment up to its end,
//! so they all see the same computation, and what a window of them ends with (its final; its running totals
//! if it outlives the segment) is affine in what flows in: its running totals per source position and
//! aggregate field, and, with a leading NOT, whether trends may still start in it. The constant is the
//! segment run itself (class 0 seeded with nothing); each variable's coefficients come from a basis run of
//! class 0 alone seeded with that unit (a snapshot-coefficient table, HAMLET §3.3, per variable). Every
//! other class is the segment's own: its windows are final if they end by t1, else their state is handed on.
//!
//! MIN and MAX are not linear: what a window ends with depends on which inputs hold trends, so they come
//! from one run per set of live inputs (`Column::Extremes`). This holds under skip-till-any-match, without
//! edge predicates, and with NOTs of single types before the start or after the end (`obstacle`): a
//! trailing NOT inside the segment voids what a window held before it (`trailing`), a leading one ends its
//! starts.

use crate::graph::{Agg, ClassZero, EndState, Graph, Partition, SharedBurst, ANY, MAX, MIN};
use crate::num::Num;
use crate::sums::Run;
use crate::values::Scale;
use rustc_hash::FxHashMap as HashMap;

/// What a column of a segment's affine map multiplies: 1, a running total flowing in (per source position
/// and field), or whether trends may still start (a leading NOT). MIN and MAX fields are not linear: an
/// `Extremes` column holds them for one set of live inputs (bit i: the i-th source position holds trends)
/// and whether trends may start; the constant column holds them for none live.
#[derive(Clone, Copy, PartialEq)]
pub enum Column {
    Constant,
    Running { position: usize, field: usize },
    Starts,
    Extremes { alive: u64, starts: bool },
}

/// More source positions than this under MIN/MAX: one run per set of live inputs would cost too much.
const EXTREME_SOURCES: usize = 4;

pub fn is_extreme(kind: u8) -> bool {
    kind == MIN || kind == MAX
}

/// A later window open at t1: (member, window, running totals per position, final, may start).
pub type Carried = (usize, i64, Vec<Option<Agg>>, Option<Agg>, bool);

/// One graph's segment: class 0's affine map, and the later classes' windows still open at t1.
pub struct SegmentRecord {
    pub columns: Vec<Column>,
    /// Class 0's windows open after the last event or with a final in some column: (member, window, per
    /// column its final).
    pub windows: Vec<(usize, i64, Vec<Option<Agg>>)>,
    /// Per column: class 0's running totals per position after the last event (None: no class 0 left).
    pub running: Vec<Option<Vec<Option<Agg>>>>,
    pub carry: Vec<Carried>,
    pub leading: Option<i64>,  // the first leading NOT matched in the segment
    pub trailing: Option<i64>, // the first trailing NOT matched in the segment
}

/// Why a graph's segments would not compose (None: they do).
pub fn obstacle(graph: &Graph) -> Option<&'static str> {
    if graph.semantics != ANY {
        return Some("skip-till-next-match and contiguous semantics");
    }
    if graph.positional {
        // (class 0's affine map is built per source position and start; one event at several states and a
        // conjunction's classes, which no predecessor hands on, are not what its columns describe)
        return Some("position states (a type at several places, P{n,}, OR or AND: dissertation §12)");
    }
    if !graph.edges.is_empty() {
        return Some("edge predicates or a NOT between two types");
    }
    if graph.kinds.iter().any(|&k| is_extreme(k)) && graph.is_source.iter().filter(|&&s| s).count() > EXTREME_SOURCES {
        return Some("MIN or MAX over a pattern of more than 4 source states");
    }
    let single = |n: &crate::negation::Negation| {
        n.types.len() == 1 && n.edges.is_empty() && n.parent == 0 && (n.previous.is_none() || n.following.is_none())
    };
    if !graph.negations.iter().all(single) {
        return Some("a NOT over a sub-pattern");
    }
    None
}

/// How the segment's own run treats class 0: with a leading NOT its starts are a column of their own.
pub fn own_class_zero(graph: &Graph) -> ClassZero {
    ClassZero {
        alone: false,
        keep_zero: false,
        seed: Vec::new(),
        starts: graph.leading.is_empty(),
    }
}

/// The segment [.., t1) of one graph (events in time order, none empty): `partition` is its own run (made
/// `with_class_zero(own_class_zero(graph))`). Returns the runs of the later classes' windows that end by
/// t1 (final: nothing flows into them), the graphlet snapshots taken, and the record for composition; None
/// where an event needs Python.
pub fn segment(
    graph: &Graph,
    events: &[crate::graph::Event],
    scales: &[Scale],
    t1: i64,
    partition: Partition,
    bursts: &[SharedBurst],
) -> Option<(Vec<Run>, usize, SegmentRecord)> {
    let first = events.first()?.time;
    let in_zero = |m: usize, k: i64| k * graph.members[m].slide <= first;
    let (own, snapshots, end) = partition.run_to_end(bursts)?;
    let mut columns = vec![Column::Constant];
    let mut finals: HashMap<(usize, i64), Vec<Option<Agg>>> = HashMap::default();
    let mut later: HashMap<(usize, i64), Agg> = HashMap::default();
    let mut complete = Vec::new();
    for (m, lo, hi, agg) in own {
        let member = graph.members[m];
        for k in lo..=hi {
            if in_zero(m, k) {
                finals.insert((m, k), vec![Some(agg.clone())]);
            } else if k * member.slide + member.within <= t1 {
                complete.push((m, k, k, agg.clone()));
            } else {
                later.insert((m, k), agg.clone());
            }
        }
    }
    for &(m, k, c) in &end.open {
        if c == 0 {
            finals.entry((m, k)).or_insert_with(|| vec![None]); // (its running totals go on, final or not)
        }
    }
    let mut running = vec![end.running.get(&0).cloned()];
    let carry = carried(graph, &end, &later, t1);
    let sources: Vec<usize> = (0..graph.types.len()).filter(|&p| graph.is_source[p]).collect();
    let mut basis = Vec::new();
    for &position in &sources {
        for field in (0..graph.kinds.len()).filter(|&f| !is_extreme(graph.kinds[f])) {
            let mut unit = graph.zero();
            unit[field] = Num::ONE;
            basis.push((Column::Running { position, field }, vec![(position, unit)], false, true));
        }
    }
    if !graph.leading.is_empty() {
        basis.push((Column::Starts, Vec::new(), true, true));
    }
    // MIN and MAX: what a window ends with depends on which inputs hold trends (their own extremes pass
    // through unchanged where they reach), so one run per set of live inputs, each seeded with one trend.
    if graph.kinds.iter().any(|&k| is_extreme(k)) {
        let own_starts = graph.leading.is_empty();
        for alive in 0..1u64 << sources.len() {
            for starts in [true, false] {
                if (alive == 0 && starts == own_starts) || (!starts && graph.leading.is_empty()) {
                    continue; // (the segment's own run; without a leading NOT trends always may start)
                }
                let mut one = graph.zero();
                one[0] = Num::ONE;
                let seed = sources
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| alive >> i & 1 == 1)
                    .map(|(_, &p)| (p, one.clone()));
                basis.push((Column::Extremes { alive, starts }, seed.collect(), starts, false));
            }
        }
    }
    for (column, seed, starts, keep_zero) in basis {
        let zero = ClassZero {
            alone: true,
            keep_zero,
            seed,
            starts,
        };
        let (runs, _, end) = Partition::new(graph, events, scales)?
            .with_class_zero(zero)
            .run_to_end(&[])?;
        let c = columns.len();
        columns.push(column);
        for (m, lo, hi, agg) in runs {
            for k in (lo..=hi).filter(|&k| in_zero(m, k)) {
                let slot = finals.entry((m, k)).or_default();
                slot.resize(c + 1, None);
                slot[c] = Some(agg.clone());
            }
        }
        running.push(end.running.get(&0).cloned());
    }
    let first_of = |negations: &[usize]| {
        events
            .iter()
            .find(|e| negations.contains(&(e.graph as usize)))
            .map(|e| e.time)
    };
    let mut windows: Vec<_> = finals
        .into_iter()
        .map(|((m, k), mut by_column)| {
            by_column.resize(columns.len(), None);
            (m, k, by_column)
        })
        .collect();
    windows.sort_unstable_by_key(|&(m, k, _)| (m, k));
    let record = SegmentRecord {
        columns,
        windows,
        running,
        carry,
        leading: first_of(&graph.leading),
        trailing: first_of(&graph.trailing),
    };
    Some((complete, snapshots, record))
}

/// The later classes' windows open after the last event that end after t1, with their state.
fn carried(graph: &Graph, end: &EndState, finals: &HashMap<(usize, i64), Agg>, t1: i64) -> Vec<Carried> {
    let mut out = Vec::new();
    for &(m, k, c) in &end.open {
        let member = graph.members[m];
        if c == 0 || k * member.slide + member.within <= t1 {
            continue;
        }
        let running = end.running.get(&c).cloned().unwrap_or_default();
        let may_start = end.may_start.get(&c).copied().unwrap_or(true);
        out.push((m, k, running, finals.get(&(m, k)).cloned(), may_start));
    }
    out
}
