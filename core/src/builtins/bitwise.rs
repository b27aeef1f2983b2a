//! The native side of `(srfi 151)`: bitwise operations on exact integers
//! of any size, in two's complement (an integer is an infinite string of
//! bits, the negative ones with infinitely many ones to the left), as
//! SRFI 151 and R6RS define them. The library builds the rest on these.

use num_bigint::BigInt;
use num_traits::{One, Signed, ToPrimitive, Zero};

use super::{type_error, Ctx, Fault, PrimTable};
use crate::number::Num;
use crate::value::{Object, Value};

/// Units of work per 64 bits handled.
const LIMB_UNITS: u64 = 4;

/// Bits a shift may produce at most: past this the result would not fit
/// any memory cap.
const MAX_SHIFT_BITS: u64 = 1 << 32;

fn int(c: &mut Ctx, who: &str, v: Value) -> Result<BigInt, Fault> {
    match v {
        Value::Int(i) => Ok(BigInt::from(i)),
        _ => match c.heap.obj(v) {
            Some(Object::Big(b)) => {
                let b = b.clone();
                c.charge(LIMB_UNITS * (b.bits() / 64 + 1))?;
                Ok(b)
            }
            _ => Err(type_error(c, who, "an exact integer", v)),
        },
    }
}

fn value(c: &mut Ctx, b: BigInt) -> Value {
    Num::Big(b).into_value(c.heap)
}

/// A primitive folding its integer arguments with `op` from `unit`.
fn fold(
    c: &mut Ctx,
    who: &str,
    a: &[Value],
    unit: i64,
    small: fn(i64, i64) -> i64,
    op: fn(&BigInt, &BigInt) -> BigInt,
) -> Result<Value, Fault> {
    if a.iter().all(|v| matches!(v, Value::Int(_))) {
        let mut acc = unit;
        for v in a {
            if let Value::Int(i) = v {
                acc = small(acc, *i);
            }
        }
        return Ok(Value::Int(acc));
    }
    let mut acc = BigInt::from(unit);
    for &v in a {
        let b = int(c, who, v)?;
        acc = op(&acc, &b);
    }
    Ok(value(c, acc))
}

pub fn register(t: &mut PrimTable) {
    t.add("%bitwise-and", 0, None, |c, a| {
        fold(c, "bitwise-and", a, -1, |x, y| x & y, |x, y| x & y)
    });
    t.add("%bitwise-ior", 0, None, |c, a| {
        fold(c, "bitwise-ior", a, 0, |x, y| x | y, |x, y| x | y)
    });
    t.add("%bitwise-xor", 0, None, |c, a| {
        fold(c, "bitwise-xor", a, 0, |x, y| x ^ y, |x, y| x ^ y)
    });
    t.add("%bitwise-not", 1, Some(1), |c, a| match a[0] {
        Value::Int(i) => Ok(Value::Int(!i)),
        v => {
            let b = int(c, "bitwise-not", v)?;
            Ok(value(c, -b - 1))
        }
    });
    // (%arithmetic-shift N COUNT): N * 2^COUNT, rounded toward -infinity.
    t.add("%arithmetic-shift", 2, Some(2), |c, a| {
        let Value::Int(count) = a[1] else {
            return Err(type_error(
                c,
                "arithmetic-shift",
                "a fixnum shift count",
                a[1],
            ));
        };
        if let Value::Int(i) = a[0] {
            if count <= 0 {
                return Ok(Value::Int(if count <= -64 {
                    if i < 0 {
                        -1
                    } else {
                        0
                    }
                } else {
                    i >> (-count)
                }));
            }
            if count < 63 && (i << count) >> count == i {
                return Ok(Value::Int(i << count));
            }
        }
        let b = int(c, "arithmetic-shift", a[0])?;
        if count > 0 {
            let bits = b.bits().saturating_add(count as u64);
            if bits > MAX_SHIFT_BITS {
                return Err(Fault::OutOfMemory);
            }
            c.heap.check_room((bits / 8) as usize)?;
            c.charge(LIMB_UNITS * (bits / 64 + 1))?;
            Ok(value(c, b << (count as usize)))
        } else {
            let n = count.unsigned_abs();
            if n >= b.bits() + 1 {
                return Ok(Value::Int(if b.is_negative() { -1 } else { 0 }));
            }
            Ok(value(c, b >> (n as usize)))
        }
    });
    // Ones in a non-negative integer, zeros in a negative one.
    t.add("%bit-count", 1, Some(1), |c, a| {
        if let Value::Int(i) = a[0] {
            let n = if i < 0 {
                (!i).count_ones()
            } else {
                i.count_ones()
            };
            return Ok(Value::Int(n as i64));
        }
        let b = int(c, "bit-count", a[0])?;
        let m = if b.is_negative() { -b - 1 } else { b };
        let n: u64 = m.iter_u64_digits().map(|d| d.count_ones() as u64).sum();
        Ok(Value::Int(n as i64))
    });
    // Bits needed besides the sign.
    t.add("%integer-length", 1, Some(1), |c, a| {
        if let Value::Int(i) = a[0] {
            let m = if i < 0 { !i } else { i };
            return Ok(Value::Int(64 - m.leading_zeros() as i64));
        }
        let b = int(c, "integer-length", a[0])?;
        let m = if b.is_negative() {
            -b - BigInt::one()
        } else {
            b
        };
        Ok(Value::Int(if m.is_zero() { 0 } else { m.bits() as i64 }))
    });
    // (%bit-set? INDEX N)
    t.add("%bit-set?", 2, Some(2), |c, a| {
        let Value::Int(k) = a[0] else {
            return Err(type_error(
                c,
                "bit-set?",
                "a non-negative fixnum index",
                a[0],
            ));
        };
        if k < 0 {
            return Err(type_error(
                c,
                "bit-set?",
                "a non-negative fixnum index",
                a[0],
            ));
        }
        if let Value::Int(i) = a[1] {
            return Ok(Value::Bool(if k >= 63 { i < 0 } else { (i >> k) & 1 == 1 }));
        }
        let b = int(c, "bit-set?", a[1])?;
        let shifted: BigInt = b >> (k as usize);
        Ok(Value::Bool(
            (shifted & BigInt::one()).to_i64().unwrap_or(0) == 1,
        ))
    });
}
