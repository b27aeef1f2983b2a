//! The numeric tower: fixnums, bignums, exact rationals and flonums.
//!
//! `Num` is the owned working form used by the slow paths; the VM handles
//! fixnum arithmetic inline and only falls back here on overflow or mixed
//! types. Results are normalised: an integer that fits a fixnum is a fixnum,
//! a rational with denominator 1 is an integer.

pub mod work;

use std::cmp::Ordering;

use num_bigint::{BigInt, Sign};
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

use crate::float_math;

pub use work::{Unmetered, Work};

#[derive(Clone, Debug, PartialEq)]
pub enum Num {
    Int(i64),
    Big(BigInt),
    Rat(BigRational),
    Float(f64),
}

impl Num {
    /// An exact integer in `0..=u64::MAX` (ids of stored nodes and versions).
    pub fn to_u64(&self) -> Option<u64> {
        match self {
            Num::Int(i) => u64::try_from(*i).ok(),
            Num::Big(b) => b.to_u64(),
            _ => None,
        }
    }

    pub fn from_u64(n: u64) -> Num {
        match i64::try_from(n) {
            Ok(i) => Num::Int(i),
            Err(_) => Num::Big(BigInt::from(n)),
        }
    }

    pub fn normalize(self) -> Num {
        match self {
            Num::Big(b) => match b.to_i64() {
                Some(i) => Num::Int(i),
                None => Num::Big(b),
            },
            Num::Rat(q) => {
                if q.denom().is_one() {
                    Num::Big(q.numer().clone()).normalize()
                } else {
                    Num::Rat(q)
                }
            }
            n => n,
        }
    }

    pub fn is_exact(&self) -> bool {
        !matches!(self, Num::Float(_))
    }

    /// 64-bit limbs it holds: what reading or copying it costs.
    pub fn limbs(&self) -> u64 {
        match self {
            Num::Big(b) => b.bits() / 64 + 1,
            Num::Rat(q) => (q.numer().bits() + q.denom().bits()) / 64 + 2,
            _ => 1,
        }
    }

    pub fn is_integer(&self) -> bool {
        match self {
            Num::Int(_) | Num::Big(_) => true,
            Num::Rat(_) => false,
            Num::Float(f) => f.is_finite() && f.fract() == 0.0,
        }
    }

    pub fn to_f64(&self) -> f64 {
        match self {
            Num::Int(i) => *i as f64,
            Num::Big(b) => b.to_f64().unwrap_or(f64::NAN),
            Num::Rat(q) => rat_to_f64(q),
            Num::Float(f) => *f,
        }
    }

    fn to_big(&self) -> BigInt {
        match self {
            Num::Int(i) => BigInt::from(*i),
            Num::Big(b) => b.clone(),
            _ => BigInt::zero(),
        }
    }

    fn to_rat(&self) -> BigRational {
        match self {
            Num::Int(i) => BigRational::from_integer(BigInt::from(*i)),
            Num::Big(b) => BigRational::from_integer(b.clone()),
            Num::Rat(q) => q.clone(),
            Num::Float(f) => BigRational::from_float(*f).unwrap_or_else(BigRational::zero),
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Num::Int(_) => 0,
            Num::Big(_) => 1,
            Num::Rat(_) => 2,
            Num::Float(_) => 3,
        }
    }

    pub fn is_zero(&self) -> bool {
        match self {
            Num::Int(i) => *i == 0,
            Num::Big(b) => b.is_zero(),
            Num::Rat(q) => q.is_zero(),
            Num::Float(f) => *f == 0.0,
        }
    }

    pub fn sign(&self) -> Ordering {
        match self {
            Num::Int(i) => i.cmp(&0),
            Num::Big(b) => b.sign_cmp(),
            Num::Rat(q) => q.numer().sign_cmp(),
            Num::Float(f) => f.partial_cmp(&0.0).unwrap_or(Ordering::Equal),
        }
    }
}

