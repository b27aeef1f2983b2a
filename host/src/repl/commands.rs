//! The REPL's `,` commands.

use std::time::Instant;

use super::{bound_names, say, scheme_string, Running};
use crate::exit::Exit;
use crate::report::{self, paint};
use crate::snapshots;

const HELP: &str = "\
Type Scheme forms; input continues on the next line while parentheses are open.
Each form of a line is evaluated and its value printed. Tab completes names.
  ,help           this text
  ,describe NAME  what NAME is: a procedure's name and arity, syntax, a value;
                  and the stored knowledge of that name (id, type, description, version)
  ,apropos TEXT   the bound names and stored names containing TEXT
  ,time EXPR      evaluate EXPR and print how long it took
  ,load FILE      evaluate a file, under a directory granted with --allow-read
  ,log [N]        the newest N versions of the knowledge base (20 by default)
  ,show ID|vN     a stored node (its code, names, history) or a version
  ,settings       the engine, limits, tier and store in use
  ,save NAME      keep this session's definitions (closures and their state too) as NAME
  ,restore NAME   replace this session's definitions with those saved as NAME
  ,snapshots      the saved sessions (kept beside the store: STORE.sessions/)
  ,quit           leave (Ctrl-D works too)
Ctrl-C stops a running evaluation; at the prompt it discards the input typed so far.";

/// What the REPL does after a command.
pub enum Next {
    Go,
    Leave,
    /// The program called `exit` (in `,time` or `,load`).
    Exit(Exit),
}

