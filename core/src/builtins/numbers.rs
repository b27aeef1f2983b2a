//! Number procedures (R7RS 6.2).

use std::cmp::Ordering;

use super::{boolean, complex, integer, num, type_error, Ctx, Fault, PrimTable};
use crate::float_math;
use crate::number::{self, IntDiv, Num, Rounding};
use crate::value::{Object, Value};

// Long by design: a table, one entry per primitive.
pub fn register(t: &mut PrimTable) {
    t.add("+", 0, None, add);
    t.add("-", 1, None, sub);
    t.add("*", 0, None, mul);
    t.add("/", 1, None, div);
    t.add("=", 1, None, |c, a| compare(c, a, "=", Ordering::is_eq));
    t.add("<", 1, None, |c, a| compare(c, a, "<", Ordering::is_lt));
    t.add(">", 1, None, |c, a| compare(c, a, ">", Ordering::is_gt));
    t.add("<=", 1, None, |c, a| compare(c, a, "<=", Ordering::is_le));
    t.add(">=", 1, None, |c, a| compare(c, a, ">=", Ordering::is_ge));
    t.add("real?", 1, Some(1), |c, a| {
        Ok(boolean(Num::from_value(c.heap, a[0]).is_some()))
    });
    t.add("rational?", 1, Some(1), |c, a| {
        Ok(boolean(match Num::from_value(c.heap, a[0]) {
            Some(Num::Float(f)) => f.is_finite(),
            Some(_) => true,
            None => false,
        }))
    });
    t.add("integer?", 1, Some(1), |c, a| {
        Ok(boolean(
            Num::from_value(c.heap, a[0]).is_some_and(|n| n.is_integer()),
        ))
    });
    t.add("exact-integer?", 1, Some(1), |c, a| {
        Ok(boolean(matches!(
            Num::from_value(c.heap, a[0]),
            Some(Num::Int(_) | Num::Big(_))
        )))
    });
    t.add("exact-rational?", 1, Some(1), |c, a| {
        Ok(boolean(matches!(
            Num::from_value(c.heap, a[0]),
            Some(Num::Int(_) | Num::Big(_) | Num::Rat(_))
        )))
    });
    t.add("positive?", 1, Some(1), |c, a| {
        Ok(boolean(
            real(c, "positive?", a[0])?.sign() == Ordering::Greater,
        ))
    });
    t.add("negative?", 1, Some(1), |c, a| {
        Ok(boolean(
            real(c, "negative?", a[0])?.sign() == Ordering::Less,
        ))
    });
    t.add("odd?", 1, Some(1), |c, a| parity(c, a[0], "odd?", true));
    t.add("even?", 1, Some(1), |c, a| parity(c, a[0], "even?", false));
    t.add("max", 1, None, |c, a| {
        extremum(c, a, "max", Ordering::Greater)
    });
    t.add("min", 1, None, |c, a| extremum(c, a, "min", Ordering::Less));
    t.add("abs", 1, Some(1), |c, a| {
        let n = num(c, "abs", a[0])?;
        Ok(number::abs(&n).into_value(c.heap))
    });
    t.add("quotient", 2, Some(2), |c, a| {
        int_div(c, a, "quotient", IntDiv::Quotient)
    });
    t.add("remainder", 2, Some(2), |c, a| {
        int_div(c, a, "remainder", IntDiv::Remainder)
    });
    t.add("modulo", 2, Some(2), |c, a| {
        int_div(c, a, "modulo", IntDiv::Modulo)
    });
    t.add("truncate-quotient", 2, Some(2), |c, a| {
        int_div(c, a, "truncate-quotient", IntDiv::Quotient)
    });
    t.add("truncate-remainder", 2, Some(2), |c, a| {
        int_div(c, a, "truncate-remainder", IntDiv::Remainder)
    });
    t.add("floor-remainder", 2, Some(2), |c, a| {
        int_div(c, a, "floor-remainder", IntDiv::Modulo)
    });
    t.add("floor-quotient", 2, Some(2), |c, a| {
        floor_quotient(c, a, "floor-quotient")
    });
    t.add("floor/", 2, Some(2), |c, a| {
        let q = floor_quotient(c, a, "floor/")?;
        let r = int_div(c, a, "floor/", IntDiv::Modulo)?;
        Ok(c.heap.alloc(Object::Values(vec![q, r])))
    });
    t.add("truncate/", 2, Some(2), |c, a| {
        let q = int_div(c, a, "truncate/", IntDiv::Quotient)?;
        let r = int_div(c, a, "truncate/", IntDiv::Remainder)?;
        Ok(c.heap.alloc(Object::Values(vec![q, r])))
    });
    t.add("gcd", 0, None, |c, a| {
        let mut acc = Num::Int(0);
        for &v in a {
            let n = integer(c, "gcd", v)?;
            acc = number::gcd(&acc, &n, &mut c.budget)?;
        }
        Ok(number::abs(&acc).into_value(c.heap))
    });
    t.add("lcm", 0, None, |c, a| {
        let mut acc = Num::Int(1);
        for &v in a {
            let n = integer(c, "lcm", v)?;
            if n.is_zero() {
                return Ok(if n.is_exact() {
                    Value::Int(0)
                } else {
                    Value::Float(0.0)
                });
            }
            let w = &mut c.budget;
            let g = number::gcd(&acc, &n, w)?;
            let product = number::mul(&acc, &n, w)?;
            acc = number::abs(&number::div(&product, &g, w)?.unwrap_or(Num::Int(0)));
        }
        Ok(acc.into_value(c.heap))
    });
    t.add("floor", 1, Some(1), |c, a| {
        round(c, a[0], "floor", Rounding::Floor)
    });
    t.add("ceiling", 1, Some(1), |c, a| {
        round(c, a[0], "ceiling", Rounding::Ceiling)
    });
    t.add("truncate", 1, Some(1), |c, a| {
        round(c, a[0], "truncate", Rounding::Truncate)
    });
    t.add("round", 1, Some(1), |c, a| {
        round(c, a[0], "round", Rounding::Round)
    });
    t.add("numerator", 1, Some(1), |c, a| {
        let n = real(c, "numerator", a[0])?;
        Ok(number::numerator(&n).into_value(c.heap))
    });
    t.add("denominator", 1, Some(1), |c, a| {
        let n = real(c, "denominator", a[0])?;
        Ok(number::denominator(&n).into_value(c.heap))
    });
    t.add("exact", 1, Some(1), |c, a| exact(c, a, "exact"));
    // The R5RS name reports errors under its own name.
    t.add("inexact->exact", 1, Some(1), |c, a| {
        exact(c, a, "inexact->exact")
    });
    t.add("inexact", 1, Some(1), |c, a| {
        if let Some(r) = complex::unary(c, "inexact", a[0]) {
            return r;
        }
        Ok(number::to_inexact(&num(c, "inexact", a[0])?).into_value(c.heap))
    });
    t.add("exact->inexact", 1, Some(1), |c, a| {
        if let Some(r) = complex::unary(c, "inexact", a[0]) {
            return r;
        }
        Ok(number::to_inexact(&num(c, "exact->inexact", a[0])?).into_value(c.heap))
    });
    t.add("expt", 2, Some(2), |c, a| {
        if let Some(r) = complex::expt(c, a[0], a[1]) {
            return r;
        }
        let b = num(c, "expt", a[0])?;
        let e = num(c, "expt", a[1])?;
        if number::expt_result_bits(&b, &e) > 64 * 1024 * 1024 {
            return Err(Fault::OutOfMemory);
        }
        match number::expt(&b, &e, &mut c.budget)? {
            Some(r) => Ok(r.into_value(c.heap)),
            None => Err(Fault::Error("expt: division by zero".into(), vec![])),
        }
    });
    t.add("exact-integer-sqrt", 1, Some(1), |c, a| {
        let n = num(c, "exact-integer-sqrt", a[0])?;
        match number::exact_integer_sqrt(&n, &mut c.budget)? {
            Some((s, r)) => {
                let s = s.into_value(c.heap);
                let r = r.into_value(c.heap);
                Ok(c.heap.alloc(Object::Values(vec![s, r])))
            }
            None => Err(type_error(
                c,
                "exact-integer-sqrt",
                "a non-negative exact integer",
                a[0],
            )),
        }
    });
    t.add("sqrt", 1, Some(1), |c, a| {
        if let Some(r) = complex::unary(c, "sqrt", a[0]) {
            return r;
        }
        let n = num(c, "sqrt", a[0])?;
        Ok(number::sqrt(&n, &mut c.budget)?.into_value(c.heap))
    });
    t.add("square", 1, Some(1), |c, a| {
        if let Some(r) = complex::unary(c, "square", a[0]) {
            return r;
        }
        let n = num(c, "square", a[0])?;
        Ok(number::mul(&n, &n, &mut c.budget)?.into_value(c.heap))
    });
    t.add("exp", 1, Some(1), |c, a| {
        float1(c, a, "exp", float_math::exp)
    });
    t.add("sin", 1, Some(1), |c, a| {
        float1(c, a, "sin", float_math::sin)
    });
    t.add("cos", 1, Some(1), |c, a| {
        float1(c, a, "cos", float_math::cos)
    });
    t.add("tan", 1, Some(1), |c, a| {
        float1(c, a, "tan", float_math::tan)
    });
    t.add("asin", 1, Some(1), |c, a| {
        float1(c, a, "asin", float_math::asin)
    });
    t.add("acos", 1, Some(1), |c, a| {
        float1(c, a, "acos", float_math::acos)
    });
    t.add("atan", 1, Some(2), |c, a| {
        if a.len() == 1 {
            if let Some(r) = complex::unary(c, "atan", a[0]) {
                return r;
            }
        }
        let y = num(c, "atan", a[0])?.to_f64();
        Ok(Value::Float(match a.get(1) {
            Some(&x) => float_math::atan2(y, num(c, "atan", x)?.to_f64()),
            None => float_math::atan(y),
        }))
    });
    t.add("log", 1, Some(2), |c, a| {
        let complex = match a.get(1) {
            Some(&base) => complex::log2(c, a[0], base),
            None => complex::unary(c, "log", a[0]),
        };
        if let Some(r) = complex {
            return r;
        }
        let n = num(c, "log", a[0])?;
        if n.is_exact() && n.is_zero() {
            return Err(Fault::Error("log: undefined for exact 0".into(), vec![]));
        }
        Ok(Value::Float(match a.get(1) {
            Some(&b) => number::log_base(&n, &num(c, "log", b)?),
            None => number::ln(&n),
        }))
    });
    t.add("number->string", 1, Some(2), |c, a| {
        let radix = radix_arg(c, a.get(1).copied(), "number->string")?;
        if let Some(r) = complex::to_string(c, a[0], radix) {
            return r;
        }
        let n = num(c, "number->string", a[0])?;
        if radix != 10 && !n.is_exact() {
            return Err(Fault::Error(
                "number->string: inexact numbers are written in radix 10 only".into(),
                vec![],
            ));
        }
        let s = number::to_string(&n, radix, &mut c.budget)?;
        c.charge(s.len() as u64)?;
        Ok(c.heap.string(&s))
    });
    t.add("string->number", 1, Some(2), |c, a| {
        let s: String = super::string(c, "string->number", a[0])?.iter().collect();
        let radix = radix_arg(c, a.get(1).copied(), "string->number")?;
        // Reading digits is quadratic in num-bigint beyond a few hundred.
        let len = s.len() as u64;
        c.charge(len.saturating_mul(len) / 256 + len)?;
        Ok(complex::parse(c, &s, radix))
    });
    t.add("exact-integer-bits", 1, Some(1), |c, a| {
        // Not standard: used by tests of bignum growth.
        let n = integer(c, "exact-integer-bits", a[0])?;
        Ok(Value::Int(match n {
            Num::Int(i) => 64 - i.unsigned_abs().leading_zeros() as i64,
            Num::Big(b) => b.bits() as i64,
            _ => 0,
        }))
    });
}