trait SignCmp {
    fn sign_cmp(&self) -> Ordering;
}
impl SignCmp for BigInt {
    fn sign_cmp(&self) -> Ordering {
        match self.sign() {
            Sign::Minus => Ordering::Less,
            Sign::NoSign => Ordering::Equal,
            Sign::Plus => Ordering::Greater,
        }
    }
}

/// The flonum nearest `q`, ties to even, as `exact->inexact` must give.
/// Dividing the two halves as flonums rounds twice (each half, then the
/// quotient) once either has more than 53 bits, and scaling both down
/// first loses the low bits and every subnormal result:
/// `(inexact (/ (expt 10 400) (+ (expt 10 399) 1)))` came out as
/// 9.999999999999998 and `(inexact (/ 1 (expt 2 1074)))` as 0.0. So the
/// quotient is taken in integers, to at least 55 bits with a sticky bit for
/// the remainder, and rounded once to the bits the result has room for.
fn rat_to_f64(q: &BigRational) -> f64 {
    let (n, d) = (q.numer(), q.denom());
    if let (Some(a), Some(b)) = (n.to_i64(), d.to_i64()) {
        // Both exact as flonums: IEEE division rounds once, correctly.
        if a.unsigned_abs() <= 1 << 53 && b.unsigned_abs() <= 1 << 53 {
            return a as f64 / b as f64;
        }
    }
    let negative = n.sign() == Sign::Minus;
    let signed = |x: f64| if negative { -x } else { x };
    let n = n.abs();
    let d = d.abs();
    // n / d lies in [2^(gap-1), 2^(gap+1)).
    let gap = n.bits() as i64 - d.bits() as i64;
    if gap > 1025 {
        return signed(f64::INFINITY);
    }
    if gap < -1076 {
        // Below half the least subnormal: rounds to zero.
        return signed(0.0);
    }
    // quotient = floor(n * 2^s / d), between 2^54 and 2^56.
    let s = 55 - gap;
    let (num, den) = if s >= 0 {
        (n << s as usize, d)
    } else {
        (n, d << (-s) as usize)
    };
    let (quotient, remainder) = num.div_rem(&den);
    let sticky = !remainder.is_zero();
    // The value is quotient * 2^-s; keep 53 bits, or fewer where the
    // result is subnormal (its last bit is then worth 2^-1074).
    let len = quotient.bits() as i64;
    let drop = (len - 53).max(s - 1074);
    if drop > len + 1 {
        return signed(0.0);
    }
    let drop = drop as usize;
    let kept = &quotient >> drop;
    let lost = &quotient - (&kept << drop);
    let half = BigInt::one() << (drop - 1);
    let mut mantissa = kept.to_u64().unwrap_or(0);
    let round_up = match lost.cmp(&half) {
        Ordering::Greater => true,
        Ordering::Equal => sticky || mantissa & 1 == 1,
        Ordering::Less => false,
    };
    if round_up {
        mantissa += 1;
    }
    // mantissa <= 2^53 is exact as a flonum, and so is each power of two
    // below; the products are exact unless the result overflows.
    let exponent = drop as i64 - s;
    let pow2 = |e: i64| f64::from_bits(((e + 1023) as u64) << 52);
    let x = mantissa as f64;
    signed(if exponent >= -1022 {
        if exponent > 1023 {
            f64::INFINITY
        } else {
            x * pow2(exponent)
        }
    } else {
        x * pow2(exponent + 52) * pow2(-52)
    })
}

// Arithmetic charges its superlinear work (products, quotients, gcds) to
// `w`; reading the operands, which is linear, is charged by the caller.

pub fn add<W: Work>(a: &Num, b: &Num, w: &mut W) -> Result<Num, W::Stop> {
    Ok(match (a, b) {
        (Num::Int(x), Num::Int(y)) => match x.checked_add(*y) {
            Some(z) => Num::Int(z),
            None => Num::Big(BigInt::from(*x) + BigInt::from(*y)),
        },
        _ => match a.rank().max(b.rank()) {
            3 => Num::Float(a.to_f64() + b.to_f64()),
            2 => Num::Rat(work::rat_add(&a.to_rat(), &b.to_rat(), false, w)?).normalize(),
            _ => Num::Big(a.to_big() + b.to_big()).normalize(),
        },
    })
}

