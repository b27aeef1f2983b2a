//! Complex numbers of two binary64 parts and their transcendental
//! functions, on the real functions of this module.
//!
//! The formulas, the special cases and the order of every operation are
//! those of `num-complex` 0.4 (which the engine used before), so results
//! differ from what it gave only where its real functions were not
//! correctly rounded. The branch cuts are R7RS's (Common Lisp's): `log`
//! and `sqrt` along the negative reals, continuous from above; `asin` and
//! `acos` beyond ±1; `atan` along the imaginary axis beyond ±i.

use std::ops::{Add, Div, Mul, Neg, Sub};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct C64 {
    pub re: f64,
    pub im: f64,
}

const ONE: C64 = C64::new(1.0, 0.0);
const I: C64 = C64::new(0.0, 1.0);

impl C64 {
    pub const fn new(re: f64, im: f64) -> C64 {
        C64 { re, im }
    }

    fn is_zero(self) -> bool {
        self.re == 0.0 && self.im == 0.0
    }

    fn unscale(self, t: f64) -> C64 {
        C64::new(self.re / t, self.im / t)
    }

    /// |z|.
    pub fn norm(self) -> f64 {
        super::hypot(self.re, self.im)
    }

    /// The principal argument, in [-π, π].
    pub fn arg(self) -> f64 {
        super::atan2(self.im, self.re)
    }

    /// r·e^(iθ).
    pub fn from_polar(r: f64, theta: f64) -> C64 {
        C64::new(r * super::cos(theta), r * super::sin(theta))
    }

    /// e^z = e^re (cos im + i sin im).
    pub fn exp(self) -> C64 {
        let C64 { re, mut im } = self;
        // The corner cases +∞, -∞ and NaN.
        if re.is_infinite() {
            if re < 0.0 {
                if !im.is_finite() {
                    return C64::new(0.0, 0.0);
                }
            } else if im == 0.0 || !im.is_finite() {
                if im.is_infinite() {
                    im = f64::NAN;
                }
                return C64::new(re, im);
            }
        } else if re.is_nan() && im == 0.0 {
            return self;
        }
        C64::from_polar(super::exp(re), im)
    }

    /// The principal logarithm, ln|z| + i arg z.
    pub fn ln(self) -> C64 {
        C64::new(super::ln(self.norm()), self.arg())
    }

    /// The principal square root, with a real part ≥ 0.
    pub fn sqrt(self) -> C64 {
        if self.im == 0.0 {
            if self.re.is_sign_positive() {
                // √r, keeping the sign of the zero imaginary part.
                C64::new(super::sqrt(self.re), self.im)
            } else {
                // √(r e^(±iπ)) = ±i√r.
                let im = super::sqrt(-self.re);
                if self.im.is_sign_positive() {
                    C64::new(0.0, im)
                } else {
                    C64::new(0.0, -im)
                }
            }
        } else if self.re == 0.0 {
            // √(r e^(±iπ/2)) = √(r/2) ± i√(r/2).
            let x = super::sqrt(self.im.abs() / 2.0);
            if self.im.is_sign_positive() {
                C64::new(x, x)
            } else {
                C64::new(x, -x)
            }
        } else {
            C64::from_polar(super::sqrt(self.norm()), self.arg() / 2.0)
        }
    }

    /// self^e = e^(e ln self); 1 for a zero exponent.
    pub fn powc(self, e: C64) -> C64 {
        if e.is_zero() {
            return ONE;
        }
        (e * self.ln()).exp()
    }

    /// sin(a + bi) = sin a cosh b + i cos a sinh b.
    pub fn sin(self) -> C64 {
        C64::new(
            super::sin(self.re) * super::cosh(self.im),
            super::cos(self.re) * super::sinh(self.im),
        )
    }

    /// cos(a + bi) = cos a cosh b - i sin a sinh b.
    pub fn cos(self) -> C64 {
        C64::new(
            super::cos(self.re) * super::cosh(self.im),
            -super::sin(self.re) * super::sinh(self.im),
        )
    }

    /// tan(a + bi) = (sin 2a + i sinh 2b) / (cos 2a + cosh 2b).
    pub fn tan(self) -> C64 {
        let (two_re, two_im) = (self.re + self.re, self.im + self.im);
        C64::new(super::sin(two_re), super::sinh(two_im))
            .unscale(super::cos(two_re) + super::cosh(two_im))
    }

    /// asin z = -i ln(√(1 - z²) + iz).
    pub fn asin(self) -> C64 {
        -I * ((ONE - self * self).sqrt() + I * self).ln()
    }

    /// acos z = -i ln(i√(1 - z²) + z).
    pub fn acos(self) -> C64 {
        -I * (I * (ONE - self * self).sqrt() + self).ln()
    }

    /// atan z = (ln(1 + iz) - ln(1 - iz)) / 2i; ±i∞ at ±i.
    pub fn atan(self) -> C64 {
        let two = ONE + ONE;
        if self == I {
            return C64::new(0.0, f64::INFINITY);
        } else if self == -I {
            return C64::new(0.0, f64::NEG_INFINITY);
        }
        ((ONE + I * self).ln() - (ONE - I * self).ln()) / (two * I)
    }
}

impl Add for C64 {
    type Output = C64;
    fn add(self, o: C64) -> C64 {
        C64::new(self.re + o.re, self.im + o.im)
    }
}

impl Sub for C64 {
    type Output = C64;
    fn sub(self, o: C64) -> C64 {
        C64::new(self.re - o.re, self.im - o.im)
    }
}

impl Mul for C64 {
    type Output = C64;
    fn mul(self, o: C64) -> C64 {
        C64::new(
            self.re * o.re - self.im * o.im,
            self.re * o.im + self.im * o.re,
        )
    }
}

/// The textbook quotient (num-complex's): (a·c̄) / |c|².
impl Div for C64 {
    type Output = C64;
    fn div(self, o: C64) -> C64 {
        let norm_sqr = o.re * o.re + o.im * o.im;
        let re = self.re * o.re + self.im * o.im;
        let im = self.im * o.re - self.re * o.im;
        C64::new(re / norm_sqr, im / norm_sqr)
    }
}

impl Neg for C64 {
    type Output = C64;
    fn neg(self) -> C64 {
        C64::new(-self.re, -self.im)
    }
}
