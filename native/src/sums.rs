//! A graph's finals summed over the stream partitions of each group (`aggregates.WindowSums` in Python),
//! so that a partition's runs of windows never become Python objects.
//!
//! As in Python, a linear aggregate (no MIN/MAX) adds a run of windows at its first window and subtracts it
//! after its last: per (member, group) the changes of the sum at each window, which Python prefix-sums at
//! the end with its unbounded ints. With MIN/MAX, each window of a run is summed on its own.
//!
//! What a partition brings is added whole or not at all: when the sums could not hold it exactly (a MIN/MAX
//! attribute that held ints before and floats now), `add` declines and the caller hands the partition's
//! runs to Python as before. A sum over floats is kept in units of 2^-E, E the finest
//! any partition so far needed; a partition that needs a finer unit rescales what is summed.

use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap as HashMap;

use crate::graph::{Agg, Graph, MAX, MIN, SUM};
use crate::num::Num;
use crate::values::Scale;

/// (member, first window, last window, final): one run of a partition's graph (`Partition::run`).
pub type Run = (usize, i64, i64, Agg);

pub struct GraphSums {
    linear: bool,
    summed: Vec<bool>,  // per attribute: some sum in units of 2^-E reads it
    scaled: Vec<usize>, // per field: the attribute of a sum kept in units of 2^-E, usize::MAX for others
    scales: Vec<Scale>, // per attribute: what the summed partitions held, E of the unit of its sums
    series: HashMap<(usize, usize), HashMap<i64, Agg>>, // (member, group) → window → change or sum
}

/// What `prepare` computed and `commit` adds: per attribute how much finer the unit of the sums becomes
/// (None: no finer), the partition's contributions per (member, group) and window in that unit, and the
/// partition's scales.
pub struct Changes {
    finer: Option<Vec<u32>>,
    entries: Vec<((usize, usize), i64, Agg)>,
    scales: Vec<Scale>,
}

impl GraphSums {
    pub fn new(graph: &Graph) -> GraphSums {
        let mut summed = vec![false; graph.attributes.len()];
        let mut scaled = vec![usize::MAX; graph.kinds.len()];
        for u in graph.updates.iter().flatten() {
            if u.kind == SUM && u.scaled {
                scaled[u.field] = u.attribute;
                summed[u.attribute] = true;
            }
        }
        GraphSums {
            linear: !graph.kinds.iter().any(|&k| k == MIN || k == MAX),
            summed,
            scaled,
            scales: vec![Scale::default(); graph.attributes.len()],
            series: HashMap::default(),
        }
    }

    /// Sum a partition's `runs`, its values being `scales`, member m's group `group_of(m)`; false (nothing
    /// summed) when the sums cannot hold them exactly.
    pub fn add(&mut self, graph: &Graph, runs: &[Run], scales: &[Scale], group_of: impl Fn(usize) -> usize) -> bool {
        match self.prepare(graph, runs, scales, group_of) {
            Some(changes) => {
                self.commit(graph, changes);
                true
            }
            None => false,
        }
    }

    /// What `add` would add, computed without touching the sums (so that the caller can add a partition
    /// to several graphs' sums all or nothing); None if the sums cannot hold it exactly.
    pub fn prepare(
        &self,
        graph: &Graph,
        runs: &[Run],
        scales: &[Scale],
        group_of: impl Fn(usize) -> usize,
    ) -> Option<Changes> {
        let mut finer = vec![0u32; self.scales.len()]; // per attribute: how much finer the unit becomes
        let mut coarser = vec![0u32; self.scales.len()]; // how much finer than the partition's it is
        for (a, (summed, new)) in self.scales.iter().zip(scales).enumerate() {
            if self.summed[a] {
                let exponent = summed.exponent.max(new.exponent);
                finer[a] = exponent - summed.exponent;
                coarser[a] = exponent - new.exponent;
            }
        }
        // The partition's contributions per (member, window), in the unit of the sums.
        let mut local: HashMap<(usize, i64), Agg> = HashMap::default();
        for (member, first, last, agg) in runs {
            let agg = rescaled(&self.scaled, agg, &coarser);
            if self.linear {
                let negated = agg.iter().map(Num::neg).collect::<Agg>();
                accumulate(graph, &mut local, (*member, *first), agg);
                accumulate(graph, &mut local, (*member, last + 1), negated);
            } else {
                for k in *first..=*last {
                    accumulate(graph, &mut local, (*member, k), agg.clone());
                }
            }
        }
        let entries = local
            .into_iter()
            .map(|((member, k), agg)| ((member, group_of(member)), k, agg))
            .collect();
        let finer = finer.iter().any(|&f| f > 0).then_some(finer);
        Some(Changes {
            finer,
            entries,
            scales: scales.to_vec(),
        })
    }

    pub fn commit(&mut self, graph: &Graph, changes: Changes) {
        if let Some(finer) = &changes.finer {
            for windows in self.series.values_mut() {
                for agg in windows.values_mut() {
                    *agg = rescaled(&self.scaled, agg, finer);
                }
            }
        }
        for (key, k, agg) in changes.entries {
            match self.series.entry(key).or_default().entry(k) {
                Entry::Occupied(mut sum) => graph.add(sum.get_mut(), &agg),
                Entry::Vacant(slot) => {
                    slot.insert(agg);
                }
            }
        }
        for (summed, new) in self.scales.iter_mut().zip(&changes.scales) {
            summed.exponent = summed.exponent.max(new.exponent);
        }
    }

    /// The exponent E of the unit 2^-E field `field`'s sums are kept in (0 for every field but a sum over
    /// floats).
    pub fn field_unit(&self, field: usize) -> u32 {
        match self.scaled[field] {
            usize::MAX => 0,
            a => self.scales[a].exponent,
        }
    }

    /// Every (member, group, windows as (k, change or sum)) summed so far; the unit of the float sums is
    /// `scales()`'s.
    pub fn series(&self) -> impl Iterator<Item = (usize, usize, &HashMap<i64, Agg>)> {
        self.series
            .iter()
            .map(|(&(member, group), windows)| (member, group, windows))
    }

    pub fn scales(&self) -> &[Scale] {
        &self.scales
    }

    pub fn is_linear(&self) -> bool {
        self.linear
    }
}

/// `agg` with each float sum (`scaled`: per field, the attribute of a sum in units of 2^-E) shifted to a
/// unit 2^`by[attribute]` times finer.
fn rescaled(scaled: &[usize], agg: &Agg, by: &[u32]) -> Agg {
    let mut out = agg.clone();
    for (field, &a) in scaled.iter().enumerate() {
        if a != usize::MAX && by[a] > 0 {
            out[field] = out[field].shl(by[a]);
        }
    }
    out
}

/// local[key] += agg (MIN/MAX fields by their extreme).
fn accumulate(graph: &Graph, local: &mut HashMap<(usize, i64), Agg>, key: (usize, i64), agg: Agg) {
    match local.get_mut(&key) {
        Some(total) => graph.add(total, &agg),
        None => {
            local.insert(key, agg);
        }
    }
}