pub fn sub<W: Work>(a: &Num, b: &Num, w: &mut W) -> Result<Num, W::Stop> {
    Ok(match (a, b) {
        (Num::Int(x), Num::Int(y)) => match x.checked_sub(*y) {
            Some(z) => Num::Int(z),
            None => Num::Big(BigInt::from(*x) - BigInt::from(*y)),
        },
        _ => match a.rank().max(b.rank()) {
            3 => Num::Float(a.to_f64() - b.to_f64()),
            2 => Num::Rat(work::rat_add(&a.to_rat(), &b.to_rat(), true, w)?).normalize(),
            _ => Num::Big(a.to_big() - b.to_big()).normalize(),
        },
    })
}

pub fn mul<W: Work>(a: &Num, b: &Num, w: &mut W) -> Result<Num, W::Stop> {
    Ok(match (a, b) {
        (Num::Int(x), Num::Int(y)) => match x.checked_mul(*y) {
            Some(z) => Num::Int(z),
            None => Num::Big(BigInt::from(*x) * BigInt::from(*y)),
        },
        _ => match a.rank().max(b.rank()) {
            3 => Num::Float(a.to_f64() * b.to_f64()),
            2 => Num::Rat(work::rat_mul(&a.to_rat(), &b.to_rat(), false, w)?).normalize(),
            _ => Num::Big(work::mul_int(&a.to_big(), &b.to_big(), w)?).normalize(),
        },
    })
}

/// Division; `Ok(None)` when an exact division by zero is attempted.
pub fn div<W: Work>(a: &Num, b: &Num, w: &mut W) -> Result<Option<Num>, W::Stop> {
    if a.rank().max(b.rank()) == 3 {
        return Ok(Some(Num::Float(a.to_f64() / b.to_f64())));
    }
    if b.is_zero() {
        return Ok(None);
    }
    if let (Num::Int(x), Num::Int(y)) = (a, b) {
        // checked: i64::MIN % -1 overflows (and panicked: `(/ (- (expt 2
        // 63)) -1)`, `floor/` of it); that quotient is a bignum, below.
        if x.checked_rem(*y) == Some(0) {
            if let Some(q) = x.checked_div(*y) {
                return Ok(Some(Num::Int(q)));
            }
        }
    }
    let q = work::rat_mul(&a.to_rat(), &b.to_rat(), true, w)?;
    Ok(Some(Num::Rat(q).normalize()))
}

pub fn compare<W: Work>(a: &Num, b: &Num, w: &mut W) -> Result<Option<Ordering>, W::Stop> {
    Ok(match (a, b) {
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(y)),
        (Num::Float(x), Num::Float(y)) => x.partial_cmp(y),
        _ => {
            if a.rank().max(b.rank()) == 3 {
                // One side exact, the other a float (two floats are above).
                // An exact number is finite however large, so it is below
                // +inf.0 and above -inf.0 even where its nearest f64 is an
                // infinity (`(< (expt 10 400) +inf.0)`); against a finite
                // float it compares exactly, so that the predicates stay
                // transitive (R7RS 6.2.6).
                match (a, b) {
                    (Num::Float(f), _) | (_, Num::Float(f)) if f.is_nan() => return Ok(None),
                    (Num::Float(f), _) if f.is_infinite() => return Ok(f.partial_cmp(&0.0)),
                    (_, Num::Float(f)) if f.is_infinite() => return Ok(0.0_f64.partial_cmp(f)),
                    _ => {}
                }
                Some(work::rat_cmp(&a.to_rat(), &b.to_rat(), w)?)
            } else if a.rank().max(b.rank()) == 2 {
                Some(work::rat_cmp(&a.to_rat(), &b.to_rat(), w)?)
            } else {
                Some(a.to_big().cmp(&b.to_big()))
            }
        }
    })
}

