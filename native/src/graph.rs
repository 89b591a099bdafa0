//! GRETA's trend graph of one stream partition: the same computation as
//! `hamlet.runtime.greta.run_partition` (`QueryRun` over one `TrendGraph`) for the graphs it accepts.
//!
//! Events are vertices, edges are never stored: an event's aggregate per window class is the sum of the
//! running totals of its predecessor types in that class, extended by the event itself (graph.py). A
//! window class c holds the windows whose start has c events before it; they all see the same events.

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use rustc_hash::FxHashMap as HashMap;
use smallvec::SmallVec;
use std::collections::VecDeque;

use crate::dominance::{LongerTrends, Parts};
use crate::edges::{Edge, Guard, Source};
use crate::ends::EndGroups;
use crate::events::RawEvent;
use crate::negation::{Negation, NegationState};
use crate::num::Num;
use crate::reach::EventEdges;
use crate::values::{key_value, order_key, summand, Raw, Scale, Value, FLOAT_SCALE_BITS};

pub const TRENDS: u8 = 0;
pub const COUNT: u8 = 1;
pub const SUM: u8 = 2;
pub const NONNULL: u8 = 3;
pub const FLOATS: u8 = 4;
pub const MIN: u8 = 5;
pub const MAX: u8 = 6;
/// The trends ending at an event of a state that accepts one set of a conjunction's operands (dissertation
/// §12, `aggregates.ConjunctionAlgebra`): set by the event's own state, never inherited from predecessors
/// (a trend's class is that of its last state).
pub const ENDS: u8 = 7;

/// Event matching semantics (dissertation §2.4): skip-till-any-match, skip-till-next-match.
pub const ANY: u8 = 0;
pub const NEXT: u8 = 1;
pub const CONT: u8 = 2;

/// No window class starts after this one (`WindowClasses.class_of` of the windows after every event).
const AFTER_ALL: i64 = 1 << 62;

/// An aggregate vector: the trend count, then the fields of the queries' aggregates (`VectorAlgebra`). Most
/// have one to four fields: kept inline, a step allocates nothing.
pub type Agg = smallvec::SmallVec<[Num; 4]>;

/// One field of the aggregate vector an event of a position updates.
#[derive(Clone, Copy)]
pub struct Update {
    pub field: usize,
    pub kind: u8,
    pub attribute: usize, // index into the graph's attributes (usize::MAX for COUNT)
    pub scaled: bool,     // a sum kept in Python in units of 2^-1074 (its attribute holds floats)
}

/// One query's windows: [k·slide, k·slide + within) for k in [first, last].
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Member {
    pub within: i64,
    pub slide: i64,
    pub first: i64,
    pub last: i64,
}

impl Member {
    pub fn indexes(&self, time: i64) -> (i64, i64) {
        let lo = (time - self.within).div_euclid(self.slide) + 1;
        let hi = time.div_euclid(self.slide) + 1;
        (lo.max(self.first), hi.min(self.last.saturating_add(1)))
    }

    fn end(&self, k: i64) -> i64 {
        k * self.slide + self.within
    }
}

/// What an event is to a graph: an event of a position of its positive pattern (graph 0) or of negation
/// number `graph` (`negation.rs`).
#[derive(Clone, Copy, PartialEq)]
pub struct Role {
    pub graph: usize,
    pub position: usize,
}

impl Role {
    /// The position in the positive pattern, if the event is of it.
    pub fn positive(self) -> Option<usize> {
        (self.graph == 0).then_some(self.position)
    }
}

/// The first position in the positive pattern among an event type's roles (a type may also be read by
/// NOTs: `SEQ(A, NOT A, B)`), if it has one.
pub fn positive_of(roles: &[Role]) -> Option<usize> {
    roles.iter().find_map(|r| r.positive())
}

/// One event as one graph reads it. Every graph builds its own, one per event of its types (50 graphs of
/// the authors' shape: ~300,000 per 20,000 events), and most carry no values and no fields, so those two
/// sit behind one optional box: 32 bytes an event instead of 80, and a third of the memory to write, fault
/// in and free per partition.
pub struct Event {
    pub time: i64,
    pub raw: usize, // its index among the partition's events as read (`RawEvent`)
    pub graph: u32, // 0: the positive pattern's; else the number of the negation it is of
    pub position: u32,
    data: Option<Box<EventData>>,
}

struct EventData {
    values: Vec<Option<Value>>, // the graph's attributes, for events of positions that aggregate them
    fields: Vec<Raw>,           // every attribute of the graph, for events of positions with edges
}

impl Event {
    fn new(
        graph: usize,
        position: usize,
        time: i64,
        raw: usize,
        values: Vec<Option<Value>>,
        fields: Vec<Raw>,
    ) -> Event {
        let data = (!values.is_empty() || !fields.is_empty()).then(|| Box::new(EventData { values, fields }));
        Event {
            time,
            raw,
            graph: graph as u32,
            position: position as u32,
            data,
        }
    }

    /// The graph's attributes (empty unless the event's position aggregates them).
    pub fn values(&self) -> &[Option<Value>] {
        self.data.as_ref().map_or(&[], |d| &d.values)
    }

    /// Every attribute of the graph (empty unless the event's position has edges).
    pub fn fields(&self) -> &[Raw] {
        self.data.as_ref().map_or(&[], |d| &d.fields)
    }
}

/// The graph of one pattern (`hamlet.runtime.partition.graph_key`) for the queries that share it, or of a
/// merged template for queries that share every position but the end (`partition.merged_groups`).
#[derive(Clone)]
pub struct Graph {
    pub types: Vec<String>,       // by position
    pub negations: Vec<Negation>, // every negative sub-pattern, numbered from 1 in this order
    pub leading: Vec<usize>,      // the negations before the pattern's start (their numbers)
    pub trailing: Vec<usize>,     // the negations after its end
    /// P OR Q, P AND Q whose operands lead or end with NOTs of their own (`automaton.build_states`): per
    /// position, the outcomes of those leading NOTs (in [window start, event)) that start trends there;
    /// per position, the operands it ends (bit o); per operand, the numbers of its trailing NOTs.
    pub start_guard: Vec<Option<Guard>>,
    pub accepts: Vec<u64>,
    pub operand_trailing: Vec<Vec<usize>>,
    pub negated: Vec<bool>,  // per position: a NOT reads its type too (`SEQ(A, NOT A, B)`)
    pub is_start: Vec<bool>, // per position: a trend may start there
    pub is_end: Vec<bool>,   // per position: a trend may end there
    /// Per end position, the finals it adds to (usize::MAX elsewhere); per member, the finals it reads. One
    /// slot for every end of a graph of one pattern; on a merged template (queries sharing every position
    /// but the end: `partition.merged_groups`) one per member's end, so each reads only its own trends.
    pub end_slot: Vec<usize>,
    pub member_slot: Vec<usize>,
    /// Per position: its events end trends and do nothing else (no transition or edge from it, nothing they
    /// aggregate or reset, no trailing NOT, skip-till-any-match), so each goes straight into the finals
    /// (`Partition::add_to_final`): on the authors' shape, most events are such ends.
    pub final_only: Vec<bool>,
    /// The `final_only` positions that read the same running totals, settled together (`ends.rs`).
    pub end_groups: EndGroups,
    /// Per position: a path of transitions leads from it back to it (`Graph::cycles`).
    pub cyclic: Vec<bool>,
    /// Per position: its events only feed the running totals (no edge, aggregate, reset or end; skip-till-any-
    /// match). An event of it alone at its time adds the other predecessors' totals o (and one if it starts a
    /// trend) to its own total t, and at a Kleene position t itself: t becomes 2t + o in place, with no copy
    /// of t's digits (`Partition::add_to_running`).
    pub feeds_only: Vec<bool>,
    /// Per position: every position of its event type, in order. On a position template (dissertation §12,
    /// `hamlet/analysis/automaton.py`) a type has several states and each of its events runs at all of them
    /// (`events`); elsewhere it is the position alone.
    pub places: Vec<Vec<usize>>,
    /// The positions whose type every trend holds: a partition without an event of one has no trend.
    pub required: Vec<usize>,
    /// Several places for a type, starts or ends, or a conjunction's classes: a position template, whose
    /// bursts the kernel steps one event at a time (`burst_position`) and whose segments it does not cut.
    pub positional: bool,
    pub predecessors: Vec<Vec<usize>>, // per position: the sources of its transitions without predicates
    pub is_source: Vec<bool>,          // per position: the source of a transition without predicates
    pub edges: Vec<Edge>,              // the transitions with edge predicates
    pub edges_into: Vec<Vec<usize>>,   // per position: the edges into it
    pub edges_from: Vec<Vec<usize>>,   // per position: the edges out of it
    pub kinds: Vec<u8>,
    pub updates: Vec<Vec<Update>>,
    pub resets: Vec<usize>, // the ENDS fields: what an event's predecessors hold there is not the event's
    pub attributes: Vec<String>,
    pub count_only: bool,
    pub members: Vec<Member>,
    pub windows: Vec<Member>, // the members' distinct windows (queries of a graph often share theirs)
    /// ANY, NEXT or CONT. Under NEXT an event keeps an edge from a predecessor only where no longer path of
    /// the graph bypasses it, under CONT only from the events at the sub-stream's previous time (graph.py's
    /// `SemanticsEdges`). Where every transition is plain (no edge predicate, no NOT between two types),
    /// whether an event reaches another depends on positions and times alone (`NextState`,
    /// `Partition::next_predecessors`); elsewhere the graph is `event_grained`.
    pub semantics: u8,
    /// Per position: the positions its plain transitions lead to (NEXT).
    pub successors: Vec<Vec<usize>>,
    /// NEXT or CONT with edges (edge predicates or a guarding NOT): each event's predecessor events are
    /// chosen one by one, with their reach under NEXT (`reach.rs`).
    pub event_grained: bool,
    /// NEXT on a position template (a type at several places): each node's aggregate split by the states a
    /// longer trend may stand at (`dominance.rs`).
    pub dominance: bool,
}

