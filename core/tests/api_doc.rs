//! Runs every example of docs/API.md, in order, in one engine (system tier,
//! clock at 2025-07-29T10:30:00Z), and checks what each shows.
//!
//! In a ```scheme block, the lines up to a `;; => VALUE` line (continued by
//! `;;` lines) are evaluated and their value, as `write` shows it, must be
//! VALUE (whitespace between tokens is not significant). After `;; prints:`
//! the `;;   ` lines are the exact output. After `;; json => TEXT` the
//! forms are evaluated with `Engine::eval_json` and the value must be TEXT
//! exactly. Forms followed by none of these must evaluate without error.

use std::path::Path;

use arbores_core::{Engine, Tier};

struct Example {
    line: usize,
    source: String,
    value: Option<String>,
    output: Option<String>,
    /// The value is JSON (`eval_json`), compared exactly.
    json: bool,
}

fn examples(doc: &str) -> Vec<Example> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut source = String::new();
    let mut start = 0;
    let lines: Vec<&str> = doc.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if !in_block {
            if line.trim_start().starts_with("```scheme") {
                in_block = true;
                source.clear();
                start = i + 2;
            }
            i += 1;
            continue;
        }
        if line.trim_start().starts_with("```") {
            if !source.trim().is_empty() {
                out.push(Example {
                    line: start,
                    source: std::mem::take(&mut source),
                    value: None,
                    output: None,
                    json: false,
                });
            }
            in_block = false;
            i += 1;
            continue;
        }
        if let Some(v) = line.strip_prefix(";; => ") {
            let mut value = v.to_string();
            i += 1;
            while i < lines.len() && lines[i].starts_with(";;") && !lines[i].starts_with(";; =>") {
                value.push(' ');
                value.push_str(lines[i].trim_start_matches(';'));
                i += 1;
            }
            out.push(Example {
                line: start,
                source: std::mem::take(&mut source),
                value: Some(value),
                output: None,
                json: false,
            });
            start = i + 1;
            continue;
        }
        if let Some(v) = line.strip_prefix(";; json => ") {
            out.push(Example {
                line: start,
                source: std::mem::take(&mut source),
                value: Some(v.to_string()),
                output: None,
                json: true,
            });
            i += 1;
            start = i + 1;
            continue;
        }
        if line.trim() == ";; prints:" {
            let mut text = String::new();
            i += 1;
            while i < lines.len() && lines[i].starts_with(";;   ") {
                text.push_str(&lines[i][";;   ".len()..]);
                text.push('\n');
                i += 1;
            }
            out.push(Example {
                line: start,
                source: std::mem::take(&mut source),
                value: None,
                output: Some(text),
                json: false,
            });
            start = i + 1;
            continue;
        }
        if source.is_empty() && line.trim().is_empty() {
            start = i + 2;
        }
        source.push_str(line);
        source.push('\n');
        i += 1;
    }
    out
}

/// Tokens of a written value: whitespace is not significant, except inside
/// strings.
fn normalise(s: &str) -> String {
    let mut out = String::new();
    let mut in_string = false;
    let mut escaped = false;
    let mut pending_space = false;
    for c in s.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if pending_space && !out.is_empty() && !out.ends_with('(') && c != ')' {
            out.push(' ');
        }
        pending_space = false;
        if c == '"' {
            in_string = true;
        }
        out.push(c);
    }
    out
}

#[test]
fn every_example_of_the_api_reference_holds() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/API.md");
    let doc = std::fs::read_to_string(&path).expect("docs/API.md");
    let all = examples(&doc);
    assert!(all.len() > 40, "only {} examples found", all.len());
    let mut e = Engine::new();
    e.set_tier(Tier::System);
    e.set_clock(1_753_785_000.0);
    let mut failures = Vec::new();
    let mut checked = 0;
    for ex in &all {
        let r = if ex.json {
            e.eval_json(&ex.source)
        } else {
            e.eval(&ex.source)
        };
        if let Some(err) = &r.error {
            failures.push(format!(
                "docs/API.md:{}: {}\n    error: {err}",
                ex.line,
                ex.source.trim()
            ));
            continue;
        }
        if let Some(expected) = &ex.value {
            checked += 1;
            let actual = r.value.clone().unwrap_or_default();
            let same = if ex.json {
                actual == *expected
            } else {
                normalise(&actual) == normalise(expected)
            };
            if !same {
                failures.push(format!(
                    "docs/API.md:{}: {}\n    expected: {}\n    actual:   {}",
                    ex.line,
                    ex.source.trim(),
                    normalise(expected),
                    normalise(&actual)
                ));
            }
        }
        if let Some(expected) = &ex.output {
            checked += 1;
            if &r.output != expected {
                failures.push(format!(
                    "docs/API.md:{}: {}\n    expected output:\n{expected}    actual output:\n{}",
                    ex.line,
                    ex.source.trim(),
                    r.output
                ));
            }
        }
    }
    println!(
        "docs/API.md: {checked} examples checked, {} failed",
        failures.len()
    );
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
