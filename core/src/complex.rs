//! Complex numbers: the top of the numeric tower (R7RS 6.2).
//!
//! A [`Number`] is a real of the tower below ([`Num`]) or a [`Complex`]: a
//! pair of reals that are both exact or both inexact. A number whose
//! imaginary part is an exact zero is real and never a `Complex` (R7RS
//! 6.2.6: `(real? 1+0i)` is true, `(real? 1+0.0i)` false). Exact parts are
//! added, multiplied and divided exactly; inexact ones are divided and
//! given to the transcendental functions as a [`C64`] of `float_math`.

use std::f64::consts::PI;

use crate::float_math::{self, C64};
use crate::number::{self, Num, Work};

#[derive(Clone, Debug, PartialEq)]
pub struct Complex {
    pub re: Num,
    pub im: Num,
}

/// A number of the whole tower.
#[derive(Clone, Debug, PartialEq)]
pub enum Number {
    Real(Num),
    Complex(Box<Complex>),
}

/// Why an operation has no result.
#[derive(Debug, PartialEq)]
pub enum Failure<S> {
    /// An exact division by zero.
    DivisionByZero,
    /// An exact power whose result would be too large to hold.
    TooLarge,
    /// The work was refused (the step budget ran out, the host said stop).
    Stopped(S),
}

type Done<T, S> = Result<T, Failure<S>>;

// The real operations the complex ones are built from, each charged to `w`.
fn add<W: Work>(a: &Num, b: &Num, w: &mut W) -> Done<Num, W::Stop> {
    number::add(a, b, w).map_err(Failure::Stopped)
}
fn sub<W: Work>(a: &Num, b: &Num, w: &mut W) -> Done<Num, W::Stop> {
    number::sub(a, b, w).map_err(Failure::Stopped)
}
fn mul<W: Work>(a: &Num, b: &Num, w: &mut W) -> Done<Num, W::Stop> {
    number::mul(a, b, w).map_err(Failure::Stopped)
}
fn div<W: Work>(a: &Num, b: &Num, w: &mut W) -> Done<Num, W::Stop> {
    number::div(a, b, w)
        .map_err(Failure::Stopped)?
        .ok_or(Failure::DivisionByZero)
}
fn same<W: Work>(a: &Num, b: &Num, w: &mut W) -> Done<bool, W::Stop> {
    let order = number::compare(a, b, w).map_err(Failure::Stopped)?;
    Ok(order == Some(std::cmp::Ordering::Equal))
}
fn exact_zero(n: &Num) -> bool {
    n.is_exact() && n.is_zero()
}

impl Number {
    /// `re + im i`, normalised: real when `im` is an exact zero, else both
    /// parts exact or both inexact.
    pub fn rect(re: Num, im: Num) -> Number {
        if exact_zero(&im) {
            return Number::Real(re.normalize());
        }
        let (re, im) = if re.is_exact() && im.is_exact() {
            (re.normalize(), im.normalize())
        } else {
            (number::to_inexact(&re), number::to_inexact(&im))
        };
        Number::Complex(Box::new(Complex { re, im }))
    }

    /// `magnitude @ angle`.
    pub fn polar(magnitude: Num, angle: Num) -> Number {
        if exact_zero(&angle) {
            return Number::Real(magnitude);
        }
        let (m, a) = (magnitude.to_f64(), angle.to_f64());
        let z = C64::from_polar(m, a);
        Number::rect(Num::Float(z.re), Num::Float(z.im))
    }

    fn from_c64(z: C64) -> Number {
        Number::rect(Num::Float(z.re), Num::Float(z.im))
    }

    pub fn real_part(&self) -> Num {
        match self {
            Number::Real(r) => r.clone(),
            Number::Complex(c) => c.re.clone(),
        }
    }

    pub fn imag_part(&self) -> Num {
        match self {
            Number::Real(r) if r.is_exact() => Num::Int(0),
            Number::Real(_) => Num::Float(0.0),
            Number::Complex(c) => c.im.clone(),
        }
    }

    fn parts(&self) -> (Num, Num) {
        match self {
            Number::Real(r) => (r.clone(), Num::Int(0)),
            Number::Complex(c) => (c.re.clone(), c.im.clone()),
        }
    }