impl Running<'_> {
    /// Runs a `,command`.
    pub(super) fn command(&mut self, command: &str) -> Next {
        let (word, arg) = match command.split_once(char::is_whitespace) {
            Some((w, a)) => (w, a.trim()),
            None => (command, ""),
        };
        let needs = |what: &str, example: &str| {
            self.error(&format!("{word} needs {what}, e.g. {word} {example}"));
        };
        match (word, arg) {
            (",q" | ",quit" | ",exit", _) => return Next::Leave,
            (",h" | ",help" | ",?", _) => say(HELP),
            (",save" | ",restore", "") => needs("a name", "work"),
            (",save", name) => self.save(name),
            (",restore", name) => self.restore(name),
            (",snapshots", _) => self.list_snapshots(),
            (",settings", _) => self.settings_text(),
            (",describe" | ",d", "") => needs("a name", "map"),
            (",describe" | ",d", name) => self.describe(name),
            (",apropos" | ",a", "") => needs("some text", "string"),
            (",apropos" | ",a", text) => self.apropos(text),
            (",time" | ",t", "") => needs("an expression", "(fib 25)"),
            (",time" | ",t", expr) => {
                let start = Instant::now();
                let exit = self.eval_forms(expr);
                let took = start.elapsed();
                say(&paint(
                    self.colour_out,
                    report::DIM,
                    &format!(";; {:.3} ms wall time", took.as_secs_f64() * 1e3),
                ));
                if let Some(e) = exit {
                    return Next::Exit(e);
                }
            }
            (",load" | ",l", "") => needs("a file", "lib.scm"),
            (",load" | ",l", file) => {
                if let Some(e) = self.load(file) {
                    return Next::Exit(e);
                }
            }
            (",log", n) => {
                let limit = if n.is_empty() {
                    Ok(20)
                } else {
                    n.parse::<usize>()
                };
                match limit {
                    Ok(limit) => {
                        let path = self.store_path();
                        if let Err(e) = crate::commands::log(&path, Some(limit), false) {
                            self.error(&e.message);
                        }
                    }
                    Err(_) => self.error(&format!(",log takes a number of versions, not {n}")),
                }
            }
            (",show", "") => needs("a node id or a version", "256"),
            (",show", what) => {
                let path = self.store_path();
                if let Err(e) = crate::commands::show(&path, what, false) {
                    self.error(&e.message);
                }
            }
            _ => self.error(&format!("unknown command {word}; ,help lists the commands")),
        }
        Next::Go
    }

    fn error(&self, message: &str) {
        eprintln!(
            "{} {message}",
            paint(self.colour_err, report::RED, "error:")
        );
    }

    fn store_path(&self) -> std::path::PathBuf {
        self.session.borrow().store().path().to_path_buf()
    }

    /// `,load FILE`: the file's text, read only as `(scheme file)` may
    /// read it (under a directory granted with --allow-read), evaluated as
    /// one program; errors name the file.
    fn load(&mut self, file: &str) -> Option<Exit> {
        let max = self.settings.limits.max_memory;
        let bytes = match self.settings.grants.read_file(file, max) {
            Ok(b) => b,
            Err(e) => {
                self.error(&format!("cannot load {file}: {e}"));
                return None;
            }
        };
        let Ok(text) = String::from_utf8(bytes) else {
            self.error(&format!("cannot load {file}: not UTF-8 text"));
            return None;
        };
        self.eval_and_print(&text, &text, Some(file)).1
    }

    /// `,describe NAME`.
    fn describe(&mut self, name: &str) {
        let mut said = false;
        let bound = {
            let mut session = self.session.borrow_mut();
            bound_names(&mut session, self.stopper, self.settings.timeout, name)
        };
        if bound.iter().any(|n| n == name) {
            said = self.describe_binding(name);
        }
        // The stored nodes of that name.
        let path = self.store_path();
        match crate::commands::stored_by_name(&path, name) {
            Ok(nodes) => {
                for n in &nodes {
                    say(&n.text());
                }
                said |= !nodes.is_empty();
            }
            Err(e) => self.error(&e.message),
        }
        if !said {
            say(&format!(
                "{name} is not bound, and no stored node has that name"
            ));
        }
    }

    /// What the session binds `name` to; whether it said something.
    fn describe_binding(&mut self, name: &str) -> bool {
        let outcome = self.eval_quietly(&format!("(%procedure-info {name})"));
        if let Some(e) = &outcome.evaluation.error {
            // A keyword is not a value.
            if e.message.contains("syntax") || e.message.contains("keyword") {
                say(&format!("{name}: syntax (a special form or macro)"));
                return true;
            }
            return false;
        }
        match outcome.evaluation.value.as_deref().map(parse_written) {
            Some(Some(Written::List(info))) if info.len() == 3 => {
                let shown = match &info[0] {
                    Written::Str(n) if n != name => format!("{name}: procedure {n}"),
                    _ => format!("{name}: procedure"),
                };
                let arity = match (&info[1], &info[2]) {
                    (Written::Int(l), Written::Int(m)) if l == m => {
                        format!("takes {l} argument{}", if *l == 1 { "" } else { "s" })
                    }
                    (Written::Int(l), Written::Int(m)) => format!("takes {l} to {m} arguments"),
                    (Written::Int(l), _) => format!(
                        "takes at least {l} argument{}",
                        if *l == 1 { "" } else { "s" }
                    ),
                    _ => String::new(),
                };
                say(&format!("{shown}, {arity}"));
                true
            }
            _ => {
                let value = self.eval_quietly(name);
                let text = value.evaluation.value.unwrap_or_default();
                let text = if text.chars().count() > 200 {
                    format!("{} ...", text.chars().take(200).collect::<String>())
                } else {
                    text
                };
                say(&format!("{name}: variable, bound to {text}"));
                true
            }
        }
    }

    /// `,apropos TEXT`: bound and stored names containing TEXT.
    fn apropos(&mut self, text: &str) {
        let mut names: Vec<String> = {
            let mut session = self.session.borrow_mut();
            bound_names(&mut session, self.stopper, self.settings.timeout, "")
        };
        names.retain(|n| n.contains(text));
        let path = self.store_path();
        match crate::commands::stored_names_containing(&path, text) {
            Ok(stored) => names.extend(stored),
            Err(e) => self.error(&e.message),
        }
        names.sort();
        names.dedup();
        if names.is_empty() {
            say(&format!(
                "no bound or stored name contains {}",
                scheme_string(text)
            ));
        } else {
            say(&names.join("\n"));
        }
    }

    fn settings_text(&self) {
        let s = self.settings;
        say(&format!(
            "engine:  {}\nfuel:    {} steps per evaluation\nmemory:  {} per evaluation\n\
             timeout: {}\ntier:    {}\nstore:   {}",
            super::engine_name(s),
            s.limits.max_steps,
            report::size(s.limits.max_memory as u64),
            report::duration(s.timeout),
            s.tier.as_str(),
            self.store_summary()
        ));
    }

    /// The store line of `,settings`: where, and how long opening took.
    fn store_summary(&self) -> String {
        let session = self.session.borrow();
        let mut text = session.store().path().display().to_string();
        if let Some(took) = session.stats.opened {
            text.push_str(&format!(
                "\n         opened in {:.1} ms (each commit is stored when it is made)",
                took.as_secs_f64() * 1e3
            ));
        }
        if let Some(c) = session.store().last_commit() {
            text.push_str(&format!(
                "\n         last commit: {} new blobs ({} bytes, the refs record included), \
                 {} already stored, in {:.1} ms",
                c.written,
                c.bytes,
                c.skipped,
                c.took.as_secs_f64() * 1e3
            ));
        }
        text
    }

    fn save(&mut self, name: &str) {
        let store = self.store_path();
        let saved = self.session.borrow_mut().save_session().and_then(|bytes| {
            snapshots::save(&store, name, &bytes).map(|path| (bytes.len(), path))
        });
        match saved {
            Ok((bytes, path)) => say(&format!(
                "saved this session as {name} ({bytes} bytes, {})",
                path.display()
            )),
            Err(e) => self.error(&format!("the session was not saved: {e}")),
        }
    }

    fn restore(&mut self, name: &str) {
        let store = self.store_path();
        let restored = snapshots::load(&store, name)
            .and_then(|bytes| self.session.borrow_mut().restore_session(&bytes));
        match restored {
            Ok(r) => {
                say(&format!(
                    "restored {name}: {} definitions ({})",
                    r.bindings.len(),
                    abbreviate(&r.bindings)
                ));
                if !r.skipped.is_empty() {
                    eprintln!(
                        "warning: these macros (made by another macro, or in a local scope) were not saved; define them again: {}",
                        r.skipped.join(" ")
                    );
                }
            }
            Err(e) => self.error(&format!("nothing was restored: {e}")),
        }
    }

    fn list_snapshots(&self) {
        let store = self.store_path();
        match snapshots::list(&store) {
            Ok(list) if list.is_empty() => say(&format!(
                "no saved sessions in {} (,save NAME keeps one)",
                snapshots::dir(&store).display()
            )),
            Ok(list) => {
                for l in list {
                    let age = l
                        .modified
                        .and_then(|m| m.elapsed().ok())
                        .map(ago)
                        .unwrap_or_default();
                    say(&format!("{:<24} {:>10} bytes  {age}", l.name, l.bytes));
                }
            }
            Err(e) => self.error(&e),
        }
    }
}

