//! `arbores start` and `arbores resume`: the host-tool loop from a shell,
//! one process per step (docs/AGENTS.md, "The loop, from a shell").
//!
//! `start` evaluates code that may call the tools named with `--tool`; when
//! it waits on them, the suspension's bytes (`Engine::dump`) go to the file
//! of `--dump` and the pending calls are printed. `resume FILE` loads those
//! bytes in a fresh engine, answers the calls in order and goes on, to the
//! end or to the next suspension. The bytes are the core's, the same on
//! every face: a dump made by the browser's engine or the other `--engine`
//! resumes here, and the other way round.

use std::path::{Path, PathBuf};

use arbores_core::{Limits, Suspension, Tool, ToolAnswer, ToolCall};
use serde_json::{json, Value};

use crate::backend::Settings;
use crate::exit::{Exit, Failure};
use crate::report::{self, Style};
use crate::session::{Outcome, Session};

/// `--tool NAME[/PARAM...]`: a tool and its parameters, e.g.
/// `search/query/limit`. The engine checks the names when the tool is
/// defined.
pub fn parse_tool(spec: &str) -> Result<Tool, String> {
    let mut parts = spec.split('/');
    let name = parts.next().unwrap_or_default();
    if name.is_empty() {
        return Err(format!(
            "`{spec}`: expected NAME or NAME/PARAM/..., such as search/query"
        ));
    }
    let params: Vec<String> = parts.map(str::to_string).collect();
    if let Some(at) = params.iter().position(String::is_empty) {
        return Err(format!(
            "`{spec}`: parameter {} has no name (write NAME/PARAM/PARAM)",
            at + 1
        ));
    }
    Ok(Tool {
        name: name.to_string(),
        params,
        description: String::new(),
    })
}

/// One answer as the command line gives it.
#[derive(Clone, Debug, PartialEq)]
pub enum AnswerArg {
    /// `--value DATUM`: the text of one datum.
    Value(String),
    /// `--json-value JSON`, or `{"json": ...}` in `--answers`: JSON text,
    /// read by the engine's mapping.
    Json(String),
    /// `--error MESSAGE`: raised at the call.
    Error(String),
}

impl AnswerArg {
    /// How the command line gave it, for messages.
    fn option(&self) -> String {
        let (name, text) = match self {
            AnswerArg::Value(t) => ("--value", t),
            AnswerArg::Json(t) => ("--json-value", t),
            AnswerArg::Error(t) => ("--error", t),
        };
        let shown: String = text.chars().take(40).collect();
        let more = if shown.len() < text.len() { "..." } else { "" };
        format!("{name} {shown}{more}")
    }
}

/// The answers of `--value`, `--json-value` and `--error` in the order they
/// were given on the command line, whatever their kinds.
pub fn answers_in_order(matches: &clap::ArgMatches) -> Vec<AnswerArg> {
    let mut answers: Vec<(usize, AnswerArg)> = Vec::new();
    let kinds: [(&str, fn(String) -> AnswerArg); 3] = [
        ("value", AnswerArg::Value),
        ("json_value", AnswerArg::Json),
        ("error", AnswerArg::Error),
    ];
    for (id, make) in kinds {
        let (Some(indices), Some(values)) =
            (matches.indices_of(id), matches.get_many::<String>(id))
        else {
            continue;
        };
        answers.extend(indices.zip(values).map(|(i, v)| (i, make(v.clone()))));
    }
    answers.sort_by_key(|(i, _)| *i);
    answers.into_iter().map(|(_, a)| a).collect()
}

