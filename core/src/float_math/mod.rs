//! Every transcendental function of floats the engine computes, in one
//! place: the numeric tower's `exp`, `log`, the trigonometric functions,
//! `expt` of flonums, the complex functions ([`C64`]) and what the search
//! indexes take logarithms of.
//!
//! They are pxfm's (pure Rust, ports of CORE-MATH and LLVM's libc), which
//! rounds every function used here correctly: the result is the binary64
//! (or binary32) nearest the exact value. That makes the result one
//! function of the argument, the same bits natively (where the standard
//! methods are glibc's), inside wasmtime and in the browser (where they are
//! Rust's `libm`, which is not correctly rounded). `tests/tidy.rs` checks
//! that no other file of the core calls the standard float methods for
//! these. Square roots stay `f64::sqrt`: IEEE 754 rounds them correctly
//! on every target.
//!
//! Special values are IEEE 754's (C99 Annex F): NaN in gives NaN, the
//! infinities and signed zeros give what the standard says, nothing panics.
//! Where pxfm 0.1.30 does not (checked against mpmath and glibc), this
//! module answers first: `sinh(-0.0)`, the sign of an `atan2` that
//! underflows to zero, `pow` of a NaN to the power 0 and of 1 to a NaN, of
//! a negative base to an odd power that underflows, of a huge base to the
//! powers -1/2 (NaN) and -2 (0 instead of a subnormal); and `hypot` is
//! this module's own, since pxfm's is not correctly rounded without FMA.

mod complex;
mod hypot;

use num_traits::ToPrimitive;

pub use complex::C64;

/// e^x.
pub fn exp(x: f64) -> f64 {
    pxfm::f_exp(x)
}

/// The natural logarithm.
pub fn ln(x: f64) -> f64 {
    pxfm::f_log(x)
}

/// The logarithm in base 2.
pub fn log2(x: f64) -> f64 {
    pxfm::f_log2(x)
}

/// The logarithm in base 10.
pub fn log10(x: f64) -> f64 {
    pxfm::f_log10(x)
}

/// The natural logarithm of a binary32 (the lexical index's weights).
pub fn ln_f32(x: f32) -> f32 {
    pxfm::f_logf(x)
}

pub fn sin(x: f64) -> f64 {
    pxfm::f_sin(x)
}

pub fn cos(x: f64) -> f64 {
    pxfm::f_cos(x)
}

pub fn tan(x: f64) -> f64 {
    pxfm::f_tan(x)
}

pub fn asin(x: f64) -> f64 {
    pxfm::f_asin(x)
}

pub fn acos(x: f64) -> f64 {
    pxfm::f_acos(x)
}

pub fn atan(x: f64) -> f64 {
    pxfm::f_atan(x)
}

/// The angle of the point (x, y), in [-π, π]: `(atan y x)`.
pub fn atan2(y: f64, x: f64) -> f64 {
    let a = pxfm::f_atan2(y, x);
    // A result that underflows to zero has the sign of y (pxfm's is +0).
    if a == 0.0 {
        a.copysign(y)
    } else {
        a
    }
}

pub fn sinh(x: f64) -> f64 {
    // sinh ±0 = ±0 (pxfm gives +0 for -0).
    if x == 0.0 {
        x
    } else {
        pxfm::f_sinh(x)
    }
}

pub fn cosh(x: f64) -> f64 {
    pxfm::f_cosh(x)
}

/// 2^k, for k in the normal exponents.
fn pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// x^y, as C's `pow` (C99 F.9.4.4).
pub fn pow(x: f64, y: f64) -> f64 {
    // 1 for a zero exponent or a base of 1, whatever the other is (NaN too).
    if y == 0.0 || x == 1.0 {
        return 1.0;
    }
    // A negative base to an integer power: the positive base's power, with
    // the sign of an odd power (also when it underflows to zero).
    if x < 0.0 && x.is_finite() && y.is_finite() && y.trunc() == y {
        let odd = y.abs() < pow2(53) && (y as i64) % 2 != 0;
        let p = pow(-x, y);
        return if odd { -p } else { p };
    }
    // pxfm's shortcuts for these exponents fail on huge bases.
    if y == -0.5 && x.is_finite() && x >= pow2(996) {
        // x^-1/2 = (x 2^-1000)^-1/2 2^-500, both scalings exact.
        return pxfm::f_pow(x * pow2(-1000), -0.5) * pow2(-500);
    }
    if y == -2.0 && x.is_finite() && x.abs() >= pow2(511) {
        return inverse_square_subnormal(x.abs());
    }
    let p = pxfm::f_pow(x, y);
    // Its small integer powers (up to 102) lose bits below 2^-1022 in
    // their error term: results near or in the subnormals are rounded
    // twice, or to zero.
    if p.abs() < pow2(-968) && x > 0.0 && (1.0..=102.0).contains(&y) && y.trunc() == y {
        return small_power(x, y as u32);
    }
    p
}

