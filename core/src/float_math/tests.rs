//! The functions against the platform's (natively, glibc's, which follows
//! C99 Annex F for special values and is within an ulp elsewhere), and
//! against values known correctly rounded.

use super::*;
use crate::test_rng::TestRng;

/// Same bits, or both NaN, or (where `close`) within two ulps with the
/// same sign: glibc's `log10`, `sinh` and `cosh` are off by up to two.
fn agrees(ours: f64, theirs: f64, close: bool) -> bool {
    if ours.is_nan() || theirs.is_nan() {
        return ours.is_nan() && theirs.is_nan();
    }
    if ours.to_bits() == theirs.to_bits() {
        return true;
    }
    close
        && ours.is_finite()
        && theirs.is_finite()
        && ours.is_sign_negative() == theirs.is_sign_negative()
        && ours.to_bits().abs_diff(theirs.to_bits()) <= 2
}

/// The arguments where C99 Annex F says what the answer is, and the edges
/// of the format.
const SPECIAL: &[f64] = &[
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    0.0,
    -0.0,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    -2.2250738585072014e-308,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    -2.0,
    3.0,
    -3.0,
    1e-300,
    709.782712893384,
    710.0,
    -745.2,
    -746.0,
    1e22,
    1e300,
    -1e300,
    f64::MAX,
    f64::MIN,
];

