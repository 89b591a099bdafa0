//! Exact integers of any size: counts reach 2^n and sums of floats are whole numbers of 2^-1074, so no
//! fixed width holds them. `Num` computes in i128 while the result fits and promotes to an
//! arbitrary-precision `BigInt` (num-bigint) on overflow, so the common case costs a checked machine add
//! and nothing is ever handed back to Python for being large.

use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{ToPrimitive, Zero};
use pyo3::prelude::*;

/// An i128 aligned to 8 bytes: with i128's own 16, a `Num` takes 32 bytes and an aggregate vector of four
/// (`graph::Agg`) 144, which every move copies through `memcpy`; packed, they take 24 and 104.
#[derive(Clone, Copy)]
#[repr(C, packed(8))]
pub struct Word(i128);

impl Word {
    #[inline]
    fn get(self) -> i128 {
        self.0
    }
}

impl PartialEq for Word {
    fn eq(&self, other: &Word) -> bool {
        self.get() == other.get()
    }
}

impl Eq for Word {}

impl std::fmt::Debug for Word {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Num {
    Small(Word),
    Big(Box<BigInt>), // boxed: a `Num` stays three words wide; may shrink back into i128's range (still exact)
}

const _: () = assert!(std::mem::size_of::<Num>() == 24);

impl Default for Num {
    fn default() -> Self {
        Num::ZERO
    }
}

impl From<i128> for Num {
    fn from(x: i128) -> Self {
        Num::Small(Word(x))
    }
}

impl Num {
    pub const ZERO: Num = Num::Small(Word(0));
    pub const ONE: Num = Num::Small(Word(1));

    fn big(&self) -> BigInt {
        match self {
            Num::Small(x) => BigInt::from(x.get()),
            Num::Big(x) => (**x).clone(),
        }
    }

    fn from_big(x: BigInt) -> Num {
        match x.to_i128() {
            Some(small) => Num::from(small),
            None => Num::Big(Box::new(x)),
        }
    }

    pub fn is_zero(&self) -> bool {
        match self {
            Num::Small(x) => x.get() == 0,
            Num::Big(x) => x.is_zero(),
        }
    }

    /// The value as i128 where it fits (MIN/MAX order keys always do).
    pub fn small(&self) -> Option<i128> {
        match self {
            Num::Small(x) => Some(x.get()),
            Num::Big(x) => x.to_i128(),
        }
    }

    /// self += other: two machine words inline (most additions: counts of short trends, and a joint graph's
    /// blocks of zeros, `joint.rs`, which num-bigint would still walk digit by digit), the rest out of line.
    #[inline]
    pub fn add_assign(&mut self, other: &Num) {
        match (&mut *self, other) {
            (_, Num::Small(b)) if b.get() == 0 => {}
            (Num::Small(a), Num::Small(b)) if a.get().checked_add(b.get()).is_some() => *a = Word(a.get() + b.get()),
            _ => self.add_assign_wide(other),
        }
    }

    #[inline(never)]
    fn add_assign_wide(&mut self, other: &Num) {
        match (&mut *self, other) {
            (Num::Small(a), Num::Small(b)) => match a.get().checked_add(b.get()) {
                Some(s) => *a = Word(s),
                None => *self = Num::Big(Box::new(BigInt::from(a.get()) + b.get())),
            },
            (Num::Big(a), Num::Small(b)) => add_small(a, b.get()),
            (Num::Big(a), Num::Big(b)) if a.sign() == b.sign() => add_to_magnitude(a, |m| *m += b.magnitude()),
            (Num::Big(a), Num::Big(b)) => **a += &**b,
            (Num::Small(a), Num::Big(b)) if a.get() == 0 => *self = Num::Big(b.clone()), // (a copy, no addition)
            (Num::Small(a), Num::Big(b)) => {
                let mut sum = b.clone();
                add_small(&mut sum, a.get());
                *self = Num::Big(sum);
            }
        }
    }

    /// self += self, a big self shifted where it lies (`add_assign` of a copy would copy it first).
    pub fn double(&mut self) {
        match self {
            Num::Small(a) => match a.get().checked_mul(2) {
                Some(d) => *a = Word(d),
                None => *self = Num::Big(Box::new(BigInt::from(a.get()) << 1usize)),
            },
            Num::Big(a) => **a <<= 1usize,
        }
    }

    pub fn sub_assign(&mut self, other: &Num) {
        self.add_assign(&other.neg());
    }

    pub fn neg(&self) -> Num {
        match self {
            Num::Small(x) => x
                .get()
                .checked_neg()
                .map_or_else(|| Num::from_big(-BigInt::from(x.get())), Num::from),
            Num::Big(x) => Num::Big(Box::new(-&**x)),
        }
    }

