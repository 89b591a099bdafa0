//! Negative sub-patterns (GRETA §5; `hamlet/runtime/graph.py` in Python): `NOT N` is matched on a graph of
//! its own, whose aggregate is no count but the latest start of a partial match of N ending at an event
//! (`LatestStartAlgebra`). It needs no windows: its graph only hands its parent L, the latest start of a
//! match of N completed so far, which the parent reads as a threshold:
//!
//! * middle `SEQ(P1, NOT N, P2)`: an end(P1) event x may precede a start(P2) event only if x.time ≥ L
//!   (the transition is a guarded `edges::Edge`, answered by a scan that skips what L excludes);
//! * leading `SEQ(NOT N, P)`: a start event starts trends in window class c only if L < the window's start;
//! * trailing `SEQ(P, NOT N)`: an end event counts in a window only if its time ≥ L at the window's end.
//!
//! A negative sub-pattern may hold middle negations of its own, guarding its transitions the same way. Optional
//! parts (`P?`, `P*`) give it several start and end types (`NOT SEQ(C?, D)`: a match starts at a C or a D):
//! every start position starts a match at its event's time, every end position completes one, as in
//! `graph.py`'s `LatestStartAlgebra`. L is the latest start of any match, whichever its first and last types.

use crate::edges::Edge;
use crate::graph::Event;

/// The template of one negative sub-pattern; `parent` is 0 for the query's positive pattern, else the
/// number (from 1) of the negation it lies in.
#[derive(Clone)]
pub struct Negation {
    pub types: Vec<String>,
    pub is_start: Vec<bool>,           // per position: a match may start there
    pub is_end: Vec<bool>,             // per position: a match may end there
    pub predecessors: Vec<Vec<usize>>, // per position: the sources of its transitions without predicates
    pub is_source: Vec<bool>,
    pub edges: Vec<Edge>, // transitions with edge predicates or guarded by a negation of this one
    pub edges_into: Vec<Vec<usize>>,
    pub edges_from: Vec<Vec<usize>>,
    pub parent: usize,
    pub previous: Option<usize>,  // the parent's position before the NOT (None: leading)
    pub following: Option<usize>, // the parent's position after it (None: trailing)
}

/// A negative sub-pattern's graph over one partition.
pub struct NegationState {
    running: Vec<Option<i64>>,           // per position: the latest start over its events so far
    stored: Vec<Vec<(usize, i64, i64)>>, // per edge: (event, time, latest start) of its source's events
    pub latest: Option<i64>,             // L: the latest start of a completed match
    computed: Vec<(usize, usize, i64)>,  // (event, position, latest start) of one timestamp
}

impl NegationState {
    pub fn new(negation: &Negation) -> NegationState {
        NegationState {
            running: vec![None; negation.types.len()],
            stored: vec![Vec::new(); negation.edges.len()],
            latest: None,
            computed: Vec::new(),
        }
    }

    /// The latest start of the partial matches ending at event `i` (at `position`), from what is
    /// committed; `latest_of(k)`: L of negation k (for guarded transitions). Err: a predicate needs Python.
    pub fn compute(
        &mut self,
        negation: &Negation,
        i: usize,
        position: usize,
        events: &[Event],
        latest_of: impl Fn(usize) -> Option<i64>,
    ) -> Result<(), ()> {
        let event = &events[i];
        let mut acc: Option<i64> = None;
        for &s in &negation.predecessors[position] {
            acc = acc.max(self.running[s]);
        }
        for &e in &negation.edges_into[position] {
            let edge = &negation.edges[e];
            let crossing = edge.guard.as_ref().map(|g| g.at(&latest_of));
            for &(j, time, latest) in &self.stored[e] {
                if crossing.is_some_and(|g| !g.admits(time)) || !edge.holds(events[j].fields(), event.fields())? {
                    continue;
                }
                acc = acc.max(Some(latest));
            }
        }
        if negation.is_start[position] {
            acc = acc.max(Some(event.time));
        }
        if let Some(latest) = acc {
            self.computed.push((i, position, latest));
        }
        Ok(())
    }

    /// Commit what `compute` found for one timestamp.
    pub fn commit(&mut self, negation: &Negation, events: &[Event]) {
        for (i, position, latest) in self.computed.drain(..) {
            if negation.is_source[position] {
                self.running[position] = self.running[position].max(Some(latest));
            }
            for &e in &negation.edges_from[position] {
                self.stored[e].push((i, events[i].time, latest));
            }
            if negation.is_end[position] {
                self.latest = self.latest.max(Some(latest));
            }
        }
    }
}
