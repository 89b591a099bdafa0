//! A partition's events read from Python (`hamlet.events.Event`) once, for every graph and predicate.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyType};
use std::collections::HashMap;

use crate::columns::Bytes;
use crate::values::{exact_int, Raw};

/// The engine's times are whole microseconds (`micros`): a Spark timestamp's own unit, so sub-second
/// times and windows of milliseconds run compiled. Below 2^60 µs (36,000 years) every window bound the
/// kernel computes, a time plus or minus a WITHIN or SLIDE of the same limit, stays within i64.
pub const TIME_LIMIT: i64 = 1 << 60;
const MICROS: i64 = 1_000_000;

/// An event time in seconds (an int, a float or a `fractions.Fraction` that is a whole number of
/// microseconds) as the engine's microseconds; None where only Python holds it exactly: any other float
/// (its binary value lies between two microseconds: an event's time is read by `event_micros`) or fraction,
/// or a time beyond `TIME_LIMIT`.
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

/// An event's time as the engine's microseconds, and for a float between two of them the float itself: the
/// microsecond below it, exactly, which is all the engine needs of the time (its order among the others and
/// its side of each window and pane bound, whole microseconds all) as long as no other time falls into that
/// microsecond (`Reader::read` checks; `floor_micros_column` and `clashing_partitions` do both for a column).
fn event_micros(time: &Bound<'_, PyAny>) -> Option<(i64, Option<f64>)> {
    if let Some(micros) = micros(time) {
        return Some((micros, None));
    }
    let seconds = time.cast::<PyFloat>().ok()?.value();
    Some((floor_micros(seconds)?, Some(seconds)))
}

/// floor(seconds · 10^6) exactly (a double's value is mantissa · 2^exponent: in integers, no rounding), None
/// beyond `TIME_LIMIT` or not finite.
pub fn floor_micros(seconds: f64) -> Option<i64> {
    if !seconds.is_finite() || seconds.abs() >= (TIME_LIMIT / MICROS) as f64 {
        return None;
    }
    let bits = seconds.abs().to_bits();
    let (biased, fraction) = ((bits >> 52) as i32, (bits & ((1 << 52) - 1)) as i128);
    let (mantissa, exponent) = match biased {
        0 => (fraction, -1074),
        _ => (fraction | (1 << 52), biased - 1075),
    };
    let scaled = mantissa * MICROS as i128; // below 2^73
    let (floor, exact) = match exponent {
        e if e >= 0 => (scaled << e, true), // (below TIME_LIMIT: seconds is)
        e if e > -100 => (scaled >> -e, scaled & ((1 << -e) - 1) == 0),
        _ => (0, scaled == 0),
    };
    let floor = floor as i64;
    Some(match (seconds < 0.0, exact) {
        (false, _) => floor,
        (true, true) => -floor,
        (true, false) => -floor - 1,
    })
}

/// Whether two times of one stream partition, one after the other, read as one microsecond though they
/// differ: each as (its microsecond, the double it came from where that lies between two). Equal times are
/// never adjacent in a trend, so such a partition is Python's.
fn clash(last: (i64, Option<f64>), next: (i64, Option<f64>)) -> bool {
    last.0 == next.0 && (last.1.is_some() || next.1.is_some()) && last.1 != next.1
}

/// `floor_micros` of a column of seconds (`seconds`: doubles), as int64 bytes; None where one is not finite
/// or lies beyond `TIME_LIMIT` (`hamlet.runtime.columnar.kernel_micros`).
#[pyfunction]
pub fn floor_micros_column<'py>(py: Python<'py>, seconds: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let held = Bytes::get(seconds)?;
    let mut out = Vec::with_capacity(held.bytes().len());
    for &t in held.words::<f64>().iter() {
        let Some(micros) = floor_micros(t) else {
            return Ok(None);
        };
        out.extend(micros.to_le_bytes());
    }
    Ok(Some(PyBytes::new(py, &out)))
}

