//! Big-number arithmetic that a limit can stop.
//!
//! num-bigint does each operation in one call, and the superlinear ones
//! (multiplication, division, gcd, conversion to decimal) take seconds on
//! numbers of a few million bits: longer than an evaluation may run past
//! its timeout, and none of it charged to its step budget. The functions
//! here do the same work in pieces of bounded cost and, before each piece,
//! ask the caller's [`Work`] to charge it: that is where the step budget
//! runs out and the interrupt check is polled.
//!
//! Costs are in *units* of roughly a nanosecond of this machine's work
//! (measured: a 64-bit multiply-add in division is about one unit, a unit
//! of num-bigint's Toom-3 cost model about fourteen); a piece costs at most
//! about [`PIECE`] units.

use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};

use crate::float_math;

/// Units one piece may cost: about 4 ms, so that a limit stops any
/// arithmetic within about ten milliseconds.
pub const PIECE: u64 = 1 << 22;

/// What arithmetic charges its work to.
pub trait Work {
    /// Why the work was abandoned (the budget ran out, the host said stop).
    type Stop;
    /// Called before doing about `cost` units of work.
    fn charge(&mut self, cost: u64) -> Result<(), Self::Stop>;
}

/// Charges nothing and never stops: for numbers the caller knows to be
/// small, and for callers outside any evaluation.
pub struct Unmetered;

impl Work for Unmetered {
    type Stop = std::convert::Infallible;
    fn charge(&mut self, _: u64) -> Result<(), Self::Stop> {
        Ok(())
    }
}

/// 64-bit limbs of `a` (at least one).
pub fn limbs(a: &BigUint) -> u64 {
    a.bits().div_ceil(64).max(1)
}

/// Estimated cost of num-bigint multiplying `n` by `m` limbs: schoolbook
/// below 32 limbs, then Karatsuba and Toom-3, about 14·m^1.47 per m-limb
/// slice of the longer operand.
pub fn mul_cost(n: u64, m: u64) -> u64 {
    let (n, m) = if n >= m { (n, m) } else { (m, n) };
    if m <= 32 {
        return n.saturating_mul(m).saturating_mul(2);
    }
    let per_slice = 14.0 * float_math::pow(m as f64, 1.47);
    ((n / m + 1) as f64 * per_slice) as u64
}

/// `a × b`, in pieces whose cost is at most about [`PIECE`]. Slicing one
/// operand into short pieces would make a large product quadratic, so the
/// pieces come from Karatsuba's split instead: a product too costly for one
/// piece is three products of halves (recursively), and only products small
/// enough for one piece go to num-bigint (Toom-3 up to about 5,000 limbs).
/// A long operand against a short one is first cut into slices as long as
/// the short one.
pub fn mul<W: Work>(a: &BigUint, b: &BigUint, w: &mut W) -> Result<BigUint, W::Stop> {
    let (n, m) = (limbs(a), limbs(b));
    if mul_cost(n, m) <= PIECE {
        w.charge(mul_cost(n, m))?;
        return Ok(a * b);
    }
    let (long, short, sl) = if n >= m { (a, b, m) } else { (b, a, n) };
    if limbs(long) < 2 * sl {
        return karatsuba(long, short, w);
    }
    let digits = long.to_u64_digits();
    let mut acc = BigUint::zero();
    for (i, chunk) in digits.chunks(sl as usize).enumerate() {
        let product = karatsuba(&from_limbs(chunk), short, w)?;
        w.charge(2 * (limbs(&acc) + sl))?;
        acc += product << (64 * sl as usize * i);
    }
    Ok(acc)
}

/// Karatsuba's step for operands of similar length (neither more than
/// twice the other): `a·b = z2·B² + z1·B + z0` with `B = 2^(64h)`, `z0 =
/// a0·b0`, `z2 = a1·b1`, `z1 = (a0 + a1)(b0 + b1) − z0 − z2`.
fn karatsuba<W: Work>(a: &BigUint, b: &BigUint, w: &mut W) -> Result<BigUint, W::Stop> {
    let (n, m) = (limbs(a), limbs(b));
    if mul_cost(n, m) <= PIECE || n.min(m) < 64 {
        return mul(a, b, w);
    }
    let h = (n.max(m) / 2) as usize;
    let (a0, a1) = split(a, h);
    let (b0, b1) = split(b, h);
    let z0 = mul(&a0, &b0, w)?;
    let z2 = mul(&a1, &b1, w)?;
    w.charge(4 * (n + m))?;
    let z1 = mul(&(&a0 + &a1), &(&b0 + &b1), w)? - &z0 - &z2;
    w.charge(4 * (n + m))?;
    Ok((z2 << (128 * h)) + (z1 << (64 * h)) + z0)
}

