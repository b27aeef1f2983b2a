//! Plans (the `(arbores plan)` library): the examples of the plan design
//! (seq, par, if, let over notify, search, calc, db-query), the trace, the
//! checks before a plan runs, and errors of tools.

use arbores_core::{Engine, Run, Suspension, Tool, ToolAnswer};

fn engine() -> Engine {
    let mut e = Engine::new();
    for name in ["notify", "search", "db-query"] {
        e.define_tool(Tool {
            name: name.into(),
            params: vec!["text".into()],
            description: String::new(),
        })
        .unwrap();
    }
    assert_eq!(e.eval("(import (arbores plan))").error, None);
    e
}

fn suspended(r: Run) -> Suspension {
    match r {
        Run::Suspended(s) => s,
        Run::Done(e) => panic!("expected a suspension, got {e:?}"),
    }
}

fn done(r: Run) -> String {
    match r {
        Run::Done(e) => {
            assert_eq!(e.error, None);
            e.value.unwrap()
        }
        Run::Suspended(s) => panic!("still suspended: {s:?}"),
    }
}

fn calls(s: &Suspension) -> Vec<String> {
    s.calls
        .iter()
        .map(|c| format!("{}({})", c.tool, c.args.join(" ")))
        .collect()
}

fn answer(values: &[&str]) -> Vec<ToolAnswer> {
    values
        .iter()
        .map(|v| ToolAnswer::Value(v.to_string()))
        .collect()
}