    pub fn mul(&self, other: &Num) -> Num {
        match (self, other) {
            // (two 64-bit factors never overflow i128: no call to the checked 128-bit multiplication)
            (Num::Small(a), Num::Small(b)) if i64::try_from(a.get()).is_ok() && i64::try_from(b.get()).is_ok() => {
                Num::from(a.get() * b.get())
            }
            (Num::Small(a), Num::Small(b)) => match a.get().checked_mul(b.get()) {
                Some(p) => Num::from(p),
                None => Num::from_big(BigInt::from(a.get()) * b.get()),
            },
            (Num::Big(a), Num::Small(b)) | (Num::Small(b), Num::Big(a)) => Num::from_big(&**a * b.get()),
            (Num::Big(a), Num::Big(b)) => Num::from_big(&**a * &**b),
        }
    }

    /// self ·= other. A big self times a small factor (a graphlet's C, Table 3: ≤ 2^b − 1 for a burst of b
    /// timestamps, so one machine word for any burst below 64 of them) scales its digits where they are, with
    /// no copy of the thousands of digits a count reaches; `mul` would copy them first.
    pub fn mul_assign(&mut self, other: &Num) {
        match (&mut *self, other) {
            (Num::Big(a), Num::Small(b)) => {
                **a *= b.get();
                if a.bits() <= 128 {
                    *self = Num::from_big(std::mem::take(&mut **a)); // (i128 while it fits, as `mul` keeps it)
                }
            }
            _ => *self = self.mul(other),
        }
    }

    /// self · 2^bits.
    pub fn shl(&self, bits: u32) -> Num {
        if let Num::Small(x) = self {
            let x = x.get();
            if x == 0 {
                return Num::ZERO;
            }
            if bits < 126 && x.unsigned_abs().leading_zeros() > bits + 1 {
                return Num::from(x << bits);
            }
        }
        Num::from_big(self.big() << bits as usize)
    }

    /// The value as a partial state writes it (`hamlet.partials.state_int_text`): decimal within i128, beyond
    /// it hexadecimal (`0x…`, `-0x…`). Both ways linear, where the decimal digits of a count of thousands of
    /// them are quadratic to write here and to read back in Python (which refuses past 4,300 digits); the
    /// decimal digits a user reads are written once, for the final value.
    pub fn to_text(&self) -> String {
        match self.small() {
            Some(x) => x.to_string(),
            None => hex_text(&self.big()),
        }
    }

    /// self · 2^-exponent as a reduced fraction (numerator, denominator), each as `to_text` writes an
    /// integer: how `AggregateState` writes a sum (a `Fraction`).
    pub fn ratio_text(&self, exponent: u32) -> (String, String) {
        if self.is_zero() {
            return ("0".to_owned(), "1".to_owned());
        }
        let zeros = match self {
            Num::Small(x) => x.get().trailing_zeros(),
            Num::Big(x) => x.trailing_zeros().map_or(u32::MAX, |z| z.min(u32::MAX as u64) as u32),
        };
        let shift = zeros.min(exponent);
        let numerator = match self {
            Num::Small(x) => (x.get() >> shift).to_string(),
            Num::Big(x) => Num::from_big(&**x >> shift as usize).to_text(),
        };
        let denominator = exponent - shift;
        let denominator = if denominator < 127 {
            (1i128 << denominator).to_string()
        } else {
            hex_text(&(BigInt::from(1) << denominator as usize))
        };
        (numerator, denominator)
    }

    pub fn into_py<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self {
            Num::Small(x) => x.get().into_pyobject(py)?.into_any(),
            Num::Big(x) => (**x).clone().into_pyobject(py)?.into_any(),
        })
    }
}

/// big += small: where the signs agree, the small magnitude added to the big one's digits where they lie.
fn add_small(big: &mut BigInt, small: i128) {
    match big.sign() {
        Sign::Plus if small >= 0 => add_to_magnitude(big, |m| *m += small as u128),
        Sign::Minus if small <= 0 => add_to_magnitude(big, |m| *m += small.unsigned_abs()),
        _ => *big += small,
    }
}

/// |big| grows by `add`, its sign kept. num-bigint's `BigInt += x` moves the number out and back through a
/// by-value `Add`: about a tenth of a joint graph's time on counts just past 128 bits (`bench/issue16_workloads.py`,
/// prices: hamlet 11.1 -> 10.1 ms), where `BigUint += x` adds to the digits in place.
fn add_to_magnitude(big: &mut BigInt, add: impl FnOnce(&mut BigUint)) {
    let (sign, mut magnitude) = std::mem::take(big).into_parts();
    add(&mut magnitude);
    *big = BigInt::from_biguint(sign, magnitude);
}