impl Graph {
    /// The graph's events among `raw` (those at `indexes`, in time order), `roles` by the raw events'
    /// type numbers, the graph's attribute i at `attribute_at[i]` of theirs; and per attribute what its
    /// values are. None if the partition is Python's (a value the kernel cannot sum or compare exactly).
    pub fn events(
        &self,
        raw: &[RawEvent],
        indexes: &[usize],
        roles: &[Vec<Role>],
        attribute_at: &[usize],
    ) -> Option<(Vec<Event>, Vec<Scale>)> {
        let (events, scales, _) = self.events_with_bursts(raw, indexes, roles, attribute_at, &[], true)?;
        Some((events, scales))
    }

    /// `events`, with `bursts` (ranges of `indexes`, ascending and disjoint, each at a position the graph
    /// takes at once: `burst_position`) and each one's range among the events. A burst whose events nothing
    /// reads one by one (`reads_burst_events`) is held as its first event alone, which stands for them all
    /// (`Partition::apply_burst`): the queries that share it hold none of its other events. With
    /// `hold_every`, every event of every burst (a time segment's basis runs step them one by one: `vertical.rs`).
    pub fn events_with_bursts(
        &self,
        raw: &[RawEvent],
        indexes: &[usize],
        roles: &[Vec<Role>],
        attribute_at: &[usize],
        bursts: &[(usize, usize)],
        hold_every: bool,
    ) -> Option<(Vec<Event>, Vec<Scale>, Vec<(usize, usize)>)> {
        let mut out = Vec::with_capacity(indexes.len());
        let mut scales = vec![Scale::default(); self.attributes.len()];
        let mut ranges = Vec::with_capacity(bursts.len());
        // Per type: the one position its events take, when they carry nothing there (no value, no field, one
        // place, no NOT reads the type); most events of most graphs, each then one push.
        let plain: Vec<Option<u32>> = roles
            .iter()
            .map(|r| {
                match r.as_slice() {
                    [role] => role.positive().filter(|&p| {
                        self.places[p] == [p]
                            && self.updates[p].is_empty()
                            && self.edges_into[p].is_empty()
                            && self.edges_from[p].is_empty()
                    }),
                    _ => None,
                }
                .map(|p| p as u32)
            })
            .collect();
        let mut read = |i: usize, out: &mut Vec<Event>| -> Option<()> {
            let e = &raw[i];
            if let Some(position) = plain[e.kind] {
                out.push(Event {
                    time: e.time,
                    raw: i,
                    graph: 0,
                    position,
                    data: None,
                });
                return Some(());
            }
            for &role in &roles[e.kind] {
                self.read_event(e, i, role, attribute_at, &mut scales, out)?;
            }
            Some(())
        };
        let mut j = 0;
        for &(from, to) in bursts {
            for &i in &indexes[j..from] {
                read(i, &mut out)?;
            }
            let start = out.len();
            let position = positive_of(&roles[raw[indexes[from]].kind]).expect("a burst of a positive type");
            let stop = if hold_every || self.reads_burst_events(position) {
                to
            } else {
                from + 1
            };
            for &i in &indexes[from..stop] {
                read(i, &mut out)?;
            }
            ranges.push((start, out.len()));
            j = to;
        }
        for &i in &indexes[j..] {
            read(i, &mut out)?;
        }
        Some((out, scales, ranges)) // (no exponent passes FLOAT_SCALE_BITS: a double's least unit is 2^-1074)
    }

    /// Whether a burst at `position`, applied at once, reads its events one by one: the values its aggregates
    /// update (`Graphlet::own`), the fields of a NOT's edge into it. Else its first event stands for all.
    pub fn reads_burst_events(&self, position: usize) -> bool {
        !self.updates[position].is_empty() || !self.edges_into[position].is_empty()
    }

    /// Event `i` in one of its roles: one event of the negation's graph, or one per place of its type in the
    /// positive pattern. None: a value the kernel cannot read exactly.
    fn read_event(
        &self,
        e: &RawEvent,
        i: usize,
        role: Role,
        attribute_at: &[usize],
        scales: &mut [Scale],
        out: &mut Vec<Event>,
    ) -> Option<()> {
        let Some(first) = role.positive() else {
            let negation = &self.negations[role.graph - 1];
            let mut fields = Vec::new();
            if !negation.edges_into[role.position].is_empty() || !negation.edges_from[role.position].is_empty() {
                fields = attribute_at
                    .iter()
                    .map(|&a| e.values.get(a).cloned().unwrap_or_default())
                    .collect();
            }
            out.push(Event::new(role.graph, role.position, e.time, i, Vec::new(), fields));
            return Some(());
        };
        // One event per place of its type: all at its time, so none precedes another (`step` computes
        // every event of a time before it commits any).
        for &p in &self.places[first] {
            let mut values = Vec::new();
            if !self.updates[p].is_empty() {
                values = vec![None; self.attributes.len()];
                for u in &self.updates[p] {
                    if u.attribute == usize::MAX {
                        continue;
                    }
                    // (no value: a joint graph's update of another member's type at this place, which the
                    // reader did not read for this type; that member's block never sees the event: `joint.rs`)
                    let value = match e.values.get(attribute_at[u.attribute]) {
                        Some(raw) => raw.number().ok()?,
                        None => None,
                    };
                    if let Some(v) = value {
                        if u.kind == SUM && !u.scaled && matches!(v, Value::Float(_)) {
                            return None; // (Python sums this type's values as ints: it saw no float in them)
                        }
                        scales[u.attribute].add(v);
                    }
                    values[u.attribute] = value;
                }
            }
            let mut fields = Vec::new();
            if !self.edges_into[p].is_empty() || !self.edges_from[p].is_empty() {
                fields = attribute_at
                    .iter()
                    .map(|&a| e.values.get(a).cloned().unwrap_or_default())
                    .collect();
            }
            out.push(Event::new(0, p, e.time, i, values, fields));
        }
        Some(())
    }

    /// Every type the graph reads and its role: the pattern's by position (a type at several places by its
    /// first: `events` places it at the others), then each negation's.
    pub fn roles(&self) -> Vec<(String, Role)> {
        let mut out: Vec<(String, Role)> = (0..self.types.len())
            .filter(|&p| self.places[p][0] == p)
            .map(|p| (self.types[p].clone(), Role { graph: 0, position: p }))
            .collect();
        for (k, negation) in self.negations.iter().enumerate() {
            for (p, t) in negation.types.iter().enumerate() {
                out.push((
                    t.clone(),
                    Role {
                        graph: k + 1,
                        position: p,
                    },
                ));
            }
        }
        out
    }

    /// The position of a Kleene type whose bursts the graph can take at once (`Partition::apply_burst`): it
    /// lies in a Kleene sub-pattern (`in_kleene`), E's events never wait for a trailing NOT and no NOT reads E
    /// (each of its events may be a match).
    /// Events that meet an edge predicate, or a NOT after them, are each their own (`edges.rs`); a NOT before
    /// them is not: its L cannot change inside a burst, so every event of it has the same snapshot.
    pub fn burst_position(&self, position: usize) -> bool {
        self.semantics == ANY
            && !self.positional
            && self.in_kleene(position)
            && (!self.is_end[position] || self.trailing.is_empty())
            && (!self.is_start[position] || self.leading.is_empty())
            && self.edges_into[position]
                .iter()
                .all(|&e| self.edges[e].predicates.is_empty())
            && self.edges_from[position].is_empty()
            && !self.negated[position]
    }

    /// A Kleene position whose events meet an edge predicate (into or out of it): its bursts are no graphlet's
    /// (`burst_position`), but the graphs that share its shape may run as one (`joint.rs`).
    pub fn kleene_edge_position(&self, position: usize) -> bool {
        let predicated = |edges: &[usize]| edges.iter().any(|&e| !self.edges[e].predicates.is_empty());
        self.in_kleene(position) && (predicated(&self.edges_into[position]) || predicated(&self.edges_from[position]))
    }

    /// Whether a path of transitions leads from `position` back to it: E → E under E+, or E → ... → E in a
    /// Kleene sub-pattern over several types (`(SEQ(A+, B))+`: B → A → B), whose bursts MUSE shares too.
    fn in_kleene(&self, position: usize) -> bool {
        self.cyclic[position]
    }