pub fn negate(a: &Num) -> Num {
    match a {
        Num::Int(i) => match i.checked_neg() {
            Some(n) => Num::Int(n),
            None => Num::Big(-BigInt::from(*i)),
        },
        Num::Big(b) => Num::Big(-b).normalize(),
        Num::Rat(q) => Num::Rat(BigRational::new_raw(-q.numer(), q.denom().clone())),
        Num::Float(f) => Num::Float(-f),
    }
}

#[derive(Clone, Copy)]
pub enum IntDiv {
    Quotient,
    Remainder,
    Modulo,
}

/// Integer division family; `Ok(Err(_))` names the problem.
pub fn int_div<W: Work>(
    a: &Num,
    b: &Num,
    op: IntDiv,
    w: &mut W,
) -> Result<Result<Num, &'static str>, W::Stop> {
    if !a.is_integer() || !b.is_integer() {
        return Ok(Err("expected integers"));
    }
    if b.is_zero() {
        return Ok(Err("division by zero"));
    }
    if !a.is_exact() || !b.is_exact() {
        let (x, y) = (a.to_f64(), b.to_f64());
        let r = match op {
            IntDiv::Quotient => (x / y).trunc(),
            IntDiv::Remainder => x % y,
            IntDiv::Modulo => {
                let m = x % y;
                if m != 0.0 && (m < 0.0) != (y < 0.0) {
                    m + y
                } else {
                    m
                }
            }
        };
        return Ok(Ok(Num::Float(r)));
    }
    if let (Num::Int(x), Num::Int(y)) = (a, b) {
        if let (Some(q), Some(r)) = (x.checked_div(*y), x.checked_rem(*y)) {
            return Ok(Ok(Num::Int(match op {
                IntDiv::Quotient => q,
                IntDiv::Remainder => r,
                IntDiv::Modulo => {
                    if r != 0 && (r < 0) != (*y < 0) {
                        r + y
                    } else {
                        r
                    }
                }
            })));
        }
    }
    let (x, y) = (a.to_big(), b.to_big());
    let (q, r) = work::div_rem_int(&x, &y, w)?;
    Ok(Ok(Num::Big(match op {
        IntDiv::Quotient => q,
        IntDiv::Remainder => r,
        IntDiv::Modulo if !r.is_zero() && r.sign() != y.sign() => r + y,
        IntDiv::Modulo => r,
    })
    .normalize()))
}

pub fn gcd<W: Work>(a: &Num, b: &Num, w: &mut W) -> Result<Num, W::Stop> {
    if !a.is_exact() || !b.is_exact() {
        let (mut x, mut y) = (a.to_f64().abs(), b.to_f64().abs());
        while y != 0.0 {
            let t = x % y;
            x = y;
            y = t;
        }
        return Ok(Num::Float(x));
    }
    let g = work::gcd(a.to_big().magnitude(), b.to_big().magnitude(), w)?;
    Ok(Num::Big(BigInt::from(g)).normalize())
}

pub fn abs(a: &Num) -> Num {
    if a.sign() == Ordering::Less {
        negate(a)
    } else {
        a.clone()
    }
}

pub fn to_exact(a: &Num) -> Option<Num> {
    match a {
        Num::Float(f) => {
            if !f.is_finite() {
                return None;
            }
            if f.fract() == 0.0 && f.abs() < 9.0e18 {
                return Some(Num::Int(*f as i64));
            }
            BigRational::from_float(*f).map(|q| Num::Rat(q).normalize())
        }
        n => Some(n.clone()),
    }
}

pub fn to_inexact(a: &Num) -> Num {
    Num::Float(a.to_f64())
}

pub fn numerator(a: &Num) -> Num {
    match a {
        Num::Rat(q) => Num::Big(q.numer().clone()).normalize(),
        Num::Float(f) => match to_exact(&Num::Float(*f)) {
            Some(e) => to_inexact(&numerator(&e)),
            None => Num::Float(*f),
        },
        n => n.clone(),
    }
}