/// x^n correctly rounded, for a finite x > 0 whose power is below about
/// 2^-968: x = m 2^e exactly (m an integer), so x^n is m^n 2^(ne), whose
/// binary64 is found by rounding that integer (ties to even).
fn small_power(x: f64, n: u32) -> f64 {
    let bits = x.to_bits();
    let (m, e) = match (bits >> 52) & 0x7ff {
        0 => (bits & ((1 << 52) - 1), -1074i64),
        b => ((bits & ((1 << 52) - 1)) | (1 << 52), b as i64 - 1075),
    };
    let n = n as i64;
    // x < 2^(e + 53): a power below 2^-1076 rounds to zero.
    if (e + 53) * n < -1076 {
        return 0.0;
    }
    let power = num_bigint::BigUint::from(m).pow(n as u32);
    // The value is 2^top to 2^(top+1); its last bit is worth 2^low.
    let top = power.bits() as i64 - 1 + n * e;
    let low = (top - 52).max(-1074);
    let shift = n * e - low;
    let units = if shift >= 0 {
        power << shift as u64
    } else {
        let s = (-shift) as u64;
        let floor = &power >> s;
        let rest = &power - (&floor << s);
        let half = num_bigint::BigUint::from(1u8) << (s - 1);
        if rest > half || (rest == half && floor.bit(0)) {
            floor + 1u8
        } else {
            floor
        }
    };
    // At most 2^53 units (53 bits, or one more after rounding up): exact.
    let units = units.to_u64().map_or(f64::INFINITY, |u| u as f64);
    if low >= -1022 {
        units * pow2(low as i32)
    } else {
        units * f64::from_bits(1 << (low + 1074))
    }
}

/// 1/a², correctly rounded, for a finite a ≥ 2^511: a subnormal (or
/// 2^-1022, or 0). With a = m 2^e (m an integer below 2^53) it is
/// m^-2 2^-2e, that is n units of 2^-1074 with n = 2^t / m² rounded to
/// the nearest integer (ties to even), t = 1074 - 2e.
fn inverse_square_subnormal(a: f64) -> f64 {
    let bits = a.to_bits();
    let m = (bits & ((1 << 52) - 1)) | (1 << 52);
    let e = ((bits >> 52) & 0x7ff) as i32 - 1075;
    let t = 1074 - 2 * e;
    let p = (m as u128) * (m as u128); // in [2^104, 2^106)
    if t < 103 {
        return 0.0; // below half of 2^-1074 (or exactly half: even is 0)
    }
    // q = floor(2^(t+1) / p) by long division, 21 bits at a time so that
    // the remainder (below p < 2^106) shifted stays within 128 bits.
    let (mut q, mut r) = (0u128, 1u128);
    let mut left = t + 1;
    while left > 0 {
        let k = left.min(21);
        r <<= k;
        q = (q << k) + r / p;
        r %= p;
        left -= k;
    }
    // q/2 is n's floor; q odd means at least half past it, a tie only
    // when nothing remains.
    let mut n = q >> 1;
    if q & 1 == 1 && (r != 0 || n & 1 == 1) {
        n += 1;
    }
    n as f64 * f64::from_bits(1)
}

/// √(x² + y²) without overflow or underflow in between, correctly rounded
/// (this module's own; pxfm's is not without FMA).
pub fn hypot(x: f64, y: f64) -> f64 {
    hypot::hypot(x, y)
}

/// The square root: IEEE 754's, correctly rounded on every target.
pub fn sqrt(x: f64) -> f64 {
    x.sqrt()
}

#[cfg(test)]
mod tests;
