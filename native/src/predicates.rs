//! Local predicates (`T.a op literal`, AND, OR of them, any other condition as an `edges::Expr`) with the
//! value semantics of `hamlet.analysis.predicates.compare`: a comparison with a null is false; `=` and `!=`
//! between a string and a number are false and true, ordering between them is false; ints and floats
//! compare exactly.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use std::cmp::Ordering;

use crate::edges::{self, Expr, Literal};
use crate::values::Raw;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Clone, Debug)]
pub enum Program {
    Compare { op: Op, attribute: usize, literal: Literal },
    Expr(Expr), // any other condition on the event's attributes (edges.rs, with x = y = the event)
    And(Vec<Program>),
    Or(Vec<Program>),
}

pub fn parse_op(op: &str) -> PyResult<Op> {
    Ok(match op {
        "<" => Op::Lt,
        "<=" => Op::Le,
        ">" => Op::Gt,
        ">=" => Op::Ge,
        "=" => Op::Eq,
        "!=" => Op::Ne,
        other => return Err(PyValueError::new_err(format!("unknown comparison {other}"))),
    })
}

impl Program {
    /// From Python's form: ("compare", op, attribute, literal) | ("and" | "or", [programs]); attributes are
    /// numbered by `number`.
    pub fn parse(spec: &Bound<'_, PyAny>, number: &mut impl FnMut(&str) -> usize) -> PyResult<Program> {
        let spec = spec.cast::<PyTuple>()?;
        let kind: String = spec.get_item(0)?.extract()?;
        match kind.as_str() {
            "compare" => {
                let op = parse_op(&spec.get_item(1)?.extract::<String>()?)?;
                let attribute = number(&spec.get_item(2)?.extract::<String>()?);
                let literal = Literal::read(&spec.get_item(3)?)?;
                Ok(Program::Compare { op, attribute, literal })
            }
            "expr" => Ok(Program::Expr(Expr::parse(&spec.get_item(1)?, number)?)),
            "and" | "or" => {
                let parts = spec.get_item(1)?;
                let parts = parts.cast::<PyList>()?;
                let parts = parts
                    .iter()
                    .map(|p| Program::parse(&p, number))
                    .collect::<PyResult<Vec<_>>>()?;
                Ok(if kind == "and" {
                    Program::And(parts)
                } else {
                    Program::Or(parts)
                })
            }
            other => Err(PyValueError::new_err(format!("unknown predicate form {other}"))),
        }
    }

    /// Whether an event with these attribute values passes; Err where Python's answer needs Python (an
    /// `Other`: a bool, an int beyond 64 bits...). AND and OR stop where Python's all()/any() do.
    pub fn test(&self, values: &[Raw]) -> Result<bool, ()> {
        match self {
            Program::Compare { op, attribute, literal } => compare(*op, &values[*attribute], literal),
            Program::Expr(expr) => expr.holds(values, values),
            Program::And(parts) => {
                for p in parts {
                    if !p.test(values)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Program::Or(parts) => {
                for p in parts {
                    if p.test(values)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
        }
    }

    pub fn attributes(&self, out: &mut Vec<usize>) {
        match self {
            Program::Compare { attribute, .. } => out.push(*attribute),
            Program::Expr(expr) => expr.attributes(out),
            Program::And(parts) | Program::Or(parts) => parts.iter().for_each(|p| p.attributes(out)),
        }
    }
}

/// `predicates.compare`, as for edge predicates (`edges::compare`). A value only Python reads (`Other`) is of
/// no kind a text is, so against a text it is only unequal.
fn compare(op: Op, value: &Raw, literal: &Literal) -> Result<bool, ()> {
    match (value, literal) {
        (Raw::Other, Literal::Str(_)) => Ok(op == Op::Ne),
        _ => edges::compare(op, edges::view(value)?, literal.view()),
    }
}

/// Python's exact int-float comparison (None: the float is a NaN).
pub fn int_versus_float(a: i128, b: f64) -> Result<Option<Ordering>, ()> {
    const TOP: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0; // 2^127: above every i128
    if b.is_nan() {
        return Ok(None);
    }
    if b >= TOP {
        return Ok(Some(Ordering::Less));
    }
    if b < -TOP {
        return Ok(Some(Ordering::Greater));
    }
    let whole = b.trunc(); // exact, and within i128
    match a.cmp(&(whole as i128)) {
        Ordering::Equal => Ok(Some(0.0f64.partial_cmp(&(b - whole)).unwrap_or(Ordering::Equal))),
        order => Ok(Some(order)),
    }
}
