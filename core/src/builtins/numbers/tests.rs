//! The number procedures' own cases (R7RS 6.2): exactness, fixnums that
//! overflow into bignums, NaN and the infinities, division by zero, the
//! number syntax `string->number` reads, and each error's wording.

use super::super::test_support::Probe;

#[test]
fn fixnum_overflow_becomes_a_bignum_and_comes_back() {
    Probe::new().values(&[
        ("(+ 9223372036854775807 1)", "9223372036854775808"),
        ("(- -9223372036854775808 1)", "-9223372036854775809"),
        ("(* 4611686018427387904 2)", "9223372036854775808"),
        ("(* -9223372036854775808 -1)", "9223372036854775808"),
        ("(- -9223372036854775808)", "9223372036854775808"),
        ("(abs -9223372036854775808)", "9223372036854775808"),
        ("(quotient -9223372036854775808 -1)", "9223372036854775808"),
        ("(remainder -9223372036854775808 -1)", "0"),
        ("(expt 2 64)", "18446744073709551616"),
        // Back under the fixnum range, a bignum is a fixnum again.
        ("(- (+ 9223372036854775807 1) 1)", "9223372036854775807"),
        ("(eqv? (- (expt 2 64) (expt 2 64)) 0)", "#t"),
        (
            "(exact-integer-sqrt (- (expt 2 128) 1))",
            "18446744073709551615\n36893488147419103230",
        ),
    ]);
}

#[test]
fn exactness_follows_r7rs() {
    Probe::new().values(&[
        ("(exact 1.5)", "3/2"),
        ("(exact 2.0)", "2"),
        // `exact` of a double is the double's own value, not the decimal.
        ("(exact 0.1)", "3602879701896397/36028797018963968"),
        ("(inexact 1/3)", "0.3333333333333333"),
        ("(inexact 12345678901234567890)", "1.2345678901234567e19"),
        ("(inexact (expt 10 400))", "+inf.0"),
        ("(+ 1/2 0.5)", "1.0"),
        ("(* 1/3 3)", "1"),
        ("(- 1/2 1/2)", "0"),
        ("(max 1/2 0.25)", "0.5"),
        ("(exact-integer? 32)", "#t"),
        ("(exact-integer? 32.0)", "#f"),
        ("(exact-integer? 32/5)", "#f"),
        ("(integer? 3.0)", "#t"),
        ("(integer? 1e300)", "#t"),
        ("(exact (floor 2.5))", "2"),
        ("(numerator (/ 6 4))", "3"),
        ("(denominator (/ 6 4))", "2"),
        ("(denominator (inexact (/ 6 4)))", "2.0"),
        ("(rationalize (exact .3) 1/10)", "1/3"),
        ("(rationalize .3 1/10)", "0.3333333333333333"),
        ("(sqrt 9)", "3"),
        ("(sqrt 1/4)", "1/2"),
        ("(sqrt 2)", "1.4142135623730951"),
        ("(sqrt -1)", "+i"),
        ("(exp 0)", "1.0"),
        ("(expt 1/2 2)", "1/4"),
        ("(expt 2 -2)", "1/4"),
        ("(expt 2.0 3)", "8.0"),
        ("(expt 0 0)", "1"),
        ("(expt 0.0 0)", "1.0"),
    ]);
}

#[test]
fn nan_and_the_infinities() {
    Probe::new().values(&[
        ("(/ 1.0 0)", "+inf.0"),
        ("(/ -1 0.)", "-inf.0"),
        ("(/ 0.0 0.0)", "+nan.0"),
        ("(= +nan.0 +nan.0)", "#f"),
        ("(eqv? +nan.0 +nan.0)", "#t"),
        ("(< 1 +inf.0 )", "#t"),
        ("(integer? +inf.0)", "#f"),
        ("(rational? +inf.0)", "#f"),
        ("(rational? +nan.0)", "#f"),
        ("(real? +nan.0)", "#t"),
        ("(nan? (/ 0. 0.))", "#t"),
        ("(nan? 1)", "#f"),
        ("(infinite? -inf.0)", "#t"),
        ("(finite? +nan.0)", "#f"),
        ("(floor +inf.0)", "+inf.0"),
        ("(round +nan.0)", "+nan.0"),
        ("(min 1 +nan.0)", "+nan.0"),
        ("(- 0.0)", "-0.0"),
        ("(eqv? 0.0 -0.0)", "#f"),
        ("(= 0.0 -0.0)", "#t"),
        ("(zero? -0.0)", "#t"),
        ("(positive? -0.0)", "#f"),
        ("(log 0.0)", "-inf.0"),
    ]);
}

