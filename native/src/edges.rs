//! Edge predicates (`X.a op NEXT(Y).b`, any arithmetic, AND, OR) and the predecessor sources that answer
//! a transition holding them (GRETA §5.2; `hamlet/runtime/sources.py` in Python):
//!
//! * `Scan`: every earlier event of the source position, kept with its aggregates per window class; the
//!   predicate is evaluated once per pair of events, whatever the classes.
//! * `Index`: one comparison `f(x) op g(y)`: an ordered index over the ranks of f(x) among the partition's
//!   source events, a Fenwick tree per class (an insert-only prefix combine, so MIN and MAX work too), or
//!   a table per value for `=`.
//!
//! Values follow `hamlet.analysis.predicates`: arithmetic on a null or a string is null, division or
//! modulo by zero is null, a comparison with a null is false, `=`/`!=` between a string and a number are
//! false/true and ordering between them false, ints and floats compare exactly. Ints are exact within 128
//! bits (attributes are ints in [-2^63, 2^64), literals within 128): no sum, difference or product of two
//! such values overflows. They are computed in 64 bits, and in 128 only where a value leaves 64 bits
//! (`V::Wide`), which keeps the common case as fast as before. Where only Python's unbounded ints give the
//! answer (an int overflowing 128 bits, a division of ints beyond 2^53, a bool or an int attribute beyond 2^64
//! or below -2^63), evaluation fails and the partition is left to Python.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyString, PyTuple};
use rustc_hash::FxHashMap;
use std::cmp::Ordering;

use crate::crossed::Crossed;
use crate::graph::{Agg, Event, Graph};
use crate::predicates::{int_versus_float, parse_op, Op};
use crate::values::{Raw, Temporal};

/// A value while an expression is evaluated. An int is `Int` within 64 bits, else `Wide` (within 128).
#[derive(Clone, Copy, Debug)]
pub enum V<'a> {
    Null,
    Int(i64),
    Wide(Wide),
    Float(f64),
    Str(&'a str),
    Bool(bool),
    Temporal(Temporal),
}

/// An int beyond 64 bits and within 128, as two words: an i128 field would align `V` to 16 bytes and make
/// every value 32 bytes long instead of 24. (Every int in i128, as one variant, cost 18 % more time on a scan
/// of edge predicates with arithmetic; this way ints within 64 bits cost what they did.)
#[derive(Clone, Copy, Debug)]
pub struct Wide([u64; 2]);

impl Wide {
    pub fn get(self) -> i128 {
        ((self.0[1] as i128) << 64) | self.0[0] as i128
    }
}

/// An int as a value: `Int` where it fits 64 bits.
pub fn int<'a>(x: i128) -> V<'a> {
    match i64::try_from(x) {
        Ok(small) => V::Int(small),
        Err(_) => V::Wide(Wide([x as u64, (x >> 64) as u64])),
    }
}

/// An int value in 128 bits (None: not an int).
fn wide(v: V) -> Option<i128> {
    match v {
        V::Int(a) => Some(a as i128),
        V::Wide(a) => Some(a.get()),
        _ => None,
    }
}

/// A literal of a predicate: an int within 128 bits, a float or a string, as the value it is.
#[derive(Clone, Debug)]
pub enum Literal {
    Number(V<'static>), // Int, Wide or Float
    Str(String),
}

impl Literal {
    pub fn read(value: &Bound<'_, PyAny>) -> PyResult<Literal> {
        if value.is_exact_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
            if let Ok(x) = value.extract::<i128>() {
                return Ok(Literal::Number(int(x)));
            }
        } else if value.is_exact_instance_of::<PyFloat>() {
            return Ok(Literal::Number(V::Float(value.extract()?)));
        } else if let Ok(text) = value.cast_exact::<PyString>() {
            return Ok(Literal::Str(text.to_str()?.to_owned()));
        }
        Err(PyValueError::new_err(
            "a literal is an int within 128 bits, a float or a string",
        ))
    }

    pub fn view(&self) -> V<'_> {
        match self {
            Literal::Number(v) => *v,
            Literal::Str(s) => V::Str(s),
        }
    }
}