/// `a` as `(low h limbs, the rest)`.
fn split(a: &BigUint, h: usize) -> (BigUint, BigUint) {
    let digits = a.to_u64_digits();
    if digits.len() <= h {
        return (a.clone(), BigUint::zero());
    }
    (from_limbs(&digits[..h]), from_limbs(&digits[h..]))
}

/// `(a / b, a % b)` for `b > 0`, in pieces: long division whose digits are
/// blocks of limbs, each block one bounded num-bigint division.
pub fn div_rem<W: Work>(
    a: &BigUint,
    b: &BigUint,
    w: &mut W,
) -> Result<(BigUint, BigUint), W::Stop> {
    let (n, m) = (limbs(a), limbs(b));
    if a < b {
        w.charge(n)?;
        return Ok((BigUint::zero(), a.clone()));
    }
    // Knuth's algorithm D: about (quotient limbs) × (divisor limbs).
    let total = (n - m + 1).saturating_mul(m) + n;
    if total <= PIECE {
        w.charge(total)?;
        return Ok(a.div_rem(b));
    }
    let k = (PIECE / m / 4).max(1) as usize;
    let digits = a.to_u64_digits();
    let mut quotient: Vec<u64> = vec![0; digits.len()];
    let mut r = BigUint::zero();
    for block in (0..digits.len().div_ceil(k)).rev() {
        let (lo, hi) = (block * k, ((block + 1) * k).min(digits.len()));
        w.charge((hi - lo + 1) as u64 * m + 4 * m)?;
        let (q, rem) = ((r << (64 * (hi - lo))) + from_limbs(&digits[lo..hi])).div_rem(b);
        r = rem;
        // r < b, so q < 2^(64 (hi - lo)): it fills only its block.
        for (j, d) in q.to_u64_digits().into_iter().enumerate() {
            quotient[lo + j] = d;
        }
    }
    Ok((from_limbs(&quotient), r))
}

/// gcd(a, b) by Lehmer's method: each pass replaces (a, b) by a linear
/// combination with single-limb cofactors found from their leading bits
/// (one sweep over the numbers), so the passes are the pieces. About four
/// times faster than num-integer's binary gcd on large numbers, and
/// stoppable.
pub fn gcd<W: Work>(a: &BigUint, b: &BigUint, w: &mut W) -> Result<BigUint, W::Stop> {
    let mut a = a.to_u64_digits();
    let mut b = b.to_u64_digits();
    if less(&a, &b) {
        std::mem::swap(&mut a, &mut b);
    }
    while b.len() > 2 {
        w.charge(8 * a.len() as u64)?;
        let (ca, cb, cc, cd) = lehmer_cofactors(&a, &b);
        if cb == 0 {
            // The leading bits decided nothing: one full division step.
            let (_, r) = div_rem(&from_limbs(&a), &from_limbs(&b), w)?;
            a = std::mem::replace(&mut b, r.to_u64_digits());
        } else {
            let next_a = combine(&a, &b, ca, cb);
            b = combine(&a, &b, cc, cd);
            a = next_a;
            if less(&a, &b) {
                std::mem::swap(&mut a, &mut b);
            }
        }
    }
    w.charge(8)?;
    Ok(from_limbs(&a).gcd(&from_limbs(&b)))
}

