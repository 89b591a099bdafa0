//! HAMLET's shared graphlet (§3.3): a burst of events of one Kleene type E, propagated once for every query
//! that shares it, in coefficients of the graphlet-level snapshot x (Definition 3.9).
//!
//! Inside a burst, an event's predecessors are x (everything before the burst, per query and window) and
//! the burst's earlier events; events of one timestamp never precede each other. So with m_g events in the
//! g-th timestamp of the burst, each of them ends x·P_g trends, P_g = Π_{h<g} (1 + m_h) (Table 3 of the
//! paper: x, 2x, 4x, 8x), and the burst adds x·C trends, C = P_{m+1} − 1 (15x there). C depends only on
//! which events the sharers match, so it is computed once for all of them; per query and window only x
//! and the commit are left (Table 4).
//!
//! The other aggregates follow the same recurrence. A linear field f (COUNT(E), SUM(E.a), ...) inherits
//! x_f through the burst and every event adds its weight w(e) per trend ending at it, so the burst adds
//! x_f·C + x·U, U = Σ_g W_g·P_g·Π_{h>g}(1 + m_h) with W_g the weights of group g: `own`. MIN/MAX take the
//! extreme of x_f and of the burst's values, since every event of the burst ends a trend once x > 0.

use crate::graph::{extreme, Agg, Event, Graph, MAX, MIN};
use crate::num::Num;
use crate::values::Scale;

pub struct Graphlet {
    sizes: Vec<usize>, // m_g: the matched events per timestamp, in time order
    trends: Num,       // C
}

impl Graphlet {
    /// The graphlet of the burst events at `times` (ascending) that its sharers match. Events of one time do
    /// not precede one another, nor do any two of a type without E → E (`Graph::linked`): their burst comes
    /// as one time, C = b.
    pub fn new(times: &[i64]) -> Graphlet {
        let mut sizes = Vec::new();
        let mut i = 0;
        while i < times.len() {
            let j = i + times[i..].iter().take_while(|&&t| t == times[i]).count();
            sizes.push(j - i);
            i = j;
        }
        let mut product = Num::ONE;
        for &m in &sizes {
            product = product.mul(&Num::from(1 + m as i128));
        }
        product.sub_assign(&Num::ONE);
        Graphlet { sizes, trends: product }
    }

    /// Per field a graph updates at `position`: U for a linear field, the extreme for MIN/MAX (None: no
    /// value), over the graph's `events` of the burst (those the graphlet was made of).
    pub fn own(
        &self,
        graph: &Graph,
        position: usize,
        events: &[Event],
        scales: &[Scale],
    ) -> Vec<(usize, u8, Option<Num>)> {
        let mut out = Vec::new();
        for u in &graph.updates[position] {
            if u.kind == MIN || u.kind == MAX {
                let mut found: Option<Num> = None;
                for e in events {
                    if let Some(w) = graph.weight(u, e.values(), scales) {
                        match found.as_mut() {
                            Some(x) => extreme(u.kind, x, &w),
                            None => found = Some(w),
                        }
                    }
                }
                out.push((u.field, u.kind, found));
                continue;
            }
            let (mut own, mut product, mut i) = (Num::ZERO, Num::ONE, 0);
            for &m in &self.sizes {
                let mut weights = Num::ZERO;
                for e in &events[i..i + m] {
                    if let Some(w) = graph.weight(u, e.values(), scales) {
                        weights.add_assign(&w);
                    }
                }
                let factor = Num::from(1 + m as i128);
                own = own.mul(&factor);
                own.add_assign(&weights.mul(&product));
                product = product.mul(&factor);
                i += m;
            }
            out.push((u.field, u.kind, Some(own)));
        }
        out
    }

    /// What the burst adds to a query's aggregate in one window, from its snapshot `x` (x[0] counts the
    /// trends the burst's events extend or start) and the graph's `own` coefficients.
    ///
    /// x is the snapshot, as long as the counts (thousands of digits): it is scaled by C where it lies (C is
    /// one word for any burst of fewer than 64 timestamps, and 1 for a single one, which leaves x as it is),
    /// and its count is copied only when a linear field of the graph needs it for x·U.
    pub fn total(&self, graph: &Graph, mut x: Agg, own: &[(usize, u8, Option<Num>)]) -> Agg {
        let linear = |kind: u8| kind != MIN && kind != MAX;
        let count = own
            .iter()
            .any(|(_, kind, value)| value.is_some() && linear(*kind))
            .then(|| x[0].clone());
        if self.trends != Num::ONE {
            for (xf, &kind) in x.iter_mut().zip(&graph.kinds) {
                if linear(kind) {
                    xf.mul_assign(&self.trends);
                }
            }
        }
        for (field, kind, value) in own {
            let Some(value) = value else { continue };
            if !linear(*kind) {
                extreme(*kind, &mut x[*field], value);
            } else if let Some(count) = &count {
                x[*field].add_assign(&count.mul(value));
            }
        }
        x
    }
}
