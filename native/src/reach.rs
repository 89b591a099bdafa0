//! Skip-till-next-match and contiguous semantics event by event (dissertation §2.4, Definitions 2.3 and
//! 2.4), for graphs whose edges depend on the events themselves: an edge predicate (`A.x < NEXT(B).x`,
//! `P.price < NEXT(P).price`) or a NOT between two types guards a transition (`edges.rs`, `negation.rs`).
//! Python's `graph.SemanticsEdges` computes the same, and the tests hold the two to each other and to the
//! brute-force enumerator. Graphs without either keep the position-grained `graph::NextState`, whose
//! reachability depends on positions and times alone.
//!
//! GRETA's graph G has an edge u → v when u may immediately precede v in a trend: a transition from u's
//! position to v's, u.time < v.time, the transition's edge predicates hold for (u, v), and no match of a
//! NOT guarding it lies between them (u.time ≥ that negation's L when v arrives). Its edges do not depend
//! on the window: whatever a path from u to v passes lies between them in time.
//!
//! * NEXT keeps a trend unless a longer trend has the same first and last events and a superset of its
//!   middle events. Such a trend replaces an edge u → v of the shorter one by a path of two or more edges,
//!   so the NEXT trends are the paths of G's transitive reduction: u → v is kept iff u reaches none of v's
//!   other predecessors. Each held event keeps its reach, the numbers of the events with a path to it, as
//!   a bitset (`Reach`). A new event v takes its candidates (every held predecessor event: G's edges into
//!   it) from the latest back: a candidate that the reach gathered so far holds is bypassed; one it does not
//!   hold is kept, and its reach and itself join the gathered reach. A candidate's reach holds only
//!   earlier events, and a bypassed candidate's reach lies within that of the kept one bypassing it, so the
//!   gathered reach is at last v's own.
//! * CONT keeps a NEXT trend unless an event of the partition's sub-stream lies strictly between its first
//!   and last times, so v's predecessors are the held events at the sub-stream's last time before v's (no
//!   event lies between them: no longer path can bypass such an edge), filtered by the edge predicates and
//!   the guard. No reach is kept.
//!
//! Memory is bounded by the window horizon, as in Python: events at or before `time - longest WITHIN`
//! share no window with a new event and are dropped, with their reach. Only events at positions some
//! transition leaves are held, and numbered (a sliding numbering: a reach's words start at the word of the
//! oldest number still in the horizon when it was made, so older bits are never stored).
//!
//! Cost, with W the held events within one horizon and c the candidates of an event (W at most): per event
//! c predicate evaluations (a scan, as `edges::Source::Scan` under skip-till-any-match), a sort of the c
//! candidates by time (merging per-position runs), one bit test per candidate and one union of W/64 words
//! per kept predecessor (a reach is cut after its last set word, so a start event's costs nothing). Memory:
//! W reaches of at most W/64 words each, W²/8 bytes in the worst case (10,000 events in a horizon: 12.5 MB;
//! a chain `A.x < NEXT(A).x` of rising values fills them). CONT needs O(1) words per held event and reads
//! one timestamp's events per event.

use std::collections::VecDeque;

use crate::graph::{Agg, Event, Graph};

/// A set of event numbers as a bitset: bit n % 64 of word n / 64 − `base`.
#[derive(Default, Clone, Debug, PartialEq)]
pub struct Reach {
    base: usize,
    words: Vec<u64>,
}

impl Reach {
    /// An empty set that will hold numbers from `lowest` on (lower ones it ignores).
    pub fn starting(lowest: usize) -> Reach {
        Reach {
            base: lowest / 64,
            words: Vec::new(),
        }
    }

    pub fn has(&self, n: usize) -> bool {
        let w = n / 64;
        w >= self.base
            && self
                .words
                .get(w - self.base)
                .is_some_and(|word| word >> (n % 64) & 1 == 1)
    }

    pub fn insert(&mut self, n: usize) {
        let w = n / 64;
        if w < self.base {
            return;
        }
        let at = w - self.base;
        if at >= self.words.len() {
            self.words.resize(at + 1, 0);
        }
        self.words[at] |= 1 << (n % 64);
    }

    /// self ∪= other, but for the numbers below self's base (out of the horizon).
    pub fn union(&mut self, other: &Reach) {
        let skip = self.base.saturating_sub(other.base);
        let offset = other.base + skip - self.base; // where other's first kept word lands in self
        let words = other.words.get(skip..).unwrap_or(&[]);
        let Some(last) = words.iter().rposition(|&w| w != 0) else {
            return;
        };
        if offset + last >= self.words.len() {
            self.words.resize(offset + last + 1, 0);
        }
        for (mine, &theirs) in self.words[offset..].iter_mut().zip(&words[..=last]) {
            *mine |= theirs;
        }
    }

    /// Drop the trailing empty words (a reach is kept per held event).
    pub fn trim(&mut self) {
        let len = self.words.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1);
        self.words.truncate(len);
        self.words.shrink_to_fit();
    }
}

/// An event a later one may follow: its time, index among the partition's events (its fields, for the
/// edge predicates), what it hands on per window class, and under NEXT its number and reach.
struct Held {
    time: i64,
    index: usize,
    aggs: Vec<(usize, Agg)>,
    number: usize,
    reach: Reach,
}

/// The event-grained NEXT or CONT state of one partition's graph.
pub struct EventEdges {
    next: bool,                        // NEXT (reach kept), else CONT
    held: Vec<VecDeque<Held>>,         // per position a transition leaves: its events, in time order
    numbers: VecDeque<(i64, usize)>,   // NEXT: (time, number) of the held events, for the reach's base
    numbered: usize,                   // NEXT: numbers handed out so far
    reaches: VecDeque<(usize, Reach)>, // NEXT: (event, reach) of one timestamp's events, until held
    found: Vec<(i64, usize, usize)>,   // scratch: (time, position, slot in `held`) of the candidates
}