/// `--answers`: a JSON array with one object per call, each with exactly
/// one of `value` (the text of a datum), `json` (JSON text, as the
/// browser's engine takes it) or `error` (a message), each a string.
pub fn parse_answers(text: &str) -> Result<Vec<AnswerArg>, String> {
    let parsed: Value =
        serde_json::from_str(text).map_err(|e| format!("--answers: not JSON: {e}"))?;
    let Value::Array(items) = parsed else {
        return Err("--answers: expected a JSON array of {\"value\"}, {\"json\"} or {\"error\"} objects, one per call".into());
    };
    let mut answers = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let at = i + 1;
        let Value::Object(object) = item else {
            return Err(format!("--answers: answer {at} is not an object"));
        };
        if object.len() != 1 {
            return Err(format!(
                "--answers: answer {at} has {} members; expected exactly one of value, json or error",
                object.len()
            ));
        }
        let (key, member) = object.into_iter().next().unwrap_or_default();
        let text = |member: Value| match member {
            Value::String(s) => Ok(s),
            // JSON text is a string, as the browser's `resume` takes it:
            // a value in its place would be read one way when it is a
            // string and another way otherwise.
            other if key == "json" => Err(format!(
                "--answers: answer {at}: json is the JSON text of the value, a string: \
                 {{\"json\": {}}}, not {{\"json\": {other}}}",
                Value::String(other.to_string())
            )),
            other => Err(format!(
                "--answers: answer {at}: {key} must be a string, not {other}"
            )),
        };
        answers.push(match key.as_str() {
            "value" => AnswerArg::Value(text(member)?),
            "error" => AnswerArg::Error(text(member)?),
            "json" => AnswerArg::Json(text(member)?),
            _ => {
                return Err(format!(
                    "--answers: answer {at} has the member `{key}`; expected value, json or error"
                ))
            }
        });
    }
    Ok(answers)
}

/// The core linked in, for data between Scheme and JSON by the engine's
/// one mapping (docs/API.md, "Values as JSON"): an engine of its own, so
/// that a session that redefined `list` or `json->scheme` does not change
/// how data crosses. It reads only data (quoted, or a JSON string).
struct Converter(arbores_core::Engine);

impl Converter {
    fn new(limits: Limits) -> Converter {
        let mut engine = arbores_core::Engine::new();
        engine.set_limits(limits);
        Converter(engine)
    }

    /// The arguments of `call` as one JSON array, when each has a JSON form.
    fn args(&mut self, call: &ToolCall) -> Option<Value> {
        let quoted: Vec<String> = call.args.iter().map(|a| format!("(quote {a})")).collect();
        let evaluation = self.0.eval_json(&format!("(list {})", quoted.join(" ")));
        if evaluation.error.is_some() {
            return None;
        }
        serde_json::from_str(evaluation.value.as_deref()?).ok()
    }

    /// The text of the datum that JSON `text` maps to.
    fn datum(&mut self, text: &str) -> Result<String, String> {
        let read = self.0.eval(&format!(
            "(json->scheme {})",
            crate::repl::scheme_string(text)
        ));
        match (read.error, read.value) {
            (None, Some(datum)) => Ok(datum),
            (Some(e), _) => Err(e.message),
            (None, None) => Err("the JSON gave no value".into()),
        }
    }
}

/// What `start` and `resume` share: the settings, how to print, where the
/// next suspension goes.
pub struct Step<'a> {
    pub settings: &'a Settings,
    pub stopper: &'a crate::backend::Stopper,
    pub json: bool,
    /// `--dump FILE`.
    pub dump: Option<PathBuf>,
    /// `--dump-key-file FILE`: the file holding the key that seals the
    /// suspension's bytes.
    pub key_file: Option<PathBuf>,
}

/// The key in `file`: 32 bytes, or 64 hexadecimal digits (a final newline
/// allowed), so that `head -c 32 /dev/urandom > KEY` and `openssl rand -hex
/// 32 > KEY` both make one.
pub fn read_dump_key(file: &Path) -> Result<[u8; 32], String> {
    let bytes = std::fs::read(file)
        .map_err(|e| format!("--dump-key-file {}: cannot read it: {e}", file.display()))?;
    if let Ok(key) = <[u8; 32]>::try_from(bytes.as_slice()) {
        return Ok(key);
    }
    // 64 hexadecimal digits, a final newline allowed.
    let text = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    let text = text.strip_suffix(b"\r").unwrap_or(text);
    let digit = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    if text.len() == 64 {
        let mut key = [0u8; 32];
        let parsed = text.chunks(2).zip(key.iter_mut()).all(|(pair, k)| {
            match (digit(pair[0]), digit(pair[1])) {
                (Some(hi), Some(lo)) => {
                    *k = hi << 4 | lo;
                    true
                }
                _ => false,
            }
        });
        if parsed {
            return Ok(key);
        }
    }
    Err(format!(
        "--dump-key-file {}: expected 32 bytes or 64 hexadecimal digits, found {} bytes",
        file.display(),
        bytes.len()
    ))
}