pub fn denominator(a: &Num) -> Num {
    match a {
        Num::Rat(q) => Num::Big(q.denom().clone()).normalize(),
        Num::Float(f) => match to_exact(&Num::Float(*f)) {
            Some(e) => to_inexact(&denominator(&e)),
            None => Num::Float(1.0),
        },
        _ => Num::Int(1),
    }
}

pub enum Rounding {
    Floor,
    Ceiling,
    Truncate,
    Round,
}

pub fn round<W: Work>(a: &Num, mode: Rounding, w: &mut W) -> Result<Num, W::Stop> {
    Ok(match a {
        Num::Float(f) => Num::Float(match mode {
            Rounding::Floor => f.floor(),
            Rounding::Ceiling => f.ceil(),
            Rounding::Truncate => f.trunc(),
            Rounding::Round => round_half_even(*f),
        }),
        Num::Rat(q) => {
            // n/d with d > 0: the truncated quotient, then one step by the
            // sign of the remainder.
            let (n, d) = (q.numer(), q.denom());
            let (t, r) = work::div_rem_int(n, d, w)?;
            let floor = if r.is_negative() { &t - 1 } else { t.clone() };
            let r = match mode {
                Rounding::Truncate => t,
                Rounding::Floor => floor,
                Rounding::Ceiling if r.is_positive() => t + 1,
                Rounding::Ceiling => t,
                Rounding::Round => {
                    // Twice what is above the floor, against the denominator.
                    let above = if r.is_negative() { r + d } else { r };
                    match (above << 1usize).cmp(d) {
                        Ordering::Less => floor,
                        Ordering::Greater => floor + 1,
                        Ordering::Equal if floor.is_even() => floor,
                        Ordering::Equal => floor + 1,
                    }
                }
            };
            Num::Big(r).normalize()
        }
        n => n.clone(),
    })
}

fn round_half_even(f: f64) -> f64 {
    let r = f.round();
    if (f - f.trunc()).abs() == 0.5 {
        2.0 * (f / 2.0).round()
    } else {
        r
    }
}

/// `expt` with an exact integer exponent stays exact; `Ok(None)` for an
/// exact zero to a negative power.
pub fn expt<W: Work>(base: &Num, e: &Num, w: &mut W) -> Result<Option<Num>, W::Stop> {
    match e {
        Num::Int(k) if base.is_exact() => {
            if *k < 0 && base.is_zero() {
                return Ok(None);
            }
            let inverse = *k < 0;
            let k = k.unsigned_abs();
            // A power of n/d is n^k/d^k, already in lowest terms.
            let (n, d) = match base {
                Num::Rat(q) => (q.numer().clone(), q.denom().clone()),
                b => (b.to_big(), BigInt::one()),
            };
            let pow = |x: &BigInt, w: &mut W| -> Result<BigInt, W::Stop> {
                let m = work::pow(x.magnitude(), k, w)?;
                let negative = x.is_negative() && k % 2 == 1;
                Ok(BigInt::from_biguint(
                    if negative { Sign::Minus } else { Sign::Plus },
                    m,
                ))
            };
            let (mut n, mut d) = (pow(&n, w)?, pow(&d, w)?);
            if inverse {
                std::mem::swap(&mut n, &mut d);
                if d.is_negative() {
                    (n, d) = (-n, -d);
                }
            }
            Ok(Some(Num::Rat(BigRational::new_raw(n, d)).normalize()))
        }
        _ => {
            let (b, x) = (base.to_f64(), e.to_f64());
            Ok(Some(Num::Float(float_math::pow(b, x))))
        }
    }
}

/// Bits an exact power would have, to refuse absurd results before computing them.
pub fn expt_result_bits(base: &Num, e: &Num) -> u64 {
    let bits = match base {
        Num::Int(i) => 64 - i.unsigned_abs().leading_zeros() as u64,
        Num::Big(b) => b.bits(),
        Num::Rat(q) => q.numer().bits().max(q.denom().bits()),
        Num::Float(_) => 0,
    };
    match e {
        Num::Int(k) => bits.saturating_mul(k.unsigned_abs()),
        _ => 0,
    }
}

