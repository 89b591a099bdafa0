//! GRETA's trend graph of one stream partition: the same computation as
//! `hamlet.runtime.greta.run_partition` (`QueryRun` over one `TrendGraph`) for the graphs it accepts.
//!
//! Events are vertices, edges are never stored: an event's aggregate per window class is the sum of the
//! running totals of its predecessor types in that class, extended by the event itself (graph.py). A
//! window class c holds the windows whose start has c events before it; they all see the same events.

use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyTuple};
use std::collections::{HashMap, VecDeque};

use crate::events::RawEvent;
use crate::values::{key_float, order_key, summand, Scale, Value, FLOAT_SCALE_BITS};

pub const TRENDS: u8 = 0;
pub const COUNT: u8 = 1;
pub const SUM: u8 = 2;
pub const NONNULL: u8 = 3;
pub const FLOATS: u8 = 4;
pub const MIN: u8 = 5;
pub const MAX: u8 = 6;

/// No window class starts after this one (`WindowClasses.class_of` of the windows after every event).
const AFTER_ALL: i64 = 1 << 62;

pub type Agg = Vec<i128>;

/// One field of the aggregate vector an event of a position updates.
#[derive(Clone, Copy)]
pub struct Update {
    pub field: usize,
    pub kind: u8,
    pub attribute: usize, // index into the graph's attributes (usize::MAX for COUNT)
    pub scaled: bool,     // a sum kept in Python in units of 2^-1074 (its attribute holds floats)
}

/// One query's windows: [k·slide, k·slide + within) for k in [first, last].
#[derive(Clone, Copy)]
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

/// What an event is to a graph: an event of a template position, or of the trailing negated type.
#[derive(Clone, Copy, PartialEq)]
pub enum Role {
    Position(usize),
    Negated,
}

pub struct Event {
    position: Option<usize>, // None: the trailing negated type
    time: i64,
    values: Vec<Option<Value>>, // the graph's attributes, for events of positions that aggregate them
}

/// The graph of one pattern (`hamlet.runtime.partition.graph_key`) for the queries that share it.
pub struct Graph {
    pub types: Vec<String>, // by position
    pub negated: Option<String>,
    pub start: usize,
    pub end: usize,
    pub predecessors: Vec<Vec<usize>>,
    pub is_source: Vec<bool>,
    pub kinds: Vec<u8>,
    pub updates: Vec<Vec<Update>>,
    pub attributes: Vec<String>,
    pub count_only: bool,
    pub members: Vec<Member>,
}

impl Graph {
    /// The graph's events among `raw` (those at `indexes`, in time order), `roles` by the raw events'
    /// type numbers, the graph's attribute i at `attribute_at[i]` of theirs; and per attribute what its
    /// values are. None if the partition is Python's (a value the kernel cannot sum or compare exactly).
    pub fn events(
        &self,
        raw: &[RawEvent],
        indexes: &[usize],
        roles: &[Option<Role>],
        attribute_at: &[usize],
    ) -> Option<(Vec<Event>, Vec<Scale>)> {
        let mut out = Vec::with_capacity(indexes.len());
        let mut scales = vec![Scale::default(); self.attributes.len()];
        for &i in indexes {
            let e = &raw[i];
            let Some(role) = roles[e.kind] else { continue };
            let Role::Position(p) = role else {
                out.push(Event {
                    position: None,
                    time: e.time,
                    values: Vec::new(),
                });
                continue;
            };
            let mut values = Vec::new();
            if !self.updates[p].is_empty() {
                values = vec![None; self.attributes.len()];
                for u in &self.updates[p] {
                    if u.attribute == usize::MAX {
                        continue;
                    }
                    let value = e.values[attribute_at[u.attribute]].number().ok()?;
                    if let Some(v) = value {
                        scales[u.attribute].add(v);
                    }
                    values[u.attribute] = value;
                }
            }
            out.push(Event {
                position: Some(p),
                time: e.time,
                values,
            });
        }
        for u in self.updates.iter().flatten() {
            let scale = scales.get(u.attribute).copied().unwrap_or_default();
            let mixed = (u.kind == MIN || u.kind == MAX) && scale.ints && scale.floats;
            if mixed || (u.kind == SUM && scale.floats && !u.scaled) || scale.exponent > FLOAT_SCALE_BITS {
                return None;
            }
        }
        Some((out, scales))
    }

    /// Whether a window of some member contains a time in [first, last] (`GraphGroup.has_windows`).
    pub fn has_windows(&self, first: i64, last: i64) -> bool {
        self.members.iter().any(|m| m.indexes(first).0 < m.indexes(last).1)
    }

