//! Both engines, native and wasmtime, run the same tool-calling programs
//! and give the same suspensions and results.

use arbores_core::{ErrorKind, Limits, Run, Tool, ToolAnswer};

use crate::backend::{Backend, EngineKind, Settings, Stopper};
use crate::{native, wasm};

/// The native engine meters memory by the whole process's allocations
/// (one engine per process in `arbores`), so a test that compiles the wasm
/// guest beside it in another thread can push it over its cap: these
/// tests run one at a time.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn settings(engine: EngineKind) -> Settings {
    let limits = Limits {
        max_steps: 1_000_000,
        max_memory: 64 << 20,
    };
    Settings::for_tests(engine, limits)
}

fn backends() -> Vec<(EngineKind, Box<dyn Backend>)> {
    let native = native::NativeSession::new(&settings(EngineKind::Native), Stopper::default());
    let wasm = wasm::WasmSession::without_store(&settings(EngineKind::Wasm), "engines-agree");
    vec![
        (EngineKind::Native, Box::new(native)),
        (EngineKind::Wasm, Box::new(wasm)),
    ]
}

fn tool(name: &str, params: &[&str]) -> Tool {
    Tool {
        name: name.into(),
        params: params.iter().map(|p| p.to_string()).collect(),
        description: String::new(),
    }
}

/// Runs `source`, answering each call with the text its `answer` gives
/// (`Err` for a failed tool); every suspension and the end, as text.
fn transcript(
    b: &mut dyn Backend,
    source: &str,
    answer: &dyn Fn(&str, &[String]) -> Result<String, String>,
) -> Vec<String> {
    let mut log = Vec::new();
    let (mut run, _) = b.start(source);
    loop {
        match run {
            Run::Done(e) => {
                log.push(format!(
                    "done {:?} {:?} {:?}",
                    e.value,
                    e.output,
                    e.error.map(|e| e.message)
                ));
                return log;
            }
            Run::Suspended(s) => {
                log.push(format!("calls {:?} output {:?}", s.calls, s.output));
                let answers = s
                    .calls
                    .iter()
                    .map(|c| match answer(&c.tool, &c.args) {
                        Ok(v) => ToolAnswer::Value(v),
                        Err(m) => ToolAnswer::Error(m),
                    })
                    .collect();
                run = b.resume(s.id, answers).expect("resume");
            }
        }
    }
}

