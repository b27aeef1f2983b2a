//! Complex numbers as values (R7RS 6.2, `(scheme complex)`).
//!
//! The real primitives (numbers.rs) hand an argument over to this module
//! when it is not real, or when the result is not: the square root and
//! logarithm of a negative real, `asin`/`acos` beyond ±1, a negative base
//! to a fractional power. The accessors, constructors and predicates over
//! the whole tower are here.

use super::{boolean, num, type_error, Ctx, Fault, PrimTable};
use crate::complex::{self, Failure, Number};
use crate::heap::Heap;
use crate::number::{Num, Work};

use crate::value::{Object, Value};

pub fn register(t: &mut PrimTable) {
    t.add("number?", 1, Some(1), |c, a| {
        Ok(boolean(Number::from_value(c.heap, a[0]).is_some()))
    });
    t.add("complex?", 1, Some(1), |c, a| {
        Ok(boolean(Number::from_value(c.heap, a[0]).is_some()))
    });
    t.add("exact?", 1, Some(1), |c, a| {
        Ok(boolean(number(c, "exact?", a[0])?.is_exact()))
    });
    t.add("inexact?", 1, Some(1), |c, a| {
        Ok(boolean(!number(c, "inexact?", a[0])?.is_exact()))
    });
    t.add("nan?", 1, Some(1), |c, a| {
        Ok(boolean(number(c, "nan?", a[0])?.is_nan()))
    });
    t.add("infinite?", 1, Some(1), |c, a| {
        Ok(boolean(number(c, "infinite?", a[0])?.is_infinite()))
    });
    t.add("finite?", 1, Some(1), |c, a| {
        Ok(boolean(number(c, "finite?", a[0])?.is_finite()))
    });
    t.add("zero?", 1, Some(1), |c, a| {
        Ok(boolean(number(c, "zero?", a[0])?.is_zero()))
    });
    t.add("real-part", 1, Some(1), |c, a| {
        Ok(number(c, "real-part", a[0])?.real_part().into_value(c.heap))
    });
    t.add("imag-part", 1, Some(1), |c, a| {
        Ok(number(c, "imag-part", a[0])?.imag_part().into_value(c.heap))
    });
    t.add("magnitude", 1, Some(1), |c, a| {
        let z = number(c, "magnitude", a[0])?;
        let m = complex::magnitude(&z, &mut c.budget).map_err(|f| failure("magnitude", f))?;
        Ok(m.into_value(c.heap))
    });
    t.add("angle", 1, Some(1), |c, a| {
        Ok(complex::angle(&number(c, "angle", a[0])?).into_value(c.heap))
    });
    t.add("make-rectangular", 2, Some(2), |c, a| {
        let re = num(c, "make-rectangular", a[0])?;
        let im = num(c, "make-rectangular", a[1])?;
        Ok(Number::rect(re, im).into_value(c.heap))
    });
    t.add("make-polar", 2, Some(2), |c, a| {
        let m = num(c, "make-polar", a[0])?;
        let angle = num(c, "make-polar", a[1])?;
        Ok(Number::polar(m, angle).into_value(c.heap))
    });
}

/// Any number, real or not.
fn number(c: &Ctx, who: &str, v: Value) -> Result<Number, Fault> {
    Number::from_value(c.heap, v).ok_or_else(|| type_error(c, who, "a number", v))
}

fn is_complex(heap: &Heap, v: Value) -> bool {
    matches!(heap.obj(v), Some(Object::Complex(_)))
}

fn failure(who: &str, f: Failure<Fault>) -> Fault {
    match f {
        Failure::DivisionByZero => Fault::Error(format!("{who}: division by zero"), vec![]),
        Failure::TooLarge => Fault::OutOfMemory,
        Failure::Stopped(fault) => fault,
    }
}

/// `+ - * / =` over arguments of which at least one is not real; `None`
/// when all are real (the real primitive goes on).
pub fn nary(c: &mut Ctx, who: &str, a: &[Value]) -> Option<Result<Value, Fault>> {
    if !a.iter().any(|&v| is_complex(c.heap, v)) {
        return None;
    }
    Some(nary_numbers(c, who, a))
}

fn nary_numbers(c: &mut Ctx, who: &str, a: &[Value]) -> Result<Value, Fault> {
    let mut ns = Vec::with_capacity(a.len());
    for &v in a {
        ns.push(number(c, who, v)?);
    }
    if who == "=" {
        for pair in ns.windows(2) {
            if !complex::equal(&pair[0], &pair[1], &mut c.budget).map_err(|f| failure(who, f))? {
                return Ok(Value::Bool(false));
            }
        }
        return Ok(Value::Bool(true));
    }
    let one = |i| Number::Real(Num::Int(i));
    let (mut acc, rest) = match (who, ns.len()) {
        ("-", 1) => (one(0), &ns[..]),
        ("/", 1) => (one(1), &ns[..]),
        // `+` and `*` fold from their first argument (`numbers::add`).
        _ => (ns[0].clone(), &ns[1..]),
    };
    for n in rest {
        let w = &mut c.budget;
        acc = match who {
            "+" => complex::plus(&acc, n, w),
            "-" => complex::minus(&acc, n, w),
            "*" => complex::times(&acc, n, w),
            _ => complex::divide(&acc, n, w),
        }
        .map_err(|f| failure(who, f))?;
    }
    Ok(acc.into_value(c.heap))
}