    /// Per position, whether it lies on a cycle of transitions (`on_cycles`, once per graph: a walk from each
    /// position took seconds on a SEQ of 30,000 types).
    pub fn cycles(&self) -> Vec<bool> {
        let into: Vec<Vec<usize>> = (0..self.types.len())
            .map(|p| {
                let sources = self.edges_into[p].iter().map(|&e| self.edges[e].source);
                self.predecessors[p].iter().copied().chain(sources).collect()
            })
            .collect();
        on_cycles(&into)
    }

    /// Whether the events of a burst at `position` precede one another (E → E): else each one's predecessors
    /// are the burst's snapshot alone, as if they all had one time (`Graphlet::new`).
    pub fn linked(&self, position: usize) -> bool {
        self.predecessors[position].contains(&position)
    }

    /// The attributes events of `role` are read for: those their aggregates and edge predicates read.
    pub fn attributes_at(&self, role: Role) -> Vec<usize> {
        let mut out = Vec::new();
        match role.positive() {
            // (an event of a type at several places is read once for all of them: `events`)
            Some(p) => {
                for &q in &self.places[p] {
                    out.extend(self.updates[q].iter().map(|u| u.attribute).filter(|&a| a != usize::MAX));
                    edge_attributes(&self.edges, &self.edges_into[q], &self.edges_from[q], &mut out);
                }
            }
            None => {
                let n = &self.negations[role.graph - 1];
                let p = role.position;
                edge_attributes(&n.edges, &n.edges_into[p], &n.edges_from[p], &mut out);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// How many sets of finals the graph keeps (`end_slot`).
    pub fn slots(&self) -> usize {
        self.end_slot
            .iter()
            .filter(|&&s| s != usize::MAX)
            .max()
            .map_or(1, |s| s + 1)
    }

    /// The queries' pane: the gcd of every window's length and slide (no window starts or ends inside one).
    pub fn pane(&self) -> i64 {
        self.members.iter().fold(0, |g, m| gcd(gcd(g, m.within), m.slide))
    }

    /// Whether a window of some member contains a time in [first, last] (`GraphGroup.has_windows`).
    pub fn has_windows(&self, first: i64, last: i64) -> bool {
        self.members.iter().any(|m| m.indexes(first).0 < m.indexes(last).1)
    }

    /// The classes of the windows (of every member) that contain `time`, ascending, over the graph's event
    /// `times` (`TrendGraph.windows`): a class is the first event at or after a window's start, so windows
    /// whose starts no event lies between are one.
    pub fn classes<T: EventTimes + ?Sized>(&self, times: &T, time: i64) -> Vec<usize> {
        let mut out = Vec::new();
        for member in &self.windows {
            let (mut k, stop) = member.indexes(time);
            while k < stop {
                let (c, through) = class_of(times, member, k);
                out.push(c);
                if c >= times.count() {
                    break;
                }
                k = through + 1;
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// How many window classes hold `time` (what a burst at `time` costs per query: `burst::pays`).
    pub fn class_count<T: EventTimes + ?Sized>(&self, times: &T, time: i64) -> usize {
        if let [member] = self.windows.as_slice() {
            // (one window: its classes come ascending, so they are counted as `classes` walks them, with no
            // list to build, sort and drop for every graph of every burst the decision weighs)
            let (mut k, stop) = member.indexes(time);
            let mut count = 0;
            while k < stop {
                let (c, through) = class_of(times, member, k);
                count += 1;
                if c >= times.count() {
                    break;
                }
                k = through + 1;
            }
            return count;
        }
        self.classes(times, time).len()
    }

    /// The aggregate as the Python algebra holds it: an int (COUNT(*) only) or a tuple, sums over floats in
    /// units of 2^-1074, MIN/MAX over floats as floats.
    pub fn to_python<'py>(&self, py: Python<'py>, agg: &Agg, scales: &[Scale]) -> PyResult<Bound<'py, PyAny>> {
        if self.count_only {
            return agg[0].into_py(py);
        }
        let mut items: Vec<Bound<'py, PyAny>> = (0..agg.len()).map(|_| py.None().into_bound(py)).collect();
        items[0] = agg[0].into_py(py)?;
        for &f in &self.resets {
            items[f] = agg[f].into_py(py)?; // (a class no state accepts is 0, not None)
        }
        for u in self.updates.iter().flatten() {
            let v = &agg[u.field];
            let scale = scales.get(u.attribute).copied().unwrap_or_default();
            items[u.field] = match (u.kind, v.small()) {
                (MIN, Some(i128::MAX)) | (MAX, Some(i128::MIN)) => continue,
                (MIN | MAX, Some(key)) => key_value(key).into_py(py)?,
                (SUM, _) if u.scaled => v.shl(FLOAT_SCALE_BITS - scale.exponent).into_py(py)?,
                _ => v.into_py(py)?,
            };
        }
        Ok(PyTuple::new(py, items)?.into_any())
    }

    pub fn zero(&self) -> Agg {
        self.kinds
            .iter()
            .map(|&k| match k {
                MIN => Num::from(i128::MAX),
                MAX => Num::from(i128::MIN),
                _ => Num::ZERO,
            })
            .collect()
    }

    /// a += b (MIN and MAX fields by their extreme).
    pub fn add(&self, a: &mut Agg, b: &Agg) {
        for ((x, y), &kind) in a.iter_mut().zip(b).zip(&self.kinds) {
            match kind {
                MIN | MAX => extreme(kind, x, y),
                _ => x.add_assign(y),
            }
        }
    }

    /// a += n · b (MIN and MAX fields by their extreme, which n copies of b do not move).
    pub fn add_times(&self, a: &mut Agg, b: &Agg, n: u64) {
        if n == 1 {
            return self.add(a, b);
        }
        let n = Num::from(n as i128);
        for ((x, y), &kind) in a.iter_mut().zip(b).zip(&self.kinds) {
            match kind {
                MIN | MAX => extreme(kind, x, y),
                _ => x.add_assign(&y.mul(&n)),
            }
        }
    }

    /// END contributions wait for the window's end: a trailing NOT, the pattern's or an operand's.
    pub fn waits_for_ends(&self) -> bool {
        !self.trailing.is_empty() || !self.operand_trailing.is_empty()
    }

    /// `agg` of the trends ending at `position` as trends of the operands in `operands` (bit o; of those
    /// `position` ends) only: None where that is none. For P AND Q, where one of the two is left, a trend of
    /// both is a trend of that one (`ConjunctionAlgebra.restricted`): its class (the ENDS fields: P only, Q
    /// only, both) and the count follow.
    pub fn restricted(&self, agg: &Agg, position: usize, operands: u64) -> Option<Agg> {
        if operands == 0 {
            return None;
        }
        if self.resets.len() != 3 || operands == self.accepts[position] {
            return Some(agg.clone());
        }
        let [p, q, both] = [self.resets[0], self.resets[1], self.resets[2]];
        let (kept, dropped) = if operands == 1 { (p, q) } else { (q, p) };
        let mut out = agg.clone();
        out[kept].add_assign(&agg[both]);
        out[dropped] = Num::ZERO;
        out[both] = Num::ZERO;
        out[0] = out[kept].clone();
        (!out[0].is_zero()).then_some(out)
    }

    /// NEXT on a position template (`dominance.rs`): what a part with set `r` (the ranks of the places of
    /// `position`'s type a longer trend may stand at) and aggregate `agg` adds to the finals, where `ends(p)`
    /// is the operands a trend ending at place p ends (bit o). Nothing where a longer trend ends there too;
    /// for P AND Q, whose trends are pairs of a trend of P and one of Q, each under the semantics on its
    /// own, the part's trends are P's where `position` ends P and no place of R does, and Q's alike.
    pub fn undominated(&self, position: usize, r: u64, agg: &Agg, ends: impl Fn(usize) -> u64) -> Option<Agg> {
        let places = &self.places[position];
        let longer = (0..places.len())
            .filter(|&rank| r >> rank & 1 == 1)
            .fold(0, |m, rank| m | ends(places[rank]));
        if self.resets.len() != 3 {
            return (longer == 0).then(|| agg.clone());
        }
        self.restricted(agg, position, ends(position) & !longer)
    }

    /// `VectorAlgebra.extend`: the aggregate of the trends ending at the event; None: no trend ends there.
    /// `start`: the event starts a trend (at the start position, where no leading NOT forbids it).
    fn extend(
        &self,
        mut acc: Agg,
        event: &Event,
        position: usize,
        start: bool,
        scales: &[Scale],
        keep: bool,
    ) -> Option<Agg> {
        self.extend_fields(&mut acc, event, position, start, scales, keep)
            .then_some(acc)
    }

    /// `extend` in place, on the fields of this graph's aggregate (a joint graph's block of it: `joint.rs`);
    /// false: no trend ends there.
    fn extend_fields(
        &self,
        acc: &mut [Num],
        event: &Event,
        position: usize,
        start: bool,
        scales: &[Scale],
        keep: bool,
    ) -> bool {
        if start {
            acc[0].add_assign(&Num::ONE);
        }
        if acc[0].is_zero() && !keep {
            return false;
        }
        for &f in &self.resets {
            acc[f] = Num::ZERO;
        }
        if self.updates[position].is_empty() {
            return true;
        }
        let count = acc[0].clone();
        for u in &self.updates[position] {
            let Some(w) = self.weight(u, event.values(), scales) else {
                continue;
            };
            let slot = &mut acc[u.field];
            match u.kind {
                MIN | MAX => extreme(u.kind, slot, &w),
                _ => slot.add_assign(&w.mul(&count)),
            }
        }
        true
    }

    /// What an event with `values` adds to field `u` per trend ending at it (COUNT: one; SUM: its value,
    /// in the field's unit; NONNULL, FLOATS: one where they hold), or its order key for MIN/MAX; None: nothing.
    pub fn weight(&self, u: &Update, values: &[Option<Value>], scales: &[Scale]) -> Option<Num> {
        if u.kind == COUNT || u.kind == ENDS {
            return Some(Num::ONE);
        }
        let value = values[u.attribute]?;
        match u.kind {
            SUM => {
                let exponent = if u.scaled { scales[u.attribute].exponent } else { 0 };
                Some(summand(value, exponent))
            }
            NONNULL => Some(Num::ONE),
            FLOATS if matches!(value, Value::Float(_)) => Some(Num::ONE),
            MIN | MAX => Some(Num::from(order_key(value))),
            _ => None,
        }
    }
}

/// The times of a graph's events, in order, as its window classes read them: a `Partition`'s, or the raw
/// events a graph will hold, before its events exist (`burst::plan`).
pub trait EventTimes {
    fn count(&self) -> usize;
    fn at(&self, i: usize) -> i64;
    /// The first event at or after `time`.
    fn first_from(&self, time: i64) -> usize;
}

impl EventTimes for [i64] {
    fn count(&self) -> usize {
        self.len()
    }
    fn at(&self, i: usize) -> i64 {
        self[i]
    }
    fn first_from(&self, time: i64) -> usize {
        self.partition_point(|&t| t < time)
    }
}

/// The times of the raw events at `indexes` (ascending, so in time order).
pub struct RawTimes<'a> {
    pub raw: &'a [RawEvent],
    pub indexes: &'a [usize],
}

impl EventTimes for RawTimes<'_> {
    fn count(&self) -> usize {
        self.indexes.len()
    }
    fn at(&self, i: usize) -> i64 {
        self.raw[self.indexes[i]].time
    }
    fn first_from(&self, time: i64) -> usize {
        self.indexes.partition_point(|&i| self.raw[i].time < time)
    }
}

/// Window k's class (the first event at or after its start) and the last window of that class.
fn class_of<T: EventTimes + ?Sized>(times: &T, member: &Member, k: i64) -> (usize, i64) {
    let c = times.first_from(k * member.slide);
    let through = if c < times.count() {
        times.at(c).div_euclid(member.slide)
    } else {
        AFTER_ALL
    };
    (c, through)
}

/// A burst of one graph's events applied at once (HAMLET §3.3): events `from..to` of the graph, all of one
/// type at a Kleene position, in one pane, and the snapshot coefficients the graph's sharers computed once
/// for the events they all match (`graphlet::Graphlet`).
pub struct SharedBurst<'g> {
    pub from: usize,
    pub to: usize,
    pub graphlet: &'g crate::graphlet::Graphlet,
}

/// The state of one partition's graph (`QueryRun` with one `TrendGraph`).
pub struct Partition<'a> {
    kernel: &'a Graph,
    events: &'a [Event],
    scales: &'a [Scale],
    times: Vec<i64>,
    running: Vec<HashMap<usize, Agg>>, // per source position: running totals per class
    finals: Vec<HashMap<usize, Agg>>,  // per end slot (`Graph::end_slot`), per class
    pending: Vec<HashMap<usize, Vec<PendingEnd>>>, // with a trailing NOT: END contributions, read at close
    // (final_only position, class, how many events) not yet in the finals: each adds its predecessors'
    // running totals, which stay as they are until a commit to one of them, so n such events add n times
    // those totals at once (`settle_ends`), one multiplication where each would add thousands of digits.
    ends: Vec<(usize, usize, u64)>,
    common: Vec<HashMap<usize, Agg>>, // per end group (`ends.rs`), per class: what each of its positions added
    negations: Vec<NegationState>,    // per negation (numbered from 1): its graph here
    open: Vec<VecDeque<(i64, i64)>>,  // per member: open windows as runs [first, last]
    next_close: Vec<Option<i64>>,
    out: Vec<(usize, i64, i64, Agg)>,
    pub snapshots: usize, // graphlet-level snapshots taken (one per shared burst and window class)
    // The pane of the last time advanced to, and the classes of its windows: windows open and close only at
    // pane boundaries, so both change only when the pane does.
    pane: i64,
    pane_times: (i64, i64), // [first, end) time of the last pane: most events fall in it, with no division
    classes: Vec<usize>,
    computed: Vec<(usize, usize, usize, Agg)>, // (event, position, class, aggregate) of one timestamp
    sources: Vec<Source>,                      // per edge of the graph: its source's events (edges.rs)
    next: Option<NextState>,                   // under NEXT and CONT
    event_edges: Option<EventEdges>,           // under NEXT and CONT on an `event_grained` graph
    longer: Option<LongerTrends>,              // under NEXT on a position template (`dominance`)
    split: Vec<(usize, usize, Parts)>,         // (node, position, parts) of one timestamp, to hold
    substream: Vec<i64>,                       // CONT: the time of every event of the partition, of any type, sorted
    zero: Option<ClassZero>,                   // a time segment's run (`vertical.rs`)
    blocks: Option<Blocks<'a>>,                // a joint graph's run (`joint.rs`)
}

