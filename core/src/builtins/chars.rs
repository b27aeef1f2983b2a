//! Characters (R7RS 6.6), with Unicode case and classes.

use super::{boolean, character, type_error, Ctx, Fault, PrimTable};
use crate::value::Value;
use unicode_general_category::{get_general_category, GeneralCategory};

// Long by design: a table, one entry per primitive.
pub fn register(t: &mut PrimTable) {
    t.add("char?", 1, Some(1), |_, a| {
        Ok(boolean(matches!(a[0], Value::Char(_))))
    });
    t.add("char->integer", 1, Some(1), |c, a| {
        Ok(Value::Int(character(c, "char->integer", a[0])? as i64))
    });
    t.add("integer->char", 1, Some(1), |c, a| match a[0] {
        Value::Int(i) => u32::try_from(i)
            .ok()
            .and_then(char::from_u32)
            .map(Value::Char)
            .ok_or_else(|| {
                Fault::Error(
                    format!("integer->char: {i} is not a Unicode scalar value"),
                    vec![],
                )
            }),
        v => Err(type_error(c, "integer->char", "an exact integer", v)),
    });
    t.add("char=?", 1, None, |c, a| {
        cmp(c, a, "char=?", false, |x, y| x == y)
    });
    t.add("char<?", 1, None, |c, a| {
        cmp(c, a, "char<?", false, |x, y| x < y)
    });
    t.add("char>?", 1, None, |c, a| {
        cmp(c, a, "char>?", false, |x, y| x > y)
    });
    t.add("char<=?", 1, None, |c, a| {
        cmp(c, a, "char<=?", false, |x, y| x <= y)
    });
    t.add("char>=?", 1, None, |c, a| {
        cmp(c, a, "char>=?", false, |x, y| x >= y)
    });
    t.add("char-ci=?", 1, None, |c, a| {
        cmp(c, a, "char-ci=?", true, |x, y| x == y)
    });
    t.add("char-ci<?", 1, None, |c, a| {
        cmp(c, a, "char-ci<?", true, |x, y| x < y)
    });
    t.add("char-ci>?", 1, None, |c, a| {
        cmp(c, a, "char-ci>?", true, |x, y| x > y)
    });
    t.add("char-ci<=?", 1, None, |c, a| {
        cmp(c, a, "char-ci<=?", true, |x, y| x <= y)
    });
    t.add("char-ci>=?", 1, None, |c, a| {
        cmp(c, a, "char-ci>=?", true, |x, y| x >= y)
    });
    t.add("char-alphabetic?", 1, Some(1), |c, a| {
        Ok(boolean(
            character(c, "char-alphabetic?", a[0])?.is_alphabetic(),
        ))
    });
    t.add("char-numeric?", 1, Some(1), |c, a| {
        // R7RS: Numeric_Type=Decimal, the decimal digits (Nd); not every
        // numeric character (`²`, `½`, Roman numerals), as `is_numeric` is.
        let ch = character(c, "char-numeric?", a[0])?;
        Ok(boolean(is_decimal_digit(ch)))
    });
    t.add("char-whitespace?", 1, Some(1), |c, a| {
        Ok(boolean(
            character(c, "char-whitespace?", a[0])?.is_whitespace(),
        ))
    });
    t.add("char-upper-case?", 1, Some(1), |c, a| {
        Ok(boolean(
            character(c, "char-upper-case?", a[0])?.is_uppercase(),
        ))
    });
    t.add("char-lower-case?", 1, Some(1), |c, a| {
        Ok(boolean(
            character(c, "char-lower-case?", a[0])?.is_lowercase(),
        ))
    });
    t.add("digit-value", 1, Some(1), |c, a| {
        let ch = character(c, "digit-value", a[0])?;
        Ok(match digit_value(ch) {
            Some(d) => Value::Int(d as i64),
            None => Value::Bool(false),
        })
    });
    t.add("char-upcase", 1, Some(1), |c, a| {
        Ok(Value::Char(upcase(character(c, "char-upcase", a[0])?)))
    });
    t.add("char-downcase", 1, Some(1), |c, a| {
        Ok(Value::Char(downcase(character(c, "char-downcase", a[0])?)))
    });
    t.add("char-foldcase", 1, Some(1), |c, a| {
        Ok(Value::Char(foldcase(character(c, "char-foldcase", a[0])?)))
    });
}