    fn to_c64(&self) -> C64 {
        let (re, im) = self.parts();
        C64::new(re.to_f64(), im.to_f64())
    }

    pub fn is_exact(&self) -> bool {
        match self {
            Number::Real(r) => r.is_exact(),
            Number::Complex(c) => c.re.is_exact(),
        }
    }

    pub fn is_zero(&self) -> bool {
        match self {
            Number::Real(r) => r.is_zero(),
            Number::Complex(c) => c.re.is_zero() && c.im.is_zero(),
        }
    }

    fn floats(&self) -> [f64; 2] {
        let (re, im) = self.parts();
        [re.to_f64(), im.to_f64()]
    }

    pub fn is_nan(&self) -> bool {
        !self.is_exact() && self.floats().iter().any(|f| f.is_nan())
    }

    pub fn is_infinite(&self) -> bool {
        !self.is_exact() && self.floats().iter().any(|f| f.is_infinite())
    }

    pub fn is_finite(&self) -> bool {
        self.is_exact() || self.floats().iter().all(|f| f.is_finite())
    }
}

// ---- arithmetic ------------------------------------------------------------

pub fn plus<W: Work>(a: &Number, b: &Number, w: &mut W) -> Done<Number, W::Stop> {
    let ((ar, ai), (br, bi)) = (a.parts(), b.parts());
    Ok(Number::rect(add(&ar, &br, w)?, add(&ai, &bi, w)?))
}

pub fn minus<W: Work>(a: &Number, b: &Number, w: &mut W) -> Done<Number, W::Stop> {
    let ((ar, ai), (br, bi)) = (a.parts(), b.parts());
    Ok(Number::rect(sub(&ar, &br, w)?, sub(&ai, &bi, w)?))
}

pub fn times<W: Work>(a: &Number, b: &Number, w: &mut W) -> Done<Number, W::Stop> {
    let ((ar, ai), (br, bi)) = (a.parts(), b.parts());
    let re = sub(&mul(&ar, &br, w)?, &mul(&ai, &bi, w)?, w)?;
    let im = add(&mul(&ar, &bi, w)?, &mul(&ai, &br, w)?, w)?;
    Ok(Number::rect(re, im))
}

pub fn divide<W: Work>(a: &Number, b: &Number, w: &mut W) -> Done<Number, W::Stop> {
    let ((ar, ai), (br, bi)) = (a.parts(), b.parts());
    if exact_zero(&bi) {
        return Ok(Number::rect(div(&ar, &br, w)?, div(&ai, &br, w)?));
    }
    if !b.is_exact() || !a.is_exact() {
        return Ok(Number::from_c64(a.to_c64() / b.to_c64()));
    }
    let d = add(&mul(&br, &br, w)?, &mul(&bi, &bi, w)?, w)?;
    let re = add(&mul(&ar, &br, w)?, &mul(&ai, &bi, w)?, w)?;
    let im = sub(&mul(&ai, &br, w)?, &mul(&ar, &bi, w)?, w)?;
    Ok(Number::rect(div(&re, &d, w)?, div(&im, &d, w)?))
}

/// `=`: equal real and imaginary parts.
pub fn equal<W: Work>(a: &Number, b: &Number, w: &mut W) -> Done<bool, W::Stop> {
    let ((ar, ai), (br, bi)) = (a.parts(), b.parts());
    Ok(same(&ar, &br, w)? && same(&ai, &bi, w)?)
}

pub fn to_exact(a: &Number) -> Option<Number> {
    let (re, im) = a.parts();
    Some(Number::rect(number::to_exact(&re)?, number::to_exact(&im)?))
}

pub fn to_inexact(a: &Number) -> Number {
    match a {
        Number::Real(r) => Number::Real(number::to_inexact(r)),
        Number::Complex(c) => Number::rect(number::to_inexact(&c.re), number::to_inexact(&c.im)),
    }
}

// ---- the transcendental functions --------------------------------------