#[test]
fn tools_suspend_and_resume_alike_in_both_engines() {
    let _one_at_a_time = one_at_a_time();
    let program = r#"
        (define (lookup q) (search q))
        (display "plan ")
        (let ((both (par (lookup "a") (guard (c (#t (list 'failed (error-object-message c)))) (calc "1/0")) (lookup "b"))))
          (list both (calc "2+3")))"#;
    let answer = |tool: &str, args: &[String]| -> Result<String, String> {
        match (tool, args[0].as_str()) {
            ("calc", "\"1/0\"") => Err("division by zero".into()),
            ("calc", _) => Ok("5".into()),
            (_, q) => Ok(format!("(result {q})")),
        }
    };
    let mut transcripts = Vec::new();
    for (kind, mut b) in backends() {
        b.define_tool(&tool("search", &["query"])).unwrap();
        b.define_tool(&tool("calc", &["expression"])).unwrap();
        let t = transcript(b.as_mut(), program, &answer);
        assert_eq!(t.len(), 3, "{kind:?}: {t:#?}");
        let expected = r#"(((result "a") (failed "division by zero") (result "b")) 5)"#;
        assert_eq!(
            t[2],
            format!("done {:?} \"\" None", Some(expected)),
            "{kind:?}"
        );
        // Refusals come back the same way too.
        let err = b.resume(999, vec![]).unwrap_err();
        assert!(
            err.contains("no suspended evaluation 999"),
            "{kind:?}: {err}"
        );
        assert!(b.define_tool(&tool("bad name", &[])).is_err());
        let (run, _) = b.start("(search \"x\")");
        let Run::Suspended(s) = run else {
            panic!("{kind:?}: {run:?}")
        };
        assert_eq!(b.abandon(s.id), Ok(true));
        assert_eq!(b.abandon(s.id), Ok(false));
        transcripts.push(t);
    }
    assert_eq!(transcripts[0], transcripts[1]);
}

#[test]
fn a_dump_from_either_engine_resumes_in_the_other() {
    let _one_at_a_time = one_at_a_time();
    let program = "(define base 40) (define r (search \"q\")) (+ base r)";
    let mut engines = backends();
    for (_, b) in engines.iter_mut() {
        b.define_tool(&tool("search", &["query"])).unwrap();
    }
    for from in 0..2 {
        let to = 1 - from;
        let (run, _) = engines[from].1.start(program);
        let Run::Suspended(s) = run else {
            panic!("{run:?}")
        };
        let bytes = engines[from].1.dump(s.id).unwrap();
        // Loaded twice and answered differently: a fork.
        for (answer, expected) in [("2", "42"), ("-40", "0")] {
            let loaded = engines[to].1.load_suspension(&bytes).unwrap();
            assert_eq!(loaded.calls, s.calls);
            let run = engines[to]
                .1
                .resume(loaded.id, vec![ToolAnswer::Value(answer.into())])
                .unwrap();
            let Run::Done(e) = run else { panic!("{run:?}") };
            assert_eq!(
                e.value.as_deref(),
                Some(expected),
                "{:?} -> {:?}",
                engines[from].0,
                engines[to].0
            );
        }
        let err = engines[to].1.load_suspension(&bytes[1..]).unwrap_err();
        assert!(err.contains("not a suspended evaluation"), "{err}");
        engines[from].1.abandon(s.id).unwrap();
    }
}

#[test]
fn a_session_saved_by_either_engine_restores_in_the_other() {
    let _one_at_a_time = one_at_a_time();
    let session = "(define-record-type pt (make-pt x y) pt? (x pt-x) (y pt-y))
                   (define origin (make-pt 1 2))
                   (define bump! #f) (define peek #f)
                   (let ((n 0)) (set! bump! (lambda () (set! n (+ n 1)) n)) (set! peek (lambda () n)))
                   (bump!)
                   (define big (expt 3 50))";
    let mut engines = backends();
    for from in 0..2 {
        let to = 1 - from;
        let (e, _) = engines[from].1.eval(session);
        assert_eq!(e.error, None);
        let bytes = engines[from].1.save_session().unwrap();
        let restored = engines[to].1.restore_session(&bytes).unwrap();
        for name in ["big", "bump!", "origin", "peek", "pt?"] {
            assert!(restored.bindings.iter().any(|b| b == name), "{name}");
        }
        let (e, _) = engines[to]
            .1
            .eval("(list (bump!) (peek) (pt-x origin) (pt? (make-pt 0 0)) big)");
        assert_eq!(
            e.value.as_deref(),
            Some("(2 2 1 #t 717897987691852588770249)"),
            "{:?} -> {:?}",
            engines[from].0,
            engines[to].0
        );
        // Both engines give the same bytes for the same session.
        let (_, _) = engines[from].1.eval("(bump!)");
        assert_eq!(
            engines[from].1.save_session().unwrap(),
            engines[to].1.save_session().unwrap()
        );
        let err = engines[to].1.restore_session(&bytes[1..]).unwrap_err();
        assert!(err.contains("not a session snapshot"), "{err}");
        // Refused: nothing changed.
        let (e, _) = engines[to].1.eval("(peek)");
        assert_eq!(e.value.as_deref(), Some("2"));
    }
}

#[test]
fn a_budget_across_run_slices_ends_the_same_slice_in_both_engines_and_travels_in_dumps() {
    let _one_at_a_time = one_at_a_time();
    let program = "(define (burn n) (if (> n 0) (burn (- n 1)) 'ok))
                   (define x 0) (burn 30000) (ask) (set! x 1) (burn 30000) (ask) (set! x 2) (burn 30000) x";
    let mut engines = backends();
    let mut dumps = Vec::new();
    for (kind, b) in engines.iter_mut() {
        b.define_tool(&tool("ask", &[])).unwrap();
        b.set_evaluation_budget(Some(80_000)).unwrap();
        let mut slices = vec![];
        let (mut run, _) = b.start(program);
        let evaluation = loop {
            match run {
                Run::Done(e) => break e,
                Run::Suspended(s) => {
                    slices.push(s.calls.len());
                    if slices.len() == 1 {
                        dumps.push(b.dump(s.id).unwrap());
                    }
                    run = b
                        .resume(s.id, vec![ToolAnswer::Value("#t".into())])
                        .unwrap();
                }
            }
        };
        assert_eq!(slices, [1, 1], "{kind:?}");
        let err = evaluation.error.expect("the third slice runs out");
        assert_eq!(err.kind, ErrorKind::StepLimit, "{kind:?}");
        assert!(
            err.message
                .contains("budget of 80000 steps across its run slices"),
            "{kind:?}: {}",
            err.message
        );
        // The third slice is undone; what the second did stays.
        let (e, _) = b.eval("x");
        assert_eq!(e.value.as_deref(), Some("1"), "{kind:?}");
        b.set_evaluation_budget(None).unwrap();
    }
    // Each engine's dump, loaded by the other (with no budget of its own),
    // keeps the budget and what its first slice took.
    for from in 0..2 {
        let to = 1 - from;
        let b = &mut engines[to].1;
        let s = b.load_suspension(&dumps[from]).unwrap();
        let run = b
            .resume(s.id, vec![ToolAnswer::Value("#t".into())])
            .unwrap();
        let Run::Suspended(s) = run else {
            panic!("{run:?}")
        };
        let run = b
            .resume(s.id, vec![ToolAnswer::Value("#t".into())])
            .unwrap();
        let Run::Done(e) = run else { panic!("{run:?}") };
        assert!(
            e.error.unwrap().message.contains("budget of 80000 steps"),
            "{:?} -> {:?}",
            engines[from].0,
            engines[to].0
        );
    }
}
