//! Attribute values as the kernel reads them from Python, and the exact arithmetic on them.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};

use crate::num::Num;

/// Python's unit of a sum over floats is 2^-1074 (`aggregates.FLOAT_SCALE_BITS`).
pub const FLOAT_SCALE_BITS: u32 = 1074;

/// An attribute value as read from Python: what the kernel can compute with, or `Other` (a bool, an int
/// beyond 64 bits, any other object), which leaves the computation that needs it to Python. An int is
/// `Int` where i64 holds it, `UInt` in [2^63, 2^64) (Arrow's uint64, an int of Python's there).
#[derive(Clone, Debug, Default)]
pub enum Raw {
    #[default]
    Null,
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Other,
}

impl Raw {
    pub fn read(value: &Bound<'_, PyAny>) -> PyResult<Raw> {
        if value.is_none() {
            return Ok(Raw::Null);
        }
        if let Some(x) = exact_int(value) {
            return Ok(Raw::Int(x));
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
    /// NaN or infinity, -0.0, whose MIN/MAX Python keeps by first occurrence, an `Other`).
    pub fn number(&self) -> Result<Option<Value>, ()> {
        match *self {
            Raw::Null => Ok(None),
            Raw::Int(x) => Ok(Some(Value::Int(x))),
            Raw::UInt(x) => Ok(Some(Value::UInt(x))),
            Raw::Float(x) if x.is_finite() && !(x == 0.0 && x.is_sign_negative()) => Ok(Some(Value::Float(x))),
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
    Float(f64), // finite, not -0.0
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

/// The order of a value as i128 (for MIN/MAX): ints as themselves, floats by their bits, negative ones
/// flipped. One attribute's values are compared only among ints or only among floats.
pub fn order_key(value: Value) -> i128 {
    match value {
        Value::Int(v) => v as i128,
        Value::UInt(v) => v as i128,
        Value::Float(x) => {
            let bits = x.to_bits() as i64;
            (if bits < 0 { bits ^ i64::MAX } else { bits }) as i128
        }
    }
}

pub fn key_float(key: i128) -> f64 {
    let key = key as i64;
    f64::from_bits((if key < 0 { key ^ i64::MAX } else { key }) as u64)
}

/// What one partition's values of an attribute are: ints, floats, and the exponent E of the unit 2^-E in
/// which every value is whole.
#[derive(Clone, Copy, Default)]
pub struct Scale {
    pub ints: bool,
    pub floats: bool,
    pub exponent: u32,
}

impl Scale {
    pub fn add(&mut self, value: Value) {
        match value {
            Value::Int(_) | Value::UInt(_) => self.ints = true,
            Value::Float(x) => {
                self.floats = true;
                self.exponent = self.exponent.max((-decompose(x).1).max(0) as u32);
            }
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