pub fn magnitude<W: Work>(a: &Number, w: &mut W) -> Done<Num, W::Stop> {
    Ok(match a {
        Number::Real(r) => number::abs(r),
        Number::Complex(c) if c.re.is_exact() => {
            let square = add(&mul(&c.re, &c.re, w)?, &mul(&c.im, &c.im, w)?, w)?;
            number::sqrt(&square, w).map_err(Failure::Stopped)?
        }
        Number::Complex(c) => Num::Float(float_math::hypot(c.re.to_f64(), c.im.to_f64())),
    })
}

pub fn angle(a: &Number) -> Num {
    match a {
        Number::Real(r) if r.is_exact() => {
            if r.sign() == std::cmp::Ordering::Less {
                Num::Float(PI)
            } else {
                Num::Int(0)
            }
        }
        Number::Real(r) => Num::Float(float_math::atan2(0.0, r.to_f64())),
        Number::Complex(_) => {
            let [re, im] = a.floats();
            Num::Float(float_math::atan2(im, re))
        }
    }
}

pub fn exp(a: &Number) -> Number {
    Number::from_c64(C64::exp(a.to_c64()))
}

/// The principal logarithm; of a negative real, `log|x| + πi`.
pub fn log(a: &Number) -> Number {
    // A negative real: ln |a| + pi i, its magnitude's logarithm taken as
    // the reals' is (an exact one beyond the flonums' range included).
    if let Number::Real(r) = a {
        if r.sign() == std::cmp::Ordering::Less {
            let re = number::ln(&number::negate(r));
            return Number::from_c64(C64::new(re, PI));
        }
    }
    Number::from_c64(C64::ln(a.to_c64()))
}

/// The principal square root: of a negative real, an imaginary number,
/// exact when the real is an exact square (`(sqrt -4)` is `+2i`).
pub fn sqrt<W: Work>(a: &Number, w: &mut W) -> Done<Number, W::Stop> {
    if let Number::Real(r) = a {
        let negative = r.sign() == std::cmp::Ordering::Less;
        let magnitude = if negative {
            number::negate(r)
        } else {
            r.clone()
        };
        let root = number::sqrt(&magnitude, w).map_err(Failure::Stopped)?;
        if !negative {
            return Ok(Number::Real(root));
        }
        let zero = if root.is_exact() {
            Num::Int(0)
        } else {
            Num::Float(0.0)
        };
        return Ok(Number::rect(zero, root));
    }
    Ok(Number::from_c64(C64::sqrt(a.to_c64())))
}

pub fn sin(a: &Number) -> Number {
    Number::from_c64(C64::sin(a.to_c64()))
}
pub fn cos(a: &Number) -> Number {
    Number::from_c64(C64::cos(a.to_c64()))
}
pub fn tan(a: &Number) -> Number {
    Number::from_c64(C64::tan(a.to_c64()))
}
pub fn asin(a: &Number) -> Number {
    Number::from_c64(C64::asin(a.to_c64()))
}
pub fn acos(a: &Number) -> Number {
    Number::from_c64(C64::acos(a.to_c64()))
}
pub fn atan(a: &Number) -> Number {
    Number::from_c64(C64::atan(a.to_c64()))
}

/// Exact powers of more bits than this are refused (as the real `expt`
/// refuses them) instead of filling memory.
const MAX_EXACT_BITS: u64 = 64 * 1024 * 1024;

/// `(expt base e)` where the base or the exponent is not real, or the
/// result is not (a negative base to a fractional power).
pub fn expt<W: Work>(base: &Number, e: &Number, w: &mut W) -> Done<Number, W::Stop> {
    if let Number::Real(k) = e {
        if k.is_exact() && k.is_integer() && base.is_exact() {
            return exact_power(base, k, w);
        }
    }
    if base.is_zero() {
        // 0^z is 0 for Re z > 0, 1 for z = 0 (exact only when both are).
        return Ok(if e.is_zero() {
            Number::Real(if base.is_exact() && e.is_exact() {
                Num::Int(1)
            } else {
                Num::Float(1.0)
            })
        } else {
            Number::Real(if base.is_exact() && e.is_exact() {
                Num::Int(0)
            } else {
                Num::Float(0.0)
            })
        });
    }
    Ok(Number::from_c64(C64::powc(base.to_c64(), e.to_c64())))
}