/// Single-precision Euclid on the top 63 bits of `a` and `b` (Knuth's
/// algorithm L): cofactors (A, B, C, D) with a' = A·a + B·b, b' = C·a + D·b,
/// as far as the quotients are certain (Collins' condition).
fn lehmer_cofactors(a: &[u64], b: &[u64]) -> (i64, i64, i64, i64) {
    let shift = bits(a) - 63;
    let (mut x, mut y) = (top63(a, shift), top63(b, shift));
    let (mut ca, mut cb, mut cc, mut cd): (i64, i64, i64, i64) = (1, 0, 0, 1);
    loop {
        if y + cc == 0 || y + cd == 0 {
            break;
        }
        let q = (x + ca) / (y + cc);
        if q != (x + cb) / (y + cd) {
            break;
        }
        let (Some(nc), Some(nd)) = (
            q.checked_mul(cc).and_then(|t| ca.checked_sub(t)),
            q.checked_mul(cd).and_then(|t| cb.checked_sub(t)),
        ) else {
            break;
        };
        if nc.unsigned_abs() >= 1 << 62 || nd.unsigned_abs() >= 1 << 62 {
            break;
        }
        (ca, cb, cc, cd) = (cc, cd, nc, nd);
        (x, y) = (y, x - q * y);
    }
    (ca, cb, cc, cd)
}

/// `base^e` by squaring, each multiplication in pieces.
pub fn pow<W: Work>(base: &BigUint, mut e: u64, w: &mut W) -> Result<BigUint, W::Stop> {
    let mut result = BigUint::one();
    let mut square = base.clone();
    loop {
        if e & 1 == 1 {
            result = mul(&result, &square, w)?;
        }
        e >>= 1;
        if e == 0 {
            return Ok(result);
        }
        square = mul(&square, &square, w)?;
    }
}

/// The integer square root of `n`, by Newton's method from above, each
/// division in pieces.
pub fn isqrt<W: Work>(n: &BigUint, w: &mut W) -> Result<BigUint, W::Stop> {
    if n.bits() <= 104 {
        w.charge(4)?;
        return Ok(n.sqrt());
    }
    // 2^ceil(bits/2) ≥ √n; the iterates decrease to ⌊√n⌋.
    let mut x = BigUint::one() << n.bits().div_ceil(2);
    loop {
        let (q, _) = div_rem(n, &x, w)?;
        let y = (&x + q) >> 1u32;
        if y >= x {
            return Ok(x);
        }
        x = y;
    }
}

/// The digits of `a` in `radix`, most significant first: blocks of digits
/// split off by dividing by a power of the radix, in pieces.
pub fn to_radix<W: Work>(a: &BigUint, radix: u32, w: &mut W) -> Result<String, W::Stop> {
    let n = limbs(a);
    // num-bigint's conversion is quadratic; small numbers go at once.
    if radix.is_power_of_two() || n.saturating_mul(n) <= PIECE {
        w.charge(n.saturating_mul(n).min(PIECE) + n)?;
        return Ok(a.to_str_radix(radix));
    }
    let block_limbs = (PIECE as f64).sqrt() as usize;
    let digits_per_limb = (64.0 / float_math::log2(radix as f64)).floor() as usize;
    let d = block_limbs * digits_per_limb;
    let power = num_traits::pow(BigUint::from(radix), d);
    let mut blocks = Vec::new();
    let mut rest = a.clone();
    while !rest.is_zero() {
        let (q, r) = div_rem(&rest, &power, w)?;
        let rl = limbs(&r);
        w.charge(rl * rl)?;
        blocks.push(r.to_str_radix(radix));
        rest = q;
    }
    let mut out = String::with_capacity(blocks.len() * d);
    for (i, b) in blocks.iter().rev().enumerate() {
        if i > 0 {
            out.extend(std::iter::repeat_n('0', d - b.len()));
        }
        out.push_str(b);
    }
    Ok(out)
}

/// Signed product, in pieces.
pub fn mul_int<W: Work>(a: &BigInt, b: &BigInt, w: &mut W) -> Result<BigInt, W::Stop> {
    let m = mul(a.magnitude(), b.magnitude(), w)?;
    Ok(BigInt::from_biguint(a.sign() * b.sign(), m))
}

/// Truncating signed division `(a quo b, a rem b)` for `b ≠ 0`, in pieces.
pub fn div_rem_int<W: Work>(
    a: &BigInt,
    b: &BigInt,
    w: &mut W,
) -> Result<(BigInt, BigInt), W::Stop> {
    let (q, r) = div_rem(a.magnitude(), b.magnitude(), w)?;
    Ok((
        BigInt::from_biguint(a.sign() * b.sign(), q),
        BigInt::from_biguint(a.sign(), r),
    ))
}