/// `(s, n - s²)` with `s` the integer square root of `n ≥ 0`; `Ok(None)`
/// for a negative or inexact `n`.
pub fn exact_integer_sqrt<W: Work>(a: &Num, w: &mut W) -> Result<Option<(Num, Num)>, W::Stop> {
    let n = match a {
        Num::Int(i) if *i >= 0 => BigInt::from(*i),
        Num::Big(b) if b.sign() != Sign::Minus => b.clone(),
        _ => return Ok(None),
    };
    let s = BigInt::from(work::isqrt(n.magnitude(), w)?);
    let r = &n - work::mul_int(&s, &s, w)?;
    Ok(Some((Num::Big(s).normalize(), Num::Big(r).normalize())))
}

pub fn sqrt<W: Work>(a: &Num, w: &mut W) -> Result<Num, W::Stop> {
    if let Some((s, r)) = exact_integer_sqrt(a, w)? {
        if r.is_zero() {
            return Ok(s);
        }
    }
    if let Num::Rat(q) = a {
        if q.numer().sign() != Sign::Minus {
            let (n, d) = (
                work::isqrt(q.numer().magnitude(), w)?,
                work::isqrt(q.denom().magnitude(), w)?,
            );
            let (n, d) = (BigInt::from(n), BigInt::from(d));
            if &work::mul_int(&n, &n, w)? == q.numer() && &work::mul_int(&d, &d, w)? == q.denom() {
                return Ok(Num::Rat(BigRational::new_raw(n, d)));
            }
        }
    }
    Ok(Num::Float(match split_pow2(a) {
        Some((f, e)) if f > 0.0 => {
            let (f, e) = if e % 2 != 0 { (2.0 * f, e - 1) } else { (f, e) };
            scale_pow2(f.sqrt(), e / 2)
        }
        _ => a.to_f64().sqrt(),
    }))
}

/// The natural logarithm of a real, exact ones beyond the flonums' range
/// included: `(log (expt 10 400))` is 921.03..., not `+inf.0`.
pub fn ln(a: &Num) -> f64 {
    match split_pow2(a) {
        Some((f, e)) if f > 0.0 => {
            // ln 2 in two parts (fdlibm's): the high one has zero low bits,
            // so e times it is exact and only the small part rounds.
            const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-01;
            const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;
            let e = e as f64;
            e * LN2_HI + (e * LN2_LO + float_math::ln(f))
        }
        _ => float_math::ln(a.to_f64()),
    }
}

/// `(log a base)` of reals whose logarithms are real: in base 2 or 10 the
/// correctly rounded `log2` or `log10` of a flonum-sized `a` (`(log 1000
/// 10)` is 3.0, not the 2.9999999999999996 of ln 1000 / ln 10), otherwise
/// the quotient of the natural logarithms.
pub fn log_base(a: &Num, base: &Num) -> f64 {
    let x = a.to_f64();
    let plain = x > 0.0 && x.is_finite() && split_pow2(a).is_none();
    let b = base.to_f64();
    if plain && b == 2.0 {
        float_math::log2(x)
    } else if plain && b == 10.0 {
        float_math::log10(x)
    } else {
        ln(a) / ln(base)
    }
}

/// An exact nonzero number too large or too small for a flonum (or in the
/// subnormals, where it would lose its digits) as `f * 2^e`, `f` a flonum
/// with magnitude in [1/2, 2): so that its square root or logarithm, which
/// is within range, is not taken of `+inf.0` or `0.0`. `None` for any other.
fn split_pow2(a: &Num) -> Option<(f64, i64)> {
    if !a.is_exact() || a.is_zero() {
        return None;
    }
    let x = a.to_f64();
    if x.is_finite() && x.abs() >= f64::MIN_POSITIVE {
        return None;
    }
    let q = a.to_rat();
    let e = q.numer().bits() as i64 - q.denom().bits() as i64;
    let (n, d) = if e >= 0 {
        (q.numer().clone(), q.denom() << e as usize)
    } else {
        (q.numer() << (-e) as usize, q.denom().clone())
    };
    Some((rat_to_f64(&BigRational::new_raw(n, d)), e))
}