fn real(c: &mut Ctx, who: &str, v: Value) -> Result<Num, Fault> {
    num(c, who, v)
}

fn radix_arg(c: &Ctx, v: Option<Value>, who: &str) -> Result<u32, Fault> {
    match v {
        None => Ok(10),
        Some(Value::Int(r)) if matches!(r, 2 | 8 | 10 | 16) => Ok(r as u32),
        Some(other) => Err(type_error(c, who, "a radix of 2, 8, 10 or 16", other)),
    }
}

/// `+`, `*` or `-` of one or more (folded from the first argument) when
/// every argument is a flonum, or every one a fixnum and no step
/// overflows: the value the general fold below gives, and a unit of charge
/// per argument, without making each argument a `Num`. `None`: take the
/// general fold.
#[inline]
fn immediate_fold(
    c: &mut Ctx,
    a: &[Value],
    int: fn(i64, i64) -> Option<i64>,
    float: fn(f64, f64) -> f64,
) -> Option<Result<Value, Fault>> {
    let (&first, rest) = a.split_first()?;
    let value = match first {
        Value::Float(mut acc) => {
            for &v in rest {
                let Value::Float(y) = v else { return None };
                acc = float(acc, y);
            }
            Value::Float(acc)
        }
        Value::Int(mut acc) => {
            for &v in rest {
                let Value::Int(y) = v else { return None };
                acc = int(acc, y)?;
            }
            Value::Int(acc)
        }
        _ => return None,
    };
    Some(c.charge(a.len() as u64).map(|()| value))
}