#[test]
fn seq_runs_steps_in_order_and_traces_each_call() {
    let mut e = engine();
    let s = suspended(e.start(
        r#"(plan-run '(plan (seq (notify "start") (let ((r (search "rust"))) (notify r)))))"#,
    ));
    assert_eq!(calls(&s), [r#"notify("start")"#]);
    let s = suspended(e.resume(s.id, answer(&["#t"])).unwrap());
    assert_eq!(calls(&s), [r#"search("rust")"#]);
    let s = suspended(e.resume(s.id, answer(&["\"found\""])).unwrap());
    assert_eq!(calls(&s), [r#"notify("found")"#]);
    let v = done(e.resume(s.id, answer(&["ok"])).unwrap());
    assert_eq!(
        v,
        r#"((value . ok) (trace . #(((tool . "notify") (args . #("start")) (start . 1) (end . 2) (result . #t)) ((tool . "search") (args . #("rust")) (start . 3) (end . 4) (result . "found")) ((tool . "notify") (args . #("found")) (start . 5) (end . 6) (result . ok)))))"#
    );
}

#[test]
fn par_branches_wait_together_and_answers_keep_branch_order() {
    let mut e = engine();
    let s = suspended(e.start(
        r#"(plan-run '(plan (par (search "a") (calc "2+3*4") (seq (db-query "q1") (search "b")))))"#,
    ));
    // calc is answered inside the engine; both branches' first calls at once.
    assert_eq!(calls(&s), [r#"search("a")"#, r#"db-query("q1")"#]);
    let s = suspended(e.resume(s.id, answer(&["1", "(row)"])).unwrap());
    assert_eq!(calls(&s), [r#"search("b")"#]);
    let v = done(e.resume(s.id, answer(&["2"])).unwrap());
    assert!(v.starts_with("((value 1 14 2) (trace . #("), "{v}");
    // Both first calls started before either ended.
    assert!(
        v.contains(r#"((tool . "search") (args . #("a")) (start . 1) (end . 5)"#),
        "{v}"
    );
}

#[test]
fn if_chooses_a_branch_by_a_tool_result() {
    let mut e = engine();
    let src = r#"(plan-run '(plan (if (db-query "exists?") (notify "yes") (calc "10/4"))))"#;
    let s = suspended(e.start(src));
    let v = done(e.resume(s.id, answer(&["#f"])).unwrap());
    assert!(v.starts_with("((value . 2.5) "), "{v}");
}

#[test]
fn a_tool_error_ends_the_plan_with_the_error_and_the_trace_so_far() {
    let mut e = engine();
    let s = suspended(e.start(r#"(plan-run '(plan (seq (search "x") (notify "never"))))"#));
    let v = done(
        e.resume(s.id, vec![ToolAnswer::Error("quota exceeded".into())])
            .unwrap(),
    );
    assert_eq!(
        v,
        r#"((error . "quota exceeded") (trace . #(((tool . "search") (args . #("x")) (start . 1) (end . 2) (error . "quota exceeded")))))"#
    );
    let v = done(e.start(r#"(plan-run '(plan (calc "1/0")))"#));
    assert!(
        v.starts_with(r#"((error . "calc: division by zero")"#),
        "{v}"
    );
}

#[test]
fn malformed_plans_are_refused_before_any_step_runs() {
    let mut e = engine();
    // Each kind of malformed form, nested where a model would put it: the
    // message says what is wrong and the path from the top to the form,
    // and the form itself follows as the irritant.
    for (plan, message) in [
        (
            "(seq (notify \"a\"))",
            "plan: a plan is (plan STEP) at the top: (seq (notify \"a\"))",
        ),
        ("(plan)", "plan: a plan is (plan STEP) at the top: (plan)"),
        (
            "(plan (seq (notify \"a\") (frobnicate 1)))",
            "plan: unknown tool frobnicate at plan > seq > 2: (frobnicate 1)",
        ),
        (
            "(plan (seq (par (notify \"a\") (search \"b\")) (if (search \"c\") (notify \"d\") (notify zz))))",
            "plan: unbound variable at plan > seq > 2 > if > else > notify > 1: zz",
        ),
        (
            "(plan (let ((x (search \"q\"))) (notify y)))",
            "plan: unbound variable at plan > let > body > notify > 1: y",
        ),
        (
            "(plan (seq (if (search \"q\") (notify \"a\"))))",
            "plan: if takes a condition, a then and an else step at plan > seq > 1: (if (search \"q\") (notify \"a\"))",
        ),
        (
            "(plan (par (notify \"a\") (search \"a\" \"b\")))",
            "plan: search takes 1 argument(s) at plan > par > 2: (search \"a\" \"b\")",
        ),
        ("(plan (par))", "plan: par with no steps at plan: (par)"),
        (
            "(plan (if #t (seq) 1))",
            "plan: seq with no steps at plan > if > then: (seq)",
        ),
        (
            "(plan (let ((x 1) (y)) (notify x)))",
            "plan: a let binding is not (VAR STEP) at plan > let > bindings > 2: (y)",
        ),
        (
            "(plan (let ((\"x\" 1)) (notify 1)))",
            "plan: a let binding is not (VAR STEP) at plan > let > bindings > 1: (\"x\" 1)",
        ),
        (
            "(plan (let ((x 1)) (notify x) (notify x)))",
            "plan: let takes bindings and one body step at plan: (let ((x 1)) (notify x) (notify x))",
        ),
        (
            "(plan (let ((x (calc (quote)))) x))",
            "plan: malformed quote at plan > let > x > calc > 1: (quote)",
        ),
        (
            "(plan (seq (notify \"a\") #(1 2)))",
            "plan: not a step at plan > seq > 2: #(1 2)",
        ),
        (
            "(plan (seq (notify . \"a\")))",
            "plan: not a step at plan > seq > 1: (notify . \"a\")",
        ),
        (
            "(plan (par ((calc \"1\") 2)))",
            "plan: not a step at plan > par > 1: ((calc \"1\") 2)",
        ),
        ("(plan ())", "plan: not a step at plan: ()"),
    ] {
        let r = e.start(&format!("(plan-run '{plan})"));
        let Run::Done(ev) = r else {
            panic!("{plan}: a step ran before the check")
        };
        let err = ev.error.expect(plan).message;
        assert_eq!(err, message, "{plan}");
        // plan-check says the same, and a guard sees the form.
        let checked = e.eval(&format!(
            "(guard (c ((error-object? c) (list (error-object-message c) (error-object-irritants c)))) (plan-check '{plan}))"
        ));
        assert_eq!(checked.error, None, "{plan}");
        let (what, rest) = message.split_once(" at ").unwrap();
        let (path, form) = rest.split_once(": ").unwrap();
        assert_eq!(
            checked.value.unwrap(),
            format!("(\"{what} at {path}\" ({form}))"),
            "{plan}"
        );
    }
    assert_eq!(
        e.eval("(plan-check '(plan (seq (notify \"a\") (calc \"1\"))))")
            .value
            .as_deref(),
        Some("#t")
    );
}

#[test]
fn calc_reads_arithmetic_only() {
    let mut e = engine();
    for (expr, value) in [
        ("2+3*4", "14"),
        ("(2+3)*4", "20"),
        ("-3 + 10 / 4", "-0.5"),
        ("1.5*2", "3.0"),
    ] {
        let v = done(e.start(&format!("(plan-run '(plan (calc {expr:?})))")));
        assert!(
            v.starts_with(&format!("((value . {value}) ")),
            "{expr}: {v}"
        );
    }
    for (expr, message) in [
        ("(display 1)", "calc: an unexpected d"),
        ("2+", "ends too soon"),
        ("(1", "a missing )"),
    ] {
        let v = done(e.start(&format!("(plan-run '(plan (calc {expr:?})))")));
        assert!(v.contains(message), "{expr}: {v}");
    }
}
