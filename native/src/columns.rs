//! Arrow arrays as the kernel reads them: the buffers of a pyarrow array (validity bitmap, values,
//! offsets, string data), borrowed through Python's buffer protocol without a copy, and the events of a
//! table read from them row by row with no Python object per row (`hamlet/runtime/columnar.py` prepares the
//! arrays: int64, uint64, float64, large_string, bool, int64 temporal values of a kind, or "other" for a type
//! only Python reads exactly).

use std::borrow::Cow;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::values::{Raw, Temporal, TEMPORAL_KINDS};

/// One Arrow buffer, held for the call.
pub struct Bytes(PyBuffer<i8>);

impl Bytes {
    pub fn get(obj: &Bound<'_, PyAny>) -> PyResult<Bytes> {
        let buffer = PyBuffer::<i8>::get(obj)?;
        if !buffer.is_c_contiguous() {
            return Err(PyValueError::new_err("an Arrow buffer that is not contiguous"));
        }
        Ok(Bytes(buffer))
    }

    pub fn bytes(&self) -> &[u8] {
        let len = self.0.len_bytes();
        if len == 0 {
            return &[];
        }
        // Safety: the buffer is contiguous, `len` bytes long, read-only for us and held by `self`.
        unsafe { std::slice::from_raw_parts(self.0.buf_ptr() as *const u8, len) }
    }

    /// The buffer as 8-byte values (Arrow aligns its buffers to 64 bytes; a copy where one is not).
    pub fn words<T: Word>(&self) -> Cow<'_, [T]> {
        let bytes = self.bytes();
        let n = bytes.len() / 8;
        if (bytes.as_ptr() as usize).is_multiple_of(8) {
            // Safety: aligned, `n` whole 8-byte values inside the buffer, any bit pattern valid for T.
            Cow::Borrowed(unsafe { std::slice::from_raw_parts(bytes.as_ptr() as *const T, n) })
        } else {
            Cow::Owned(
                bytes
                    .chunks_exact(8)
                    .map(|c| T::from_le(c.try_into().expect("8 bytes")))
                    .collect(),
            )
        }
    }
}

/// i64, u64 and f64: any 8 bytes are one.
pub trait Word: Copy {
    fn from_le(bytes: [u8; 8]) -> Self;
}

impl Word for i64 {
    fn from_le(bytes: [u8; 8]) -> Self {
        i64::from_le_bytes(bytes)
    }
}

impl Word for u64 {
    fn from_le(bytes: [u8; 8]) -> Self {
        u64::from_le_bytes(bytes)
    }
}

impl Word for f64 {
    fn from_le(bytes: [u8; 8]) -> Self {
        f64::from_le_bytes(bytes)
    }
}

/// An attribute column: (kind, offset, validity, values, data) as Python hands it over.
pub type ColumnSpec<'py> = (
    String,
    usize,
    Option<Bound<'py, PyAny>>,
    Option<Bound<'py, PyAny>>,
    Option<Bound<'py, PyAny>>,
);

pub enum Values<'a> {
    Null,
    Int(Cow<'a, [i64]>),
    UInt(Cow<'a, [u64]>), // uint64: values beyond i64 stay exact (`Raw::UInt`)
    Float(Cow<'a, [f64]>),
    Str(Cow<'a, [i64]>, &'a [u8]), // large_string: offsets, data
    Bool(&'a [u8]),                // a bitmap
    Temporal(u16, Cow<'a, [i64]>), // a kind of `TEMPORAL_KINDS`, its values in the kind's unit
    Other,                         // a value only Python reads exactly (a decimal of 39 digits, bytes...)
}

pub struct Column<'a> {
    offset: usize,
    validity: Option<&'a [u8]>,
    values: Values<'a>,
}

/// The buffers of one column, held while its `Column` reads them.
pub struct Held {
    kind: String,
    offset: usize,
    validity: Option<Bytes>,
    values: Option<Bytes>,
    data: Option<Bytes>,
}

impl Held {
    pub fn new(spec: &ColumnSpec<'_>) -> PyResult<Held> {
        let (kind, offset, validity, values, data) = spec;
        let get = |b: &Option<Bound<'_, PyAny>>| b.as_ref().map(Bytes::get).transpose();
        Ok(Held {
            kind: kind.clone(),
            offset: *offset,
            validity: get(validity)?,
            values: get(values)?,
            data: get(data)?,
        })
    }

    pub fn column(&self) -> PyResult<Column<'_>> {
        let missing = || PyValueError::new_err(format!("a {} column without its buffers", self.kind));
        let (values, data) = (
            self.values.as_ref().ok_or_else(missing),
            self.data.as_ref().ok_or_else(missing),
        );
        let values = match self.kind.as_str() {
            "null" => Values::Null,
            "other" => Values::Other,
            "int" => Values::Int(values?.words()),
            "uint" => Values::UInt(values?.words()),
            "float" => Values::Float(values?.words()),
            "str" => Values::Str(values?.words(), data?.bytes()),
            "bool" => Values::Bool(values?.bytes()),
            kind => match kind
                .strip_prefix("temporal:")
                .and_then(|k| TEMPORAL_KINDS.iter().position(|&t| t == k))
            {
                Some(k) => Values::Temporal(k as u16, values?.words()),
                None => return Err(PyValueError::new_err(format!("a column of kind {kind:?}"))),
            },
        };
        Ok(Column {
            offset: self.offset,
            validity: self.validity.as_ref().map(Bytes::bytes),
            values,
        })
    }
}

impl Column<'_> {
    /// The value of row `row` as the kernel reads an event's attribute (`Raw::read`).
    pub fn raw(&self, row: usize) -> Raw {
        let i = self.offset + row;
        if let Some(bits) = self.validity {
            if bits[i / 8] & (1 << (i % 8)) == 0 {
                return Raw::Null;
            }
        }
        match &self.values {
            Values::Null => Raw::Null,
            Values::Int(v) => Raw::Int(v[i]),
            Values::UInt(v) => i64::try_from(v[i]).map_or(Raw::UInt(v[i]), Raw::Int),
            Values::Float(v) => Raw::Float(v[i]),
            Values::Str(offsets, data) => {
                let (from, to) = (offsets[i] as usize, offsets[i + 1] as usize);
                // Arrow strings are UTF-8; a lossy read never changes valid text.
                Raw::Str(String::from_utf8_lossy(&data[from..to]).into_owned())
            }
            Values::Bool(bits) => Raw::Bool(bits[i / 8] & (1 << (i % 8)) != 0),
            Values::Temporal(kind, v) => Raw::Temporal(Temporal {
                kind: *kind,
                value: v[i],
            }),
            Values::Other => Raw::Other,
        }
    }
}
