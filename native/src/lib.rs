//! GRETA's trend graph of one stream partition, compiled: the same computation as
//! `hamlet.runtime.greta.run_partition` for the graphs it accepts (`hamlet/runtime/native.py` says which),
//! with the same output: per query (member) the runs of windows that close with the same final aggregate.
//!
//! Events are vertices, edges are never stored: an event's aggregate per window class is the sum of the
//! running totals of its predecessor types in that class, extended by the event itself (graph.py). A
//! window class c holds the windows whose start has c events before it; they all see the same events.
//!
//! Arithmetic is exact or not done at all: counts and sums are i128 with checked operations. A sum over an
//! attribute that holds floats is kept, as Python keeps it, as a whole number of units, here of 2^-E with
//! E the finest any value of the partition needs (Python: 2^-1074), and scaled to Python's units on the way
//! out. MIN and MAX compare ints as ints and floats by an order-preserving key. Anything else (an int
//! beyond 64 bits, ints and floats under one MIN, a NaN, an overflow, a time that is not an int) makes
//! `run` return None, and the caller runs the partition on the Python engine.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use std::collections::{HashMap, VecDeque};

const TRENDS: u8 = 0;
const COUNT: u8 = 1;
const SUM: u8 = 2;
const NONNULL: u8 = 3;
const FLOATS: u8 = 4;
const MIN: u8 = 5;
const MAX: u8 = 6;

/// Python's unit of a sum over floats is 2^-1074 (`aggregates.FLOAT_SCALE_BITS`).
const FLOAT_SCALE_BITS: u32 = 1074;

/// No window class starts after this one (`WindowClasses.class_of` of the windows after every event).
const AFTER_ALL: i64 = 1 << 62;

type Agg = Vec<i128>;

#[derive(Clone, Copy)]
enum Value {
    Int(i64),
    Float(f64), // finite, not -0.0 (Python's MIN/MAX keeps the first of 0.0 and -0.0; keys would not)
}

/// An exact float as m·2^e with m odd (or zero).
fn decompose(x: f64) -> (i64, i32) {
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let fraction = (bits & ((1 << 52) - 1)) as i64;
    let (mut m, mut e) = if exponent == 0 { (fraction, -1074) } else { (fraction | (1 << 52), exponent - 1075) };
    if m == 0 {
        return (0, 0);
    }
    let zeros = m.trailing_zeros();
    m >>= zeros;
    e += zeros as i32;
    (if x < 0.0 { -m } else { m }, e)
}

/// The order of floats as i64 (for MIN/MAX): the bits, negative ones flipped.
fn float_key(x: f64) -> i128 {
    let bits = x.to_bits() as i64;
    (if bits < 0 { bits ^ i64::MAX } else { bits }) as i128
}

fn key_float(key: i128) -> f64 {
    let key = key as i64;
    f64::from_bits((if key < 0 { key ^ i64::MAX } else { key }) as u64)
}

/// What one partition's values of an attribute are: ints, floats, and the exponent E of the unit 2^-E in
/// which every value is whole.
#[derive(Clone, Copy, Default)]
struct Scale {
    ints: bool,
    floats: bool,
    exponent: u32,
}

/// A value in units of 2^-exponent; None when it does not fit.
fn summand(value: Value, exponent: u32) -> Option<i128> {
    let (m, shift) = match value {
        Value::Int(v) => (v as i128, exponent as i32),
        Value::Float(x) => {
            let (m, e) = decompose(x);
            (m as i128, e + exponent as i32)
        }
    };
    if !(0..=126).contains(&shift) {
        return None;
    }
    m.checked_mul(1i128 << shift)
}
/// One field of the aggregate vector an event of a position updates.
#[derive(Clone, Copy)]
struct Update {
    field: usize,
    kind: u8,
    attribute: usize, // index into the kernel's attributes (unused for COUNT)
    scaled: bool,     // a sum kept in Python in units of 2^-1074 (its attribute holds floats)
}

/// One query's windows: [k·slide, k·slide + within) for k in [first, last].
#[derive(Clone, Copy)]
struct Member {
    within: i64,
    slide: i64,
    first: i64,
    last: i64,
}

impl Member {
    fn indexes(&self, time: i64) -> (i64, i64) {
        let lo = (time - self.within).div_euclid(self.slide) + 1;
        let hi = time.div_euclid(self.slide) + 1;
        (lo.max(self.first), hi.min(self.last.saturating_add(1)))
    }

    fn end(&self, k: i64) -> i64 {
        k * self.slide + self.within
    }
}

struct Event {
    position: Option<usize>, // None: the trailing negated type
    time: i64,
    values: Vec<Option<Value>>, // the kernel's attributes, for positive events
}

