//! A partition's events read from Python (`hamlet.events.Event`) once, for every graph and predicate.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use std::collections::HashMap;

use crate::values::{exact_int, Raw};

pub struct RawEvent {
    pub kind: usize, // the type's number in the reader's table
    pub time: i64,
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

    /// None when the partition is Python's: a time that is not an int below 2^52 s (beyond it window
    /// arithmetic could overflow), attributes in another Mapping than a dict.
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
            let time = event.getattr(time_name)?;
            let Some(time) = exact_int(&time).filter(|t| t.abs() < 1 << 52) else {
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
