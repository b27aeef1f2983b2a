//! Host tools and suspended evaluations seen from JavaScript: the core's
//! `Engine::define_tool`/`start`/`resume`/`dump`/`load_suspension`
//! (docs/AGENTS.md, "The loop, in JavaScript"). `web/src/agent.js` drives
//! them with tools written as JavaScript async functions.
//!
//! Arguments and answers cross in two forms: the `write` form of each
//! argument (as the other faces give it) and, where the arguments have one,
//! their JSON form by the engine's one mapping (docs/API.md, "Values as
//! JSON"); an answer is the text of one datum, JSON, or an error message.

use crate::convert::{to_js, ErrorJs};
use crate::engine::Engine;
use arbores_core::{Run, Suspension, Tool, ToolAnswer, ToolCall};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

/// A tool as `Engine.defineTool` takes it.
#[derive(Debug, Deserialize)]
pub struct ToolJs {
    pub name: String,
    #[serde(default)]
    pub params: Vec<String>,
    #[serde(default)]
    pub description: String,
}

/// Where a run slice ended, as `start`, `resume` and `loadSuspension`
/// return it: `{status: "done", value, output, error}` or
/// `{status: "suspended", id, calls, output}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum RunJs {
    Done {
        value: Option<String>,
        output: String,
        error: Option<ErrorJs>,
    },
    Suspended {
        /// What `resume`, `abandon` and `dump` take.
        id: f64,
        calls: Vec<CallJs>,
        output: String,
    },
}

/// One pending call: `{tool, args, json}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallJs {
    pub tool: String,
    /// Each argument in `write` form.
    pub args: Vec<String>,
    /// The arguments as the text of one JSON array, or `null` when one of
    /// them has no JSON form (a procedure, a character, `+inf.0`, ...).
    pub json: Option<String>,
}

/// One answer as `resume` takes it: exactly one of the three fields.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerJs {
    /// The text of one datum: the call's value.
    value: Option<String>,
    /// JSON text, read by the engine's mapping into the call's value.
    json: Option<String>,
    /// A message: the call raises an error object with it.
    error: Option<String>,
}