/// The graph of one pattern (`hamlet.runtime.partition.graph_key`) for the queries that share it.
#[pyclass(frozen, module = "hamlet_native")]
struct GraphKernel {
    positions: HashMap<String, usize>,
    negated: Option<String>,
    start: usize,
    end: usize,
    predecessors: Vec<Vec<usize>>,
    is_source: Vec<bool>,
    kinds: Vec<u8>,
    updates: Vec<Vec<Update>>,
    attributes: Vec<Py<PyString>>,
    count_only: bool,
    members: Vec<Member>,
}

#[pymethods]
impl GraphKernel {
    /// `types`: the template's types by position; `transitions`: (source, target) positions; `negated`: the
    /// type of a trailing NOT (a single type); `fields`: (kind, position or None, attribute or None, scaled)
    /// of the aggregate vector, field 0 the trend count, scaled for a sum kept in units of 2^-1074; `count_only`: finals are the count itself (CountAlgebra);
    /// `members`: (within, slide, first, last) of each query's windows, in seconds.
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        types: Vec<String>,
        start: usize,
        end: usize,
        transitions: Vec<(usize, usize)>,
        negated: Option<String>,
        fields: Vec<(String, Option<usize>, Option<String>, bool)>,
        count_only: bool,
        members: Vec<(i64, i64, i64, i64)>,
    ) -> PyResult<Self> {
        let n = types.len();
        let mut predecessors = vec![Vec::new(); n];
        let mut is_source = vec![false; n];
        for &(source, target) in &transitions {
            predecessors[target].push(source);
            is_source[source] = true;
        }
        let mut kinds = Vec::new();
        let mut updates = vec![Vec::new(); n];
        let mut attributes: Vec<String> = Vec::new();
        for (i, (kind, position, attribute, scaled)) in fields.iter().enumerate() {
            let kind = match kind.as_str() {
                "trends" => TRENDS,
                "count" => COUNT,
                "sum" => SUM,
                "nonnull" => NONNULL,
                "floats" => FLOATS,
                "min" => MIN,
                "max" => MAX,
                other => {
                    return Err(pyo3::exceptions::PyValueError::new_err(format!("unknown field kind {other}")))
                }
            };
            kinds.push(kind);
            if let Some(p) = *position {
                let a = match attribute {
                    Some(name) => attributes.iter().position(|x| x == name).unwrap_or_else(|| {
                        attributes.push(name.clone());
                        attributes.len() - 1
                    }),
                    None => usize::MAX,
                };
                updates[p].push(Update { field: i, kind, attribute: a, scaled: *scaled });
            }
        }
        Ok(GraphKernel {
            positions: types.into_iter().enumerate().map(|(i, t)| (t, i)).collect(),
            negated,
            start,
            end,
            predecessors,
            is_source,
            kinds,
            updates,
            attributes: attributes.into_iter().map(|a| PyString::intern(py, &a).unbind()).collect(),
            count_only,
            members: members
                .into_iter()
                .map(|(within, slide, first, last)| Member { within, slide, first, last })
                .collect(),
        })
    }

    /// (member, first window, last window, final) for every run of windows of one class with a final, as
    /// `run_partition` yields them; None when the partition needs the Python engine. `events`: the
    /// partition's events of the graph's types that pass its local predicates, sorted by time.
    fn run<'py>(&self, py: Python<'py>, events: &Bound<'py, PyList>) -> PyResult<Option<Vec<Bound<'py, PyTuple>>>> {
        let Some((events, scales)) = self.read(py, events)? else { return Ok(None) };
        let Some(runs) = Partition::new(self, &events, &scales).run() else { return Ok(None) };
        let mut out = Vec::with_capacity(runs.len());
        for (member, first, last, agg) in runs {
            let last = last.into_pyobject(py)?.into_any();
            let first = first.into_pyobject(py)?.into_any();
            let member = member.into_pyobject(py)?.into_any();
            out.push(PyTuple::new(py, [member, first, last, self.to_python(py, &agg, &scales)?])?);
        }
        Ok(Some(out))
    }
}

