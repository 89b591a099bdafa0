//! Skip-till-next-match on a position template (dissertation §2.4, Definition 2.3, on §12's templates):
//! the same computation as Python's `hamlet/runtime/dominance.py`, whose module doc derives it.
//!
//! A trend is dropped for a longer trend with the same first and last events that holds its events and
//! more. On a position template that longer trend may stand at other states than the shorter one, so no
//! edge tells (`reach.rs`'s transitive reduction does not apply). Per partial trend T ending at node
//! (v, t) — an event at a state — the kernel keeps R, the states of v's type at which a longer trend T'
//! with the same first event (at least one event more so far) may stand at v, as a bitset over the ranks
//! of the type's places. Along T's edge (u, s) → (v, t):
//!
//!   R_v = { t' : (u, s') has a path of one edge or more to (v, t') for some s' in R_u,
//!                or (u, s) has a path of two edges or more to (v, t') }
//!
//! with R empty where T starts. T is a NEXT trend iff R at its last event holds no end state. Each node's
//! aggregate is split by R (`Node::parts`): the finals take the parts whose R holds no end state, every
//! part goes on. Paths are read off each node's reach (the nodes with a path of one edge or more to it,
//! `reach::Reach`); the union of its predecessors' reaches holds those with a path of two or more.
//!
//! Cost per event: for each state of its type, every predecessor node in the window horizon (an edge
//! predicate evaluated per candidate) and a union of W/64 words per candidate; per candidate and part, a
//! few word operations per state of the candidate's type. Memory: W nodes of the horizon with a reach of
//! up to W/64 words each, as `reach.rs`.

use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;

use crate::graph::{Agg, Event, Graph};
use crate::reach::{take_reach, Reach};

/// A node's aggregate per (window class, R).
pub type Parts = Vec<(usize, u64, Agg)>;

/// A held node: an event at a state a transition leaves, with its aggregate per (window class, R).
struct Node {
    time: i64,
    index: usize, // among the graph's events: its fields, for the edge predicates
    raw: usize,   // the stream event it places
    parts: Parts,
    number: usize,
    reach: Reach,
}

/// One node of the event being computed (one per state of its type): its predecessor nodes as (position,
/// slot in `held`), its reach, and the reach of two edges or more.
struct Sibling {
    found: Vec<(usize, usize)>,
    reach: Reach,
    longer: Reach,
}

/// The NEXT state of one partition's graph on a position template.
pub struct LongerTrends {
    held: Vec<VecDeque<Node>>,       // per position a transition leaves: its nodes, in time order
    numbers: VecDeque<(i64, usize)>, // (time, number) of the held nodes, for the reach's base
    numbered: usize,                 // numbers handed out so far
    node: HashMap<(usize, usize), usize>, // (stream event, position) → number of the held node
    rank: Vec<usize>,                // per position: its index among its type's places
    siblings: Vec<Sibling>,          // of the stream event `current`
    current: Option<usize>,
    reaches: VecDeque<(usize, Reach)>, // (node, reach) of one timestamp's nodes, until held
}

impl LongerTrends {
    pub fn new(graph: &Graph) -> LongerTrends {
        let n = graph.types.len();
        let rank = (0..n)
            .map(|p| {
                graph.places[p]
                    .iter()
                    .position(|&q| q == p)
                    .expect("a place of its type")
            })
            .collect();
        LongerTrends {
            held: (0..n).map(|_| VecDeque::new()).collect(),
            numbers: VecDeque::new(),
            numbered: 0,
            node: HashMap::default(),
            rank,
            siblings: Vec::new(),
            current: None,
            reaches: VecDeque::new(),
        }
    }