/// The result of a two-operand operation.
pub enum Binary {
    Number(Number),
    Truth(bool),
}

/// The VM's inline arithmetic when an operand is not real: `+ - * =`;
/// the orderings are for reals only.
pub fn binary<W: Work<Stop = Fault>>(
    who: &str,
    x: &Number,
    y: &Number,
    w: &mut W,
) -> Result<Binary, Fault> {
    let result = match who {
        "+" => complex::plus(x, y, w),
        "-" => complex::minus(x, y, w),
        "*" => complex::times(x, y, w),
        "=" => {
            let same = complex::equal(x, y, w).map_err(|f| failure(who, f))?;
            return Ok(Binary::Truth(same));
        }
        _ => {
            let z = if matches!(x, Number::Complex(_)) {
                x
            } else {
                y
            };
            let shown = complex::to_string(z, 10, w)?;
            return Err(Fault::Error(
                format!("{who}: expected a real number, got {shown}"),
                vec![],
            ));
        }
    };
    result.map(Binary::Number).map_err(|f| failure(who, f))
}

/// The one-argument functions where the argument or the result is not
/// real: `sqrt`, `exp`, `log`, the trigonometric functions, `exact`,
/// `inexact`, `square`. `None`: the real primitive goes on.
pub fn unary(c: &mut Ctx, who: &str, v: Value) -> Option<Result<Value, Fault>> {
    let n = Number::from_value(c.heap, v)?;
    if let Number::Real(r) = &n {
        let below = |x: f64| r.to_f64() < x;
        let leaves_reals = match who {
            "sqrt" | "log" => below(0.0),
            "asin" | "acos" => below(-1.0) || r.to_f64() > 1.0,
            _ => false,
        };
        if !leaves_reals {
            return None;
        }
    }
    let result = match who {
        "sqrt" => match complex::sqrt(&n, &mut c.budget) {
            Ok(root) => root,
            Err(f) => return Some(Err(failure(who, f))),
        },
        "exp" => complex::exp(&n),
        "log" => complex::log(&n),
        "sin" => complex::sin(&n),
        "cos" => complex::cos(&n),
        "tan" => complex::tan(&n),
        "asin" => complex::asin(&n),
        "acos" => complex::acos(&n),
        "atan" => complex::atan(&n),
        "square" => match complex::times(&n, &n, &mut c.budget) {
            Ok(square) => square,
            Err(f) => return Some(Err(failure(who, f))),
        },
        "inexact" | "exact->inexact" => complex::to_inexact(&n),
        _ => match complex::to_exact(&n) {
            Some(e) => e,
            None => {
                let shown = format!("{who}: no exact equivalent");
                return Some(Err(Fault::Error(shown, vec![v])));
            }
        },
    };
    Some(Ok(result.into_value(c.heap)))
}

/// `(log z base)` when either is not real or the logarithm of one is not.
pub fn log2(c: &mut Ctx, z: Value, base: Value) -> Option<Result<Value, Fault>> {
    let (Some(x), Some(b)) = (
        Number::from_value(c.heap, z),
        Number::from_value(c.heap, base),
    ) else {
        return None;
    };
    let negative = |n: &Number| matches!(n, Number::Real(r) if r.to_f64() < 0.0);
    let real = |n: &Number| matches!(n, Number::Real(_));
    if real(&x) && real(&b) && !negative(&x) && !negative(&b) {
        return None;
    }
    let q = complex::divide(&complex::log(&x), &complex::log(&b), &mut c.budget)
        .map_err(|f| failure("log", f));
    Some(q.map(|q| q.into_value(c.heap)))
}

/// `expt` when the base or the exponent is not real, or the result is not
/// (a negative base to a fractional power).
pub fn expt(c: &mut Ctx, base: Value, e: Value) -> Option<Result<Value, Fault>> {
    let (Some(b), Some(x)) = (
        Number::from_value(c.heap, base),
        Number::from_value(c.heap, e),
    ) else {
        return None;
    };
    if let (Number::Real(b), Number::Real(x)) = (&b, &x) {
        if b.sign() != std::cmp::Ordering::Less || x.is_integer() {
            return None;
        }
    }
    let r = complex::expt(&b, &x, &mut c.budget).map_err(|f| failure("expt", f));
    Some(r.map(|r| r.into_value(c.heap)))
}

/// `number->string` of a number that is not real.
pub fn to_string(c: &mut Ctx, v: Value, radix: u32) -> Option<Result<Value, Fault>> {
    let Some(Object::Complex(z)) = c.heap.obj(v) else {
        return None;
    };
    let z = Number::Complex(z.clone());
    if radix != 10 && !z.is_exact() {
        return Some(Err(Fault::Error(
            "number->string: inexact numbers are written in radix 10 only".into(),
            vec![],
        )));
    }
    match complex::to_string(&z, radix, &mut c.budget) {
        Ok(s) => Some(Ok(c.heap.string(&s))),
        Err(fault) => Some(Err(fault)),
    }
}

/// `string->number`, complex forms included.
pub fn parse(c: &mut Ctx, text: &str, radix: u32) -> Value {
    match complex::parse(text, radix) {
        Some(n) => n.into_value(c.heap),
        None => Value::Bool(false),
    }
}