impl Step<'_> {
    /// The key of `--dump-key-file`, read before anything runs.
    fn key(&self) -> Result<Option<[u8; 32]>, Failure> {
        self.key_file
            .as_deref()
            .map(read_dump_key)
            .transpose()
            .map_err(Failure::usage)
    }

    /// `arbores start`: defines `tools` in a new session and evaluates
    /// `source`, with an evaluation budget across run slices when given.
    pub fn start(
        &self,
        open: impl FnOnce() -> Result<Session, Failure>,
        tools: &[Tool],
        budget: Option<u64>,
        source: &str,
    ) -> Result<Exit, Failure> {
        check_dump_path(self.dump.as_deref())?;
        let key = self.key()?;
        let mut session = open()?;
        if let Some(key) = key {
            session.set_dump_key(key).map_err(Failure::usage)?;
        }
        for tool in tools {
            session
                .define_tool(tool)
                .map_err(|e| Failure::usage(format!("--tool {}: {e}", tool.name)))?;
        }
        if budget.is_some() {
            session.set_evaluation_budget(budget)?;
        }
        let (outcome, suspension) = session.start(self.stopper, self.settings.timeout, source);
        self.finish(session, outcome, suspension)
    }

    /// `arbores resume FILE`: loads the suspension in `file` in a new
    /// session and resumes it with `answers`. Everything the command line
    /// gives is checked before the session is opened.
    pub fn resume(
        &self,
        open: impl FnOnce() -> Result<Session, Failure>,
        file: &Path,
        answers: Vec<AnswerArg>,
    ) -> Result<Exit, Failure> {
        check_dump_path(self.dump.as_deref())?;
        let key = self.key()?;
        let bytes = read_bounded(file, self.settings.limits.max_memory)?;
        let mut converter = Converter::new(self.settings.limits);
        let mut core_answers = Vec::with_capacity(answers.len());
        for (i, answer) in answers.iter().enumerate() {
            core_answers.push(match answer {
                AnswerArg::Value(text) => ToolAnswer::Value(text.clone()),
                AnswerArg::Error(message) => ToolAnswer::Error(message.clone()),
                AnswerArg::Json(text) => ToolAnswer::Value(converter.datum(text).map_err(|e| {
                    Failure::usage(format!(
                        "answer {} ({}): not JSON the engine reads: {e}",
                        i + 1,
                        answer.option()
                    ))
                })?),
            });
        }
        let mut session = open()?;
        if let Some(key) = key {
            session.set_dump_key(key).map_err(Failure::usage)?;
        }
        let loaded = session.load_suspension(&bytes).map_err(|e| Failure {
            exit: Exit::Suspension,
            message: format!("{}: {e}", file.display()),
        })?;
        if loaded.calls.len() != core_answers.len() {
            let calls: Vec<String> = loaded.calls.iter().map(call_text).collect();
            return Err(Failure::usage(format!(
                "{} waits on {} tool call(s), {}; {} answer(s) given (one --value, --json-value \
                 or --error per call, in order)",
                file.display(),
                calls.len(),
                calls.join(" "),
                core_answers.len()
            )));
        }
        let (outcome, suspension) = session
            .resume(self.stopper, self.settings.timeout, loaded.id, core_answers)
            .map_err(|e| {
                Failure::usage(format!("{}: {}", file.display(), explain(&e, &answers)))
            })?;
        self.finish(session, outcome, suspension)
    }

    /// Writes the suspension, if there is one, and prints the outcome.
    fn finish(
        &self,
        mut session: Session,
        outcome: Outcome,
        suspension: Option<Suspension>,
    ) -> Result<Exit, Failure> {
        let Some(suspension) = suspension else {
            let exit = self.print_done(&mut session, &outcome);
            session.end();
            return Ok(exit);
        };
        let saved = match &self.dump {
            Some(path) => session
                .dump(suspension.id)
                .map_err(|e| Failure {
                    exit: Exit::Suspension,
                    message: format!("the evaluation suspended but cannot be saved: {e}"),
                })
                .and_then(|bytes| write_atomically(path, &bytes).map(|()| bytes.len()))
                .map(|len| Some((path.as_path(), len))),
            None => Ok(None),
        };
        session.end();
        let saved = saved?;
        let mut converter = Converter::new(self.settings.limits);
        if self.json {
            let calls: Vec<Value> = suspension
                .calls
                .iter()
                .map(|c| json!({"tool": c.tool, "args": c.args, "json": converter.args(c)}))
                .collect();
            let object = json!({
                "status": "suspended",
                "calls": calls,
                "output": outcome.evaluation.output,
                "dump": saved.map(|(path, bytes)| json!({"file": path.display().to_string(), "bytes": bytes})),
                "version": {"before": outcome.version_before, "after": outcome.version_after},
                "committed": outcome.committed,
                "exit": Exit::Suspended.status(),
            });
            println!("{object}");
        } else {
            print_suspended(&outcome, &suspension, saved);
        }
        Ok(Exit::Suspended)
    }

    /// An evaluation that ended, printed as `eval` prints it (with
    /// `status: "done"` in the JSON object).
    fn print_done(&self, session: &mut Session, outcome: &Outcome) -> Exit {
        let exit = report::exit_of(outcome);
        if self.json {
            let mut object = report::json(outcome, self.settings, exit);
            object["status"] = json!("done");
            println!("{object}");
            return exit;
        }
        let hint = report::unbound_hint(outcome, false, || {
            crate::repl::bound_names(session, self.stopper, self.settings.timeout, "")
        });
        let decor = report::Decor {
            hint: hint.as_deref(),
            ..Default::default()
        };
        report::print(outcome, self.settings, None, Style::Interactive, decor)
    }
}