/// `+` and `*` fold from their first argument, as Guile and Chez do: the
/// identity (an exact 0 or 1) only stands for no arguments, so that
/// `(+ -0.0)` and `(+ -0.0 -0.0 -0.0)` are `-0.0` (an exact 0 added to
/// `-0.0` would make it `0.0`).
fn add(c: &mut Ctx, a: &[Value]) -> Result<Value, Fault> {
    if let Some(r) = immediate_fold(c, a, i64::checked_add, |x, y| x + y) {
        return r;
    }
    if let Some(r) = complex::nary(c, "+", a) {
        return r;
    }
    let Some((&first, rest)) = a.split_first() else {
        return Ok(Value::Int(0));
    };
    let mut acc = num(c, "+", first)?;
    for &v in rest {
        let n = num(c, "+", v)?;
        acc = number::add(&acc, &n, &mut c.budget)?;
    }
    Ok(acc.into_value(c.heap))
}

fn mul(c: &mut Ctx, a: &[Value]) -> Result<Value, Fault> {
    if let Some(r) = immediate_fold(c, a, i64::checked_mul, |x, y| x * y) {
        return r;
    }
    if let Some(r) = complex::nary(c, "*", a) {
        return r;
    }
    let Some((&first, rest)) = a.split_first() else {
        return Ok(Value::Int(1));
    };
    let mut acc = num(c, "*", first)?;
    for &v in rest {
        let n = num(c, "*", v)?;
        acc = number::mul(&acc, &n, &mut c.budget)?;
    }
    Ok(acc.into_value(c.heap))
}