/// `n/d` in lowest terms with a positive denominator (`d ≠ 0`), reduced
/// with the stoppable gcd.
pub fn rational<W: Work>(n: BigInt, d: BigInt, w: &mut W) -> Result<BigRational, W::Stop> {
    let g = gcd(n.magnitude(), d.magnitude(), w)?;
    let (mut n, mut d) = if g.is_one() {
        (n, d)
    } else {
        let g = BigInt::from(g);
        (div_rem_int(&n, &g, w)?.0, div_rem_int(&d, &g, w)?.0)
    };
    if d.is_negative() {
        n = -n;
        d = -d;
    }
    Ok(BigRational::new_raw(n, d))
}

/// Exact sum or difference of two rationals.
pub fn rat_add<W: Work>(
    a: &BigRational,
    b: &BigRational,
    negate_b: bool,
    w: &mut W,
) -> Result<BigRational, W::Stop> {
    let left = mul_int(a.numer(), b.denom(), w)?;
    let mut right = mul_int(b.numer(), a.denom(), w)?;
    if negate_b {
        right = -right;
    }
    let d = mul_int(a.denom(), b.denom(), w)?;
    w.charge(limbs(left.magnitude()) + limbs(right.magnitude()))?;
    rational(left + right, d, w)
}

/// Exact product of two rationals; with `invert_b`, the quotient (`b ≠ 0`).
pub fn rat_mul<W: Work>(
    a: &BigRational,
    b: &BigRational,
    invert_b: bool,
    w: &mut W,
) -> Result<BigRational, W::Stop> {
    let (bn, bd) = if invert_b {
        (b.denom(), b.numer())
    } else {
        (b.numer(), b.denom())
    };
    let n = mul_int(a.numer(), bn, w)?;
    let d = mul_int(a.denom(), bd, w)?;
    rational(n, d, w)
}

/// Compares two rationals by cross-multiplying, in pieces.
pub fn rat_cmp<W: Work>(
    a: &BigRational,
    b: &BigRational,
    w: &mut W,
) -> Result<std::cmp::Ordering, W::Stop> {
    let left = mul_int(a.numer(), b.denom(), w)?;
    let right = mul_int(b.numer(), a.denom(), w)?;
    Ok(left.cmp(&right))
}

fn from_limbs(d: &[u64]) -> BigUint {
    let mut v = Vec::with_capacity(d.len() * 2);
    for &l in d {
        v.push(l as u32);
        v.push((l >> 32) as u32);
    }
    BigUint::new(v)
}

/// `a·x + b·y` of little-endian limbs with single-limb signed cofactors,
/// known to be non-negative and no longer than `a`.
fn combine(a: &[u64], b: &[u64], x: i64, y: i64) -> Vec<u64> {
    let mut out = Vec::with_capacity(a.len());
    let mut carry: i128 = 0;
    for (i, &ai) in a.iter().enumerate() {
        let bi = b.get(i).copied().unwrap_or(0);
        let t = ai as i128 * x as i128 + bi as i128 * y as i128 + carry;
        out.push(t as u64);
        carry = t >> 64;
    }
    while out.last() == Some(&0) {
        out.pop();
    }
    out
}

fn bits(a: &[u64]) -> u64 {
    match a.last() {
        None => 0,
        Some(top) => a.len() as u64 * 64 - top.leading_zeros() as u64,
    }
}

/// The 63 bits of `a` from bit `shift` up.
fn top63(a: &[u64], shift: u64) -> i64 {
    let limb = (shift / 64) as usize;
    let off = shift % 64;
    let lo = a.get(limb).copied().unwrap_or(0) >> off;
    let hi = if off == 0 {
        0
    } else {
        a.get(limb + 1).copied().unwrap_or(0) << (64 - off)
    };
    ((lo | hi) & i64::MAX as u64) as i64
}