/// The stream partitions in which two different times fall into one microsecond (`clash`), ascending: rows
/// in time order, each with its `seconds` (doubles), its `micros` (`floor_micros_column`) and the number of
/// its partition (below `count`): `hamlet.runtime.columnar.clashing_rows`.
#[pyfunction]
pub fn clashing_partitions(
    seconds: &Bound<'_, PyAny>,
    micros: &Bound<'_, PyAny>,
    partitions: &Bound<'_, PyAny>,
    count: usize,
) -> PyResult<Vec<usize>> {
    let (seconds, micros, partitions) = (Bytes::get(seconds)?, Bytes::get(micros)?, Bytes::get(partitions)?);
    let (seconds, micros, partitions) = (seconds.words::<f64>(), micros.words::<i64>(), partitions.words::<i64>());
    if micros.len() != seconds.len() || partitions.len() != seconds.len() {
        return Err(PyValueError::new_err(
            "seconds, micros and partitions: one value per row",
        ));
    }
    let mut last: Vec<Option<(i64, Option<f64>)>> = vec![None; count];
    let mut clashing = vec![false; count];
    for ((&t, &m), &p) in seconds.iter().zip(micros.iter()).zip(partitions.iter()) {
        let p = usize::try_from(p)
            .ok()
            .filter(|&p| p < count)
            .ok_or_else(|| PyValueError::new_err(format!("partition {p} outside 0..{count}")))?;
        // (every time here is a double: one that is a whole microsecond is simply equal to no other)
        let next = (m, Some(t));
        clashing[p] |= last[p].is_some_and(|previous| clash(previous, next));
        last[p] = Some(next);
    }
    Ok((0..count).filter(|&p| clashing[p]).collect())
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
        let mut out: Vec<RawEvent> = Vec::with_capacity(events.len());
        let mut last_float = None; // the float time of the last event read, if it was one between microseconds
        for event in events.iter() {
            let kind = event.getattr(type_name)?;
            let Ok(kind) = kind.cast::<PyString>() else {
                return Ok(None);
            };
            let Some(&kind) = self.types.get(kind.to_str()?) else {
                continue;
            };
            let Some((time, float)) = event_micros(&event.getattr(time_name)?) else {
                return Ok(None);
            };
            if out.last().is_some_and(|e| clash((e.time, last_float), (time, float))) {
                return Ok(None);
            }
            last_float = float;
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

/// Whether `events` are already what the engine reads, so that `hamlet.api.to_events` may pass the list on
/// as it is: every item exactly an `event_class` whose type is a `str` (not empty, no character of `space`
/// at either end, no NUL), whose time is exactly an `int` (of any size: an `Event`'s origin is the user's) or
/// a `float` within `time_range` (seconds, both ends in; a NaN in none: `hamlet.api.event_time` refuses the
/// others), and whose attributes are exactly a `dict` holding no `decimal` (which the engine reads as the
/// number it holds: `hamlet.events.decimal_number`). One pass over the objects, each value's type tested
/// against `decimal` once: the Python check it replaces was most of the Python time of a call on a list of
/// `Event`s.
#[pyfunction]
pub fn plain_events(
    events: &Bound<'_, PyList>,
    event_class: &Bound<'_, PyType>,
    space: &str,
    decimal: &Bound<'_, PyType>,
    time_range: (i64, i64),
) -> PyResult<bool> {
    let py = events.py();
    let (type_name, time_name, attributes_name) = (
        pyo3::intern!(py, "type"),
        pyo3::intern!(py, "time"),
        pyo3::intern!(py, "attributes"),
    );
    // (the types of values seen, a few in any stream: each tested against `decimal` once)
    let mut value_types: Vec<(*mut pyo3::ffi::PyTypeObject, bool)> = Vec::new();
    for event in events.iter() {
        if !event.get_type().is(event_class) {
            return Ok(false);
        }
        let kind = event.getattr(type_name)?;
        if !kind.is_exact_instance_of::<PyString>() {
            return Ok(false);
        }
        let Ok(text) = kind.cast::<PyString>()?.to_str() else {
            return Ok(false); // (a lone surrogate, which no UTF-8 holds: the slow path reads it as it is)
        };
        let spaced = |c: Option<char>| c.is_none_or(|c| space.contains(c));
        if spaced(text.chars().next()) || spaced(text.chars().next_back()) || text.contains('\0') {
            return Ok(false);
        }
        let time = event.getattr(time_name)?;
        let plain_time = match time.cast::<PyFloat>() {
            // (both ends are whole numbers below 2^53: exact as doubles)
            Ok(t) if time.is_exact_instance_of::<PyFloat>() => {
                time_range.0 as f64 <= t.value() && t.value() <= time_range.1 as f64
            }
            _ => time.is_exact_instance_of::<PyInt>(),
        };
        if !plain_time {
            return Ok(false); // (the path that reads each event names what is wrong with the time)
        }
        let attributes = event.getattr(attributes_name)?;
        if !attributes.is_exact_instance_of::<PyDict>() {
            return Ok(false);
        }
        for (_, value) in attributes.cast::<PyDict>()?.iter() {
            let of = value.get_type();
            let is_decimal = match value_types.iter().find(|(t, _)| *t == of.as_type_ptr()) {
                Some(&(_, is_decimal)) => is_decimal,
                None => {
                    let is_decimal = of.is_subclass(decimal)?;
                    if value_types.len() < 16 {
                        value_types.push((of.as_type_ptr(), is_decimal));
                    }
                    is_decimal
                }
            };
            if is_decimal {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::floor_micros;

    #[test]
    fn the_microsecond_below_a_double_is_exact() {
        // 0.1 is 0.1000000000000000055…, 1767600000.1 is 1767600000.0999999046…; 0.999999 lies just below
        // 999,999 µs; the smallest subnormal above 0 and below it.
        let cases = [
            (0.1, 100_000),
            (-0.1, -100_001),
            (0.5, 500_000),
            (-0.5, -500_000),
            (1767600000.1, 1_767_600_000_099_999),
            (0.999999, 999_998),
            (5e-324, 0),
            (-5e-324, -1),
            (0.0, 0),
            (-0.0, 0),
        ];
        for (seconds, micros) in cases {
            assert_eq!(floor_micros(seconds), Some(micros), "{seconds}");
        }
        assert_eq!(floor_micros(f64::NAN), None);
        assert_eq!(floor_micros(1e13), None);
    }
}
