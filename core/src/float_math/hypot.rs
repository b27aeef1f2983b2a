//! A correctly rounded `hypot`, exact integer arithmetic deciding the
//! rounding (pxfm's, without FMA, is off by an ulp in about 6% of cases).
//!
//! With u = max(|x|, |y|) = U 2^(e-52) and v = min = V 2^(e-d-52) (U, V
//! integers below 2^53), u² + v² = 2^(2e-106) (4U² + V² 2^(2-2d)). An
//! estimate of the root, r 2^e with r in [1, 4), is moved by ulps until
//! the midpoints on either side of it, K 2^(e-53) for integers K below
//! 2^56, bracket the exact sum: each test compares 4U² + V² 2^(2-2d) with
//! K², both below 2^112.

/// √(x² + y²), correctly rounded; +∞ if either is infinite (even with a
/// NaN), else NaN if either is NaN.
pub fn hypot(x: f64, y: f64) -> f64 {
    if x.is_infinite() || y.is_infinite() {
        return f64::INFINITY;
    }
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    let (x, y) = (x.abs(), y.abs());
    let (u, v) = if x >= y { (x, y) } else { (y, x) };
    if v == 0.0 {
        return u;
    }
    // v < u 2^-27: the root is below u (1 + 2^-55), within a quarter ulp.
    if v * 134_217_728.0 < u {
        return u;
    }
    if u < f64::MIN_POSITIVE {
        return both_subnormal(u.to_bits(), v.to_bits());
    }
    let (ub, vb) = (u.to_bits(), v.to_bits());
    let e = ((ub >> 52) & 0x7ff) as i32 - 1023;
    let big_u = (ub & MANTISSA) | IMPLICIT;
    let (big_v, ve) = match (vb >> 52) & 0x7ff {
        0 => (vb & MANTISSA, -1022),
        b => ((vb & MANTISSA) | IMPLICIT, b as i32 - 1023),
    };
    let d = (e - ve) as u32; // below 28, as v ≥ u 2^-27
    let (uu, vv) = (big_u as u128 * big_u as u128, big_v as u128 * big_v as u128);
    // 4U² + V² 2^(2-2d) = whole + fraction (a fraction below 1 only when
    // d > 1: the bits of V² shifted out).
    let (whole, fraction) = if d <= 1 {
        (4 * uu + (vv << (2 - 2 * d)), false)
    } else {
        let shift = 2 * d - 2;
        (4 * uu + (vv >> shift), vv & ((1 << shift) - 1) != 0)
    };
    // The sum against K²: Greater, Less or Equal.
    let against = |k: u128| {
        let k2 = k * k;
        if whole > k2 || (whole == k2 && fraction) {
            std::cmp::Ordering::Greater
        } else if whole < k2 {
            std::cmp::Ordering::Less
        } else {
            std::cmp::Ordering::Equal
        }
    };
    // The estimate, as q 2^-53 (r in [1, 4)); within two ulps.
    let (su, sv) = (big_u as f64, big_v as f64 * scale(-(d as i32)));
    let r = (su * su + sv * sv).sqrt() * scale(-52);
    let mut q = (r * scale(53)) as u128;
    // Spacing of representable r at q: 2^-52 below 2, 2^-51 from 2 on.
    let step_up = |q: u128| if q >= 1 << 54 { 4 } else { 2 };
    let step_down = |q: u128| if q > 1 << 54 { 4 } else { 2 };
    loop {
        let s = step_up(q);
        match against(q + s / 2) {
            std::cmp::Ordering::Greater => q += s,
            std::cmp::Ordering::Equal => {
                // A tie: to the candidate whose last bit is 0.
                if (q / s) & 1 == 1 {
                    q += s;
                }
                break;
            }
            std::cmp::Ordering::Less => break,
        }
    }
    loop {
        let s = step_down(q);
        match against(q - s / 2) {
            std::cmp::Ordering::Less => q -= s,
            std::cmp::Ordering::Equal => {
                if (q / s) & 1 == 1 {
                    q -= s;
                }
                break;
            }
            std::cmp::Ordering::Greater => break,
        }
    }
    // q 2^(e-53): q has at most 53 significant bits, so this is exact but
    // for an overflow, which is the correctly rounded +∞.
    q as f64 * scale(-53) * scale(e)
}

const MANTISSA: u64 = (1 << 52) - 1;
const IMPLICIT: u64 = 1 << 52;

/// 2^k for k in -1022..=1023.
fn scale(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// Both below 2^-1022: u = a 2^-1074, v = b 2^-1074 with integers a, b
/// below 2^52, and the root is n 2^-1074 with n = √(a² + b²) rounded to
/// the nearest integer (never a tie: n² + n + 1/4 is not an integer).
fn both_subnormal(a: u64, b: u64) -> f64 {
    let s = a as u128 * a as u128 + b as u128 * b as u128;
    let mut n = (s as f64).sqrt() as u128;
    while n * n > s {
        n -= 1;
    }
    while (n + 1) * (n + 1) <= s {
        n += 1;
    }
    // Now n² ≤ s < (n + 1)²; up when s ≥ n² + n + 1, past (n + 1/2)².
    if s - n * n > n {
        n += 1;
    }
    n as f64 * f64::from_bits(1)
}