thread_local! {
    /// The engine that converts between data and JSON, made once per
    /// thread (a new engine per call cost about 25 us of each call's
    /// conversion); it only ever evaluates quoted data and `json->scheme`
    /// of a string, so it keeps no definitions between calls.
    static CONVERTER: std::cell::RefCell<Option<arbores_core::Engine>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `f` with an engine of its own for converting between data and
/// JSON: the session's definitions (it may have redefined `list` or
/// `json->scheme`) must not change how a host's data crosses.
fn with_converter<R>(f: impl FnOnce(&mut arbores_core::Engine) -> R) -> R {
    CONVERTER.with(|cell| {
        let mut slot = cell.borrow_mut();
        f(slot.get_or_insert_with(arbores_core::Engine::new))
    })
}

/// The JSON array of `call`'s arguments, if each has a JSON form. The
/// arguments are quoted data the engine wrote, so reading them back
/// evaluates nothing.
fn json_of_args(call: &ToolCall) -> Option<String> {
    let quoted: Vec<String> = call.args.iter().map(|a| format!("(quote {a})")).collect();
    let evaluation = with_converter(|c| c.eval_json(&format!("(list {})", quoted.join(" "))));
    match evaluation.error {
        None => evaluation.value,
        Some(_) => None,
    }
}

/// `text` as a Scheme string literal.
fn string_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

impl RunJs {
    /// `run` as the page sees it, with the "did you mean" note
    /// (`Engine::unbound_hint`) on an unbound variable, as `eval` gives it.
    fn with_hint(run: Run, engine: &arbores_core::Engine) -> RunJs {
        let hint = match &run {
            Run::Done(e) => e.error.as_ref().and_then(|err| engine.unbound_hint(err)),
            Run::Suspended(_) => None,
        };
        let mut run = RunJs::of(run);
        if let RunJs::Done {
            error: Some(error), ..
        } = &mut run
        {
            error.hint = hint;
        }
        run
    }

    pub fn of(run: Run) -> RunJs {
        match run {
            Run::Done(e) => RunJs::Done {
                value: e.value,
                output: e.output,
                error: e.error.map(ErrorJs::from),
            },
            Run::Suspended(s) => RunJs::suspended(s),
        }
    }

    fn suspended(s: Suspension) -> RunJs {
        let calls = s
            .calls
            .into_iter()
            .map(|call| CallJs {
                json: json_of_args(&call),
                tool: call.tool,
                args: call.args,
            })
            .collect();
        RunJs::Suspended {
            id: s.id as f64,
            calls,
            output: s.output,
        }
    }
}

/// The core's answer for `answer` (number `at` of the list, for messages).
pub fn answer_of(at: usize, answer: AnswerJs) -> Result<ToolAnswer, String> {
    match answer {
        AnswerJs {
            value: Some(text),
            json: None,
            error: None,
        } => Ok(ToolAnswer::Value(text)),
        AnswerJs {
            value: None,
            json: Some(json),
            error: None,
        } => {
            let read =
                with_converter(|c| c.eval(&format!("(json->scheme {})", string_literal(&json))));
            match (read.error, read.value) {
                (None, Some(datum)) => Ok(ToolAnswer::Value(datum)),
                (Some(e), _) => Err(format!("resume: answer {at}: {}", e.message)),
                (None, None) => Err(format!("resume: answer {at}: the JSON gave no value")),
            }
        }
        AnswerJs {
            value: None,
            json: None,
            error: Some(message),
        } => Ok(ToolAnswer::Error(message)),
        _ => Err(format!(
            "resume: answer {at}: expected exactly one of {{value}}, {{json}} or {{error}}"
        )),
    }
}

/// A suspension's id from JavaScript's number.
pub fn id_of(who: &str, id: f64) -> Result<u64, String> {
    if id.fract() != 0.0 || !(0.0..=9_007_199_254_740_991.0).contains(&id) {
        return Err(format!("{who}: expected a suspension's id, got {id}"));
    }
    Ok(id as u64)
}

fn js<T: Serialize>(value: &T) -> Result<JsValue, JsError> {
    to_js(value).map_err(|e| JsError::new(&format!("cannot convert the result: {e}")))
}

#[wasm_bindgen]
impl Engine {
    /// Defines (or redefines) a tool from `{name, params, description}`:
    /// a global procedure of the session taking exactly `params`, whose
    /// calls suspend an evaluation begun by `start`. Throws on a name that
    /// is not 1 to 128 of `A-Z a-z 0-9 _ . -` starting with a letter.
    #[wasm_bindgen(js_name = defineTool)]
    pub fn define_tool(&mut self, tool: JsValue) -> Result<(), JsError> {
        let tool: ToolJs = serde_wasm_bindgen::from_value(tool).map_err(|e| {
            JsError::new(&format!(
                "defineTool: expected {{name, params, description}}: {e}"
            ))
        })?;
        self.core()
            .define_tool(Tool {
                name: tool.name,
                params: tool.params,
                description: tool.description,
            })
            .map_err(|e| JsError::new(&e))
    }

    /// Evaluates `source` like `eval`, except that a tool call suspends it:
    /// returns `{status: "done", value, output, error}` or
    /// `{status: "suspended", id, calls: [{tool, args, json}], output}`.
    /// Limits apply to each run slice.
    pub fn start(&mut self, source: &str) -> Result<JsValue, JsError> {
        let run = self.core().start(source);
        js(&RunJs::with_hint(run, self.core()))
    }

    /// Continues suspended evaluation `id` with one answer per call, in
    /// order: `{value: DATUM-TEXT}`, `{json: JSON-TEXT}` or
    /// `{error: MESSAGE}` (raised at the call, for `guard`). Throws on an
    /// unknown id or a wrong answer; the evaluation then stays suspended.
    pub fn resume(&mut self, id: f64, answers: JsValue) -> Result<JsValue, JsError> {
        let id = id_of("resume", id).map_err(|e| JsError::new(&e))?;
        let answers: Vec<AnswerJs> = serde_wasm_bindgen::from_value(answers).map_err(|e| {
            JsError::new(&format!(
                "resume: expected an array of {{value}}, {{json}} or {{error}}: {e}"
            ))
        })?;
        let mut core_answers = Vec::with_capacity(answers.len());
        for (at, answer) in answers.into_iter().enumerate() {
            core_answers.push(answer_of(at, answer).map_err(|e| JsError::new(&e))?);
        }
        let run = self
            .core()
            .resume(id, core_answers)
            .map_err(|e| JsError::new(&e))?;
        js(&RunJs::with_hint(run, self.core()))
    }

    /// Forgets suspended evaluation `id`; whether there was one.
    pub fn abandon(&mut self, id: f64) -> bool {
        id_of("abandon", id).is_ok_and(|id| self.core().abandon(id))
    }

    /// The ids of the evaluations suspended in this engine.
    pub fn suspended(&mut self) -> Result<JsValue, JsError> {
        let ids: Vec<f64> = self
            .core()
            .suspended()
            .into_iter()
            .map(|id| id as f64)
            .collect();
        js(&ids)
    }

    /// The bytes of suspended evaluation `id` and the session it needs, for
    /// `loadSuspension` in any engine of the same build (this page, the
    /// `arbores` command, the WebAssembly component). It stays suspended.
    pub fn dump(&mut self, id: f64) -> Result<Vec<u8>, JsError> {
        let id = id_of("dump", id).map_err(|e| JsError::new(&e))?;
        self.core().dump(id).map_err(|e| JsError::new(&e))
    }

    /// Loads bytes made by `dump` as a new suspended evaluation of this
    /// engine; returns it as `start` does. Damaged or foreign bytes throw.
    #[wasm_bindgen(js_name = loadSuspension)]
    pub fn load_suspension(&mut self, bytes: &[u8]) -> Result<JsValue, JsError> {
        let suspension = self
            .core()
            .load_suspension(bytes)
            .map_err(|e| JsError::new(&e))?;
        js(&RunJs::suspended(suspension))
    }

    /// The most steps one evaluation begun by `start` may take across all
    /// its run slices (`null`: only the per-slice step limit).
    #[wasm_bindgen(js_name = setEvaluationBudget)]
    pub fn set_evaluation_budget(&mut self, steps: Option<f64>) -> Result<(), JsError> {
        let steps = match steps {
            None => None,
            Some(n) => Some(
                crate::engine::check_whole_number("setEvaluationBudget", n)
                    .map_err(|e| JsError::new(&e))?,
            ),
        };
        self.core().set_evaluation_budget(steps);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbores_core::Engine;

    fn search_engine() -> Engine {
        let mut e = Engine::new();
        e.define_tool(Tool {
            name: "search".into(),
            params: vec!["query".into(), "limit".into()],
            description: "Finds pages.".into(),
        })
        .unwrap();
        e
    }

    #[test]
    fn a_call_gives_its_arguments_written_and_as_json() {
        let mut e = search_engine();
        let run = e.start(r#"(search "crème \"brûlée\"" 3)"#);
        let RunJs::Suspended { calls, .. } = RunJs::of(run) else {
            panic!("expected a suspension")
        };
        assert_eq!(calls[0].tool, "search");
        assert_eq!(calls[0].args, [r#""crème \"brûlée\"""#, "3"]);
        assert_eq!(calls[0].json.as_deref(), Some(r#"["crème \"brûlée\"",3]"#));
    }

    #[test]
    fn arguments_without_a_json_form_give_none() {
        let mut e = search_engine();
        let run = e.start("(search #\\a car)");
        let RunJs::Suspended { calls, .. } = RunJs::of(run) else {
            panic!("expected a suspension")
        };
        assert_eq!(calls[0].json, None);
        assert_eq!(calls[0].args[0], "#\\a");
    }

    #[test]
    fn answers_as_datum_json_or_error() {
        let mut e = search_engine();
        // The session's own definitions do not change how data crosses.
        e.eval("(define (json->scheme x) 'hacked)");
        let source = r#"(list (search "a" 1)
                             (search "b" 2)
                             (guard (c ((error-object? c) (error-object-message c)))
                               (search "c" 3)))"#;
        let first = e.start(source);
        let mut run = RunJs::of(first);
        let mut answers = vec![
            AnswerJs {
                value: Some("(x . y)".into()),
                ..Default::default()
            },
            AnswerJs {
                json: Some(r#"{"title": "Arbores \\ \"docs\"", "n": [1, 2.5, null]}"#.into()),
                ..Default::default()
            },
            AnswerJs {
                error: Some("quota exceeded".into()),
                ..Default::default()
            },
        ]
        .into_iter()
        .enumerate();
        while let RunJs::Suspended { id, .. } = run {
            let (at, answer) = answers.next().unwrap();
            let answer = answer_of(at, answer).unwrap();
            let id = id_of("resume", id).unwrap();
            let next = e.resume(id, vec![answer]).unwrap();
            run = RunJs::of(next);
        }
        let RunJs::Done { value, error, .. } = run else {
            unreachable!()
        };
        assert_eq!(error, None);
        assert_eq!(
            value.as_deref(),
            Some(
                r#"((x . y) (("title" . "Arbores \\ \"docs\"") ("n" . #(1 2.5 null))) "quota exceeded")"#
            )
        );
    }

    #[test]
    fn an_unbound_name_gets_the_note_eval_gives() {
        let mut e = search_engine();
        let hint_of = |run: Run, e: &Engine| match RunJs::with_hint(run, e) {
            RunJs::Done {
                error: Some(error), ..
            } => error.hint,
            _ => panic!("expected an error"),
        };
        let run = e.start("(serch \"a\" 1)");
        assert_eq!(hint_of(run, &e).as_deref(), Some("did you mean `search`?"));
        // After a resume too: the error comes from the second run slice.
        let run = e.start("(begin (search \"a\" 1) (serch \"b\" 2))");
        let Run::Suspended(s) = run else {
            panic!("expected a suspension")
        };
        let run = e.resume(s.id, vec![ToolAnswer::Value("1".into())]).unwrap();
        assert_eq!(hint_of(run, &e).as_deref(), Some("did you mean `search`?"));
    }

    #[test]
    fn wrong_answers_are_refused_with_what_and_where() {
        let both = AnswerJs {
            value: Some("1".into()),
            error: Some("x".into()),
            ..Default::default()
        };
        let err = answer_of(2, both).unwrap_err();
        assert!(
            err.starts_with("resume: answer 2: expected exactly one"),
            "{err}"
        );
        let err = answer_of(0, AnswerJs::default()).unwrap_err();
        assert!(err.contains("expected exactly one"), "{err}");
        let bad_json = AnswerJs {
            json: Some("{\"a\": }".into()),
            ..Default::default()
        };
        let err = answer_of(1, bad_json).unwrap_err();
        assert!(err.starts_with("resume: answer 1: "), "{err}");
        assert!(id_of("resume", 1.5).is_err());
        assert!(id_of("resume", -1.0).is_err());
        assert_eq!(id_of("resume", 7.0), Ok(7));
    }
}
