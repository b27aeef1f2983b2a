//! Host tools: suspension, answers, errors, limits per run slice and a
//! budget across the slices, abandon, and `par` waiting on several tools
//! at once.

use arbores_core::{Engine, ErrorKind, Limits, Run, Suspension, Tool, ToolAnswer, ToolCall};

fn tool(name: &str, params: &[&str]) -> Tool {
    Tool {
        name: name.into(),
        params: params.iter().map(|p| p.to_string()).collect(),
        description: format!("the {name} tool"),
    }
}

fn engine() -> Engine {
    let mut e = Engine::new();
    e.define_tool(tool("search", &["query"])).unwrap();
    e.define_tool(tool("calc", &["expression"])).unwrap();
    e.define_tool(tool("notify", &["message"])).unwrap();
    e
}

fn suspended(r: Run) -> Suspension {
    match r {
        Run::Suspended(s) => s,
        Run::Done(e) => panic!("expected a suspension, got {e:?}"),
    }
}

fn done(r: Run) -> arbores_core::Evaluation {
    match r {
        Run::Done(e) => e,
        Run::Suspended(s) => panic!("expected the end, got {s:?}"),
    }
}

fn call(tool: &str, args: &[&str]) -> ToolCall {
    ToolCall {
        tool: tool.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
    }
}

fn value(text: &str) -> ToolAnswer {
    ToolAnswer::Value(text.into())
}

#[test]
fn a_tool_call_suspends_and_the_answer_is_its_value() {
    let mut e = engine();
    let s = suspended(e.start(
        "(define n 0) (display \"before \") (define r (search \"cats\")) (set! n (+ n 1)) (list r n)",
    ));
    assert_eq!(s.calls, vec![call("search", &["\"cats\""])]);
    assert_eq!(s.output, "before ");
    assert_eq!(e.suspended(), vec![s.id]);
    let r = done(e.resume(s.id, vec![value("(\"a\" \"b\")")]).unwrap());
    assert_eq!(r.error, None);
    assert_eq!(r.value.as_deref(), Some("((\"a\" \"b\") 1)"));
    assert!(e.suspended().is_empty());
    // What ran before and after the suspension stays defined.
    assert_eq!(e.eval("n").value.as_deref(), Some("1"));
}

#[test]
fn calls_in_sequence_suspend_one_after_another() {
    let mut e = engine();
    let src = "(let loop ((i 0) (acc '()))
                 (if (= i 3) (reverse acc)
                     (loop (+ i 1) (cons (calc (number->string i)) acc))))";
    let mut run = e.start(src);
    for i in 0..3 {
        let s = suspended(run);
        assert_eq!(s.calls, vec![call("calc", &[&format!("\"{i}\"")])]);
        run = e.resume(s.id, vec![value(&(i * 10).to_string())]).unwrap();
    }
    assert_eq!(done(run).value.as_deref(), Some("(0 10 20)"));
}