type Unary = (&'static str, fn(f64) -> f64, fn(f64) -> f64);

const UNARY: &[Unary] = &[
    ("exp", exp, f64::exp),
    ("ln", ln, f64::ln),
    ("log2", log2, f64::log2),
    ("log10", log10, f64::log10),
    ("sin", sin, f64::sin),
    ("cos", cos, f64::cos),
    ("tan", tan, f64::tan),
    ("asin", asin, f64::asin),
    ("acos", acos, f64::acos),
    ("atan", atan, f64::atan),
    ("sinh", sinh, f64::sinh),
    ("cosh", cosh, f64::cosh),
    ("sqrt", sqrt, f64::sqrt),
];

type Binary = (&'static str, fn(f64, f64) -> f64, fn(f64, f64) -> f64);

const BINARY: &[Binary] = &[
    ("atan2", atan2, f64::atan2),
    ("pow", pow, f64::powf),
    ("hypot", hypot, f64::hypot),
];

/// A float from random bits: every class (NaN, infinities, subnormals,
/// zeros) turns up, and magnitudes spread over the whole range.
fn any_float(rng: &mut TestRng) -> f64 {
    match rng.below(8) {
        0 => *rng.pick(SPECIAL).as_ref().expect("not empty"),
        1 => (rng.next() as f64 / u64::MAX as f64) * 20.0 - 10.0,
        _ => f64::from_bits(rng.next()),
    }
}

#[test]
fn special_values_are_ieee_s() {
    for &(name, ours, theirs) in UNARY {
        for &x in SPECIAL {
            let (a, b) = (ours(x), theirs(x));
            // Exact answers (NaN, infinities, zeros, exp 0 = 1, ...) must
            // be the very bits; others within an ulp of glibc's.
            let exact = !b.is_finite() || b == 0.0 || b.abs() == 1.0 || !x.is_finite();
            assert!(agrees(a, b, !exact), "{name}({x:e}) = {a:e}, glibc {b:e}");
        }
    }
    for &(name, ours, theirs) in BINARY {
        for &x in SPECIAL {
            for &y in SPECIAL {
                let (a, b) = (ours(x, y), theirs(x, y));
                let exact = !b.is_finite() || b == 0.0 || b.abs() == 1.0 || !x.is_finite();
                assert!(
                    agrees(a, b, !exact),
                    "{name}({x:e}, {y:e}) = {a:e}, glibc {b:e}"
                );
            }
        }
    }
}

#[test]
fn random_arguments_never_panic_and_stay_near_glibc() {
    let mut rng = TestRng::new(0x5eed_f1a7);
    for _ in 0..20_000 {
        let (x, y) = (any_float(&mut rng), any_float(&mut rng));
        for &(name, ours, theirs) in UNARY {
            let (a, b) = (ours(x), theirs(x));
            assert!(agrees(a, b, true), "{name}({x:e}) = {a:e}, glibc {b:e}");
        }
        for &(name, ours, theirs) in BINARY {
            let (a, b) = (ours(x, y), theirs(x, y));
            assert!(
                agrees(a, b, true),
                "{name}({x:e}, {y:e}) = {a:e}, glibc {b:e}"
            );
        }
        let x = x as f32;
        let (a, b) = (ln_f32(x), x.ln());
        let near = a.to_bits().abs_diff(b.to_bits()) <= 1;
        assert!(
            near || (a.is_nan() && b.is_nan()),
            "ln_f32({x:e}) = {a:e}, glibc {b:e}"
        );
    }
}

#[test]
fn correctly_rounded_where_libm_is_not() {
    // The binary64 nearest each exact value (from mpmath at 300 bits);
    // Rust's libm (the wasm targets' std) gives 2.7182818284590455 for e.
    for (got, want) in [
        (exp(1.0), std::f64::consts::E), // 2.718281828459045
        (exp(0.5), 1.6487212707001282),
        (ln(10.0), std::f64::consts::LN_10),
        (sin(1.0), 0.8414709848078965),
        (atan2(1.0, 1.0), std::f64::consts::FRAC_PI_4),
        (pow(2.0, 0.5), std::f64::consts::SQRT_2),
    ] {
        assert_eq!(got.to_bits(), want.to_bits(), "{got:e} vs {want:e}");
    }
}

#[test]
fn where_pxfm_is_wrong_this_module_is_not() {
    // Each the binary64 nearest the exact value (mpmath at 400 bits), or
    // C99 Annex F's special value; pxfm 0.1.30 gives the one in the comment.
    let cases: &[(f64, f64)] = &[
        (sinh(-0.0), -0.0),                                            // +0
        (atan2(-5e-324, 2.0), -0.0),                                   // +0
        (atan2(-1.0095781639169851e-259, 3.913851666463595e93), -0.0), // +0
        (pow(f64::NAN, 0.0), 1.0),                                     // NaN
        (pow(f64::NAN, -0.0), 1.0),                                    // NaN
        (pow(1.0, f64::NAN), 1.0),                                     // NaN
        (pow(f64::MAX, -0.5), 7.458340731200207e-155),                 // NaN
        (pow(3.3868207205039726e302, -0.5), 5.433803084086973e-152),   // NaN
        (pow(3.6092938460826354e160, -2.0), 7.66e-322),                // 0
        (pow(-1.027703764768579e158, -2.0), 9.468128e-317),            // 0
        (pow(4.405782024010974e161, -2.0), 5e-324),                    // 0
        (pow(-3.3793811789036724e-9, 99.0), -0.0),                     // +0
        (pow(-0.00012478316955854697, 79.0), -3.947526069607493e-309), // an ulp off
        (pow(-7.919587808324189e-5, 77.0), -1.5852528e-316),           // an ulp off
        (pow(-1.217766121061413e-6, 52.0), 2.8139874332719645e-308),   // an ulp off
        (
            hypot(-169.6972458596248, 7.456021637598315),
            169.86096523628458,
        ), // an ulp off
        (
            hypot(713.0355572946228, 7.879361658732954),
            713.0790911999891,
        ), // an ulp off
        (
            hypot(-1.723695124120363, -4.172741724333742),
            4.514742338042343,
        ), // an ulp off
    ];
    for (i, &(got, want)) in cases.iter().enumerate() {
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "case {i}: {got:e} vs {want:e}"
        );
    }
}

#[test]
fn hypot_rounds_ties_exact_roots_and_subnormals() {
    assert_eq!(hypot(3.0, 4.0), 5.0);
    assert_eq!(hypot(-3e300, 4e300), 5e300);
    assert_eq!(hypot(3e-320, 4e-320), 5e-320);
    assert_eq!(hypot(5e-324, 5e-324), 5e-324); // √2 units round to 1
    assert_eq!(hypot(f64::MAX, f64::MAX), f64::INFINITY);
    assert_eq!(hypot(f64::MAX, 1.0), f64::MAX);
    assert_eq!(hypot(f64::INFINITY, f64::NAN), f64::INFINITY);
    assert!(hypot(1.0, f64::NAN).is_nan());
    // A Pythagorean triple whose hypotenuse is odd and above 2^53: an
    // exact tie between two binary64, to the even one.
    let (m, n) = (67_117_057u64, 67_100_672u64);
    let (a, b, c) = (m * m - n * n, 2 * m * n, m * m + n * n);
    assert!(c > 1 << 53 && c % 2 == 1 && a < 1 << 53 && b < 1 << 53);
    let tie = hypot(a as f64, b as f64);
    let (below, above) = ((c - 1) as f64, (c + 1) as f64);
    let even = if ((c - 1) / 2) % 2 == 0 { below } else { above };
    assert_eq!(tie, even);
}

#[test]
fn complex_functions_keep_their_special_cases() {
    let z = C64::new;
    assert_eq!(z(f64::NEG_INFINITY, f64::NAN).exp(), z(0.0, 0.0));
    let e = z(f64::INFINITY, f64::INFINITY).exp();
    assert!(e.re == f64::INFINITY && e.im.is_nan());
    assert_eq!(z(f64::INFINITY, 0.0).exp(), z(f64::INFINITY, 0.0));
    assert_eq!(z(-4.0, 0.0).sqrt(), z(0.0, 2.0));
    assert_eq!(z(-4.0, -0.0).sqrt(), z(0.0, -2.0));
    assert_eq!(z(0.0, 8.0).sqrt(), z(2.0, 2.0));
    assert_eq!(z(0.0, 1.0).atan(), z(0.0, f64::INFINITY));
    assert_eq!(z(0.0, -1.0).atan(), z(0.0, f64::NEG_INFINITY));
    assert_eq!(z(2.0, 3.0).powc(z(0.0, 0.0)), z(1.0, 0.0));
    let l = z(-1.0, 0.0).ln();
    assert_eq!((l.re, l.im), (0.0, std::f64::consts::PI));
    let l = z(-1.0, -0.0).ln();
    assert_eq!((l.re, l.im), (0.0, -std::f64::consts::PI));
    // Nothing panics, whatever the parts.
    let mut rng = TestRng::new(7);
    for _ in 0..5_000 {
        let a = z(any_float(&mut rng), any_float(&mut rng));
        let b = z(any_float(&mut rng), any_float(&mut rng));
        for f in [
            C64::exp,
            C64::ln,
            C64::sqrt,
            C64::sin,
            C64::cos,
            C64::tan,
            C64::asin,
            C64::acos,
            C64::atan,
        ] {
            let _ = f(a);
        }
        let _ = (a.powc(b), a / b);
    }
}