    /// The aggregate as the Python algebra holds it: an int (COUNT(*) only) or a tuple, sums over floats in
    /// units of 2^-1074, MIN/MAX over floats as floats.
    pub fn to_python<'py>(&self, py: Python<'py>, agg: &Agg, scales: &[Scale]) -> PyResult<Bound<'py, PyAny>> {
        if self.count_only {
            return Ok(agg[0].into_pyobject(py)?.into_any());
        }
        let mut items: Vec<Bound<'py, PyAny>> = (0..agg.len()).map(|_| py.None().into_bound(py)).collect();
        items[0] = agg[0].into_pyobject(py)?.into_any();
        for u in self.updates.iter().flatten() {
            let v = agg[u.field];
            let scale = scales.get(u.attribute).copied().unwrap_or_default();
            items[u.field] = match u.kind {
                MIN if v == i128::MAX => continue,
                MAX if v == i128::MIN => continue,
                MIN | MAX if scale.floats => PyFloat::new(py, key_float(v)).into_any(),
                SUM if u.scaled => v.into_pyobject(py)?.lshift(FLOAT_SCALE_BITS - scale.exponent)?,
                _ => v.into_pyobject(py)?.into_any(),
            };
        }
        Ok(PyTuple::new(py, items)?.into_any())
    }

    fn zero(&self) -> Agg {
        self.kinds
            .iter()
            .map(|&k| match k {
                MIN => i128::MAX,
                MAX => i128::MIN,
                _ => 0,
            })
            .collect()
    }

    /// a += b; false on overflow.
    pub fn add(&self, a: &mut Agg, b: &Agg) -> bool {
        for ((x, &y), &kind) in a.iter_mut().zip(b).zip(&self.kinds) {
            match kind {
                MIN => *x = (*x).min(y),
                MAX => *x = (*x).max(y),
                _ => match x.checked_add(y) {
                    Some(v) => *x = v,
                    None => return false,
                },
            }
        }
        true
    }

    /// `VectorAlgebra.extend`: the aggregate of the trends ending at the event. Ok(None): no trend ends
    /// there; Err(()): overflow.
    fn extend(&self, mut acc: Agg, event: &Event, position: usize, scales: &[Scale]) -> Result<Option<Agg>, ()> {
        let count = if position == self.start {
            acc[0].checked_add(1).ok_or(())?
        } else {
            acc[0]
        };
        if count == 0 {
            return Ok(None);
        }
        acc[0] = count;
        for u in &self.updates[position] {
            let slot = &mut acc[u.field];
            if u.kind == COUNT {
                *slot = slot.checked_add(count).ok_or(())?;
                continue;
            }
            let Some(value) = event.values[u.attribute] else {
                continue;
            };
            match u.kind {
                SUM => {
                    let exponent = if u.scaled { scales[u.attribute].exponent } else { 0 };
                    let added = summand(value, exponent).ok_or(())?.checked_mul(count).ok_or(())?;
                    *slot = slot.checked_add(added).ok_or(())?;
                }
                NONNULL => *slot = slot.checked_add(count).ok_or(())?,
                FLOATS if matches!(value, Value::Float(_)) => *slot = slot.checked_add(count).ok_or(())?,
                MIN => *slot = (*slot).min(order_key(value)),
                MAX => *slot = (*slot).max(order_key(value)),
                _ => {}
            }
        }
        Ok(Some(acc))
    }
}

/// The state of one partition's graph (`QueryRun` with one `TrendGraph`).
pub struct Partition<'a> {
    kernel: &'a Graph,
    events: &'a [Event],
    scales: &'a [Scale],
    times: Vec<i64>,
    running: Vec<HashMap<usize, Agg>>, // per source position: running totals per class
    finals: HashMap<usize, Agg>,
    pending: HashMap<usize, Vec<(i64, Agg)>>, // with a trailing NOT: END contributions, read at close
    latest_negated: Option<i64>,              // L: the latest time of a negated event
    open: Vec<VecDeque<(i64, i64)>>,          // per member: open windows as runs [first, last]
    next_close: Vec<Option<i64>>,
    out: Vec<(usize, i64, i64, Agg)>,
}

impl<'a> Partition<'a> {
    pub fn new(kernel: &'a Graph, events: &'a [Event], scales: &'a [Scale]) -> Self {
        let members = kernel.members.len();
        Partition {
            kernel,
            events,
            scales,
            times: events.iter().map(|e| e.time).collect(),
            running: vec![HashMap::new(); kernel.predecessors.len()],
            finals: HashMap::new(),
            pending: HashMap::new(),
            latest_negated: None,
            open: vec![VecDeque::new(); members],
            next_close: vec![None; members],
            out: Vec::new(),
        }
    }

