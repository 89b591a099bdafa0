//! Attribute values as the kernel reads them from Python, and the exact arithmetic on them.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};

use crate::num::Num;

/// Python's unit of a sum over floats is 2^-1074 (`aggregates.FLOAT_SCALE_BITS`).
pub const FLOAT_SCALE_BITS: u32 = 1074;

/// An attribute value as read from Python: what the kernel can compute with, or `Other` (an int beyond 64
/// bits, any other object), which leaves the computation that needs it to Python. An int is `Int` where
/// i64 holds it, `UInt` in [2^63, 2^64) (Arrow's uint64, an int of Python's there). Bools and a table's
/// dates, times, timestamps and durations (`Temporal`) are compared, as `predicates.compare` compares
/// them; only Python sums them or takes their least and greatest.
#[derive(Clone, Debug, Default)]
pub enum Raw {
    #[default]
    Null,
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Bool(bool),
    Temporal(Temporal),
    Other,
}

/// A temporal value of one of Python's kinds (`predicates.kind`, in `TEMPORAL_KINDS`' order) as a whole
/// number of its column's unit, which orders the kind's values as Python does: days for a date;
/// microseconds for a datetime (of UTC with a zone), a time of day and a timedelta; nanoseconds for pandas'
/// `Timestamp` and `Timedelta`, which Arrow gives for nanosecond columns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Temporal {
    pub kind: u16,
    pub value: i64,
}

/// Python's kinds of the temporal values a table's columns give (`columnar.column_spec` names them).
pub const TEMPORAL_KINDS: [&str; 8] = [
    "date",
    "datetime",
    "datetime with zone",
    "time",
    "timedelta",
    "Timestamp",
    "Timestamp with zone",
    "Timedelta",
];

impl Raw {
    pub fn read(value: &Bound<'_, PyAny>) -> PyResult<Raw> {
        if value.is_none() {
            return Ok(Raw::Null);
        }
        if let Some(x) = exact_int(value) {
            return Ok(Raw::Int(x));
        }
        if value.is_exact_instance_of::<PyBool>() {
            return Ok(Raw::Bool(value.extract()?));
        }
        if value.is_exact_instance_of::<PyInt>() {
            if let Ok(x) = value.extract::<u64>() {
                return Ok(Raw::UInt(x)); // (beyond i64, so not a bool)
            }
        }
        if value.is_exact_instance_of::<PyFloat>() {
            return Ok(Raw::Float(value.extract()?));
        }
        if let Ok(text) = value.cast_exact::<PyString>() {
            return Ok(Raw::Str(text.to_str()?.to_owned()));
        }
        Ok(Raw::Other)
    }

    /// The value an aggregate reads: None for null, Err for what only Python computes exactly (a string, a
    /// NaN or infinity, an `Other`).
    pub fn number(&self) -> Result<Option<Value>, ()> {
        match *self {
            Raw::Null => Ok(None),
            Raw::Int(x) => Ok(Some(Value::Int(x))),
            Raw::UInt(x) => Ok(Some(Value::UInt(x))),
            Raw::Float(x) if x.is_finite() => Ok(Some(Value::Float(x))),
            _ => Err(()),
        }
    }
}

/// An int exactly (not a bool, not a float) that fits i64.
pub fn exact_int(value: &Bound<'_, PyAny>) -> Option<i64> {
    if !value.is_exact_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
        return None;
    }
    value.extract::<i64>().ok()
}

#[derive(Clone, Copy, Debug)]
pub enum Value {
    Int(i64),
    UInt(u64),  // beyond i64 (`Raw::UInt`)
    Float(f64), // finite
}

/// An exact float as m·2^e with m odd (or zero).
pub fn decompose(x: f64) -> (i64, i32) {
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let fraction = (bits & ((1 << 52) - 1)) as i64;
    let (mut m, mut e) = if exponent == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), exponent - 1075)
    };
    if m == 0 {
        return (0, 0);
    }
    let zeros = m.trailing_zeros();
    m >>= zeros;
    e += zeros as i32;
    (if x < 0.0 { -m } else { m }, e)
}