#[test]
fn exact_of_a_non_finite_number_is_an_error() {
    Probe::new().errors(&[
        ("(exact +inf.0)", "exact: no exact equivalent: +inf.0"),
        ("(exact -inf.0)", "exact: no exact equivalent: -inf.0"),
        ("(exact (/ 0. 0.))", "exact: no exact equivalent: +nan.0"),
        (
            "(inexact->exact +inf.0)",
            "inexact->exact: no exact equivalent: +inf.0",
        ),
    ]);
}

#[test]
fn division_by_zero_says_which_procedure() {
    Probe::new().errors(&[
        ("(/ 1 0)", "/: division by zero"),
        ("(/ 0 0)", "/: division by zero"),
        ("(/ 0)", "/: division by zero"),
        ("(quotient 1 0)", "quotient: division by zero"),
        ("(quotient 1.0 0)", "quotient: division by zero"),
        ("(remainder 1 0)", "remainder: division by zero"),
        ("(modulo 1.0 0.0)", "modulo: division by zero"),
        ("(floor-quotient 1 0)", "floor-quotient: division by zero"),
        ("(floor-remainder 1 0)", "floor-remainder: division by zero"),
        ("(floor/ 7 0)", "floor/: division by zero"),
        ("(truncate/ 1 0)", "truncate/: division by zero"),
        ("(expt 0 -1)", "expt: division by zero"),
    ]);
}

#[test]
fn integer_division_and_rounding_as_r7rs_shows_them() {
    Probe::new().values(&[
        ("(floor/ 5 2)", "2\n1"),
        ("(floor/ -5 2)", "-3\n1"),
        ("(floor/ 5 -2)", "-3\n-1"),
        ("(floor/ -5 -2)", "2\n-1"),
        ("(truncate/ 5 2)", "2\n1"),
        ("(truncate/ -5 2)", "-2\n-1"),
        ("(truncate/ 5 -2)", "-2\n1"),
        ("(truncate/ -5 -2)", "2\n-1"),
        ("(truncate/ -5.0 2)", "-2.0\n-1.0"),
        ("(modulo -7 2)", "1"),
        ("(remainder -7 2)", "-1"),
        ("(odd? 3.0)", "#t"),
        ("(gcd 32 -36)", "4"),
        ("(gcd)", "0"),
        ("(lcm 32 -36)", "288"),
        ("(lcm 32.0 -36)", "288.0"),
        ("(lcm)", "1"),
        ("(exact-integer-sqrt 4)", "2\n0"),
        ("(exact-integer-sqrt 5)", "2\n1"),
        ("(exact-integer-sqrt 0)", "0\n0"),
        // Rounding goes to even on a tie.
        ("(round 2.5)", "2.0"),
        ("(round -2.5)", "-2.0"),
        ("(round 7/2)", "4"),
        ("(round 5/2)", "2"),
        ("(round 3.7)", "4.0"),
        ("(floor -7/2)", "-4"),
        ("(ceiling -7/2)", "-3"),
        ("(truncate -7/2)", "-3"),
        ("(truncate -2.7)", "-2.0"),
    ]);
}