/// "saved 5 min ago" and the like.
fn ago(d: std::time::Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("saved {s} s ago"),
        60..=3599 => format!("saved {} min ago", s / 60),
        3600..=86399 => format!("saved {} h ago", s / 3600),
        _ => format!("saved {} days ago", s / 86400),
    }
}

/// The first few names, then how many more.
fn abbreviate(names: &[String]) -> String {
    const SHOWN: usize = 8;
    let mut text = names
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(" ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    text
}

/// A value in `write` form, as far as the REPL needs to read one back:
/// lists, strings, integers and booleans; anything else is kept as text.
#[derive(Debug, PartialEq)]
pub enum Written {
    List(Vec<Written>),
    Str(String),
    Int(i64),
    Bool(bool),
    Other(String),
}

/// Reads back one value in `write` form; `None` if it is not one.
pub fn parse_written(text: &str) -> Option<Written> {
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let value = parse_at(&chars, &mut i)?;
    while chars.get(i).is_some_and(|c| c.is_whitespace()) {
        i += 1;
    }
    (i == chars.len()).then_some(value)
}

fn parse_at(chars: &[char], i: &mut usize) -> Option<Written> {
    while chars.get(*i)?.is_whitespace() {
        *i += 1;
    }
    match chars[*i] {
        '(' => {
            *i += 1;
            let mut items = Vec::new();
            loop {
                while chars.get(*i)?.is_whitespace() {
                    *i += 1;
                }
                if chars[*i] == ')' {
                    *i += 1;
                    return Some(Written::List(items));
                }
                items.push(parse_at(chars, i)?);
            }
        }
        '"' => {
            *i += 1;
            let mut s = String::new();
            loop {
                let c = *chars.get(*i)?;
                *i += 1;
                match c {
                    '"' => return Some(Written::Str(s)),
                    '\\' => {
                        let e = *chars.get(*i)?;
                        *i += 1;
                        match e {
                            'n' => s.push('\n'),
                            't' => s.push('\t'),
                            'r' => s.push('\r'),
                            'a' => s.push('\u{7}'),
                            'b' => s.push('\u{8}'),
                            '0' => s.push('\0'),
                            'x' => {
                                let mut hex = String::new();
                                while *chars.get(*i)? != ';' {
                                    hex.push(chars[*i]);
                                    *i += 1;
                                }
                                *i += 1;
                                s.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                            }
                            other => s.push(other),
                        }
                    }
                    c => s.push(c),
                }
            }
        }
        _ => {
            let start = *i;
            while chars
                .get(*i)
                .is_some_and(|c| !c.is_whitespace() && !matches!(c, '(' | ')' | '"'))
            {
                *i += 1;
            }
            let atom: String = chars[start..*i].iter().collect();
            Some(match atom.as_str() {
                "" => return None,
                "#t" | "#true" => Written::Bool(true),
                "#f" | "#false" => Written::Bool(false),
                a => match a.parse::<i64>() {
                    Ok(n) => Written::Int(n),
                    Err(_) => Written::Other(atom),
                },
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_written, Written};

    #[test]
    fn reads_written_values_back() {
        assert_eq!(
            parse_written("(\"car\" 1 #f)"),
            Some(Written::List(vec![
                Written::Str("car".into()),
                Written::Int(1),
                Written::Bool(false)
            ]))
        );
        assert_eq!(
            parse_written("(\"a\\\"b\" \"\\x3bb;\\n\")"),
            Some(Written::List(vec![
                Written::Str("a\"b".into()),
                Written::Str("λ\n".into())
            ]))
        );
        assert_eq!(parse_written("()"), Some(Written::List(vec![])));
        assert_eq!(parse_written("(\"a\""), None);
        assert_eq!(parse_written("(1 2"), None);
        assert_eq!(parse_written("#f"), Some(Written::Bool(false)));
    }
}