fn cmp(
    c: &mut Ctx,
    a: &[Value],
    who: &str,
    ci: bool,
    ok: fn(char, char) -> bool,
) -> Result<Value, Fault> {
    let mut chars = Vec::with_capacity(a.len());
    for &v in a {
        let ch = character(c, who, v)?;
        chars.push(if ci { foldcase(ch) } else { ch });
    }
    Ok(boolean(chars.windows(2).all(|w| ok(w[0], w[1]))))
}

/// Simple (one-to-one) case mappings: a character maps to one character.
/// The simple uppercase mapping (UnicodeData.txt). Where the full one is
/// several characters (`ß` to `SS`) the simple one is mostly the character
/// itself, but the Greek letters with ypogegrammeni have one of their own:
/// `ᾳ` upcases to `ᾼ`.
pub fn upcase(c: char) -> char {
    let mut it = c.to_uppercase();
    match (it.next(), it.next()) {
        (Some(u), None) => u,
        _ => {
            let simple = match c as u32 {
                x @ (0x1F80..=0x1F87 | 0x1F90..=0x1F97 | 0x1FA0..=0x1FA7) => x + 8,
                0x1FB3 => 0x1FBC,
                0x1FC3 => 0x1FCC,
                0x1FF3 => 0x1FFC,
                _ => return c,
            };
            char::from_u32(simple).unwrap_or(c)
        }
    }
}

/// The simple lowercase mapping (UnicodeData.txt): `İ` downcases to `i`,
/// though its full lowercase is `i` and a combining dot.
pub fn downcase(c: char) -> char {
    let mut it = c.to_lowercase();
    match (it.next(), it.next()) {
        (Some(l), None) => l,
        _ if c == '\u{130}' => 'i',
        _ => c,
    }
}

/// Unicode's decimal digits: general category Nd.
fn is_decimal_digit(c: char) -> bool {
    c.is_ascii_digit()
        || (!c.is_ascii() && get_general_category(c) == GeneralCategory::DecimalNumber)
}

/// Simple case folding (Unicode CaseFolding.txt, statuses C and S).
pub fn foldcase(c: char) -> char {
    match fold_exception(c) {
        Some(f) => f,
        None => downcase(c),
    }
}

/// The characters whose folding is not their lowercase: variant letter
/// forms that fold to the common letter, and Cherokee, whose small letters
/// fold to the capitals. Every other character folds to its lowercase.
fn fold_exception(c: char) -> Option<char> {
    let folded = match c as u32 {
        0x00B5 => 0x03BC,          // micro sign -> mu
        0x017F => 0x0073,          // long s -> s
        0x0345 | 0x1FBE => 0x03B9, // ypogegrammeni, prosgegrammeni -> iota
        0x03C2 => 0x03C3,          // final sigma -> sigma
        0x03D0 => 0x03B2,          // beta symbol
        0x03D1 => 0x03B8,          // theta symbol
        0x03D5 => 0x03C6,          // phi symbol
        0x03D6 => 0x03C0,          // pi symbol
        0x03F0 => 0x03BA,          // kappa symbol
        0x03F1 => 0x03C1,          // rho symbol
        0x03F5 => 0x03B5,          // lunate epsilon
        0x1E9B => 0x1E61,          // long s with dot above
        0x0130 => 0x0130,          // I with dot: no simple folding (only full)
        0x1C80 => 0x0432,          // Cyrillic rounded ve ...
        0x1C81 => 0x0434,
        0x1C82 => 0x043E,
        0x1C83 => 0x0441,
        0x1C84 | 0x1C85 => 0x0442,
        0x1C86 => 0x044A,
        0x1C87 => 0x0463,
        0x1C88 => 0xA64B,
        x @ 0x13F8..=0x13FD => x - 8, // Cherokee small ye .. mv
        x @ 0xAB70..=0xABBF => x - 0xAB70 + 0x13A0, // Cherokee small a .. ya
        _ => return None,
    };
    char::from_u32(folded)
}

fn digit_value(c: char) -> Option<u32> {
    if let Some(d) = c.to_digit(10) {
        return Some(d);
    }
    if !is_decimal_digit(c) {
        return None;
    }
    // Unicode's decimal digits come in whole runs of ten, zero to nine, and
    // where runs meet (the mathematical digits) each starts on a zero: the
    // value is the distance from the first digit of the block, modulo ten.
    let mut first = c as u32;
    while let Some(prev) = first.checked_sub(1).and_then(char::from_u32) {
        if !is_decimal_digit(prev) {
            break;
        }
        first -= 1;
    }
    Some((c as u32 - first) % 10)
}

#[cfg(test)]
mod tests;