/// How a joint graph's aggregate is cut into its graphs' blocks (`joint.rs`), and per event which graphs
/// match it (bit i: graph i).
pub struct Blocks<'a> {
    pub graphs: &'a [Graph],
    pub zero: &'a [Num], // the joint graph's zero
    pub offsets: &'a [usize],
    pub widths: &'a [usize],
    pub masks: &'a [u64],
}

/// How a time segment's run treats window class 0: the windows that start before the segment's first event,
/// into which aggregates flow from earlier segments (`vertical.rs`). They all hold every event of the
/// segment up to their end, so one class carries them all, and what they end with is affine in what flows
/// in: a basis run computes one column of that map (class 0 alone, seeded with a unit, no zero dropped).
#[derive(Clone, Default)]
pub struct ClassZero {
    pub alone: bool,             // compute class 0 alone
    pub keep_zero: bool,         // keep aggregates whose count is zero (a linear column's coefficients)
    pub seed: Vec<(usize, Agg)>, // class 0's running totals at the segment's start, per source position
    pub starts: bool,            // trends may start in class 0 (with a leading NOT: the starts' column)
}

/// A segment's graph after its last event: the windows still open, with their classes, and per class its
/// running totals (per position) and whether trends may still start in it (no leading NOT matched since).
pub struct EndState {
    pub open: Vec<(usize, i64, usize)>,
    pub running: HashMap<usize, Vec<Option<Agg>>>,
    pub may_start: HashMap<usize, bool>,
}

/// An END contribution that waits for its window's end (a trailing NOT): (time, position, under NEXT on a
/// position template the R of the part, aggregate).
type PendingEnd = (i64, usize, u64, Agg);

/// What NEXT keeps per position of a graph without edges (else `reach::EventEdges`). Without edge predicates or a NOT between two types,
/// u → v is an edge iff u's position precedes v's and u.time < v.time, so whether an event reaches another
/// depends on positions and times alone: all events of one position and time reach the same events, and a
/// later event of a position reaches everything an earlier one does. For a new event v:
///
/// * `reach[S]` of v, the latest time of an event at position S with a path to v, is the max over v's
///   predecessor positions X of the latest X time itself and the latest X events' own `reach[S]`;
/// * an earlier u at position T is bypassed iff some w after u at a successor position of T reaches v, i.e.
///   iff u.time < W_T = max over T's successors S of `reach[S]`: v's predecessors at T are the T events at or
///   after W_T (for a Kleene T, only those at the latest time).
///
/// O(positions²) per event plus one step per predecessor kept.
struct NextState {
    latest: Vec<Option<(i64, Vec<Option<i64>>)>>, // per position: (time, reach) of its latest events
    stored: Vec<VecDeque<(i64, usize, Agg)>>,     // per position: (time, class, aggregate) of its events
    horizon: i64,                                 // the longest WITHIN: older events share no window
    pending: Vec<(usize, Vec<Option<i64>>)>,      // (position, reach) of the events of one timestamp
}