#[test]
fn a_failed_tool_raises_a_condition_scheme_can_guard() {
    let mut e = engine();
    let s = suspended(e.start(
        "(guard (c ((error-object? c) (list 'failed (error-object-message c) (error-object-irritants c))))
           (search \"x\"))",
    ));
    let r = done(
        e.resume(s.id, vec![ToolAnswer::Error("quota exceeded".into())])
            .unwrap(),
    );
    assert_eq!(
        r.value.as_deref(),
        Some("(failed \"quota exceeded\" (\"search\"))")
    );
}

#[test]
fn an_unguarded_tool_error_ends_the_evaluation_with_it() {
    let mut e = engine();
    let s = suspended(e.start("(search \"x\")"));
    let r = done(
        e.resume(s.id, vec![ToolAnswer::Error("no network".into())])
            .unwrap(),
    );
    let err = r.error.unwrap();
    assert_eq!(err.kind, ErrorKind::Runtime);
    assert!(err.message.contains("no network"), "{}", err.message);
}

#[test]
fn bad_resumes_are_refused_and_the_evaluation_stays_suspended() {
    let mut e = engine();
    let s = suspended(e.start("(search \"x\")"));
    let err = e.resume(s.id + 100, vec![value("1")]).unwrap_err();
    assert!(err.contains("no suspended evaluation"), "{err}");
    let err = e.resume(s.id, vec![]).unwrap_err();
    assert!(err.contains("waits on 1 tool call(s), got 0"), "{err}");
    let err = e.resume(s.id, vec![value("(1 2")]).unwrap_err();
    assert!(err.contains("answer 1"), "{err}");
    let err = e.resume(s.id, vec![value("1 2")]).unwrap_err();
    assert!(err.contains("expected one datum"), "{err}");
    assert_eq!(e.suspended(), vec![s.id]);
    let r = done(e.resume(s.id, vec![value("ok")]).unwrap());
    assert_eq!(r.value.as_deref(), Some("ok"));
    // Resumed once: gone.
    assert!(e.resume(s.id, vec![value("ok")]).is_err());
}

#[test]
fn a_tool_never_answered_can_be_abandoned_and_the_engine_goes_on() {
    let mut e = engine();
    let s = suspended(e.start("(define before 1) (search \"x\") (define after 2)"));
    assert!(e.abandon(s.id));
    assert!(!e.abandon(s.id));
    assert!(e.suspended().is_empty());
    assert_eq!(e.eval("before").value.as_deref(), Some("1"));
    assert!(e.eval("after").error.is_some());
    // Parked evaluations do not leak: many abandoned ones are collected.
    for _ in 0..200 {
        let s = suspended(e.start("(make-vector 10000 0) (search \"x\")"));
        e.abandon(s.id);
    }
    assert_eq!(e.eval("(+ 1 2)").value.as_deref(), Some("3"));
}

#[test]
fn several_suspended_evaluations_resume_independently() {
    let mut e = engine();
    let a = suspended(e.start("(list 'a (search \"1\"))"));
    let b = suspended(e.start("(list 'b (calc \"2\"))"));
    // Another evaluation in between does not disturb them.
    assert_eq!(e.eval("(+ 1 1)").value.as_deref(), Some("2"));
    let rb = done(e.resume(b.id, vec![value("20")]).unwrap());
    let ra = done(e.resume(a.id, vec![value("10")]).unwrap());
    assert_eq!(rb.value.as_deref(), Some("(b 20)"));
    assert_eq!(ra.value.as_deref(), Some("(a 10)"));
}

#[test]
fn eval_cannot_suspend_a_tool_call_is_an_error_it_can_guard() {
    let mut e = engine();
    let r = e.eval("(search \"x\")");
    let err = r.error.unwrap();
    assert!(
        err.message.contains("no host answers tool calls"),
        "{}",
        err.message
    );
    let r = e.eval("(guard (c (#t 'caught)) (search \"x\"))");
    assert_eq!(r.value.as_deref(), Some("caught"));
}

#[test]
fn a_tool_call_inside_a_transaction_is_refused() {
    let mut e = engine();
    let r =
        done(e.start("(guard (c (#t (error-object-message c))) (arb:transaction (search \"x\")))"));
    assert!(
        r.value
            .as_deref()
            .unwrap()
            .contains("inside arb:transaction"),
        "{r:?}"
    );
}

#[test]
fn the_step_budget_is_per_run_slice_and_a_limit_undoes_only_its_slice() {
    let mut e = engine();
    e.set_limits(Limits {
        max_steps: 50_000,
        ..Limits::default()
    });
    // Each slice does 30,000 steps: within the budget each time.
    let burn = "(define (burn n) (if (> n 0) (burn (- n 1)) 'ok))";
    assert!(e.eval(burn).error.is_none());
    let s = suspended(e.start("(define x 1) (burn 30000) (search \"a\") (burn 30000) (search \"b\") (set! x 2) (burn 30000) x"));
    let s = suspended(e.resume(s.id, vec![value("1")]).unwrap());
    let r = done(e.resume(s.id, vec![value("2")]).unwrap());
    assert_eq!(r.value.as_deref(), Some("2"));
    // A slice that runs out is undone, not what came before it.
    let s = suspended(e.start("(define y 1) (search \"a\") (set! y 2) (burn 100000)"));
    let r = done(e.resume(s.id, vec![value("1")]).unwrap());
    assert_eq!(r.error.unwrap().kind, ErrorKind::StepLimit);
    assert_eq!(e.eval("y").value.as_deref(), Some("1"));
}

#[test]
fn a_budget_across_the_slices_ends_an_evaluation_the_slice_limit_would_not() {
    let mut e = engine();
    e.set_limits(Limits {
        max_steps: 50_000,
        ..Limits::default()
    });
    assert!(e
        .eval("(define (burn n) (if (> n 0) (burn (- n 1)) 'ok))")
        .error
        .is_none());
    let program = "(define x 0) (burn 30000) (search \"a\") (set! x 1) (burn 30000) (search \"b\") (set! x 2) (burn 30000) x";
    // Without a budget each slice has its 50,000 steps: three slices of
    // 30,000 finish.
    let s = suspended(e.start(program));
    let s = suspended(e.resume(s.id, vec![value("1")]).unwrap());
    let r = done(e.resume(s.id, vec![value("2")]).unwrap());
    assert_eq!(r.value.as_deref(), Some("2"));

    // With a budget of 80,000 for the whole evaluation, the third slice
    // runs out: it is undone (x stays 1, set by the second), and the
    // message says it was the evaluation's budget.
    e.set_evaluation_budget(Some(80_000));
    assert_eq!(e.evaluation_budget(), Some(80_000));
    let s = suspended(e.start(program));
    let s = suspended(e.resume(s.id, vec![value("1")]).unwrap());
    let r = done(e.resume(s.id, vec![value("2")]).unwrap());
    let err = r.error.unwrap();
    assert_eq!(err.kind, ErrorKind::StepLimit);
    assert!(
        err.message
            .contains("budget of 80000 steps across its run slices"),
        "{}",
        err.message
    );
    assert_eq!(e.eval("x").value.as_deref(), Some("1"));
    assert!(e.suspended().is_empty());

    // The slice's own limit still applies when it is the smaller: then the
    // message is the slice's.
    e.set_evaluation_budget(Some(1_000_000));
    let r = done(e.start("(burn 100000)"));
    let err = r.error.unwrap();
    assert_eq!(err.kind, ErrorKind::StepLimit);
    assert!(!err.message.contains("budget of"), "{}", err.message);

    // `eval` is one slice under the same budget.
    e.set_evaluation_budget(Some(10_000));
    let r = e.eval("(burn 20000)");
    assert!(r.error.unwrap().message.contains("budget of 10000 steps"));
}

#[test]
fn the_budget_belongs_to_the_evaluation_and_travels_in_its_dump() {
    let mut e = engine();
    assert!(e
        .eval("(define (burn n) (if (> n 0) (burn (- n 1)) 'ok))")
        .error
        .is_none());
    e.set_evaluation_budget(Some(50_000));
    let program = "(burn 30000) (search \"a\") (burn 30000) 'end";
    let s = suspended(e.start(program));
    // A later change of the setting leaves the started evaluation as it is.
    e.set_evaluation_budget(None);
    let bytes = e.dump(s.id).unwrap();
    let r = done(e.resume(s.id, vec![value("1")]).unwrap());
    assert!(r.error.unwrap().message.contains("budget of 50000 steps"));
    // Loaded elsewhere (an engine with no budget of its own), it still has
    // only what its first slice left.
    let mut other = engine();
    let s = other.load_suspension(&bytes).unwrap();
    let r = done(other.resume(s.id, vec![value("1")]).unwrap());
    assert!(r.error.unwrap().message.contains("budget of 50000 steps"));
    // And evaluations started without a budget run to the end.
    let s = suspended(e.start(program));
    let r = done(e.resume(s.id, vec![value("1")]).unwrap());
    assert_eq!(r.value.as_deref(), Some("end"));
}

#[test]
fn tool_names_and_parameters_are_checked() {
    let mut e = Engine::new();
    for bad in ["", "1abc", "a b", "(x)", "x\"y", &"a".repeat(129)] {
        let err = e.define_tool(tool(bad, &[])).unwrap_err();
        assert!(err.contains("is not 1 to 128"), "{err}");
    }
    let err = e.define_tool(tool("ok", &["a)"])).unwrap_err();
    assert!(err.contains("parameter name"), "{err}");
    e.define_tool(tool("db-query", &["q"])).unwrap();
    e.define_tool(tool("db-query", &["q", "limit"])).unwrap();
    assert_eq!(e.tools().len(), 1);
    let s = suspended(e.start("(db-query \"select\" 3)"));
    assert_eq!(s.calls, vec![call("db-query", &["\"select\"", "3"])]);
    // Wrong arity is an ordinary error, before anything suspends.
    let r = done(e.start("(db-query 1)"));
    assert!(r.error.unwrap().message.contains("expected 2 arguments"));
}

// ---- par ----------------------------------------------------------------------

#[test]
fn par_hands_over_every_branch_call_at_once_in_branch_order() {
    let mut e = engine();
    let s = suspended(e.start("(par (search \"a\") (+ 1 2) (calc \"1+1\"))"));
    assert_eq!(
        s.calls,
        vec![call("search", &["\"a\""]), call("calc", &["\"1+1\""])]
    );
    let r = done(e.resume(s.id, vec![value("\"A\""), value("2")]).unwrap());
    assert_eq!(r.value.as_deref(), Some("(\"A\" 3 2)"));
}

#[test]
fn par_branches_waiting_different_numbers_of_times() {
    let mut e = engine();
    // Branch 1 calls twice in sequence, branch 2 once, branch 3 three times.
    let src = "(par (list (search \"1a\") (search \"1b\"))
                    (calc \"2a\")
                    (let* ((x (notify \"3a\")) (y (notify \"3b\")) (z (notify \"3c\"))) (list x y z)))";
    let s = suspended(e.start(src));
    assert_eq!(
        s.calls,
        vec![
            call("search", &["\"1a\""]),
            call("calc", &["\"2a\""]),
            call("notify", &["\"3a\""])
        ]
    );
    let s = suspended(
        e.resume(s.id, vec![value("r1a"), value("r2a"), value("r3a")])
            .unwrap(),
    );
    assert_eq!(
        s.calls,
        vec![call("search", &["\"1b\""]), call("notify", &["\"3b\""])]
    );
    let s = suspended(e.resume(s.id, vec![value("r1b"), value("r3b")]).unwrap());
    assert_eq!(s.calls, vec![call("notify", &["\"3c\""])]);
    let r = done(e.resume(s.id, vec![value("r3c")]).unwrap());
    assert_eq!(r.value.as_deref(), Some("((r1a r1b) r2a (r3a r3b r3c))"));
}

#[test]
fn nested_par_and_par_map_gather_all_calls() {
    let mut e = engine();
    let src =
        "(par (par (search \"a\") (search \"b\")) (par-map (lambda (q) (calc q)) '(\"x\" \"y\")))";
    let s = suspended(e.start(src));
    let names: Vec<_> = s.calls.iter().map(|c| c.args[0].as_str()).collect();
    assert_eq!(names, ["\"a\"", "\"b\"", "\"x\"", "\"y\""]);
    let answers = ["1", "2", "3", "4"].iter().map(|a| value(a)).collect();
    let r = done(e.resume(s.id, answers).unwrap());
    assert_eq!(r.value.as_deref(), Some("((1 2) (3 4))"));
    // Outside the par, a call suspends alone again.
    let s = suspended(e.start("(list (par (search \"p\")) (calc \"q\"))"));
    assert_eq!(s.calls.len(), 1);
    let s = suspended(e.resume(s.id, vec![value("1")]).unwrap());
    assert_eq!(s.calls, vec![call("calc", &["\"q\""])]);
    let r = done(e.resume(s.id, vec![value("2")]).unwrap());
    assert_eq!(r.value.as_deref(), Some("((1) 2)"));
}

#[test]
fn a_failing_branch_raises_where_the_par_is() {
    let mut e = engine();
    let src = "(guard (c (#t (list 'caught (error-object-message c))))
                 (par (search \"a\") (calc \"b\")))";
    let s = suspended(e.start(src));
    let r = done(
        e.resume(
            s.id,
            vec![value("1"), ToolAnswer::Error("bad expression".into())],
        )
        .unwrap(),
    );
    assert_eq!(r.value.as_deref(), Some("(caught \"bad expression\")"));
    // A branch may guard its own call and go on.
    let src = "(par (guard (c (#t 'fallback)) (search \"a\")) (calc \"b\"))";
    let s = suspended(e.start(src));
    let r = done(
        e.resume(s.id, vec![ToolAnswer::Error("down".into()), value("2")])
            .unwrap(),
    );
    assert_eq!(r.value.as_deref(), Some("(fallback 2)"));
    // After a failed par, a tool call suspends on its own again.
    let s = suspended(e.start("(guard (c (#t #f)) (par (car '()) (search \"z\"))) (calc \"1\")"));
    assert_eq!(s.calls, vec![call("calc", &["\"1\""])]);
}

#[test]
fn par_without_tools_is_just_a_list_of_values() {
    let mut e = engine();
    assert_eq!(
        e.eval("(par (* 2 3) (string-append \"a\" \"b\") 'c)")
            .value
            .as_deref(),
        Some("(6 \"ab\" c)")
    );
    assert_eq!(e.eval("(par)").value.as_deref(), Some("()"));
}

#[test]
fn a_session_s_own_list_and_map_do_not_change_how_tools_and_par_work() {
    // The engine's tool call, `par` and plans use the engine's `list`,
    // `map` and `append`, not the session's (docs/ARCHITECTURE.md, "A
    // program's definitions never change the engine's procedures").
    let mut e = engine();
    e.eval("(define (list . xs) 'mine) (define (map . xs) 'mine) (define (append . xs) 'mine)");
    let s = suspended(e.start("(search \"cats\")"));
    assert_eq!(s.calls, vec![call("search", &["\"cats\""])]);
    let r = done(e.resume(s.id, vec![value("7")]).unwrap());
    assert_eq!(r.value.as_deref(), Some("7"));
    let s = suspended(e.start("(par (search \"a\") (calc \"1+1\"))"));
    assert_eq!(
        s.calls,
        vec![call("search", &["\"a\""]), call("calc", &["\"1+1\""])]
    );
    let r = done(e.resume(s.id, vec![value("1"), value("2")]).unwrap());
    assert_eq!(r.value.as_deref(), Some("(1 2)"));
    // The session's own code sees its own definitions.
    assert_eq!(e.eval("(list 1 2)").value.as_deref(), Some("mine"));
}