#[derive(Clone, Debug)]
pub enum Expr {
    Literal(Literal),
    Attribute { attribute: usize, next: bool },
    Neg(Box<Expr>),
    Arith(char, Box<Expr>, Box<Expr>),
    Compare(Op, Box<Expr>, Box<Expr>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
}

impl Expr {
    /// From Python's form (`native._expression`): ("lit", value) | ("attr", name, next) | ("neg", e) |
    /// ("arith", op, l, r) | ("cmp", op, l, r) | ("and" | "or", [e]); attributes numbered by `number`.
    pub fn parse(spec: &Bound<'_, PyAny>, number: &mut impl FnMut(&str) -> usize) -> PyResult<Expr> {
        let spec = spec.cast::<PyTuple>()?;
        let kind: String = spec.get_item(0)?.extract()?;
        let sub = |i: usize, number: &mut dyn FnMut(&str) -> usize| -> PyResult<Box<Expr>> {
            let mut number = number;
            Ok(Box::new(Expr::parse(&spec.get_item(i)?, &mut number)?))
        };
        Ok(match kind.as_str() {
            "lit" => Expr::Literal(Literal::read(&spec.get_item(1)?)?),
            "attr" => Expr::Attribute {
                attribute: number(&spec.get_item(1)?.extract::<String>()?),
                next: spec.get_item(2)?.extract()?,
            },
            "neg" => Expr::Neg(sub(1, number)?),
            "arith" => {
                let op: String = spec.get_item(1)?.extract()?;
                let op = match op.as_str() {
                    "+" | "-" | "*" | "/" | "%" => op.chars().next().unwrap_or('+'),
                    other => return Err(PyValueError::new_err(format!("unknown operator {other}"))),
                };
                Expr::Arith(op, sub(2, number)?, sub(3, number)?)
            }
            "cmp" => Expr::Compare(
                parse_op(&spec.get_item(1)?.extract::<String>()?)?,
                sub(2, number)?,
                sub(3, number)?,
            ),
            "and" | "or" => {
                let parts = spec.get_item(1)?;
                let parts = parts
                    .cast::<PyList>()?
                    .iter()
                    .map(|p| Expr::parse(&p, number))
                    .collect::<PyResult<Vec<_>>>()?;
                if kind == "and" {
                    Expr::And(parts)
                } else {
                    Expr::Or(parts)
                }
            }
            other => return Err(PyValueError::new_err(format!("unknown expression form {other}"))),
        })
    }

    pub fn attributes(&self, out: &mut Vec<usize>) {
        match self {
            Expr::Literal(_) => {}
            Expr::Attribute { attribute, .. } => out.push(*attribute),
            Expr::Neg(e) => e.attributes(out),
            Expr::Arith(_, l, r) | Expr::Compare(_, l, r) => {
                l.attributes(out);
                r.attributes(out);
            }
            Expr::And(parts) | Expr::Or(parts) => parts.iter().for_each(|p| p.attributes(out)),
        }
    }