fn sub(c: &mut Ctx, a: &[Value]) -> Result<Value, Fault> {
    if a.len() > 1 {
        if let Some(r) = immediate_fold(c, a, i64::checked_sub, |x, y| x - y) {
            return r;
        }
    }
    if let Some(r) = complex::nary(c, "-", a) {
        return r;
    }
    let first = num(c, "-", a[0])?;
    if a.len() == 1 {
        return Ok(number::negate(&first).into_value(c.heap));
    }
    let mut acc = first;
    for &v in &a[1..] {
        let n = num(c, "-", v)?;
        acc = number::sub(&acc, &n, &mut c.budget)?;
    }
    Ok(acc.into_value(c.heap))
}

fn div(c: &mut Ctx, a: &[Value]) -> Result<Value, Fault> {
    if let Some(r) = complex::nary(c, "/", a) {
        return r;
    }
    let first = num(c, "/", a[0])?;
    let (mut acc, rest) = if a.len() == 1 {
        (Num::Int(1), a)
    } else {
        (first, &a[1..])
    };
    for &v in rest {
        let d = num(c, "/", v)?;
        acc = number::div(&acc, &d, &mut c.budget)?
            .ok_or_else(|| Fault::Error("/: division by zero".into(), vec![]))?;
    }
    Ok(acc.into_value(c.heap))
}