#[test]
fn number_syntax_at_its_edges() {
    Probe::new().values(&[
        ("(string->number \"100\")", "100"),
        ("(string->number \"100\" 16)", "256"),
        ("(string->number \"1e2\")", "100.0"),
        ("(string->number \"#xAb\")", "171"),
        ("(string->number \"abc\" 16)", "2748"),
        ("(string->number \"1/2\" 16)", "1/2"),
        ("(string->number \"#i#x10\")", "16.0"),
        ("(string->number \"#x#i10\")", "16.0"),
        ("(string->number \"#e1.5\")", "3/2"),
        // `#e` reads the decimal as written, not the nearest double.
        ("(string->number \"#e.1\")", "1/10"),
        ("(string->number \"#e1.1e-1\")", "11/100"),
        ("(string->number \"#e-2.50\")", "-5/2"),
        ("(string->number \"#e1.2e2\")", "120"),
        ("(string->number \"#e1e20\")", "100000000000000000000"),
        (
            "(= (string->number \"#e1.5e400\") (* 15 (expt 10 399)))",
            "#t",
        ),
        ("(string->number \"#e1.5+2.5i\")", "3/2+5/2i"),
        ("(string->number \"#e.1-.2i\")", "1/10-1/5i"),
        ("(string->number \"1e400\")", "+inf.0"),
        ("(string->number \"1e-400\")", "0.0"),
        ("(string->number \"-0.0\")", "-0.0"),
        ("(string->number \"+nan.0\")", "+nan.0"),
        ("(string->number \"-INF.0\")", "-inf.0"),
        // Not numbers: `#f`, not an error.
        ("(string->number \"1/0\")", "#f"),
        ("(string->number \"#b102\")", "#f"),
        ("(string->number \"1.5\" 2)", "#f"),
        ("(string->number \"1e\")", "#f"),
        ("(string->number \"#e1e\")", "#f"),
        ("(string->number \"#e.\")", "#f"),
        ("(string->number \".\")", "#f"),
        ("(string->number \"+\")", "#f"),
        ("(string->number \"-\")", "#f"),
        ("(string->number \"\")", "#f"),
        ("(string->number \"1/2/3\")", "#f"),
        ("(string->number \"#e#e1\")", "#f"),
        ("(string->number \"#e#i1\")", "#f"),
        ("(string->number \"inf\")", "#f"),
        ("(number->string 255 16)", "\"ff\""),
        ("(number->string -255 2)", "\"-11111111\""),
        ("(number->string 1/3 8)", "\"1/3\""),
    ]);
}

#[test]
fn type_and_argument_count_errors_name_the_procedure() {
    Probe::new().errors(&[
        ("(+ 1 \"a\")", "+: expected a number, got \"a\""),
        ("(< 1 'a)", "<: expected a number, got a"),
        ("(< 1 2+i)", "<: expected a real number, got 2+i"),
        ("(min 1 2 'a)", "min: expected a number, got a"),
        ("(odd? 1.5)", "odd?: expected an integer, got 1.5"),
        ("(modulo 7.5 2)", "modulo: expected an integer, got 7.5"),
        (
            "(exact-integer-sqrt -1)",
            "exact-integer-sqrt: expected a non-negative exact integer, got -1",
        ),
        (
            "(exact-integer-sqrt 2.0)",
            "exact-integer-sqrt: expected a non-negative exact integer, got 2.0",
        ),
        (
            "(number->string 10 7)",
            "number->string: expected a radix of 2, 8, 10 or 16, got 7",
        ),
        (
            "(number->string 1.5 2)",
            "number->string: inexact numbers are written in radix 10 only",
        ),
        (
            "(string->number \"1\" 3)",
            "string->number: expected a radix of 2, 8, 10 or 16, got 3",
        ),
        (
            "(string->number 5)",
            "string->number: expected a string, got 5",
        ),
        ("(abs)", "abs: expected 1 argument, got 0"),
        ("(abs 1 2)", "abs: expected 1 argument, got 2"),
        ("(-)", "-: expected at least 1 argument, got 0"),
        ("(quotient 1)", "quotient: expected 2 arguments, got 1"),
    ]);
}