    /// The value over (x, y): `NEXT(Y).b` reads y, every other attribute x.
    pub fn value<'a>(&'a self, x: &'a [Raw], y: &'a [Raw]) -> Result<V<'a>, ()> {
        Ok(match self {
            Expr::Literal(literal) => literal.view(),
            Expr::Attribute { attribute, next } => view(&(if *next { y } else { x })[*attribute])?,
            Expr::Neg(e) => match e.value(x, y)? {
                V::Int(a) => a.checked_neg().map_or_else(|| int(-(a as i128)), V::Int),
                V::Wide(a) => int(a.get().checked_neg().ok_or(())?),
                V::Float(a) => V::Float(-a),
                _ => V::Null,
            },
            Expr::Arith(op, l, r) => arithmetic(*op, l.value(x, y)?, r.value(x, y)?)?,
            Expr::Compare(..) | Expr::And(_) | Expr::Or(_) => return Err(()), // (never a value: analysis)
        })
    }

    /// Whether the predicate holds for (x, y); AND and OR stop where Python's all()/any() do.
    pub fn holds(&self, x: &[Raw], y: &[Raw]) -> Result<bool, ()> {
        match self {
            Expr::Compare(op, l, r) => compare(*op, l.value(x, y)?, r.value(x, y)?),
            Expr::And(parts) => {
                for p in parts {
                    if !p.holds(x, y)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Expr::Or(parts) => {
                for p in parts {
                    if p.holds(x, y)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            _ => Err(()),
        }
    }
}

pub fn view(raw: &Raw) -> Result<V<'_>, ()> {
    Ok(match raw {
        Raw::Null => V::Null,
        Raw::Int(a) => V::Int(*a),
        Raw::UInt(a) => int(*a as i128),
        Raw::Float(a) => V::Float(*a),
        Raw::Str(s) => V::Str(s),
        Raw::Bool(b) => V::Bool(*b),
        Raw::Temporal(t) => V::Temporal(*t),
        Raw::Other => return Err(()),
    })
}

fn arithmetic<'a>(op: char, a: V<'a>, b: V<'a>) -> Result<V<'a>, ()> {
    const EXACT: i64 = 1 << 53; // ints a double holds exactly: their quotient is Python's, correctly rounded
    Ok(match (a, b) {
        // (64 bits; where a result leaves them, 128: no sum, difference or product of two overflows there)
        (V::Int(a), V::Int(b)) => match op {
            '+' => a.checked_add(b).map_or_else(|| int(a as i128 + b as i128), V::Int),
            '-' => a.checked_sub(b).map_or_else(|| int(a as i128 - b as i128), V::Int),
            '*' => a.checked_mul(b).map_or_else(|| int(a as i128 * b as i128), V::Int),
            _ if b == 0 => V::Null,
            '/' if a.abs() <= EXACT && b.abs() <= EXACT => V::Float(a as f64 / b as f64),
            '/' => return Err(()),
            _ => int(python_rem(a as i128, b as i128).ok_or(())?),
        },
        (V::Int(_) | V::Wide(_), V::Int(_) | V::Wide(_)) => {
            let (a, b) = (wide(a).ok_or(())?, wide(b).ok_or(())?);
            match op {
                '+' => int(a.checked_add(b).ok_or(())?),
                '-' => int(a.checked_sub(b).ok_or(())?),
                '*' => int(a.checked_mul(b).ok_or(())?),
                _ if b == 0 => V::Null,
                '/' => return Err(()), // (an int beyond 64 bits: beyond 2^53)
                _ => int(python_rem(a, b).ok_or(())?),
            }
        }
        (V::Int(_) | V::Wide(_) | V::Float(_), V::Int(_) | V::Wide(_) | V::Float(_)) => {
            let (a, b) = (float(a), float(b));
            match op {
                '+' => V::Float(a + b),
                '-' => V::Float(a - b),
                '*' => V::Float(a * b),
                _ if b == 0.0 => V::Null,
                '/' => V::Float(a / b),
                _ => V::Float(python_fmod(a, b)),
            }
        }
        _ => V::Null,
    })
}

/// Python's int `%`: the result takes the sign of the divisor (None: it overflows, i128::MIN % -1).
fn python_rem(a: i128, b: i128) -> Option<i128> {
    a.checked_rem(b)
        .map(|r| if r != 0 && (r < 0) != (b < 0) { r + b } else { r })
}

fn float(v: V) -> f64 {
    match v {
        V::Int(a) => a as f64,        // round to nearest even, as Python's int → float
        V::Wide(a) => a.get() as f64, // (the same; |a| < 2^127, finite)
        V::Float(a) => a,
        _ => f64::NAN,
    }
}

/// Python's float `%`: the result takes the sign of the divisor.
fn python_fmod(a: f64, b: f64) -> f64 {
    let m = a % b;
    if m != 0.0 {
        if (b < 0.0) != (m < 0.0) {
            m + b
        } else {
            m
        }
    } else {
        0.0f64.copysign(b)
    }
}

/// `predicates.compare`: values of two kinds (`predicates.kind`) are only unequal.
pub fn compare(op: Op, a: V, b: V) -> Result<bool, ()> {
    let order = match (a, b) {
        (V::Null, _) | (_, V::Null) => return Ok(false),
        (V::Str(a), V::Str(b)) => Some(a.cmp(b)),
        (V::Bool(a), V::Bool(b)) => Some(a.cmp(&b)),
        (V::Temporal(a), V::Temporal(b)) if a.kind == b.kind => Some(a.value.cmp(&b.value)),
        (V::Int(_) | V::Wide(_) | V::Float(_), V::Int(_) | V::Wide(_) | V::Float(_)) => numeric_order(a, b)?,
        _ => return Ok(op == Op::Ne),
    };
    Ok(match op {
        Op::Eq => order == Some(Ordering::Equal),
        Op::Ne => order != Some(Ordering::Equal),
        Op::Lt => order == Some(Ordering::Less),
        Op::Le => matches!(order, Some(Ordering::Less | Ordering::Equal)),
        Op::Gt => order == Some(Ordering::Greater),
        Op::Ge => matches!(order, Some(Ordering::Greater | Ordering::Equal)),
    })
}

/// The exact order of two numbers (None: a NaN).
fn numeric_order(a: V, b: V) -> Result<Option<Ordering>, ()> {
    Ok(match (a, b) {
        (V::Int(a), V::Int(b)) => Some(a.cmp(&b)),
        (V::Float(a), V::Float(b)) => a.partial_cmp(&b),
        (V::Float(a), _) => int_versus_float(wide(b).ok_or(())?, a)?.map(Ordering::reverse),
        (_, V::Float(b)) => int_versus_float(wide(a).ok_or(())?, b)?,
        _ => Some(wide(a).ok_or(())?.cmp(&wide(b).ok_or(())?)),
    })
}

/// A transition that is not a plain running total: its edge predicates (maybe none), the index that
/// answers them when they are one comparison, and the negations that guard it.
#[derive(Clone, Debug)]
pub struct Edge {
    pub source: usize,
    pub predicates: Vec<Expr>,
    pub index: Option<(Op, Expr, Expr)>, // f(x) op g(y): f over x, g over y (its NEXT dropped)
    pub guard: Option<Guard>,
}

/// The NOTs between two parts that a transition crosses (negation numbers, from 1) and the outcomes that
/// take it (`automaton.Guard`): bit m of `outcomes` is outcome m, whose bit j says that negation
/// `negations[j]` had a match between x and y (`negation.rs`: x.time < its L). On GRETA's template only
/// outcome 0 takes it (x.time ≥ every L); on a position template one parse may cross a NOT where another
/// stays inside a part, so a match may also send a trend to another state.
#[derive(Clone, Debug)]
pub struct Guard {
    pub negations: Vec<usize>,
    pub outcomes: u64,
}

pub const MAX_GUARD_NEGATIONS: usize = 6; // (2^6 outcomes: one u64)

/// A guard read when an event y arrives: the L of each negation it crosses.
#[derive(Clone, Copy, Debug)]
pub struct Crossing {
    latest: [Option<i64>; MAX_GUARD_NEGATIONS],
    count: usize,
    outcomes: u64,
}

/// Whether `outcomes` (bit m: outcome m) hold the outcome whose bit j is `matched[j]`.
fn takes(outcomes: u64, matched: impl Iterator<Item = bool>) -> bool {
    let outcome = matched.enumerate().filter(|&(_, m)| m).fold(0, |o, (j, _)| o | 1 << j);
    outcomes >> outcome & 1 == 1
}

impl Guard {
    /// Whether the outcome where exactly the negations k with `matched(k)` had a match takes it.
    pub fn takes(&self, matched: impl Fn(usize) -> bool) -> bool {
        takes(self.outcomes, self.negations.iter().map(|&k| matched(k)))
    }

    pub fn at(&self, latest: impl Fn(usize) -> Option<i64>) -> Crossing {
        let mut at = [None; MAX_GUARD_NEGATIONS];
        for (slot, &k) in at.iter_mut().zip(&self.negations) {
            *slot = latest(k);
        }
        Crossing {
            latest: at,
            count: self.negations.len(),
            outcomes: self.outcomes,
        }
    }
}

impl Crossing {
    /// Whether an x at `time` may precede y.
    pub fn admits(&self, time: i64) -> bool {
        takes(
            self.outcomes,
            self.latest[..self.count].iter().map(|l| l.is_some_and(|l| time < l)),
        )
    }

    /// The L of the j-th negation it crosses.
    pub fn latest(&self, j: usize) -> Option<i64> {
        self.latest[j]
    }

    /// Whether only the absence of every match takes the edge: then an x it refuses refuses every earlier x.
    pub fn closes(&self) -> bool {
        self.outcomes == 1
    }
}

impl Edge {
    pub fn holds(&self, x: &[Raw], y: &[Raw]) -> Result<bool, ()> {
        for p in &self.predicates {
            if !p.holds(x, y)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// What a source position's events left for the events of a target position, per edge and partition.
pub enum Source {
    /// Every committed source event: (its index among the partition's events, its time, its aggregate per
    /// class).
    Scan(Vec<(usize, i64, Vec<(usize, Agg)>)>),
    /// f(x) of every source event, ranked: the sorted distinct numbers, and per class a Fenwick tree over
    /// their ranks (reversed for `>`, `>=`: every op reads a prefix) or, for `=`, a table by rank.
    Index {
        op: Op,
        keys: Vec<V<'static>>,
        trees: FxHashMap<usize, Vec<Option<Agg>>>,
    },
    /// One NOT and nothing else guards the edge: per class, the events split at its L (`crossed.rs`);
    /// `suffix`: those at or after L precede (no match between), else those before it.
    Crossed {
        suffix: bool,
        classes: FxHashMap<usize, Crossed>,
    },
}

impl Source {
    /// The source of `edge` over a partition whose source events hold `values` for f(x); a scan where the
    /// values are not all numbers (or null).
    pub fn new(edge: &Edge, values: &[Vec<Raw>]) -> Result<Source, ()> {
        if let (Some(guard), true) = (&edge.guard, edge.predicates.is_empty()) {
            if guard.negations.len() == 1 && (guard.outcomes == 1 || guard.outcomes == 2) {
                return Ok(Source::Crossed {
                    suffix: guard.outcomes == 1,
                    classes: FxHashMap::default(),
                });
            }
        }
        let (Some((op, f, _)), None) = (&edge.index, &edge.guard) else {
            return Ok(Source::Scan(Vec::new()));
        };
        let mut keys: Vec<V<'static>> = Vec::new();
        for x in values {
            match f.value(x, x)? {
                V::Null => {}
                V::Float(a) if a.is_nan() => {}
                v @ (V::Int(_) | V::Wide(_) | V::Float(_) | V::Temporal(_)) => keys.push(owned(v)),
                V::Str(_) | V::Bool(_) => return Ok(Source::Scan(Vec::new())),
            }
        }
        if keys.windows(2).any(|w| rank_kind(&w[0]) != rank_kind(&w[1])) {
            return Ok(Source::Scan(Vec::new())); // (two kinds: no one order ranks them)
        }
        keys.sort_by(|a, b| key_order(*a, *b).unwrap_or(Ordering::Equal));
        keys.dedup_by(|a, b| key_order(*a, *b) == Some(Ordering::Equal));
        Ok(Source::Index {
            op: *op,
            keys,
            trees: FxHashMap::default(),
        })
    }

    /// A source event's aggregate in class c (events are inserted in time order).
    pub fn insert(
        &mut self,
        graph: &Graph,
        edge: &Edge,
        event: &Event,
        i: usize,
        c: usize,
        agg: &Agg,
    ) -> Result<(), ()> {
        let x = event.fields();
        match self {
            Source::Scan(events) => {
                match events.last_mut() {
                    Some((last, _, classes)) if *last == i => classes.push((c, agg.clone())),
                    _ => events.push((i, event.time, vec![(c, agg.clone())])),
                }
                Ok(())
            }
            Source::Index { op, keys, trees } => {
                let (_, f, _) = edge.index.as_ref().ok_or(())?;
                let Some(rank) = rank_of(keys, f.value(x, x)?)? else {
                    return Ok(());
                };
                let size = keys.len();
                let tree = trees.entry(c).or_insert_with(|| vec![None; size + 1]);
                if *op == Op::Eq {
                    combine(graph, &mut tree[rank], agg);
                    return Ok(());
                }
                let mut i = if matches!(op, Op::Gt | Op::Ge) {
                    size - rank
                } else {
                    rank + 1
                };
                while i <= size {
                    combine(graph, &mut tree[i], agg);
                    i += i & i.wrapping_neg();
                }
                Ok(())
            }
            Source::Crossed { classes, .. } => {
                classes.entry(c).or_default().push(graph, event.time, agg);
                Ok(())
            }
        }
    }

    /// The combined aggregate, per class in `classes`, of the source events that may precede the event
    /// `y` (values `y_values`) across the edge, those its guard (read at y) refuses left out;
    /// `values(i)`: the values of the partition's event i.
    #[allow(clippy::too_many_arguments)]
    pub fn collect<'v>(
        &mut self,
        graph: &Graph,
        edge: &Edge,
        y_values: &[Raw],
        classes: &[usize],
        crossing: Option<Crossing>,
        values: impl Fn(usize) -> &'v [Raw],
        out: &mut [Agg],
    ) -> Result<(), ()> {
        match self {
            Source::Scan(events) => {
                for (i, time, aggs) in events {
                    if crossing.is_some_and(|g| !g.admits(*time)) || !edge.holds(values(*i), y_values)? {
                        continue;
                    }
                    for (c, agg) in aggs {
                        if let Ok(k) = classes.binary_search(c) {
                            graph.add(&mut out[k], agg);
                        }
                    }
                }
                Ok(())
            }
            Source::Index { op, keys, trees } => {
                let (_, _, g) = edge.index.as_ref().ok_or(())?;
                let target = match g.value(y_values, y_values)? {
                    v @ (V::Int(_) | V::Wide(_) | V::Float(_) | V::Temporal(_)) if !matches!(v, V::Float(a) if a.is_nan()) => {
                        v
                    }
                    _ => return Ok(()), // null, NaN or a string: no key compares true with it
                };
                if keys.first().is_some_and(|k| rank_kind(k) != rank_kind(&target)) {
                    return Ok(()); // (another kind: only unequal to each key, and `!=` is never indexed)
                }
                // How many ranks, in the index's order, hold f(x) op target.
                let below = keys.partition_point(|k| key_order(*k, target) == Some(Ordering::Less));
                let through =
                    keys.partition_point(|k| matches!(key_order(*k, target), Some(Ordering::Less | Ordering::Equal)));
                let size = keys.len();
                for (k, c) in classes.iter().enumerate() {
                    let Some(tree) = trees.get(c) else { continue };
                    if *op == Op::Eq {
                        if through > below {
                            if let Some(agg) = &tree[below] {
                                graph.add(&mut out[k], agg);
                            }
                        }
                        continue;
                    }
                    let mut i = match op {
                        Op::Lt => below,
                        Op::Le => through,
                        Op::Gt => size - through,
                        _ => size - below, // Ge
                    };
                    while i > 0 {
                        if let Some(agg) = &tree[i] {
                            graph.add(&mut out[k], agg);
                        }
                        i -= i & i.wrapping_neg();
                    }
                }
                Ok(())
            }
            Source::Crossed { suffix, classes: held } => {
                let limit = crossing.and_then(|g| g.latest(0));
                for (k, c) in classes.iter().enumerate() {
                    let Some(split) = held.get_mut(c) else { continue };
                    split.advance(graph, limit);
                    split.add_to(graph, *suffix, &mut out[k]);
                }
                Ok(())
            }
        }
    }
}

impl Source {
    /// Forget the classes below `frontier` (`Partition::release`), and the events left in none.
    pub fn release(&mut self, frontier: usize) {
        match self {
            Source::Scan(events) => {
                for (_, _, classes) in events.iter_mut() {
                    classes.retain(|(c, _)| *c >= frontier);
                }
                events.retain(|(_, _, classes)| !classes.is_empty());
            }
            Source::Index { trees, .. } => trees.retain(|&c, _| c >= frontier),
            Source::Crossed { classes, .. } => classes.retain(|&c, _| c >= frontier),
        }
    }
}

fn owned(v: V) -> V<'static> {
    match v {
        V::Int(a) => V::Int(a),
        V::Wide(a) => V::Wide(a),
        V::Float(a) => V::Float(a),
        V::Temporal(t) => V::Temporal(t),
        _ => V::Null,
    }
}

/// Which keys an ordered index ranks together: numbers with numbers, a temporal kind's values with its own.
fn rank_kind(v: &V) -> Option<u16> {
    match v {
        V::Int(_) | V::Wide(_) | V::Float(_) => Some(u16::MAX),
        V::Temporal(t) => Some(t.kind),
        _ => None,
    }
}

/// The order of two keys of one `rank_kind` (None: a NaN, or two kinds).
fn key_order(a: V, b: V) -> Option<Ordering> {
    match (a, b) {
        (V::Temporal(a), V::Temporal(b)) if a.kind == b.kind => Some(a.value.cmp(&b.value)),
        (V::Temporal(_), _) | (_, V::Temporal(_)) => None,
        _ => numeric_order(a, b).ok().flatten(),
    }
}

/// The rank of f(x) among `keys` (None: a null or NaN, which no comparison holds for).
fn rank_of(keys: &[V], v: V) -> Result<Option<usize>, ()> {
    match v {
        V::Null => Ok(None),
        V::Float(a) if a.is_nan() => Ok(None),
        V::Int(_) | V::Wide(_) | V::Float(_) | V::Temporal(_) => {
            if keys.first().is_some_and(|k| rank_kind(k) != rank_kind(&v)) {
                return Err(()); // (the keys are every source value's: none of another kind is inserted)
            }
            Ok(Some(keys.partition_point(|k| key_order(*k, v) == Some(Ordering::Less))))
        }
        V::Str(_) | V::Bool(_) => Err(()),
    }
}

/// `slot` = `slot` combined with `agg` (None: nothing yet).
pub fn combine(graph: &Graph, slot: &mut Option<Agg>, agg: &Agg) {
    match slot {
        Some(total) => graph.add(total, agg),
        None => *slot = Some(agg.clone()),
    }
}
