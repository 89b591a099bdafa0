//! HAMLET's per-partition decision, compiled: what the shared path would save on a stream partition
//! (`SharingPlan.segment_readers` weighed by `CostModel.saved_steps`, in `hamlet/runtime/shared.py` and
//! `hamlet/optimizer/benefit.py`). The decision is read for every partition, and most partitions (a trip of a
//! few events) never pay for sharing; in Python the scan cost more than running their graphs.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use std::collections::HashMap;

use crate::events::micros;

/// Who reads a type in one layout: (queries that apply its bursts at once on their own graph, members of
/// shape groups that read it, windows those reads update per event, queries that read it on a compiled
/// graph in the non-shared plan).
type Readers = (i64, i64, i64, i64);

/// The segment costs of one `Layout` (a set of queries that can match in a partition).
#[pyclass(frozen, module = "hamlet_native")]
pub struct SegmentCosts {
    types: HashMap<String, usize>, // the layout's types and those queries share, numbered
    readers: Vec<Option<Readers>>, // per number
    shared: Vec<bool>,             // per number: a Kleene type two or more queries share
    pane: i64,
    burst_break_even: f64,
    group_event: f64,
}

#[pymethods]
impl SegmentCosts {
    /// `readers`: per type the layout reads, its `Readers`; `sharers`: the Kleene types queries share;
    /// `pane`: the pane in whole microseconds (the engine's times: `events::micros`); the model's `burst_break_even` and `group_event`.
    #[new]
    fn new(
        readers: HashMap<String, Readers>,
        sharers: Vec<String>,
        pane: i64,
        burst_break_even: f64,
        group_event: f64,
    ) -> PyResult<Self> {
        if pane <= 0 {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "pane: a positive number of microseconds",
            ));
        }
        let mut costs = SegmentCosts {
            types: HashMap::new(),
            readers: Vec::new(),
            shared: Vec::new(),
            pane,
            burst_break_even,
            group_event,
        };
        for (t, r) in readers {
            let i = costs.number(&t);
            costs.readers[i] = Some(r);
        }
        for t in sharers {
            let i = costs.number(&t);
            costs.shared[i] = true;
        }
        Ok(costs)
    }

    /// (GRETA steps the shared path saves on the partition against GRETA's graphs in Python, summed over
    /// its segments in order as Python sums them; the steps of those segments on compiled graphs; bursts of
    /// a type queries share), or None when an event's time is not one the engine takes (`events::micros`)
    /// or its type not a string: Python weighs it. `events`: one stream partition, sorted by time.
    fn saved(&self, py: Python<'_>, events: &Bound<'_, PyList>) -> PyResult<Option<(f64, i64, usize)>> {
        let (type_name, time_name) = (pyo3::intern!(py, "type"), pyo3::intern!(py, "time"));
        let mut others: HashMap<String, usize> = HashMap::new(); // types no query of the layout reads
        let mut read = Vec::with_capacity(events.len());
        for event in events.iter() {
            let kind = event.getattr(type_name)?;
            let Ok(kind) = kind.cast::<PyString>() else {
                return Ok(None);
            };
            let kind = kind.to_str()?;
            let number = match self.types.get(kind) {
                Some(&i) => i,
                None => {
                    let next = self.readers.len() + others.len();
                    *others.entry(kind.to_owned()).or_insert(next)
                }
            };
            let Some(time) = micros(&event.getattr(time_name)?) else {
                return Ok(None);
            };
            read.push((time, number));
        }
        Ok(Some(self.weigh(&read)))
    }
}

impl SegmentCosts {
    fn number(&mut self, t: &str) -> usize {
        let next = self.readers.len();
        let i = *self.types.entry(t.to_owned()).or_insert(next);
        if i == next {
            self.readers.push(None);
            self.shared.push(false);
        }
        i
    }

    /// `CostModel.saved_steps` of a segment of `b` events that `readers` read.
    fn saved_steps(&self, b: i64, (alone, members, windows, _): Readers) -> f64 {
        let saved = (members * b) as f64 - self.group_event * windows as f64;
        if b > 1 {
            saved + alone as f64 * (b as f64 - self.burst_break_even)
        } else {
            saved
        }
    }

    /// The segments of `shared._spans` (bursts: maximal runs of timestamps of one type within one pane;
    /// a timestamp of several types on its own, each event a segment), weighed.
    fn weigh(&self, events: &[(i64, usize)]) -> (f64, i64, usize) {
        let (mut saved, mut compiled, mut bursts) = (0.0, 0, 0);
        let mut burst = |kind: usize, b: usize, saved: &mut f64, compiled: &mut i64| {
            bursts += usize::from(self.shared.get(kind).copied().unwrap_or(false));
            if let Some(Some(r)) = self.readers.get(kind) {
                *saved += self.saved_steps(b as i64, *r);
                *compiled += b as i64 * r.3;
            }
        };
        let mut open: Option<(usize, i64, usize)> = None; // the burst being read: type, pane, first event
        let (mut i, n) = (0, events.len());
        while i < n {
            let (time, kind) = events[i];
            let mut j = i + 1;
            let mut mixed = false;
            while j < n && events[j].0 == time {
                mixed |= events[j].1 != kind;
                j += 1;
            }
            if mixed {
                if let Some((t, _, start)) = open.take() {
                    burst(t, i - start, &mut saved, &mut compiled);
                }
                for &(_, k) in &events[i..j] {
                    if let Some(Some((_, members, windows, readers))) = self.readers.get(k) {
                        saved += self.saved_steps(1, (0, *members, *windows, *readers));
                        compiled += *readers;
                    }
                }
            } else {
                let pane = time.div_euclid(self.pane);
                if !matches!(open, Some((t, p, _)) if t == kind && p == pane) {
                    if let Some((t, _, start)) = open.take() {
                        burst(t, i - start, &mut saved, &mut compiled);
                    }
                    open = Some((kind, pane, i));
                }
            }
            i = j;
        }
        if let Some((t, _, start)) = open {
            burst(t, n - start, &mut saved, &mut compiled);
        }
        (saved, compiled, bursts)
    }
}
