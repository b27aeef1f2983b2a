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
    for (plan, message) in [
        ("(seq (notify \"a\"))", "a plan is (plan STEP)"),
        (
            "(plan (seq (notify \"a\") (frobnicate 1)))",
            "unknown tool at plan > seq > 2",
        ),
        (
            "(plan (let ((x (search \"q\"))) (notify y)))",
            "unbound variable at plan > let > body > notify > 1",
        ),
        (
            "(plan (if (search \"q\") (notify \"a\")))",
            "if takes a condition, a then and an else step at plan",
        ),
        ("(plan (search \"a\" \"b\"))", "search takes 1 argument(s)"),
        ("(plan (par))", "par with no steps at plan"),
        (
            "(plan (let (x) (notify \"a\")))",
            "a let binding is not (VAR STEP)",
        ),
    ] {
        let r = e.start(&format!("(plan-run '{plan})"));
        let Run::Done(ev) = r else {
            panic!("{plan}: a step ran before the check")
        };
        let err = ev.error.expect(plan).message;
        assert!(err.contains(message), "{plan}: {err}");
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