/// `0x` and the hexadecimal digits (`-0x` below zero), as Python's `hex` writes an int.
fn hex_text(x: &BigInt) -> String {
    let sign = if x.sign() == Sign::Minus { "-" } else { "" };
    format!("{sign}0x{}", x.magnitude().to_str_radix(16))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotes_on_overflow_and_stays_exact() {
        let mut x = Num::from(i128::MAX);
        x.add_assign(&Num::ONE);
        assert_eq!(x, Num::Big(Box::new(BigInt::from(i128::MAX) + 1)));
        x.sub_assign(&Num::ONE);
        assert_eq!(x.small(), Some(i128::MAX));
        let big = Num::from(1).shl(300);
        assert_eq!(big.mul(&Num::from(3)).big(), BigInt::from(3) << 300usize);
        assert_eq!(Num::from(i128::MIN).neg().big(), -BigInt::from(i128::MIN));
        assert_eq!(Num::from(-5).shl(3), Num::from(-40));
        assert_eq!(Num::from(1).shl(126).big(), BigInt::from(1) << 126usize);
    }

    /// A few hundred values around the word and i128 boundaries, both signs, small and big.
    fn boundary_values() -> Vec<BigInt> {
        let mut values: Vec<BigInt> = Vec::new();
        for bits in [0usize, 1, 2, 31, 32, 63, 64, 65, 126, 127, 128, 129, 200, 4000] {
            for delta in [-1i64, 0, 1] {
                let x = (BigInt::from(1) << bits) + delta;
                values.push(x.clone());
                values.push(-x);
            }
        }
        values.push(BigInt::from(i128::MIN));
        values.push(BigInt::from(i128::MAX));
        values
    }

    #[test]
    fn adds_in_place_exactly() {
        // Every pair, each operand held small where it fits and also held big (as a sum may leave it).
        let values = boundary_values();
        let held = |x: &BigInt| [Num::from_big(x.clone()), Num::Big(Box::new(x.clone()))];
        for x in &values {
            for y in &values {
                for a in held(x) {
                    for b in held(y) {
                        let mut got = a.clone();
                        got.add_assign(&b);
                        assert_eq!(got.big(), x + y, "{x} + {y}");
                        let mut got = a.clone();
                        got.sub_assign(&b);
                        assert_eq!(got.big(), x - y, "{x} - {y}");
                    }
                }
            }
        }
    }

    #[test]
    fn multiplies_in_place_exactly() {
        let values = boundary_values();
        for x in &values {
            for y in &values {
                let mut got = Num::from_big(x.clone());
                got.mul_assign(&Num::from_big(y.clone()));
                assert_eq!(got.big(), x * y, "{x} * {y}");
                assert_eq!(got, Num::from_big(x * y), "{x} * {y}: i128 while it fits"); // (Big only beyond it)
                assert_eq!(got, Num::from_big(x.clone()).mul(&Num::from_big(y.clone())));
            }
        }
    }

    #[test]
    fn writes_sums_as_reduced_fractions() {
        let text = |n: &Num, e: u32| n.ratio_text(e);
        assert_eq!(text(&Num::from(12), 0), ("12".into(), "1".into()));
        assert_eq!(text(&Num::from(12), 3), ("3".into(), "2".into()));
        assert_eq!(text(&Num::from(-12), 1), ("-6".into(), "1".into()));
        assert_eq!(text(&Num::ZERO, 1074), ("0".into(), "1".into()));
        let (n, d) = text(&Num::from(3).shl(200), 1074);
        assert_eq!(n, "3");
        assert_eq!(d, format!("0x4{}", "0".repeat(218))); // 2^874
        let (n, d) = text(&Num::from(3).shl(200), 4);
        assert_eq!(n, format!("0x3{}", "0".repeat(49))); // 3 · 2^196
        assert_eq!(d, "1");
    }

    #[test]
    fn writes_integers_beyond_i128_in_hexadecimal() {
        let mut max = Num::from(i128::MAX);
        assert_eq!(max.to_text(), i128::MAX.to_string());
        assert_eq!(Num::from(i128::MIN).to_text(), i128::MIN.to_string());
        max.add_assign(&Num::ONE);
        assert_eq!(max.to_text(), format!("0x8{}", "0".repeat(31)));
        assert_eq!(max.neg().to_text(), i128::MIN.to_string()); // -2^127: in i128, though held big
        max.add_assign(&Num::ONE);
        assert_eq!(max.neg().to_text(), format!("-0x8{}1", "0".repeat(30)));
        assert_eq!(Num::from(1).shl(130).to_text(), format!("0x4{}", "0".repeat(32)));
    }
}