fn compare(c: &mut Ctx, a: &[Value], who: &str, ok: fn(Ordering) -> bool) -> Result<Value, Fault> {
    if who == "=" {
        if let Some(r) = complex::nary(c, who, a) {
            return r;
        }
    }
    let mut prev = num(c, who, a[0])?;
    let mut result = true;
    for &v in &a[1..] {
        let n = num(c, who, v)?;
        if !number::compare(&prev, &n, &mut c.budget)?.is_some_and(ok) {
            result = false;
        }
        prev = n;
    }
    Ok(Value::Bool(result))
}

fn parity(c: &mut Ctx, v: Value, who: &str, odd: bool) -> Result<Value, Fault> {
    let n = integer(c, who, v)?;
    let r = number::int_div(&n, &Num::Int(2), IntDiv::Remainder, &mut c.budget)?
        .map_err(|e| Fault::Error(format!("{who}: {e}"), vec![]))?;
    Ok(Value::Bool(r.is_zero() != odd))
}

fn extremum(c: &mut Ctx, a: &[Value], who: &str, want: Ordering) -> Result<Value, Fault> {
    let mut best = num(c, who, a[0])?;
    let mut inexact = !best.is_exact();
    for &v in &a[1..] {
        let n = num(c, who, v)?;
        inexact |= !n.is_exact();
        if let Num::Float(f) = n {
            if f.is_nan() {
                return Ok(Value::Float(f));
            }
        }
        if number::compare(&n, &best, &mut c.budget)? == Some(want) {
            best = n;
        }
    }
    if inexact {
        best = number::to_inexact(&best);
    }
    Ok(best.into_value(c.heap))
}

fn int_div(c: &mut Ctx, a: &[Value], who: &str, op: IntDiv) -> Result<Value, Fault> {
    let x = integer(c, who, a[0])?;
    let y = integer(c, who, a[1])?;
    number::int_div(&x, &y, op, &mut c.budget)?
        .map(|n| n.into_value(c.heap))
        .map_err(|e| Fault::Error(format!("{who}: {e}"), vec![]))
}

/// `(floor-quotient x y)`; `who` names the procedure in an error.
fn floor_quotient(c: &mut Ctx, a: &[Value], who: &str) -> Result<Value, Fault> {
    let x = integer(c, who, a[0])?;
    let y = integer(c, who, a[1])?;
    let w = &mut c.budget;
    let m = number::int_div(&x, &y, IntDiv::Modulo, w)?
        .map_err(|e| Fault::Error(format!("{who}: {e}"), vec![]))?;
    // (x - (x mod y)) / y is exact
    let q = number::div(&number::sub(&x, &m, w)?, &y, w)?.unwrap_or(Num::Int(0));
    let q = if x.is_exact() && y.is_exact() {
        q
    } else {
        number::round(&q, Rounding::Floor, w)?
    };
    Ok(q.into_value(c.heap))
}

fn round(c: &mut Ctx, v: Value, who: &str, mode: Rounding) -> Result<Value, Fault> {
    let n = num(c, who, v)?;
    Ok(number::round(&n, mode, &mut c.budget)?.into_value(c.heap))
}

fn exact(c: &mut Ctx, a: &[Value], who: &str) -> Result<Value, Fault> {
    if let Some(r) = complex::unary(c, who, a[0]) {
        return r;
    }
    let n = num(c, who, a[0])?;
    match number::to_exact(&n) {
        Some(e) => Ok(e.into_value(c.heap)),
        None => Err(Fault::Error(
            format!("{who}: no exact equivalent"),
            vec![a[0]],
        )),
    }
}

fn float1(c: &mut Ctx, a: &[Value], who: &str, f: fn(f64) -> f64) -> Result<Value, Fault> {
    if let Some(r) = complex::unary(c, who, a[0]) {
        return r;
    }
    // Inexact even where an exact argument has an exact answer (`(exp 0)`
    // is 1.0, `(sin 0)` 0.0), as chibi-scheme answers and the R7RS test
    // suite expects; `log` and `cos` always did.
    let n = num(c, who, a[0])?;
    Ok(Value::Float(f(n.to_f64())))
}

#[cfg(test)]
mod tests;