    pub fn run(mut self) -> Option<Vec<(usize, i64, i64, Agg)>> {
        let mut i = 0;
        while i < self.events.len() {
            let time = self.times[i];
            let mut j = i + 1;
            while j < self.events.len() && self.times[j] == time {
                j += 1;
            }
            self.advance(time)?;
            self.step(i, j)?;
            i = j;
        }
        for m in 0..self.kernel.members.len() {
            if let Some(&(_, last)) = self.open[m].back() {
                self.close(m, last)?;
            }
        }
        Some(self.out)
    }

    /// `QueryRun.advance_runs`: close the windows that end by `time`, open those that hold it.
    fn advance(&mut self, time: i64) -> Option<()> {
        for m in 0..self.kernel.members.len() {
            if matches!(self.next_close[m], Some(end) if time >= end) {
                let member = self.kernel.members[m];
                self.close(m, (time - member.within).div_euclid(member.slide))?;
            }
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
        Some(())
    }

    fn class_of(&self, member: &Member, k: i64) -> (usize, i64) {
        let c = self.times.partition_point(|&t| t < k * member.slide);
        let through = if c < self.times.len() {
            self.times[c].div_euclid(member.slide)
        } else {
            AFTER_ALL
        };
        (c, through)
    }

    /// `TrendGraph.windows`: the classes of the windows (of every member) that contain `time`, ascending.
    fn classes(&self, time: i64) -> Vec<usize> {
        let mut out = Vec::new();
        for member in &self.kernel.members {
            let (mut k, stop) = member.indexes(time);
            while k < stop {
                let (c, through) = self.class_of(member, k);
                out.push(c);
                if c >= self.times.len() {
                    break;
                }
                k = through + 1;
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// `QueryRun.step`: the events of one timestamp computed on what is committed, then committed.
    fn step(&mut self, from: usize, to: usize) -> Option<()> {
        let kernel = self.kernel;
        let classes = self.classes(self.times[from]);
        let mut computed: Vec<(usize, usize, Agg)> = Vec::new();
        for e in from..to {
            let event = &self.events[e];
            let Some(position) = event.position else { continue };
            for &c in &classes {
                let mut acc = kernel.zero();
                for &source in &kernel.predecessors[position] {
                    if let Some(total) = self.running[source].get(&c) {
                        if !kernel.add(&mut acc, total) {
                            return None;
                        }
                    }
                }
                if let Some(agg) = kernel.extend(acc, event, position, self.scales).ok()? {
                    computed.push((position, c, agg));
                }
            }
        }
        for e in from..to {
            if self.events[e].position.is_none() {
                self.latest_negated = Some(self.latest_negated.map_or(self.times[e], |l| l.max(self.times[e])));
            }
        }
        let time = self.times[from];
        for (position, c, agg) in computed {
            if kernel.is_source[position] {
                match self.running[position].get_mut(&c) {
                    Some(total) => {
                        if !kernel.add(total, &agg) {
                            return None;
                        }
                    }
                    None => {
                        self.running[position].insert(c, agg.clone());
                    }
                }
            }
            if position != kernel.end {
                continue;
            }
            if kernel.negated.is_some() {
                self.pending.entry(c).or_default().push((time, agg));
                continue;
            }
            match self.finals.get_mut(&c) {
                Some(total) => {
                    if !kernel.add(total, &agg) {
                        return None;
                    }
                }
                None => {
                    self.finals.insert(c, agg);
                }
            }
        }
        Some(())
    }

    /// `TrendGraph.close_runs` over the member's open windows up to `last_closing`; None on overflow.
    fn close(&mut self, m: usize, last_closing: i64) -> Option<()> {
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
                if let Some(agg) = self.final_of(c)? {
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
        Some(())
    }

    /// The final of class c now (Some(None): no trend), with a trailing NOT the END contributions that no
    /// negated event follows; None on overflow.
    fn final_of(&self, c: usize) -> Option<Option<Agg>> {
        if self.kernel.negated.is_none() {
            return Some(self.finals.get(&c).cloned());
        }
        let limit = self.latest_negated;
        let mut result: Option<Agg> = None;
        let Some(pending) = self.pending.get(&c) else {
            return Some(None);
        };
        for (time, agg) in pending {
            if limit.is_some_and(|l| *time < l) {
                continue;
            }
            match result.as_mut() {
                Some(total) => {
                    if !self.kernel.add(total, agg) {
                        return None;
                    }
                }
                None => result = Some(agg.clone()),
            }
        }
        Some(result)
    }
}