impl<'a> Partition<'a> {
    /// None: an edge predicate needs Python to evaluate it on these events (`edges.rs`).
    pub fn new(kernel: &'a Graph, events: &'a [Event], scales: &'a [Scale]) -> Option<Self> {
        let members = kernel.members.len();
        let mut sources = Vec::with_capacity(kernel.edges.len());
        for edge in &kernel.edges {
            if kernel.event_grained || kernel.dominance {
                sources.push(Source::Scan(Vec::new())); // (unused: `EventEdges` or `LongerTrends` holds the events)
                continue;
            }
            let values: Vec<Vec<Raw>> = events
                .iter()
                .filter(|e| e.graph == 0 && e.position as usize == edge.source)
                .map(|e| e.fields().to_vec())
                .collect();
            sources.push(Source::new(edge, &values).ok()?);
        }
        Some(Partition {
            kernel,
            events,
            scales,
            times: events.iter().map(|e| e.time).collect(),
            running: vec![HashMap::default(); kernel.predecessors.len()],
            finals: vec![HashMap::default(); kernel.slots()],
            pending: vec![HashMap::default(); kernel.slots()],
            ends: Vec::new(),
            common: vec![HashMap::default(); kernel.end_groups.positions.len()],
            negations: kernel.negations.iter().map(NegationState::new).collect(),
            open: vec![VecDeque::new(); members],
            next_close: vec![None; members],
            out: Vec::new(),
            snapshots: 0,
            pane: kernel.pane(),
            pane_times: (0, 0),
            classes: Vec::new(),
            computed: Vec::new(),
            sources,
            substream: Vec::new(),
            zero: None,
            next: (kernel.semantics != ANY).then(|| NextState {
                latest: vec![None; kernel.types.len()],
                stored: vec![VecDeque::new(); kernel.types.len()],
                horizon: kernel.members.iter().map(|m| m.within).max().unwrap_or(0),
                pending: Vec::new(),
            }),
            event_edges: kernel
                .event_grained
                .then(|| EventEdges::new(kernel, kernel.semantics == NEXT)),
            longer: kernel.dominance.then(|| LongerTrends::new(kernel)),
            split: Vec::new(),
            blocks: None,
        })
    }

    /// A joint graph's run: each event extends only the blocks of the graphs that match it.
    pub fn with_blocks(mut self, blocks: Blocks<'a>) -> Self {
        self.blocks = Some(blocks);
        self
    }

    /// `Graph::extend` of event i, on a joint graph block by block: a graph's block is its own extension
    /// where the event is its, else zero.
    fn extend_event(&self, i: usize, mut acc: Agg, position: usize, start: bool) -> Option<Agg> {
        let event = &self.events[i];
        let Some(blocks) = &self.blocks else {
            return self
                .kernel
                .extend(acc, event, position, start, self.scales, self.keeps_zero());
        };
        let mask = blocks.masks[i];
        let mut any = false;
        for (b, graph) in blocks.graphs.iter().enumerate() {
            let range = blocks.offsets[b]..blocks.offsets[b] + blocks.widths[b];
            if mask >> b & 1 == 1
                && graph.extend_fields(&mut acc[range.clone()], event, position, start, self.scales, false)
            {
                any = true;
                continue;
            }
            // (zero: a word each, MIN and MAX fields their sentinels)
            for (slot, zero) in acc[range.clone()].iter_mut().zip(&blocks.zero[range]) {
                *slot = zero.clone();
            }
        }
        any.then_some(acc)
    }

    /// CONT: the times of the partition's sub-stream (every event of it, of any type), sorted.
    pub fn with_substream(mut self, times: Vec<i64>) -> Self {
        self.substream = times;
        self
    }

    /// GRETA over every event, but the `bursts` (ascending, disjoint) applied at once; None where an edge
    /// predicate needs Python.
    pub fn run(self, bursts: &[SharedBurst]) -> Option<(Vec<(usize, i64, i64, Agg)>, usize)> {
        self.run_to_end(bursts).map(|(out, snapshots, _)| (out, snapshots))
    }

    /// A time segment's class 0 (`ClassZero`); its seed goes into the running totals.
    pub fn with_class_zero(mut self, zero: ClassZero) -> Self {
        for (position, agg) in &zero.seed {
            self.running[*position].insert(0, agg.clone());
        }
        self.zero = Some(zero);
        self
    }

    fn keeps_zero(&self) -> bool {
        self.zero.as_ref().is_some_and(|z| z.keep_zero)
    }

    fn class_zero_alone(&self) -> bool {
        self.zero.as_ref().is_some_and(|z| z.alone)
    }

    /// `run`, and the state after the last event (a time segment's, for the next segment: `vertical.rs`).
    pub fn run_to_end(mut self, bursts: &[SharedBurst]) -> Option<(Vec<(usize, i64, i64, Agg)>, usize, EndState)> {
        let mut i = 0;
        let mut next = bursts.iter().peekable();
        while i < self.events.len() {
            let time = self.times[i];
            if time < self.pane_times.0 || time >= self.pane_times.1 {
                let pane = time.div_euclid(self.pane);
                self.pane_times = (pane * self.pane, (pane * self.pane).saturating_add(self.pane));
                self.advance(time);
                self.classes = self.classes(time);
                if self.class_zero_alone() {
                    self.classes.retain(|&c| c == 0);
                }
            }
            if let Some(burst) = next.next_if(|b| b.from == i) {
                self.apply_burst(burst)?;
                i = burst.to;
                continue;
            }
            let mut j = i + 1;
            while j < self.events.len() && self.times[j] == time {
                j += 1;
            }
            let alone = &self.events[i];
            let position = alone.position as usize;
            if j == i + 1 && alone.graph == 0 && self.kernel.final_only[position] && self.zero.is_none() {
                // An event alone at its time that only ends trends: straight into the finals, as `step`
                // would put it, without its per-timestamp setup (most events of the authors' shape).
                self.add_to_finals(position);
                i = j;
                continue;
            }
            if j == i + 1 && alone.graph == 0 && self.kernel.feeds_only[position] && self.zero.is_none() {
                self.add_to_running(position, self.blocks.as_ref().map(|b| b.masks[i]));
                i = j;
                continue;
            }
            self.step(i, j)?;
            i = j;
        }
        let end = self.end_state();
        for m in 0..self.kernel.members.len() {
            if let Some(&(_, last)) = self.open[m].back() {
                self.close(m, last);
            }
        }
        Some((self.out, self.snapshots, end))
    }

    /// `QueryRun.advance_runs`: close the windows that end by `time`, open those that hold it.
    fn advance(&mut self, time: i64) {
        let mut closed = false;
        for m in 0..self.kernel.members.len() {
            if matches!(self.next_close[m], Some(end) if time >= end) {
                let member = self.kernel.members[m];
                self.close(m, (time - member.within).div_euclid(member.slide));
                closed = true;
            }
        }
        if closed {
            self.release();
        }
        for m in 0..self.kernel.members.len() {
            let member = self.kernel.members[m];
            let (mut first, stop) = member.indexes(time);
            let runs = &mut self.open[m];
            if let Some(&(_, last)) = runs.back() {
                first = first.max(last + 1);
            }
            if first < stop {
                match runs.back_mut() {
                    Some(run) if run.1 + 1 == first => run.1 = stop - 1,
                    _ => runs.push_back((first, stop - 1)),
                }
            }
            if self.next_close[m].is_none() {
                if let Some(&(first, _)) = runs.front() {
                    self.next_close[m] = Some(member.end(first));
                }
            }
        }
    }

    /// `TrendGraph.release`: drop the state of the classes below every member's oldest open window. No
    /// window of them is open, and none will open (a window that opens later starts after every event so
    /// far), so memory stays bounded by the classes of the open windows.
    fn release(&mut self) {
        self.settle_ends(None);
        let frontier = (0..self.kernel.members.len())
            .map(|m| match self.open[m].front() {
                Some(&(first, _)) => self.class_of(&self.kernel.members[m], first).0,
                None => usize::MAX,
            })
            .min()
            .unwrap_or(usize::MAX);
        for totals in &mut self.running {
            totals.retain(|&c, _| c >= frontier);
        }
        for finals in self.finals.iter_mut().chain(&mut self.common) {
            finals.retain(|&c, _| c >= frontier);
        }
        for pending in &mut self.pending {
            pending.retain(|&c, _| c >= frontier);
        }
        for source in &mut self.sources {
            source.release(frontier);
        }
    }

    /// The open windows and their classes' state after the last event (only a segment's run needs it).
    fn end_state(&self) -> EndState {
        let mut end = EndState {
            open: Vec::new(),
            running: HashMap::default(),
            may_start: HashMap::default(),
        };
        if self.zero.is_none() {
            return end;
        }
        for (m, member) in self.kernel.members.iter().enumerate() {
            for &(first, last) in &self.open[m] {
                for k in first..=last {
                    let (c, _) = self.class_of(member, k);
                    if self.class_zero_alone() && c != 0 {
                        continue;
                    }
                    end.open.push((m, k, c));
                    end.running
                        .entry(c)
                        .or_insert_with(|| self.running.iter().map(|r| r.get(&c).cloned()).collect());
                    end.may_start.entry(c).or_insert_with(|| self.may_start(c));
                }
            }
        }
        end
    }

    fn class_of(&self, member: &Member, k: i64) -> (usize, i64) {
        class_of(&self.times[..], member, k)
    }