/// The order of a value as i128 (for MIN/MAX), exact across ints and floats as Python orders them
/// (`partials._extreme_key`): by the number, then among equal numbers -0.0 before an int before any other
/// float (1 and 1.0, 0.0 and -0.0 meet when partitions, calls or tasks merge, in no fixed order). A nonzero
/// magnitude is m·2^e with m made 64 bits long (a double's 53 bits, an int's up to 64): the biased e, then m,
/// orders magnitudes exactly; the sign negates; the two low bits hold the form. Keys lie far inside i128 (below 2^78): its bounds stay
/// the sentinels of no value.
pub fn order_key(value: Value) -> i128 {
    let (negative, magnitude, exponent, form) = match value {
        Value::Int(v) => (v < 0, v.unsigned_abs(), 0, INT_FORM),
        Value::UInt(v) => (false, v, 0, INT_FORM),
        Value::Float(x) if x == 0.0 && x.is_sign_negative() => return NEGATIVE_ZERO_FORM,
        Value::Float(x) => {
            let (m, e) = decompose(x);
            (m < 0, m.unsigned_abs(), e, FLOAT_FORM)
        }
    };
    if magnitude == 0 {
        return form;
    }
    let shift = magnitude.leading_zeros();
    let biased = (exponent - shift as i32 + EXPONENT_BIAS) as i128; // in [1, 2098]
    let key = (biased << 63) | ((magnitude << shift) & (u64::MAX >> 1)) as i128;
    (if negative { -key } else { key }) * 4 + form
}

const NEGATIVE_ZERO_FORM: i128 = 0;
const INT_FORM: i128 = 1;
const FLOAT_FORM: i128 = 2;
/// 1 more than the least exponent of a normalised magnitude, a double's 2^-1074 as 2^63 · 2^-1137.
const EXPONENT_BIAS: i32 = 1138;

/// The value an order key (`order_key`) stands for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Extreme {
    Int(i128),
    Float(f64),
}

pub fn key_value(key: i128) -> Extreme {
    let form = key.rem_euclid(4);
    let signed = (key - form) / 4;
    let magnitude = signed.unsigned_abs();
    let normal = (magnitude as u64 & (u64::MAX >> 1)) | (1 << 63); // the magnitude is normal · 2^exponent
    let exponent = (magnitude >> 63) as i32 - EXPONENT_BIAS;
    let sign = if signed < 0 { -1 } else { 1 };
    match (form, magnitude) {
        (NEGATIVE_ZERO_FORM, 0) => Extreme::Float(-0.0),
        (INT_FORM, 0) => Extreme::Int(0),
        (_, 0) => Extreme::Float(0.0),
        (INT_FORM, _) => Extreme::Int(sign * (normal >> -exponent) as i128), // (an int's exponent: [-63, 0])
        // (a double's 53 bits were shifted by 11 or more)
        _ => Extreme::Float(sign as f64 * times_power_of_two((normal >> 11) as f64, exponent + 11)),
    }
}

/// x · 2^e exactly where the result is a double (x a whole number below 2^53).
fn times_power_of_two(x: f64, e: i32) -> f64 {
    let power = |e: i32| f64::from_bits(((e + 1023) as u64) << 52); // 2^e for e in [-1022, 1023]
    if e >= -1022 {
        x * power(e)
    } else {
        x * power(e + 600) * power(-600) // (the first product is normal; the second rounds nothing)
    }
}

impl Extreme {
    pub fn into_py<'py>(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self {
            Extreme::Int(v) => v.into_pyobject(py)?.into_any(),
            Extreme::Float(x) => PyFloat::new(py, x).into_any(),
        })
    }

    /// As `AggregateState.to_text` writes it: Debug keeps a float's shortest round-trip digits and always a
    /// '.' or an exponent, so JSON reads it back as the same float (not as an int).
    pub fn text(self) -> String {
        match self {
            Extreme::Int(v) => v.to_string(),
            Extreme::Float(x) => format!("{x:?}"),
        }
    }
}

/// What one partition's values of an attribute need: the exponent E of the unit 2^-E in which every value
/// is whole.
#[derive(Clone, Copy, Default)]
pub struct Scale {
    pub exponent: u32,
}