fn less(a: &[u64], b: &[u64]) -> bool {
    a.len() < b.len() || (a.len() == b.len() && a.iter().rev().lt(b.iter().rev()))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_rng::TestRng as Rng;

    fn big(r: &mut Rng, limbs: usize) -> BigUint {
        BigUint::from_slice(&(0..limbs * 2).map(|_| r.next() as u32).collect::<Vec<_>>())
    }

    /// Counts the pieces and refuses the one after `stop_after`.
    struct Counter {
        pieces: u64,
        stop_after: u64,
    }
    impl Work for Counter {
        type Stop = ();
        fn charge(&mut self, cost: u64) -> Result<(), ()> {
            assert!(cost <= 64 * PIECE, "a piece of {cost} units");
            self.pieces += 1;
            if self.pieces > self.stop_after {
                return Err(());
            }
            Ok(())
        }
    }

    #[test]
    fn agrees_with_num_bigint() {
        let mut r = Rng::new(0x1234_5678_9abc_def0);
        for round in 0..120 {
            // Some operands large enough to be cut into pieces.
            let n = (r.next() % if round % 10 == 0 { 6000 } else { 200 }) as usize + 1;
            let m = (r.next() % if round % 7 == 0 { 6000 } else { 200 }) as usize + 1;
            let (a, b) = (big(&mut r, n), big(&mut r, m) + 1u32);
            let gl = (r.next() % 3) as usize + 1;
            let g = big(&mut r, gl) + 1u32;
            assert_eq!(mul(&a, &b, &mut Unmetered).unwrap(), &a * &b, "{n}×{m}");
            assert_eq!(
                div_rem(&a, &b, &mut Unmetered).unwrap(),
                a.div_rem(&b),
                "{n}/{m}"
            );
            if n < 800 && m < 800 {
                let (ag, bg) = (&a * &g, &b * &g);
                assert_eq!(
                    gcd(&ag, &bg, &mut Unmetered).unwrap(),
                    ag.gcd(&bg),
                    "gcd {n} {m}"
                );
            }
            if n < 2000 {
                let dec = to_radix(&a, 10, &mut Unmetered).unwrap();
                assert_eq!(dec, a.to_str_radix(10), "decimal of {n} limbs");
            }
        }
        assert_eq!(
            gcd(&BigUint::from(12u32), &BigUint::zero(), &mut Unmetered).unwrap(),
            BigUint::from(12u32)
        );
        let b = BigUint::from(12345u32);
        for n in [0u64, 1, 2, 99, 1 << 40, u64::MAX] {
            let n = BigUint::from(n) * BigUint::from(n) + 3u32;
            assert_eq!(isqrt(&n, &mut Unmetered).unwrap(), n.sqrt());
        }
        let huge = big(&mut r, 300);
        assert_eq!(isqrt(&huge, &mut Unmetered).unwrap(), huge.sqrt());
        for e in [0u64, 1, 2, 3, 17, 1000] {
            assert_eq!(
                pow(&b, e, &mut Unmetered).unwrap(),
                num_traits::pow(b.clone(), e as usize)
            );
        }
    }

    #[test]
    fn rationals_are_reduced() {
        let q = rational(BigInt::from(-6), BigInt::from(-4), &mut Unmetered).unwrap();
        assert_eq!(q, BigRational::new(BigInt::from(3), BigInt::from(2)));
        let third = BigRational::new(BigInt::from(1), BigInt::from(3));
        let sixth = BigRational::new(BigInt::from(1), BigInt::from(6));
        assert_eq!(
            rat_add(&third, &sixth, false, &mut Unmetered).unwrap(),
            &third + &sixth
        );
        assert_eq!(
            rat_add(&third, &sixth, true, &mut Unmetered).unwrap(),
            &third - &sixth
        );
        assert_eq!(
            rat_mul(&third, &sixth, false, &mut Unmetered).unwrap(),
            &third * &sixth
        );
        assert_eq!(
            rat_mul(&third, &sixth, true, &mut Unmetered).unwrap(),
            &third / &sixth
        );
        assert_eq!(
            rat_cmp(&third, &sixth, &mut Unmetered).unwrap(),
            std::cmp::Ordering::Greater
        );
    }

    #[test]
    fn large_work_comes_in_pieces_and_stops() {
        let mut r = Rng::new(7);
        let (a, b) = (big(&mut r, 20_000), big(&mut r, 20_000) + 1u32);
        let mut c = Counter {
            pieces: 0,
            stop_after: u64::MAX,
        };
        let p = mul(&a, &b, &mut c).unwrap();
        assert!(c.pieces > 1, "one piece for a 20000-limb product");
        let mut c = Counter {
            pieces: 0,
            stop_after: 3,
        };
        assert!(div_rem(&p, &b, &mut c).is_err());
        let mut c = Counter {
            pieces: 0,
            stop_after: 3,
        };
        assert!(gcd(&a, &b, &mut c).is_err());
    }
}