/// `x * 2^k`, by steps that stay within the flonums' exponents.
fn scale_pow2(mut x: f64, mut k: i64) -> f64 {
    let pow2 = |e: i64| f64::from_bits(((e + 1023) as u64) << 52);
    while k > 1000 && x.is_finite() {
        x *= pow2(1000);
        k -= 1000;
    }
    while k < -1000 && x != 0.0 {
        x *= pow2(-1000);
        k += 1000;
    }
    x * pow2(k.clamp(-1022, 1023))
}

// ---- text ------------------------------------------------------------------

pub fn to_string<W: Work>(n: &Num, radix: u32, w: &mut W) -> Result<String, W::Stop> {
    let int = |b: &BigInt, w: &mut W| -> Result<String, W::Stop> {
        let digits = work::to_radix(b.magnitude(), radix, w)?;
        Ok(if b.is_negative() {
            format!("-{digits}")
        } else {
            digits
        })
    };
    Ok(match n {
        Num::Int(i) => {
            if radix == 10 {
                i.to_string()
            } else {
                BigInt::from(*i).to_str_radix(radix)
            }
        }
        Num::Big(b) => int(b, w)?,
        Num::Rat(q) => format!("{}/{}", int(q.numer(), w)?, int(q.denom(), w)?),
        Num::Float(f) => float_to_string(*f),
    })
}

pub fn float_to_string(f: f64) -> String {
    if f.is_nan() {
        return "+nan.0".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+inf.0".into()
        } else {
            "-inf.0".into()
        };
    }
    // Rust's shortest round-trip form, made to read back as inexact.
    let s = format!("{f:?}");
    if s.contains('e') {
        // 1e300 -> 1e300 is fine; Rust writes 1e-7 as "1e-7".
        s
    } else if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

/// A real number in R7RS syntax without its prefixes (`complex::parse`
/// reads them), read with the exactness a prefix gave. `None` if the text
/// is not a real number.
/// `#e` reads a decimal as the exact number it writes (`#e.1` is 1/10, not
/// the double nearest to it; `#e1.5e400` is an integer, not infinity).
pub fn parse_unprefixed(s: &str, radix: u32, exactness: Option<bool>) -> Option<Num> {
    if exactness == Some(true) && radix == 10 {
        if let Some(n) = exact_decimal(s) {
            return Some(n);
        }
    }
    let n = parse_real(s, radix)?;
    match exactness {
        Some(true) => to_exact(&n),
        Some(false) => Some(to_inexact(&n)),
        None => Some(n),
    }
}

/// The largest power of ten `#e` makes of a decimal's point and exponent
/// (10^100000 is a bignum of about 41 KB); a decimal that needs more is
/// read as a double first, as without the prefix.
const EXACT_DECIMAL_MAX_EXPONENT: u32 = 100_000;