/// A call as Scheme would write it: `(search "arbores" 3)`.
fn call_text(call: &ToolCall) -> String {
    if call.args.is_empty() {
        format!("({})", call.tool)
    } else {
        format!("({} {})", call.tool, call.args.join(" "))
    }
}

/// The output so far, then each pending call on a line of its own on
/// standard output; what to do next on standard error.
fn print_suspended(outcome: &Outcome, suspension: &Suspension, saved: Option<(&Path, usize)>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let output = &outcome.evaluation.output;
    let _ = out.write_all(output.as_bytes());
    let open = if output.is_empty() {
        outcome.streamed.bytes > 0 && !outcome.streamed.ends_with_newline
    } else {
        !output.ends_with('\n')
    };
    if open {
        let _ = out.write_all(b"\n");
    }
    for call in &suspension.calls {
        let _ = writeln!(out, "{}", call_text(call));
    }
    let _ = out.flush();
    let n = suspension.calls.len();
    let calls = if n == 1 {
        "1 tool call".to_string()
    } else {
        format!("{n} tool calls")
    };
    match saved {
        Some((path, bytes)) => {
            eprintln!(
                "suspended: waiting on {calls}; saved in {} ({bytes} bytes)",
                path.display()
            );
            eprintln!(
                "note: answer {} in order: arbores resume {} --value DATUM | --json-value JSON \
                 | --error MESSAGE ...",
                if n == 1 { "it" } else { "them" },
                path.display()
            );
        }
        None => {
            eprintln!("suspended: waiting on {calls}");
            eprintln!("note: not saved: give --dump FILE to resume it later");
        }
    }
}