    /// `TrendGraph.windows`: the classes of the windows (of every member) that contain `time`, ascending.
    pub fn classes(&self, time: i64) -> Vec<usize> {
        self.kernel.classes(&self.times[..], time)
    }

    /// The combined aggregate of the predecessors of an event at `position` in class c, from what is
    /// committed.
    fn predecessors(&self, position: usize, c: usize) -> Agg {
        let mut totals = self.kernel.predecessors[position]
            .iter()
            .filter_map(|&s| self.running[s].get(&c));
        // (the first total as it is: zero plus it would build the zero and then copy it digit by digit)
        let Some(first) = totals.next() else {
            return self.kernel.zero();
        };
        let mut acc = first.clone();
        for total in totals {
            self.kernel.add(&mut acc, total);
        }
        acc
    }

    /// `QueryRun.step`: the events of one timestamp computed on what is committed, then committed.
    fn step(&mut self, from: usize, to: usize) -> Option<()> {
        let kernel = self.kernel;
        let time = self.times[from];
        let mut computed = std::mem::take(&mut self.computed);
        for (i, event) in self.events[from..to].iter().enumerate() {
            let position = event.position as usize;
            if event.graph > 0 {
                let (states, events) = (&mut self.negations, self.events);
                let latest: Vec<Option<i64>> = states.iter().map(|s| s.latest).collect();
                let negation = event.graph as usize - 1;
                states[negation]
                    .compute(&kernel.negations[negation], from + i, position, events, |k| {
                        latest[k - 1]
                    })
                    .ok()?;
                continue;
            }
            if self.longer.is_some() {
                self.longer_step(from + i, position, time, &mut computed)?;
                continue;
            }
            if self.next.is_some() {
                let accs = if self.event_edges.is_some() {
                    self.event_predecessors(from + i, position, time)?
                } else if kernel.semantics == NEXT {
                    self.next_predecessors(position, time)
                } else {
                    self.contiguous_predecessors(position, time)
                };
                for (&c, acc) in self.classes.iter().zip(accs) {
                    let start = self.starts_at(position, c);
                    if let Some(agg) = kernel.extend(acc, event, position, start, self.scales, self.keeps_zero()) {
                        computed.push((from + i, position, c, agg));
                    }
                }
                continue;
            }
            if kernel.final_only[position] && self.zero.is_none() {
                // (read by nothing but `close`: no event of this time can see it, so no need to wait)
                self.add_to_finals(position);
                continue;
            }
            if kernel.edges_into[position].is_empty() {
                for &c in &self.classes {
                    let acc = self.predecessors(position, c);
                    let start = self.starts_at(position, c);
                    if let Some(agg) = self.extend_event(from + i, acc, position, start) {
                        computed.push((from + i, position, c, agg));
                    }
                }
                continue;
            }
            // Per class at once: an edge source evaluates its predicate once per pair of events.
            let mut accs: Vec<Agg> = self.classes.iter().map(|&c| self.predecessors(position, c)).collect();
            for &e in &kernel.edges_into[position] {
                let (edge, events) = (&kernel.edges[e], self.events);
                let crossing = edge.guard.as_ref().map(|g| g.at(|k| self.negations[k - 1].latest));
                self.sources[e]
                    .collect(
                        kernel,
                        edge,
                        event.fields(),
                        &self.classes,
                        crossing,
                        |j| events[j].fields(),
                        &mut accs,
                    )
                    .ok()?;
            }
            for (&c, acc) in self.classes.iter().zip(accs) {
                let start = self.starts_at(position, c);
                if let Some(agg) = self.extend_event(from + i, acc, position, start) {
                    computed.push((from + i, position, c, agg));
                }
            }
        }
        if self.next.is_some() {
            // CONT: an event sharing its time with another event of the sub-stream is never in a trend's
            // middle (Definition 2.4): it hands on only the trend it starts.
            let crowded = kernel.semantics == CONT
                && self.substream.partition_point(|&t| t <= time) - self.substream.partition_point(|&t| t < time) > 1;
            let onward: Vec<(usize, usize, usize, Agg)> = computed
                .iter()
                .filter_map(|(e, position, c, agg)| {
                    if !crowded {
                        return Some((*e, *position, *c, agg.clone()));
                    }
                    let start = self.starts_at(*position, *c);
                    kernel
                        .extend(kernel.zero(), &self.events[*e], *position, start, self.scales, false)
                        .map(|single| (*e, *position, *c, single))
                })
                .collect();
            let horizon = self.next.as_ref().map_or(0, |n| n.horizon);
            if let Some(longer) = self.longer.as_mut() {
                for (e, position, parts) in self.split.drain(..) {
                    if !parts.is_empty() {
                        longer.hold(kernel, e, self.events[e].raw, position, time, parts);
                    }
                }
                longer.settle(time.saturating_sub(horizon).saturating_add(1));
            } else if let Some(edges) = self.event_edges.as_mut() {
                // (`computed` holds each event's classes together, events in order)
                let mut onward = onward.into_iter().peekable();
                while let Some((e, position, c, agg)) = onward.next() {
                    let mut aggs = vec![(c, agg)];
                    while let Some((_, _, c, agg)) = onward.next_if(|o| o.0 == e) {
                        aggs.push((c, agg));
                    }
                    edges.hold(kernel, e, position, time, aggs);
                }
                // What no later event can follow: CONT, an event before this time (a later one's previous
                // time is this one or later); NEXT, one at or before time - horizon (no window in common).
                edges.settle(if kernel.semantics == CONT {
                    time
                } else {
                    time.saturating_sub(horizon).saturating_add(1)
                });
            } else {
                let next = self.next.as_mut().expect("NEXT or CONT state");
                for (position, reach) in next.pending.drain(..) {
                    next.latest[position] = Some((time, reach));
                }
                for (_, position, c, agg) in onward {
                    next.stored[position].push_back((time, c, agg));
                }
            }
        }
        // (after the starts above are decided: a NOT at this very time does not precede them)
        for (negation, state) in kernel.negations.iter().zip(&mut self.negations) {
            state.commit(negation, self.events);
        }
        for (event, position, c, agg) in computed.drain(..) {
            if self.event_edges.is_none() && self.longer.is_none() {
                self.feed_edges(event, position, c, &agg)?;
            }
            self.commit(position, c, time, agg);
        }
        self.computed = computed;
        Some(())
    }

    /// NEXT or CONT on an `event_grained` graph (`reach.rs`): the combined aggregate per class of
    /// `self.classes` of the predecessor events event i (at `position`, `time`) keeps an edge from. None: an
    /// edge predicate needs Python.
    fn event_predecessors(&mut self, i: usize, position: usize, time: i64) -> Option<Vec<Agg>> {
        let kernel = self.kernel;
        let since = if kernel.semantics == CONT {
            // (only the events at the sub-stream's last time before the event: none lies between)
            let k = self.substream.partition_point(|&t| t < time);
            if k == 0 {
                return Some(self.classes.iter().map(|_| kernel.zero()).collect());
            }
            self.substream[k - 1]
        } else {
            // (events at or before time - horizon share no window with it)
            time.saturating_sub(self.next.as_ref()?.horizon).saturating_add(1)
        };
        let negations = &self.negations;
        let edges = self.event_edges.as_mut()?;
        edges
            .predecessors(kernel, self.events, i, position, since, &self.classes, |k| {
                negations[k - 1].latest
            })
            .ok()
    }

    /// NEXT on a position template (`dominance.rs`): node i's aggregate per class and R; what no longer trend
    /// dominates goes into `computed` (the finals), every part waits in `split` to be held.
    fn longer_step(
        &mut self,
        i: usize,
        position: usize,
        time: i64,
        computed: &mut Vec<(usize, usize, usize, Agg)>,
    ) -> Option<()> {
        let kernel = self.kernel;
        let since = time.saturating_sub(self.next.as_ref()?.horizon).saturating_add(1);
        let starts: Vec<bool> = self.classes.iter().map(|&c| self.starts_at(position, c)).collect();
        let negations = &self.negations;
        let longer = self.longer.as_mut()?;
        let guard = |k: usize| negations[k - 1].latest;
        let parts = longer
            .predecessors(kernel, self.events, i, position, since, &self.classes, guard)
            .ok()?;
        // (with a trailing NOT, whether a longer trend drops a part is read at the window's end: `final_of`)
        let deferred = kernel.waits_for_ends() && kernel.is_end[position];
        let event = &self.events[i];
        let mut onward = Vec::new();
        for (k, &c) in self.classes.iter().enumerate() {
            let mut kept: Option<Agg> = None;
            for (r, accs) in &parts {
                let start = starts[k] && *r == 0;
                let Some(agg) = kernel.extend(accs[k].clone(), event, position, start, self.scales, false) else {
                    continue;
                };
                if deferred {
                    self.pending[kernel.end_slot[position]].entry(c).or_default().push((
                        time,
                        position,
                        *r,
                        agg.clone(),
                    ));
                } else if let Some(final_part) = kernel.undominated(position, *r, &agg, |p| kernel.accepts[p]) {
                    match kept.as_mut() {
                        Some(total) => kernel.add(total, &final_part),
                        None => kept = Some(final_part),
                    }
                }
                onward.push((c, *r, agg));
            }
            if let Some(agg) = kept {
                computed.push((i, position, c, agg));
            }
        }
        self.split.push((i, position, onward));
        Some(())
    }