/// `digits[.digits][e[+-]digits]` as an exact number, or `None` if `s` is
/// not such a decimal or its exponent is past the bound.
fn exact_decimal(s: &str) -> Option<Num> {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (mantissa, exponent) = match body.find(['e', 'E', 's', 'S', 'f', 'F', 'd', 'D', 'l', 'L']) {
        Some(i) => {
            let e = &body[i + 1..];
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            (&body[..i], e.parse::<i64>().ok()?)
        }
        None => (body, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{int}{frac}");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let exponent = exponent.checked_sub(i64::try_from(frac.len()).ok()?)?;
    let power = u32::try_from(exponent.unsigned_abs())
        .ok()
        .filter(|&p| p <= EXACT_DECIMAL_MAX_EXPONENT)?;
    let mut n = BigInt::parse_bytes(digits.as_bytes(), 10)?;
    if s.starts_with('-') {
        n = -n;
    }
    let scale = BigInt::from(10).pow(power);
    Some(if exponent >= 0 {
        Num::Big(n * scale).normalize()
    } else {
        Num::Rat(BigRational::new(n, scale)).normalize()
    })
}

/// The `#x`/`#d`/`#o`/`#b` and `#e`/`#i` prefixes of a number (R7RS 7.1.1):
/// the rest of the text, its radix and its exactness, if one was given.
/// `None` for an unknown prefix or a second one of either kind.
pub fn prefixes(text: &str, default_radix: u32) -> Option<(&str, u32, Option<bool>)> {
    let mut radix = default_radix;
    let mut radix_given = false;
    let mut exactness: Option<bool> = None;
    let mut s = text;
    // R7RS 7.1.1: at most one radix prefix and one exactness prefix, in
    // either order (`#x#x1` and `#e#i1` are no numbers).
    while s.len() >= 2 && s.as_bytes()[0] == b'#' {
        let letter = s.as_bytes()[1].to_ascii_lowercase();
        match letter {
            b'x' | b'd' | b'o' | b'b' if !radix_given => {
                radix = match letter {
                    b'x' => 16,
                    b'd' => 10,
                    b'o' => 8,
                    _ => 2,
                };
                radix_given = true;
            }
            b'e' if exactness.is_none() => exactness = Some(true),
            b'i' if exactness.is_none() => exactness = Some(false),
            _ => return None,
        }
        s = &s[2..];
    }
    Some((s, radix, exactness))
}

fn parse_real(s: &str, radix: u32) -> Option<Num> {
    // R7RS 7.1.1: the letters of `+inf.0` and `+nan.0` may be in any case.
    match s.to_ascii_lowercase().as_str() {
        "+inf.0" => return Some(Num::Float(f64::INFINITY)),
        "-inf.0" => return Some(Num::Float(f64::NEG_INFINITY)),
        "+nan.0" | "-nan.0" => return Some(Num::Float(f64::NAN)),
        _ => {}
    }
    if let Some((n, d)) = s.split_once('/') {
        let n = parse_integer(n, radix)?;
        let d = parse_integer(d, radix)?;
        if d.is_zero() || d.sign() == Sign::Minus || d.to_string().starts_with('+') {
            return None;
        }
        if d.is_zero() {
            return None;
        }
        return Some(Num::Rat(BigRational::new(n, d)).normalize());
    }
    if let Some(i) = parse_integer(s, radix) {
        return Some(Num::Big(i).normalize());
    }
    if radix != 10 {
        return None;
    }
    parse_decimal(s)
}

fn parse_integer(s: &str, radix: u32) -> Option<BigInt> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    if digits.len() <= 18 && radix == 10 {
        return s.parse::<i64>().ok().map(BigInt::from);
    }
    let v = BigInt::parse_bytes(digits.as_bytes(), radix)?;
    Some(if s.starts_with('-') { -v } else { v })
}

fn parse_decimal(s: &str) -> Option<Num> {
    // digits, optional point, optional exponent; at least one digit.
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let mut seen_digit = false;
    let mut seen_point = false;
    let mut chars = body.char_indices().peekable();
    while let Some((_, c)) = chars.peek().copied() {
        if c.is_ascii_digit() {
            seen_digit = true;
            chars.next();
        } else if c == '.' && !seen_point {
            seen_point = true;
            chars.next();
        } else {
            break;
        }
    }
    if !seen_digit {
        return None;
    }
    if let Some((i, c)) = chars.next() {
        // `e`, and the R5RS precision markers `s` `f` `d` `l` that most
        // Schemes still read (all mean a double here).
        if !matches!(c.to_ascii_lowercase(), 'e' | 's' | 'f' | 'd' | 'l') {
            return None;
        }
        let exp = &body[i + 1..];
        let exp_digits = exp.strip_prefix(['+', '-']).unwrap_or(exp);
        if exp_digits.is_empty() || !exp_digits.chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        if c != 'e' && c != 'E' {
            let sign = &s[..s.len() - body.len()];
            return format!("{sign}{}e{exp}", &body[..i])
                .parse::<f64>()
                .ok()
                .map(Num::Float);
        }
    }
    s.parse::<f64>().ok().map(Num::Float)
}