fn exact_power<W: Work>(base: &Number, k: &Num, w: &mut W) -> Done<Number, W::Stop> {
    let Some(n) = k.to_u64().or_else(|| number::negate(k).to_u64()) else {
        return Err(Failure::TooLarge);
    };
    let bits = magnitude_bits(base);
    if bits.saturating_mul(n) > MAX_EXACT_BITS {
        return Err(Failure::TooLarge);
    }
    let mut result = Number::Real(Num::Int(1));
    let mut square = base.clone();
    let mut m = n;
    while m > 0 {
        if m & 1 == 1 {
            result = times(&result, &square, w)?;
        }
        m >>= 1;
        if m > 0 {
            square = times(&square, &square, w)?;
        }
    }
    if k.sign() == std::cmp::Ordering::Less {
        divide(&Number::Real(Num::Int(1)), &result, w)
    } else {
        Ok(result)
    }
}

/// About how many bits the parts of an exact number hold (numerators
/// and denominators both grow with each multiplication).
fn magnitude_bits(a: &Number) -> u64 {
    let (re, im) = a.parts();
    let bits = |n: &Num| -> u64 {
        [number::numerator(n), number::denominator(n)]
            .iter()
            .map(|k| {
                let f = k.to_f64().abs();
                if f.is_finite() {
                    float_math::log2(f).max(0.0) as u64 + 1
                } else {
                    u64::MAX / 4
                }
            })
            .sum()
    };
    bits(&re).max(bits(&im))
}

// ---- text --------------------------------------------------------------

pub fn to_string<W: Work>(a: &Number, radix: u32, w: &mut W) -> Result<String, W::Stop> {
    match a {
        Number::Real(r) => number::to_string(r, radix, w),
        Number::Complex(c) => {
            let mut s = if exact_zero(&c.re) {
                String::new()
            } else {
                number::to_string(&c.re, radix, w)?
            };
            let im = number::to_string(&c.im, radix, w)?;
            match im.as_str() {
                "1" => s.push('+'),
                "-1" => s.push('-'),
                _ => {
                    if !im.starts_with(['-', '+']) {
                        s.push('+');
                    }
                    s.push_str(&im);
                }
            }
            s.push('i');
            Ok(s)
        }
    }
}

/// A number in R7RS syntax (7.1.1), complex forms included: `1+2i`, `+i`,
/// `-2.5i`, `1@2`, with the `#x`/`#e`/... prefixes. `None` if the text is
/// not a number.
pub fn parse(text: &str, default_radix: u32) -> Option<Number> {
    let (s, radix, exactness) = number::prefixes(text, default_radix)?;
    let n = parse_unprefixed(s, radix, exactness)?;
    match exactness {
        Some(true) => to_exact(&n),
        Some(false) => Some(to_inexact(&n)),
        None => Some(n),
    }
}

fn real(s: &str, radix: u32, exactness: Option<bool>) -> Option<Num> {
    if s.is_empty() || s.contains('#') {
        return None;
    }
    number::parse_unprefixed(s, radix, exactness)
}