impl EventEdges {
    pub fn new(graph: &Graph, next: bool) -> EventEdges {
        EventEdges {
            next,
            held: (0..graph.types.len()).map(|_| VecDeque::new()).collect(),
            numbers: VecDeque::new(),
            numbered: 0,
            reaches: VecDeque::new(),
            found: Vec::new(),
        }
    }

    /// The combined aggregate, per class of `classes`, of the predecessor events event `i` (at `position`)
    /// keeps an edge from; held events before `since` are dropped first (NEXT: out of the horizon; CONT:
    /// before the sub-stream's previous time, so that only that time's are left). `guard(k)`: L of
    /// negation k. Under NEXT the event's reach waits for `hold`. Err: an edge predicate needs Python.
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
    ) -> Result<Vec<Agg>, ()> {
        let y = events[i].fields();
        let mut accs: Vec<Agg> = classes.iter().map(|_| graph.zero()).collect();
        let mut found = std::mem::take(&mut self.found);
        found.clear();
        let plain = graph.predecessors[position].iter().map(|&t| (t, None));
        let guarded = graph.edges_into[position]
            .iter()
            .map(|&e| (graph.edges[e].source, Some(&graph.edges[e])));
        for (source, edge) in plain.chain(guarded) {
            let held = &mut self.held[source];
            while held.front().is_some_and(|h| h.time < since) {
                held.pop_front();
            }
            let crossing = edge.and_then(|e| e.guard.as_ref()).map(|g| g.at(&guard));
            // (newest first: the sort below then merges runs)
            for (slot, h) in held.iter().enumerate().rev() {
                if let Some(crossing) = crossing.filter(|g| !g.admits(h.time)) {
                    if crossing.closes() {
                        break; // (and every earlier one)
                    }
                    continue;
                }
                if let Some(edge) = edge {
                    if !edge.holds(events[h.index].fields(), y)? {
                        continue;
                    }
                }
                found.push((h.time, source, slot));
            }
        }
        let add = |accs: &mut [Agg], h: &Held| {
            for (c, agg) in &h.aggs {
                if let Ok(k) = classes.binary_search(c) {
                    graph.add(&mut accs[k], agg);
                }
            }
        };
        if !self.next {
            for &(_, source, slot) in &found {
                add(&mut accs, &self.held[source][slot]);
            }
            self.found = found;
            return Ok(accs);
        }
        found.sort_by_key(|f| std::cmp::Reverse(f.0)); // latest first: whatever bypasses one comes before it
        while self.numbers.front().is_some_and(|&(t, _)| t < since) {
            self.numbers.pop_front();
        }
        let mut reach = Reach::starting(self.numbers.front().map_or(self.numbered, |&(_, n)| n));
        for &(_, source, slot) in &found {
            let h = &self.held[source][slot];
            if reach.has(h.number) {
                continue; // a longer path bypasses its edge
            }
            add(&mut accs, h);
            reach.union(&h.reach);
            reach.insert(h.number);
        }
        reach.trim();
        self.reaches.push_back((i, reach));
        self.found = found;
        Ok(accs)
    }

    /// After the events of one timestamp: event `i` (at `position`, `time`) is held with what it hands on
    /// per class (`aggs`, not empty), if a transition leaves its position. Events come in the order
    /// `predecessors` saw them (ascending `i`).
    pub fn hold(&mut self, graph: &Graph, i: usize, position: usize, time: i64, aggs: Vec<(usize, Agg)>) {
        let reach = take_reach(&mut self.reaches, i);
        if !graph.is_source[position] && graph.edges_from[position].is_empty() {
            return;
        }
        let number = self.numbered;
        if self.next {
            self.numbered += 1;
            self.numbers.push_back((time, number));
        }
        self.held[position].push_back(Held {
            time,
            index: i,
            aggs,
            number,
            reach,
        });
    }

    /// The end of a timestamp: what `predecessors` left for `hold` is dropped, and every held event before
    /// `since`, which no later event may follow (memory stays bounded by the horizon, whatever positions
    /// later events take).
    pub fn settle(&mut self, since: i64) {
        self.reaches.clear();
        for held in &mut self.held {
            while held.front().is_some_and(|h| h.time < since) {
                held.pop_front();
            }
        }
        while self.numbers.front().is_some_and(|&(t, _)| t < since) {
            self.numbers.pop_front();
        }
    }
}

/// Event `i`'s reach from the (event, reach) queue of one timestamp, dropping those of earlier events (which
/// were not held); empty if it has none.
pub fn take_reach(reaches: &mut VecDeque<(usize, Reach)>, i: usize) -> Reach {
    while let Some((e, _)) = reaches.front() {
        if *e > i {
            break;
        }
        let (e, r) = reaches.pop_front().expect("a front");
        if e == i {
            return r;
        }
    }
    Reach::default()
}

#[cfg(test)]
mod tests {
    use super::Reach;

    #[test]
    fn a_reach_holds_what_it_gathers_from_its_base_on() {
        let mut a = Reach::starting(0);
        a.insert(3);
        a.insert(130);
        let mut b = Reach::starting(64); // (a later event: numbers below 64 left the horizon)
        b.insert(70);
        b.union(&a);
        assert!(b.has(70) && b.has(130) && !b.has(3) && !b.has(71));
        let mut c = Reach::starting(200);
        c.union(&b);
        assert!(!c.has(130));
        c.trim();
        assert_eq!(c, Reach::starting(200));
    }
}