    /// Node `i`'s predecessors' aggregates, summed per R (first R = 0, always there) and per class of
    /// `classes`; held nodes before `since` (out of the horizon) are dropped first. The nodes of one stream
    /// event come one after the other, its first place first. Err: an edge predicate needs Python.
    #[allow(clippy::too_many_arguments)]
    pub fn predecessors(
        &mut self,
        graph: &Graph,
        events: &[Event],
        i: usize,
        position: usize,
        since: i64,
        classes: &[usize],
        guard: impl Fn(usize) -> Option<i64>,
    ) -> Result<Vec<(u64, Vec<Agg>)>, ()> {
        if self.current != Some(events[i].raw) {
            self.current = Some(events[i].raw);
            self.siblings_of(graph, events, i - self.rank[position], position, since, guard)?;
        }
        let v = self.rank[position];
        self.reaches.push_back((i, self.siblings[v].reach.clone()));
        let zeros = || classes.iter().map(|_| graph.zero()).collect::<Vec<Agg>>();
        let mut parts: Vec<(u64, Vec<Agg>)> = vec![(0, zeros())];
        for &(source, slot) in &self.siblings[v].found {
            let u = &self.held[source][slot];
            // Per place of u's type (by rank): the places of v's type its node at that place has a path of
            // one edge or more to; and those u's own node has a path of two or more to.
            let mut two = 0u64;
            for (r, s) in self.siblings.iter().enumerate() {
                if s.longer.has(u.number) {
                    two |= 1 << r;
                }
            }
            let one: Vec<u64> = graph.places[source]
                .iter()
                .map(|&p| {
                    self.node.get(&(u.raw, p)).map_or(0, |&n| {
                        self.siblings
                            .iter()
                            .enumerate()
                            .filter(|(_, s)| s.reach.has(n))
                            .fold(0, |m, (r, _)| m | 1 << r)
                    })
                })
                .collect();
            for (c, r, agg) in &u.parts {
                let Ok(k) = classes.binary_search(c) else { continue };
                let mut moved = two;
                let mut bits = *r;
                while bits != 0 {
                    moved |= one[bits.trailing_zeros() as usize];
                    bits &= bits - 1;
                }
                let at = match parts.iter().position(|(m, _)| *m == moved) {
                    Some(at) => at,
                    None => {
                        parts.push((moved, zeros()));
                        parts.len() - 1
                    }
                };
                graph.add(&mut parts[at].1[k], agg);
            }
        }
        Ok(parts)
    }

    /// The predecessor nodes and reaches of every node of the stream event whose first node is `first`;
    /// `guard(k)`: L of negation k (a NOT between two parts guards the transitions across it).
    fn siblings_of(
        &mut self,
        graph: &Graph,
        events: &[Event],
        first: usize,
        position: usize,
        since: i64,
        guard: impl Fn(usize) -> Option<i64>,
    ) -> Result<(), ()> {
        while self.numbers.front().is_some_and(|&(t, _)| t < since) {
            self.numbers.pop_front();
        }
        let base = self.numbers.front().map_or(self.numbered, |&(_, n)| n);
        self.siblings.clear();
        for (offset, &p) in graph.places[position].iter().enumerate() {
            let y = events[first + offset].fields();
            let mut found = Vec::new();
            let plain = graph.predecessors[p].iter().map(|&t| (t, None));
            let guarded = graph.edges_into[p]
                .iter()
                .map(|&e| (graph.edges[e].source, Some(&graph.edges[e])));
            for (source, edge) in plain.chain(guarded) {
                let held = &mut self.held[source];
                while let Some(old) = held.front().filter(|h| h.time < since) {
                    self.node.remove(&(old.raw, source));
                    held.pop_front();
                }
                let crossing = edge.and_then(|e| e.guard.as_ref()).map(|g| g.at(&guard));
                for (slot, h) in held.iter().enumerate() {
                    if crossing.is_some_and(|g| !g.admits(h.time)) {
                        continue; // (the NOTs between them send a trend elsewhere)
                    }
                    if let Some(edge) = edge {
                        if !edge.holds(events[h.index].fields(), y)? {
                            continue;
                        }
                    }
                    found.push((source, slot));
                }
            }
            let (mut reach, mut longer) = (Reach::starting(base), Reach::starting(base));
            for &(source, slot) in &found {
                let h = &self.held[source][slot];
                longer.union(&h.reach);
                reach.union(&h.reach);
                reach.insert(h.number);
            }
            reach.trim();
            self.siblings.push(Sibling { found, reach, longer });
        }
        Ok(())
    }

    /// After the nodes of one timestamp: node `i` (at `position`, `time`, placing stream event `raw`) is held
    /// with its parts (not empty), if a transition leaves its position. Nodes come in the order
    /// `predecessors` saw them.
    pub fn hold(&mut self, graph: &Graph, i: usize, raw: usize, position: usize, time: i64, parts: Parts) {
        let reach = take_reach(&mut self.reaches, i);
        if !graph.is_source[position] && graph.edges_from[position].is_empty() {
            return;
        }
        let number = self.numbered;
        self.numbered += 1;
        self.numbers.push_back((time, number));
        self.node.insert((raw, position), number);
        self.held[position].push_back(Node {
            time,
            index: i,
            raw,
            parts,
            number,
            reach,
        });
    }

    /// The end of a timestamp: every held node before `since` is dropped (no later event shares a window
    /// with it).
    pub fn settle(&mut self, since: i64) {
        self.reaches.clear();
        self.current = None;
        for (position, held) in self.held.iter_mut().enumerate() {
            while let Some(old) = held.front().filter(|h| h.time < since) {
                self.node.remove(&(old.raw, position));
                held.pop_front();
            }
        }
        while self.numbers.front().is_some_and(|&(t, _)| t < since) {
            self.numbers.pop_front();
        }
    }
}