impl Scale {
    pub fn add(&mut self, value: Value) {
        if let Value::Float(x) = value {
            self.exponent = self.exponent.max((-decompose(x).1).max(0) as u32);
        }
    }
}

/// A value in units of 2^-exponent (`exponent` is at least what the value needs: `Scale`).
pub fn summand(value: Value, exponent: u32) -> Num {
    let (m, shift) = match value {
        Value::Int(v) => (v, exponent as i32),
        Value::UInt(v) => return Num::from(v as i128).shl(exponent),
        Value::Float(x) => {
            let (m, e) = decompose(x);
            (m, e + exponent as i32)
        }
    };
    debug_assert!(shift >= 0, "a unit coarser than the value needs");
    Num::from(m as i128).shl(shift.max(0) as u32)
}

#[cfg(test)]
mod tests {
    use super::{key_value, order_key, Extreme, Value};

    /// Each value's exact number as a fraction n / 2^1074 (every int and double here is one).
    fn exact(value: Value) -> i128 {
        let scaled = |m: i128, e: i32| if e >= 0 { m << e } else { m >> -e };
        match value {
            Value::Int(v) => scaled(v as i128, 40),
            Value::UInt(v) => scaled(v as i128, 40),
            Value::Float(x) => {
                let (m, e) = super::decompose(x);
                scaled(m as i128, e + 40)
            }
        }
    }

    #[test]
    fn orders_ints_and_floats_by_their_numbers_then_an_int_first() {
        // (exact within 2^-40 and below 2^80: the comparison above holds for these)
        let values = [
            Value::Float(-1e20),
            Value::Int(i64::MIN),
            Value::Float(-9.223372036854775e18),
            Value::Int(-3),
            Value::Float(-3.0),
            Value::Float(-2.5),
            Value::Float(-1e-10),
            Value::Float(-0.0),
            Value::Int(0),
            Value::Float(0.0),
            Value::Float(2.0f64.powi(-40)),
            Value::Float(0.1),
            Value::Int(1),
            Value::Float(1.0),
            Value::Float(1.0000000000000002),
            Value::Int(100),
            Value::Float(100.5),
            Value::Int(i64::MAX),
            Value::Float(9.223372036854775807e18),
            Value::UInt(u64::MAX),
            Value::Float(1.8446744073709552e19),
            Value::Float(1e20),
        ];
        for pair in values.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            assert!(exact(a) <= exact(b), "{a:?} {b:?}");
            assert!(order_key(a) < order_key(b), "{a:?} {b:?}");
        }
        for v in values {
            let back = match key_value(order_key(v)) {
                Extreme::Int(i) => exact(if i < 0 {
                    Value::Int(i as i64)
                } else {
                    Value::UInt(i as u64)
                }),
                Extreme::Float(x) => exact(Value::Float(x)),
            };
            assert_eq!(back, exact(v), "{v:?}");
        }
    }

    #[test]
    fn gives_back_each_value_in_its_form() {
        let floats = [
            5e-324,
            -5e-324,
            2.2250738585072014e-308,
            1e-300,
            0.1,
            -0.1,
            1.5,
            1e300,
            f64::MAX,
            -f64::MAX,
        ];
        for x in floats {
            assert_eq!(key_value(order_key(Value::Float(x))), Extreme::Float(x));
        }
        for v in [i64::MIN, -1, 0, 1, 7, i64::MAX] {
            assert_eq!(key_value(order_key(Value::Int(v))), Extreme::Int(v as i128));
        }
        assert_eq!(
            key_value(order_key(Value::UInt(u64::MAX))),
            Extreme::Int(u64::MAX as i128)
        );
        assert_eq!(key_value(order_key(Value::Float(0.0))), Extreme::Float(0.0));
        let negative_zero = key_value(order_key(Value::Float(-0.0)));
        assert!(matches!(negative_zero, Extreme::Float(x) if x == 0.0 && x.is_sign_negative()));
        assert!(
            order_key(Value::Float(-f64::MAX)) > i128::MIN / 2 && order_key(Value::Float(f64::MAX)) < i128::MAX / 2
        );
    }
}
