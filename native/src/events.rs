//! A partition's events read from Python (`hamlet.events.Event`) once, for every graph and predicate.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};
use std::collections::HashMap;

use crate::values::{exact_int, Raw};

/// The engine's times are whole microseconds (`micros`): a Spark timestamp's own unit, so sub-second
/// times and windows of milliseconds run compiled. Below 2^60 µs (36,000 years) every window bound the
/// kernel computes, a time plus or minus a WITHIN or SLIDE of the same limit, stays within i64.
pub const TIME_LIMIT: i64 = 1 << 60;
const MICROS: i64 = 1_000_000;

/// An event time in seconds (an int, a float or a `fractions.Fraction` that is a whole number of
/// microseconds) as the engine's microseconds; None where only Python holds it exactly: any other float
/// (its binary value lies between two microseconds) or fraction, or a time beyond `TIME_LIMIT`.
pub fn micros(time: &Bound<'_, PyAny>) -> Option<i64> {
    let micros = if let Some(seconds) = exact_int(time) {
        seconds.checked_mul(MICROS)?
    } else if let Ok(seconds) = time.cast::<PyFloat>() {
        // (10^6 = 2^6 · 5^6 and no binary fraction is a multiple of 1/5: a double is a whole number of
        // microseconds iff it is one of 1/64 s, and multiplying by 64 is exact)
        let sixty_fourths = seconds.value() * 64.0;
        if !(sixty_fourths.fract() == 0.0 && sixty_fourths.abs() < (TIME_LIMIT / 15_625) as f64) {
            return None;
        }
        sixty_fourths as i64 * 15_625
    } else if time.is_instance_of::<PyBool>() {
        return None;
    } else {
        // a timestamp's exact seconds (`hamlet.runtime.columnar.seconds`): a Fraction in lowest terms
        let numerator: i64 = time.getattr("numerator").ok()?.extract().ok()?;
        let denominator: i64 = time.getattr("denominator").ok()?.extract().ok()?;
        if denominator <= 0 || MICROS % denominator != 0 {
            return None;
        }
        numerator.checked_mul(MICROS / denominator)?
    };
    (micros.abs() < TIME_LIMIT).then_some(micros)
}

pub struct RawEvent {
    pub kind: usize,      // the type's number in the reader's table
    pub time: i64,        // microseconds
    pub values: Vec<Raw>, // by the reader's attribute numbers; only those its type needs are read
}

/// Reads events of the types in `types` (others are skipped) and, per type number, the attributes in
/// `needs` (numbers into `attributes`).
pub struct Reader {
    pub types: HashMap<String, usize>,
    pub attributes: Vec<Py<PyString>>,
    pub needs: Vec<Vec<usize>>,
}

impl Reader {
    pub fn new(py: Python<'_>, types: &[String], attributes: &[String], needs: Vec<Vec<usize>>) -> Reader {
        Reader {
            types: types.iter().enumerate().map(|(i, t)| (t.clone(), i)).collect(),
            attributes: attributes.iter().map(|a| PyString::intern(py, a).unbind()).collect(),
            needs,
        }
    }

    /// None when the partition is Python's: a time `micros` does not take, attributes in another Mapping
    /// than a dict.
    pub fn read(&self, py: Python<'_>, events: &Bound<'_, PyList>) -> PyResult<Option<Vec<RawEvent>>> {
        let (type_name, time_name, attributes_name) = (
            pyo3::intern!(py, "type"),
            pyo3::intern!(py, "time"),
            pyo3::intern!(py, "attributes"),
        );
        let mut out = Vec::with_capacity(events.len());
        for event in events.iter() {
            let kind = event.getattr(type_name)?;
            let Ok(kind) = kind.cast::<PyString>() else {
                return Ok(None);
            };
            let Some(&kind) = self.types.get(kind.to_str()?) else {
                continue;
            };
            let Some(time) = micros(&event.getattr(time_name)?) else {
                return Ok(None);
            };
            let mut values = Vec::new();
            if !self.needs[kind].is_empty() {
                values = vec![Raw::Null; self.attributes.len()];
                let attrs = event.getattr(attributes_name)?;
                let Ok(attrs) = attrs.cast::<PyDict>() else {
                    return Ok(None);
                };
                for &a in &self.needs[kind] {
                    if let Some(v) = attrs.get_item(self.attributes[a].bind(py))? {
                        values[a] = Raw::read(&v)?;
                    }
                }
            }
            out.push(RawEvent { kind, time, values });
        }
        Ok(Some(out))
    }
}