    /// CONT: the combined aggregate per class of `self.classes` of the events at the sub-stream's last time
    /// before `time` at the predecessor positions of `position` (no event lies between them and the new one).
    fn contiguous_predecessors(&mut self, position: usize, time: i64) -> Vec<Agg> {
        let kernel = self.kernel;
        let mut accs: Vec<Agg> = self.classes.iter().map(|_| kernel.zero()).collect();
        let i = self.substream.partition_point(|&t| t < time);
        if i == 0 {
            return accs;
        }
        let before = self.substream[i - 1];
        let next = self.next.as_mut().expect("CONT state");
        for &t in &kernel.predecessors[position] {
            let stored = &mut next.stored[t];
            while stored.front().is_some_and(|&(u, _, _)| u < before) {
                stored.pop_front(); // (no later event can follow it contiguously)
            }
            for (u, c, agg) in stored.iter().rev() {
                if *u < before {
                    break;
                }
                if let Ok(k) = self.classes.binary_search(c) {
                    kernel.add(&mut accs[k], agg);
                }
            }
        }
        accs
    }

    /// NEXT (`NextState`): the combined aggregate per class of `self.classes` of the predecessors an event
    /// at `position` and `time` keeps an edge from; its reach waits in `pending` for the commit.
    fn next_predecessors(&mut self, position: usize, time: i64) -> Vec<Agg> {
        let kernel = self.kernel;
        let next = self.next.as_mut().expect("NEXT state");
        let n = kernel.types.len();
        let mut reach: Vec<Option<i64>> = vec![None; n];
        for &x in &kernel.predecessors[position] {
            if let Some((t, r)) = &next.latest[x] {
                reach[x] = reach[x].max(Some(*t));
                for s in 0..n {
                    reach[s] = reach[s].max(r[s]);
                }
            }
        }
        let mut accs: Vec<Agg> = self.classes.iter().map(|_| kernel.zero()).collect();
        for &t in &kernel.predecessors[position] {
            let bypass = kernel.successors[t].iter().filter_map(|&s| reach[s]).max();
            let stored = &mut next.stored[t];
            while stored.front().is_some_and(|&(u, _, _)| u <= time - next.horizon) {
                stored.pop_front();
            }
            for (u, c, agg) in stored.iter().rev() {
                if bypass.is_some_and(|w| *u < w) {
                    break;
                }
                if let Ok(i) = self.classes.binary_search(c) {
                    kernel.add(&mut accs[i], agg);
                }
            }
        }
        next.pending.push((position, reach));
        accs
    }

    /// Whether trends may start in the windows of class c: no leading negative match started in them
    /// (L < start(k) ⇔ L ≤ the time of the (c−1)-th event: L is an event's time, none lies in between).
    fn may_start(&self, c: usize) -> bool {
        if c == 0 && self.zero.as_ref().is_some_and(|z| !z.starts) {
            return false;
        }
        self.kernel.leading.iter().all(|&k| !self.matched_since(k, c))
    }

    /// Whether a match of negation k started in the windows of class c (before now).
    fn matched_since(&self, k: usize, c: usize) -> bool {
        self.negations[k - 1]
            .latest
            .is_some_and(|l| c == 0 || l > self.times[c - 1])
    }

    /// Whether an event at `position` starts trends in the windows of class c: a start position, where
    /// trends may start, and where the operands' own leading NOTs start at this position.
    fn starts_at(&self, position: usize, c: usize) -> bool {
        let kernel = self.kernel;
        kernel.is_start[position]
            && self.may_start(c)
            && kernel.start_guard[position]
                .as_ref()
                .is_none_or(|g| g.takes(|k| self.matched_since(k, c)))
    }

    /// A burst at once: per window class, the graphlet-level snapshot x (Definition 3.9: the predecessors'
    /// aggregate before the burst, plus one trend started per event at the start position) and the
    /// burst's total from the graphlet's coefficients (`Graphlet::total`). Its events lie in one pane, so
    /// they fall into the same windows: the same classes.
    fn apply_burst(&mut self, burst: &SharedBurst) -> Option<()> {
        let kernel = self.kernel;
        let time = self.times[burst.from];
        let first = &self.events[burst.from];
        let position = first.position as usize;
        let own = burst
            .graphlet
            .own(kernel, position, &self.events[burst.from..burst.to], self.scales);
        let classes = std::mem::take(&mut self.classes);
        let mut snapshots: Vec<Agg> = classes.iter().map(|&c| self.predecessors(position, c)).collect();
        for &e in &kernel.edges_into[position] {
            // (guarded only: `Graph::burst_position`)
            let (edge, events) = (&kernel.edges[e], self.events);
            let crossing = edge.guard.as_ref().map(|g| g.at(|k| self.negations[k - 1].latest));
            self.sources[e]
                .collect(
                    kernel,
                    edge,
                    first.fields(),
                    &classes,
                    crossing,
                    |j| events[j].fields(),
                    &mut snapshots,
                )
                .ok()?;
        }
        for (&c, mut x) in classes.iter().zip(snapshots) {
            if kernel.is_start[position] {
                x[0].add_assign(&Num::ONE);
            }
            if x[0].is_zero() {
                continue;
            }
            self.snapshots += 1;
            let total = burst.graphlet.total(kernel, x, &own);
            self.commit(position, c, time, total);
        }
        self.classes = classes;
        Some(())
    }

    /// An event at a `final_only` position in class c into the finals: its aggregate is its predecessors'
    /// (and one if it starts a trend), with no copy of them on the way. The predecessors' part waits in
    /// `ends` until their running totals change or a window closes (`settle_ends`).
    fn add_to_final(&mut self, position: usize, c: usize, start: bool) {
        if start {
            let kernel = self.kernel;
            let total = self.finals[kernel.end_slot[position]]
                .entry(c)
                .or_insert_with(|| kernel.zero());
            total[0].add_assign(&Num::ONE);
        }
        match self.ends.iter_mut().find(|(p, class, _)| *p == position && *class == c) {
            Some((_, _, n)) => *n += 1,
            None => self.ends.push((position, c, 1)),
        }
    }

    /// The waiting `ends` into the finals: all of them, or those of class c that read the running total of
    /// `source` (before a commit changes it).
    fn settle_ends(&mut self, changed: Option<(usize, usize)>) {
        let kernel = self.kernel;
        let settles = |position: usize, c: usize| {
            changed.is_none_or(|(source, class)| class == c && kernel.predecessors[position].contains(&source))
        };
        if !kernel.end_groups.is_empty() {
            for (g, c, m) in kernel.end_groups.common(&self.ends, settles) {
                let position = kernel.end_groups.positions[g][0];
                add_predecessors(kernel, &self.running, position, c, m, &mut self.common[g]);
                for end in self.ends.iter_mut() {
                    if end.1 == c && kernel.end_groups.of[end.0] == g {
                        end.2 -= m;
                    }
                }
            }
        }
        let mut k = 0;
        while k < self.ends.len() {
            let (position, c, n) = self.ends[k];
            if !settles(position, c) {
                k += 1;
                continue;
            }
            self.ends.swap_remove(k);
            if n > 0 {
                let finals = &mut self.finals[kernel.end_slot[position]];
                add_predecessors(kernel, &self.running, position, c, n, finals);
            }
        }
    }

    /// An event at a `feeds_only` position alone at its time, in every class of it: its aggregate is its
    /// predecessors' (and one if it starts a trend), t + o at a Kleene position (t its own running total, o
    /// the others'), o elsewhere; committed, t becomes 2t + o, or t + o. On a joint graph (`joint.rs`) only
    /// the blocks of the graphs in the event's `mask` see it: the others' events it is not.
    fn add_to_running(&mut self, position: usize, mask: Option<u64>) {
        let kernel = self.kernel;
        let kleene = kernel.predecessors[position].contains(&position);
        // (on the stack: this runs once per event that feeds running totals)
        let ranges: SmallVec<[std::ops::Range<usize>; 4]> = match (&self.blocks, mask) {
            (Some(blocks), Some(mask)) => (0..blocks.graphs.len())
                .filter(|b| mask >> b & 1 == 1)
                .map(|b| blocks.offsets[b]..blocks.offsets[b] + blocks.widths[b])
                .collect(),
            _ => smallvec::smallvec![0..kernel.kinds.len()],
        };
        let classes = std::mem::take(&mut self.classes);
        for &c in &classes {
            if !self.ends.is_empty() && kernel.end_groups.read(position) {
                self.settle_ends(Some((position, c)));
            }
            let start = self.starts_at(position, c);
            // (t out of its map while the others are added to it where they lie: no copy of theirs)
            let mut total = self.running[position].remove(&c);
            let others: SmallVec<[&Agg; 4]> = kernel.predecessors[position]
                .iter()
                .filter(|&&s| s != position)
                .filter_map(|&s| self.running[s].get(&c))
                .collect();
            // (a total is there only where trends end: none came, none is made)
            if total.is_none() && !start && !ranges.iter().any(|r| others.iter().any(|o| !o[r.start].is_zero())) {
                continue;
            }
            let t = total.get_or_insert_with(|| kernel.zero());
            for range in &ranges {
                for f in range.clone() {
                    let kind = kernel.kinds[f];
                    let linear = kind != MIN && kind != MAX;
                    if kleene && linear {
                        t[f].double();
                    }
                    for o in &others {
                        if linear {
                            t[f].add_assign(&o[f]);
                        } else {
                            extreme(kind, &mut t[f], &o[f]);
                        }
                    }
                }
                if start {
                    t[range.start].add_assign(&Num::ONE);
                }
            }
            drop(others); // (its borrow of the running totals ends here, before t goes back among them)
            if let Some(t) = total {
                self.running[position].insert(c, t);
            }
        }
        self.classes = classes;
    }