/// The engine's refusal of the answers, naming the option an `answer N`
/// came from.
fn explain(message: &str, answers: &[AnswerArg]) -> String {
    let Some(rest) = message.strip_prefix("answer ") else {
        return message.to_string();
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    match digits
        .parse::<usize>()
        .ok()
        .and_then(|n| answers.get(n.wrapping_sub(1)))
    {
        Some(answer) => format!(
            "answer {digits} ({}){}",
            answer.option(),
            &rest[digits.len()..]
        ),
        None => message.to_string(),
    }
}

/// The bytes of `file`, refused past `max` (the memory cap: a suspension
/// that large could not be loaded), so that a wrong file (a device, a
/// disk image) is not read whole.
fn read_bounded(file: &Path, max: usize) -> Result<Vec<u8>, Failure> {
    use std::io::Read;
    let cannot = |e: std::io::Error| Failure::from(format!("cannot read {}: {e}", file.display()));
    let mut bytes = Vec::new();
    let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    std::fs::File::open(file)
        .and_then(|f| f.take(limit).read_to_end(&mut bytes))
        .map_err(cannot)?;
    if bytes.len() > max {
        return Err(Failure {
            exit: Exit::Suspension,
            message: format!(
                "{}: more than {} bytes, the memory cap (--memory): not a suspension this \
                 engine can load",
                file.display(),
                max
            ),
        });
    }
    Ok(bytes)
}

/// Refuses, before anything runs, a `--dump` path whose directory does not
/// exist or that names a directory.
fn check_dump_path(path: Option<&Path>) -> Result<(), Failure> {
    let Some(path) = path else { return Ok(()) };
    if path.is_dir() {
        return Err(Failure::usage(format!(
            "--dump {}: is a directory; name a file",
            path.display()
        )));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(Failure::usage(format!(
            "--dump {}: there is no directory {}",
            path.display(),
            dir.display()
        )));
    }
    Ok(())
}

/// Writes `bytes` to `path` whole or not at all: a file beside it, renamed
/// over it.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written =
        std::fs::write(&temporary, bytes).and_then(|()| std::fs::rename(&temporary, path));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&temporary);
        Failure::from(format!(
            "cannot write the suspension to {}: {e}",
            path.display()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_from_the_command_line() {
        let t = parse_tool("search/query/limit").unwrap();
        assert_eq!((t.name.as_str(), t.params.len()), ("search", 2));
        assert_eq!(parse_tool("ask").unwrap().params, Vec::<String>::new());
        assert!(parse_tool("").is_err());
        assert!(parse_tool("/q").is_err());
        let err = parse_tool("search//q").unwrap_err();
        assert!(err.contains("parameter 1 has no name"), "{err}");
    }

    #[test]
    fn answers_as_json() {
        let answers =
            parse_answers(r#"[{"value": "(a b)"}, {"json": "[1, 2]"}, {"error": "no"}]"#).unwrap();
        assert_eq!(
            answers,
            [
                AnswerArg::Value("(a b)".into()),
                AnswerArg::Json("[1, 2]".into()),
                AnswerArg::Error("no".into()),
            ]
        );
        for (text, expected) in [
            ("{}", "expected a JSON array"),
            ("[1]", "answer 1 is not an object"),
            (
                r#"[{"value": "1", "error": "x"}]"#,
                "answer 1 has 2 members",
            ),
            (
                r#"[{"value": "1"}, {"answer": "x"}]"#,
                "answer 2 has the member `answer`",
            ),
            (r#"[{"value": 1}]"#, "value must be a string"),
            (
                r#"[{"json": 42}]"#,
                r#"json is the JSON text of the value, a string: {"json": "42"}"#,
            ),
            ("[", "not JSON"),
        ] {
            let err = parse_answers(text).unwrap_err();
            assert!(err.contains(expected), "{text}: {err}");
        }
    }

    #[test]
    fn json_crosses_by_the_engines_mapping() {
        let mut c = Converter::new(Limits::default());
        let call = ToolCall {
            tool: "t".into(),
            args: vec!["\"a\"".into(), "#(1 2)".into(), "((\"k\" . #t))".into()],
        };
        assert_eq!(c.args(&call), Some(json!(["a", [1, 2], {"k": true}])));
        let call = ToolCall {
            tool: "t".into(),
            args: vec!["#\\a".into()],
        };
        assert_eq!(c.args(&call), None);
        assert_eq!(
            c.datum(r#"{"a": [1, null]}"#).as_deref(),
            Ok(r#"(("a" . #(1 null)))"#)
        );
        assert!(c.datum("{").is_err());
    }

    #[test]
    fn refusals_name_the_option() {
        let answers = [AnswerArg::Value("1".into()), AnswerArg::Value("(".into())];
        assert_eq!(
            explain("answer 2: unexpected end", &answers),
            "answer 2 (--value (): unexpected end"
        );
        assert_eq!(explain("other", &answers), "other");
    }
}