impl GraphKernel {
    /// The events, and per attribute what its values are; None if the partition is Python's.
    fn read(&self, py: Python<'_>, events: &Bound<'_, PyList>) -> PyResult<Option<(Vec<Event>, Vec<Scale>)>> {
        let (type_name, time_name, attributes_name) =
            (pyo3::intern!(py, "type"), pyo3::intern!(py, "time"), pyo3::intern!(py, "attributes"));
        let mut out = Vec::with_capacity(events.len());
        let mut scales = vec![Scale::default(); self.attributes.len()];
        for event in events.iter() {
            let kind = event.getattr(type_name)?;
            let Ok(kind) = kind.cast::<PyString>() else { return Ok(None) };
            let kind = kind.to_str()?;
            let position = match self.positions.get(kind) {
                Some(&p) => Some(p),
                None if self.negated.as_deref() == Some(kind) => None,
                None => continue, // a type the graph does not read
            };
            let time = event.getattr(time_name)?;
            // Seconds since 1970 are far below 2^52; beyond it window arithmetic could overflow i64.
            let Some(time) = exact_int(&time).filter(|t| t.abs() < 1 << 52) else { return Ok(None) };
            let mut values = Vec::new();
            if let Some(p) = position {
                if !self.updates[p].is_empty() {
                    values = vec![None; self.attributes.len()];
                    let attrs = event.getattr(attributes_name)?;
                    let Ok(attrs) = attrs.cast::<PyDict>() else { return Ok(None) }; // another Mapping
                    for u in &self.updates[p] {
                        if u.attribute == usize::MAX || values[u.attribute].is_some() {
                            continue;
                        }
                        let Some(v) = attrs.get_item(self.attributes[u.attribute].bind(py))? else { continue };
                        if v.is_none() {
                            continue;
                        }
                        let scale = &mut scales[u.attribute];
                        if let Some(x) = exact_int(&v) {
                            scale.ints = true;
                            values[u.attribute] = Some(Value::Int(x));
                        } else if v.is_exact_instance_of::<PyFloat>() {
                            let x: f64 = v.extract()?;
                            if !x.is_finite() || (x == 0.0 && x.is_sign_negative()) {
                                return Ok(None);
                            }
                            scale.floats = true;
                            scale.exponent = scale.exponent.max((-decompose(x).1).max(0) as u32);
                            values[u.attribute] = Some(Value::Float(x));
                        } else {
                            return Ok(None); // a string, an int beyond 64 bits, a bool: Python's job
                        }
                    }
                }
            }
            out.push(Event { position, time, values });
        }
        for updates in &self.updates {
            for u in updates {
                let scale = scales.get(u.attribute).copied().unwrap_or_default();
                let mixed = (u.kind == MIN || u.kind == MAX) && scale.ints && scale.floats;
                if mixed || (u.kind == SUM && scale.floats && !u.scaled) || scale.exponent > FLOAT_SCALE_BITS {
                    return Ok(None);
                }
            }
        }
        Ok(Some((out, scales)))
    }

    /// The aggregate as the Python algebra holds it: an int (COUNT(*) only) or a tuple, sums over floats in
    /// units of 2^-1074, MIN/MAX over floats as floats.
    fn to_python<'py>(&self, py: Python<'py>, agg: &Agg, scales: &[Scale]) -> PyResult<Bound<'py, PyAny>> {
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
    fn add(&self, a: &mut Agg, b: &Agg) -> bool {
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
        let count = if position == self.start { acc[0].checked_add(1).ok_or(())? } else { acc[0] };
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
            let Some(value) = event.values[u.attribute] else { continue };
            let key = || match value {
                Value::Int(v) => v as i128,
                Value::Float(x) => float_key(x),
            };
            match u.kind {
                SUM => {
                    let exponent = if u.scaled { scales[u.attribute].exponent } else { 0 };
                    let added = summand(value, exponent).ok_or(())?.checked_mul(count).ok_or(())?;
                    *slot = slot.checked_add(added).ok_or(())?;
                }
                NONNULL => *slot = slot.checked_add(count).ok_or(())?,
                FLOATS if matches!(value, Value::Float(_)) => *slot = slot.checked_add(count).ok_or(())?,
                MIN => *slot = (*slot).min(key()),
                MAX => *slot = (*slot).max(key()),
                _ => {}
            }
        }
        Ok(Some(acc))
    }
}

/// An int exactly (not a bool, not a float) that fits i64.
fn exact_int(value: &Bound<'_, PyAny>) -> Option<i64> {
    if !value.is_exact_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
        return None;
    }
    value.extract::<i64>().ok()
}

/// The state of one partition's graph (`QueryRun` with one `TrendGraph`).
struct Partition<'a> {
    kernel: &'a GraphKernel,
    events: &'a [Event],
    scales: &'a [Scale],
    times: Vec<i64>,
    running: Vec<HashMap<usize, Agg>>, // per source position: running totals per class
    finals: HashMap<usize, Agg>,
    pending: HashMap<usize, Vec<(i64, Agg)>>, // with a trailing NOT: END contributions, read at close
    latest_negated: Option<i64>,               // L: the latest time of a negated event
    open: Vec<VecDeque<(i64, i64)>>,           // per member: open windows as runs [first, last]
    next_close: Vec<Option<i64>>,
    out: Vec<(usize, i64, i64, Agg)>,
}

impl<'a> Partition<'a> {
    fn new(kernel: &'a GraphKernel, events: &'a [Event], scales: &'a [Scale]) -> Self {
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

    fn run(mut self) -> Option<Vec<(usize, i64, i64, Agg)>> {
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
        let through = if c < self.times.len() { self.times[c].div_euclid(member.slide) } else { AFTER_ALL };
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
        let Some(pending) = self.pending.get(&c) else { return Some(None) };
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

#[pymodule]
fn hamlet_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<GraphKernel>()?;
    Ok(())
}