fn parse_unprefixed(s: &str, radix: u32, exactness: Option<bool>) -> Option<Number> {
    if let Some(body) = s.strip_suffix(['i', 'I']) {
        // The imaginary part starts at the last sign that does not begin
        // an exponent (`1e-2`); with none but a leading one, there is no
        // real part (`+2i`, `-i`).
        let bytes = body.as_bytes();
        let exponent_sign = |i: usize| {
            radix == 10
                && i >= 2
                && matches!(
                    bytes[i - 1].to_ascii_lowercase(),
                    b'e' | b's' | b'f' | b'd' | b'l'
                )
                && (bytes[i - 2].is_ascii_digit() || bytes[i - 2] == b'.')
        };
        let split = (0..bytes.len())
            .rev()
            .find(|&i| matches!(bytes[i], b'+' | b'-') && !exponent_sign(i))?;
        let re = if split == 0 {
            Num::Int(0)
        } else {
            real(&body[..split], radix, exactness)?
        };
        let im = match &body[split..] {
            "+" => Num::Int(1),
            "-" => Num::Int(-1),
            part => real(part, radix, exactness)?,
        };
        return Some(Number::rect(re, im));
    }
    if let Some((m, a)) = s.split_once('@') {
        return Some(Number::polar(
            real(m, radix, exactness)?,
            real(a, radix, exactness)?,
        ));
    }
    real(s, radix, exactness).map(Number::Real)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::number::Unmetered;

    fn n(s: &str) -> Number {
        parse(s, 10).unwrap_or_else(|| panic!("{s} does not parse"))
    }

    fn shown(s: &str) -> String {
        to_string(&n(s), 10, &mut Unmetered).unwrap()
    }

    #[test]
    fn rectangular_and_polar_forms_read_and_print_back() {
        for (text, printed) in [
            ("1+2i", "1+2i"),
            ("1+2I", "1+2i"),
            ("-1-2i", "-1-2i"),
            ("+i", "+i"),
            ("-i", "-i"),
            ("0+i", "+i"),
            ("+2i", "+2i"),
            ("-2.5i", "0.0-2.5i"),
            ("1.0+2i", "1.0+2.0i"),
            ("1e2+1.0i", "100.0+1.0i"),
            ("1.0+1e-2i", "1.0+0.01i"),
            ("1/2+3/4i", "1/2+3/4i"),
            ("+inf.0-inf.0i", "+inf.0-inf.0i"),
            ("#x10+11i", "16+17i"),
            ("#e1.5+2.5i", "3/2+5/2i"),
            ("#i1+2i", "1.0+2.0i"),
            ("3+0i", "3"),
            ("1@0", "1"),
        ] {
            assert_eq!(shown(text), printed, "{text}");
        }
        assert!(matches!(n("-2.5+0.0i"), Number::Complex(_)));
        let p = n("1@2");
        assert!((p.real_part().to_f64() - 2f64.cos()).abs() < 1e-15);
        assert!((p.imag_part().to_f64() - 2f64.sin()).abs() < 1e-15);
    }

    #[test]
    fn symbols_that_look_complex_are_not_numbers() {
        for text in [
            "i", "hi", "a+i", "1+", "+-i", "1+2", "1i", "1+2j", "--i", "1@", "@2", "1+#x2i", "1e+i",
        ] {
            assert!(parse(text, 10).is_none(), "{text}");
        }
    }

    #[test]
    fn exact_arithmetic_stays_exact() {
        let w = &mut Unmetered;
        let show = |z: Number| to_string(&z, 10, &mut Unmetered).unwrap();
        assert_eq!(show(times(&n("1+2i"), &n("3+4i"), w).unwrap()), "-5+10i");
        assert_eq!(show(divide(&n("-5+10i"), &n("3+4i"), w).unwrap()), "1+2i");
        assert_eq!(show(plus(&n("1+2i"), &n("1-2i"), w).unwrap()), "2");
        assert_eq!(show(expt(&n("+i"), &n("2"), w).unwrap()), "-1");
        assert_eq!(show(expt(&n("1+i"), &n("-2"), w).unwrap()), "-1/2i");
        assert_eq!(show(sqrt(&n("-4"), w).unwrap()), "+2i");
        assert_eq!(magnitude(&n("3+4i"), w), Ok(Num::Int(5)));
        assert_eq!(divide(&n("1+i"), &n("0"), w), Err(Failure::DivisionByZero));
        assert_eq!(
            expt(&n("2+i"), &n("100000000000"), w),
            Err(Failure::TooLarge)
        );
    }

    #[test]
    fn transcendental_functions_take_principal_values() {
        let close = |z: &Number, re: f64, im: f64| {
            let [a, b] = z.floats();
            assert!((a - re).abs() < 1e-12 && (b - im).abs() < 1e-12, "{z:?}");
        };
        close(&sqrt(&n("-1.0"), &mut Unmetered).unwrap(), 0.0, 1.0);
        close(&log(&n("-1")), 0.0, PI);
        close(&exp(&n("+3.141592653589793i")), -1.0, 0.0);
        close(
            &expt(&n("-1"), &n("0.5"), &mut Unmetered).unwrap(),
            0.0,
            1.0,
        );
        close(&asin(&n("2")), PI / 2.0, -1.3169578969248166);
        assert_eq!(angle(&n("-1")), Num::Float(PI));
        assert_eq!(angle(&n("1")), Num::Int(0));
    }
}