    /// An event at a `final_only` position into the finals of every class of its time.
    fn add_to_finals(&mut self, position: usize) {
        let classes = std::mem::take(&mut self.classes);
        for &c in &classes {
            self.add_to_final(position, c, self.starts_at(position, c));
        }
        self.classes = classes;
    }

    /// Event i's aggregate in class c into the sources of the edges out of its position.
    fn feed_edges(&mut self, i: usize, position: usize, c: usize, agg: &Agg) -> Option<()> {
        let kernel = self.kernel;
        for &e in &kernel.edges_from[position] {
            self.sources[e]
                .insert(kernel, &kernel.edges[e], &self.events[i], i, c, agg)
                .ok()?;
        }
        Some(())
    }

    /// An aggregate in class c into the running totals and the finals.
    fn commit(&mut self, position: usize, c: usize, time: i64, agg: Agg) {
        let kernel = self.kernel;
        if kernel.is_source[position] {
            if !self.ends.is_empty() && kernel.end_groups.read(position) {
                self.settle_ends(Some((position, c)));
            }
            match self.running[position].get_mut(&c) {
                Some(total) => kernel.add(total, &agg),
                None => {
                    self.running[position].insert(c, agg.clone());
                }
            }
        }
        if !kernel.is_end[position] {
            return;
        }
        let slot = kernel.end_slot[position];
        if kernel.waits_for_ends() {
            self.pending[slot].entry(c).or_default().push((time, position, 0, agg));
            return;
        }
        match self.finals[slot].get_mut(&c) {
            Some(total) => kernel.add(total, &agg),
            None => {
                self.finals[slot].insert(c, agg);
            }
        }
    }

    /// `TrendGraph.close_runs` over the member's open windows up to `last_closing`.
    fn close(&mut self, m: usize, last_closing: i64) {
        self.settle_ends(None);
        let member = self.kernel.members[m];
        while let Some(&(first, last)) = self.open[m].front() {
            if first > last_closing {
                break;
            }
            let through = last.min(last_closing);
            let mut k = first;
            while k <= through {
                let (c, class_through) = self.class_of(&member, k);
                let run_through = through.min(class_through);
                if let Some(agg) = self.final_of(self.kernel.member_slot[m], c) {
                    self.out.push((m, k, run_through, agg));
                }
                k = run_through + 1;
            }
            if through == last {
                self.open[m].pop_front();
            } else {
                self.open[m][0].0 = through + 1;
            }
        }
        self.next_close[m] = self.open[m].front().map(|&(first, _)| member.end(first));
    }

    /// The final of class c at end slot `slot` now (None: no trend), with a trailing NOT the END
    /// contributions that no negated event follows.
    fn final_of(&self, slot: usize, c: usize) -> Option<Agg> {
        let kernel = self.kernel;
        if !kernel.waits_for_ends() {
            let mut out = self.finals[slot].get(&c).cloned();
            for &(g, times) in kernel.end_groups.slots.get(slot).into_iter().flatten() {
                if let Some(common) = self.common[g].get(&c) {
                    kernel.add_times(out.get_or_insert_with(|| kernel.zero()), common, times);
                }
            }
            return out;
        }
        let latest = |k: &usize| self.negations[k - 1].latest;
        let limit = kernel.trailing.iter().map(latest).max().flatten();
        let by_operand: Vec<Option<i64>> = kernel
            .operand_trailing
            .iter()
            .map(|ks| ks.iter().map(latest).max().flatten())
            .collect();
        // The operands a trend ending at position p at `time` ends: those whose own trailing NOTs have no
        // match after it.
        let ends_at = |p: usize, time: i64| -> u64 {
            (0..u64::BITS as usize)
                .filter(|&o| {
                    kernel.accepts[p] >> o & 1 == 1 && by_operand.get(o).is_none_or(|l| l.is_none_or(|l| time >= l))
                })
                .fold(0, |m, o| m | 1 << o)
        };
        let mut result: Option<Agg> = None;
        for &(time, position, r, ref agg) in self.pending[slot].get(&c)? {
            if limit.is_some_and(|l| time < l) {
                continue;
            }
            if ends_at(position, time) == 0 {
                continue;
            }
            // (under NEXT, what a longer trend drops, deferred to the window's end: `longer_step`)
            let part = kernel.undominated(position, r, agg, |p| ends_at(p, time));
            match (result.as_mut(), part) {
                (_, None) => {}
                (Some(total), Some(part)) => kernel.add(total, &part),
                (None, part) => result = part,
            }
        }
        result
    }
}

/// n times the running totals of `position`'s predecessors in class c into `into`'s aggregate of class c (none
/// made where no total is there: a running total is there only where trends end, extend drops a zero count).
fn add_predecessors(
    kernel: &Graph,
    running: &[HashMap<usize, Agg>],
    position: usize,
    c: usize,
    n: u64,
    into: &mut HashMap<usize, Agg>,
) {
    let mut totals = kernel.predecessors[position]
        .iter()
        .filter_map(|&s| running[s].get(&c))
        .peekable();
    if totals.peek().is_none() {
        return;
    }
    let total = into.entry(c).or_insert_with(|| kernel.zero());
    for running in totals {
        kernel.add_times(total, running, n);
    }
}

/// The attributes the predicates of the edges `into` and `from` one position read, into `out`.
fn edge_attributes(edges: &[Edge], into: &[usize], from: &[usize], out: &mut Vec<usize>) {
    for &e in into.iter().chain(from) {
        edges[e].predicates.iter().for_each(|p| p.attributes(out));
    }
}

/// x = min(x, y) for MIN, max(x, y) for MAX (order keys: always i128).
pub fn extreme(kind: u8, x: &mut Num, y: &Num) {
    if let (Some(a), Some(b)) = (x.small(), y.small()) {
        *x = Num::from(if kind == MIN { a.min(b) } else { a.max(b) });
    }
}

pub fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

/// Per node of a directed graph (`next[v]`: the nodes v has an arc to), whether it lies on a cycle: in a
/// strongly connected component of two or more nodes, or with an arc to itself (Tarjan's algorithm, with an
/// explicit stack: a pattern may have thousands of positions).
pub fn on_cycles(next: &[Vec<usize>]) -> Vec<bool> {
    let n = next.len();
    let (mut index, mut low) = (vec![usize::MAX; n], vec![0; n]);
    let (mut on_stack, mut stack, mut cyclic) = (vec![false; n], Vec::new(), vec![false; n]);
    let mut counter = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0)]; // (node, its next arc to follow)
        (index[root], low[root], counter) = (counter, counter, counter + 1);
        stack.push(root);
        on_stack[root] = true;
        while let Some(&(v, i)) = work.last() {
            if let Some(&w) = next[v].get(i) {
                work.last_mut().expect("the node visited").1 += 1;
                if index[w] == usize::MAX {
                    (index[w], low[w], counter) = (counter, counter, counter + 1);
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(u, _)) = work.last() {
                low[u] = low[u].min(low[v]);
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                let cycle = component.len() > 1 || next[v].contains(&v);
                component.into_iter().for_each(|w| cyclic[w] = cycle);
            }
        }
    }
    cyclic
}

#[cfg(test)]
mod tests {
    use super::on_cycles;

    #[test]
    fn finds_the_nodes_on_cycles() {
        // SEQ(A, B+, C) as predecessors: B's loop only
        assert_eq!(on_cycles(&[vec![], vec![0, 1], vec![1]]), [false, true, false]);
        // (SEQ(A+, B))+: A → A, A → B, B → A; then C after B
        assert_eq!(on_cycles(&[vec![0, 1], vec![0], vec![1]]), [true, true, false]);
        // a ring of three beside a chain, visited from the chain's end first
        let ring = [vec![], vec![0], vec![1], vec![5, 2], vec![3], vec![4]];
        assert_eq!(on_cycles(&ring), [false, false, false, true, true, true]);
        // a chain of 100,000 nodes: no recursion to overflow, nothing on a cycle
        let chain: Vec<Vec<usize>> = (0..100_000)
            .map(|v| if v == 0 { vec![] } else { vec![v - 1] })
            .collect();
        assert!(on_cycles(&chain).iter().all(|&c| !c));
    }
}
