//! The source of a transition that one NOT guards and nothing else (GRETA §5.2; `automaton.Guard` with one
//! negation): x may precede y only where x.time ≥ L (no match of the NOT between them), or, on a position
//! template, only where x.time < L (one parse crosses a NOT that matched: `SEQ(A+, NOT C, A)`). L, the
//! latest start of the NOT's matches, never decreases, and events come in time order, so per window class
//! the events split at L into a prefix that only grows and a suffix that only loses its oldest: the prefix
//! is one running aggregate, the suffix a queue whose total is kept by two stacks (amortised O(1) per event
//! for MIN and MAX too, which cannot be subtracted). Python's `QueueSource` is the suffix half.

use crate::edges::combine;
use crate::graph::{Agg, Graph};

/// Per window class: the events before L (combined) and those at or after it (a queue).
#[derive(Default)]
pub struct Crossed {
    before: Option<Agg>,
    front: Vec<(i64, Agg, Agg)>, // the oldest last: its time, its aggregate, and that combined with those under it
    back: Vec<(i64, Agg)>,       // the newest last, as inserted
    back_total: Option<Agg>,
}

impl Crossed {
    pub fn push(&mut self, graph: &Graph, time: i64, agg: &Agg) {
        combine(graph, &mut self.back_total, agg);
        self.back.push((time, agg.clone()));
    }

    /// Move the events before `limit` (L) from the queue to the prefix.
    pub fn advance(&mut self, graph: &Graph, limit: Option<i64>) {
        let Some(limit) = limit else { return };
        loop {
            if self.front.is_empty() {
                if self.back.first().is_none_or(|&(time, _)| time >= limit) {
                    return;
                }
                self.refill(graph);
            }
            match self.front.pop() {
                Some((time, agg, _)) if time < limit => combine(graph, &mut self.before, &agg),
                Some(kept) => {
                    self.front.push(kept);
                    return;
                }
                None => return,
            }
        }
    }

    fn refill(&mut self, graph: &Graph) {
        let mut total: Option<Agg> = None;
        for (time, agg) in self.back.drain(..).rev() {
            combine(graph, &mut total, &agg);
            self.front.push((time, agg, total.clone().expect("just combined")));
        }
        self.back_total = None;
    }

    /// Add the combined aggregate of the events at or after L (`suffix`) or before it to `out`.
    pub fn add_to(&self, graph: &Graph, suffix: bool, out: &mut Agg) {
        let parts = if suffix {
            [self.front.last().map(|(_, _, total)| total), self.back_total.as_ref()]
        } else {
            [self.before.as_ref(), None]
        };
        for part in parts.into_iter().flatten() {
            graph.add(out, part);
        }
    }
}
