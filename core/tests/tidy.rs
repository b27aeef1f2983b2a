//! Tidy checks: the architecture invariants of docs/ARCHITECTURE.md that
//! a compiler does not check, read from the source text (as
//! rust-analyzer's tidy tests do), so that breaking one fails CI.
//!
//! - Layers: each module of the core uses (through `crate::` or `super::`
//!   paths) only modules of its own layer or below; `repo` uses only
//!   itself. The host's modules are layered the same way.
//! - Size: no function of the core, the host or the bindings is longer
//!   than 150 lines unless a comment beside it gives the reason, starting
//!   "Long by design:".
//! - Floats: no file of the core but `float_math` computes a
//!   transcendental function (the standard float methods, `num_complex`,
//!   `libm`, `pxfm`), so that every face gives the same bits.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The core's layers, lowest first. A module may use the modules of its
/// own layer and of every layer below. `lib` is the crate root.
const CORE_LAYERS: &[(&str, &[&str])] = &[
    ("float math", &["float_math"]),
    (
        "leaves",
        &[
            "pos",
            "symbol",
            "number",
            "complex",
            "host",
            "memory_files",
            "chunked",
        ],
    ),
    ("values", &["value"]),
    ("heap", &["heap"]),
    ("syntax", &["syntax"]),
    ("text", &["reader", "printer"]),
    ("datum", &["datum", "json"]),
    ("compiler", &["compiler"]),
    ("primitives", &["builtins"]),
    ("knowledge", &["arb"]),
    ("vm", &["vm"]),
    ("api", &["api", "sessions", "lib"]),
];

/// Beside the layers: uses only itself (and `CORE_BESIDE_USES`); every
/// layer may use it.
const CORE_BESIDE: &str = "repo";

/// What the module beside the layers may use: the lowest layer, which
/// uses nothing of the crate.
const CORE_BESIDE_USES: &[&str] = &["float_math"];

/// The host's modules, lowest first.
const HOST_LAYERS: &[(&str, &[&str])] = &[
    (
        "leaves",
        &[
            "paths",
            "store",
            "exit",
            "grants",
            "snapshots",
            "e5",
            "huge_pages",
        ],
    ),
    ("engines", &["backend"]),
    ("engine", &["native", "wasm"]),
    ("session", &["session"]),
    ("faces", &["report", "playground", "commands"]),
    ("repl", &["repl", "mcp", "suspensions"]),
    ("main", &["main"]),
];

const MAX_FUNCTION_LINES: usize = 150;
const LONG_REASON: &str = "Long by design:";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the core is inside the workspace")
        .to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file below `src` (`vm/call.rs` → `[vm, call]`,
/// `vm/mod.rs` → `[vm]`, `lib.rs` and `main.rs` → `[]`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("a file below src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// The text of a file without comments, string and character literals,
/// and `#[cfg(test)]` items (tests may reach anywhere).
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            i += 2;
            while i < b.len() && !b[i..].starts_with(b"*/") {
                keep_line(&mut out, b[i]);
                i += 1;
            }
            i += 2;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                keep_line(&mut out, b[i]);
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // A character literal (not a lifetime).
            i += 1;
            while i < b.len() && b[i] != b'\'' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else if b[i..].starts_with(b"#[cfg(test)]") {
            // Skip the attribute and the item it marks: up to its closing
            // brace, or its semicolon.
            i += "#[cfg(test)]".len();
            let mut depth = 0usize;
            while i < b.len() {
                match b[i] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    b';' if depth == 0 => {
                        i += 1;
                        break;
                    }
                    c => keep_line(&mut out, c),
                }
                i += 1;
            }
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

/// Keeps the line breaks of what `code_of` leaves out, so that line
/// numbers still point into the file.
fn keep_line(out: &mut String, c: u8) {
    if c == b'\n' {
        out.push('\n');
    }
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn ident_at(b: &[u8], i: usize) -> String {
    let mut j = i;
    while j < b.len() && is_ident_byte(b[j]) {
        j += 1;
    }
    String::from_utf8_lossy(&b[i..j]).into_owned()
}

/// The top-level modules a file's code names: the first segment after each
/// `crate::` (every name in a `crate::{...}` group), and where `super::`
/// climbs out of the file's top-level module, the segment after it.
fn used_modules(code: &str, path: &[String]) -> Vec<String> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts_word = i == 0 || !(is_ident_byte(b[i - 1]) || b[i - 1] == b':');
        if starts_word && b[i..].starts_with(b"crate::") {
            let j = i + "crate::".len();
            if b.get(j) == Some(&b'{') {
                let mut depth = 0;
                let mut k = j;
                let mut at_item = true;
                while k < b.len() {
                    match b[k] {
                        b'{' => {
                            depth += 1;
                            at_item = depth == 1;
                        }
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        b',' if depth == 1 => at_item = true,
                        c if is_ident_byte(c) && at_item && depth == 1 => {
                            out.push(ident_at(b, k));
                            at_item = false;
                        }
                        _ => {}
                    }
                    k += 1;
                }
                i = k;
            } else {
                out.push(ident_at(b, j));
                i = j;
            }
            continue;
        }
        if starts_word && b[i..].starts_with(b"super::") {
            let mut depth = path.len();
            let mut j = i;
            while b[j..].starts_with(b"super::") {
                depth = depth.saturating_sub(1);
                j += "super::".len();
            }
            if depth == 0 {
                // At the crate root: the next segment is a top-level module.
                out.push(ident_at(b, j));
            }
            i = j;
            continue;
        }
        i += 1;
    }
    out.retain(|m| !m.is_empty() && m != "self");
    out
}

fn layer_of(layers: &[(&str, &[&str])], module: &str) -> Option<usize> {
    layers.iter().position(|(_, ms)| ms.contains(&module))
}

/// Every use of a module of a higher layer, as `file: uses M (layer)`.
fn layer_violations(
    src: &Path,
    layers: &[(&str, &[&str])],
    beside: Option<&str>,
) -> (Vec<String>, BTreeMap<String, usize>) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    // Tests may reach anywhere, in a file of their own too.
    let tests = test_module_files(&files);
    let mut problems = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for file in files.into_iter().filter(|f| !tests.contains(f)) {
        let path = module_path(src, &file);
        let top = path.first().cloned().unwrap_or_else(|| {
            let stem = file.file_stem().unwrap_or_default().to_string_lossy();
            if stem == "main" { "main" } else { "lib" }.to_string()
        });
        *seen.entry(top.clone()).or_default() += 1;
        let text = std::fs::read_to_string(&file).expect("a readable source file");
        let shown = file
            .strip_prefix(root())
            .unwrap_or(&file)
            .display()
            .to_string();
        let used = used_modules(&code_of(&text), &path);
        if Some(top.as_str()) == beside {
            let allowed = |m: &String| *m == top || CORE_BESIDE_USES.contains(&m.as_str());
            for m in used.iter().filter(|m| !allowed(m)) {
                problems.push(format!(
                    "{shown}: `{top}` uses only itself and {CORE_BESIDE_USES:?}, but it uses `{m}`"
                ));
            }
            continue;
        }
        let Some(own) = layer_of(layers, &top) else {
            problems.push(format!(
                "{shown}: module `{top}` is in no layer of the tidy test"
            ));
            continue;
        };
        for m in used {
            if Some(m.as_str()) == beside || m == top {
                continue;
            }
            match layer_of(layers, &m) {
                Some(l) if l <= own => {}
                Some(l) => problems.push(format!(
                    "{shown}: `{top}` (layer {}) uses `{m}` of the higher layer {}",
                    layers[own].0, layers[l].0
                )),
                None => problems.push(format!("{shown}: uses `{m}`, which is in no layer")),
            }
        }
    }
    (problems, seen)
}

#[test]
fn core_modules_use_only_their_layer_and_below() {
    let src = root().join("core/src");
    let (problems, seen) = layer_violations(&src, CORE_LAYERS, Some(CORE_BESIDE));
    assert!(
        problems.is_empty(),
        "layer violations:\n{}",
        problems.join("\n")
    );
    // Every layer's modules exist: the table is not stale.
    for (layer, modules) in CORE_LAYERS {
        for m in *modules {
            assert!(
                seen.contains_key(*m),
                "layer {layer} lists `{m}`, which does not exist"
            );
        }
    }
    assert!(seen.contains_key(CORE_BESIDE));
}

#[test]
fn host_modules_use_only_their_layer_and_below() {
    let src = root().join("host/src");
    let (problems, seen) = layer_violations(&src, HOST_LAYERS, None);
    assert!(
        problems.is_empty(),
        "layer violations:\n{}",
        problems.join("\n")
    );
    for (layer, modules) in HOST_LAYERS {
        for m in *modules {
            assert!(
                seen.contains_key(*m),
                "layer {layer} lists `{m}`, which does not exist"
            );
        }
    }
}

/// Functions (`fn` at the start of a line) longer than the limit whose
/// comments above do not give a reason.
fn long_functions(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).expect("a readable source file");
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut in_tests = false;
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            in_tests = true;
        }
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let is_fn = ["fn ", "pub fn ", "pub(crate) fn ", "pub(super) fn "]
            .iter()
            .any(|p| trimmed.starts_with(p));
        if in_tests || !is_fn || trimmed.ends_with(';') {
            continue;
        }
        let close = format!("{indent}}}");
        let Some(end) = lines[i..].iter().position(|l| *l == close) else {
            continue;
        };
        let length = end + 1;
        if length <= MAX_FUNCTION_LINES {
            continue;
        }
        let mut j = i;
        let mut reason = false;
        while j > 0 {
            j -= 1;
            let above = lines[j].trim_start();
            if !(above.starts_with("//") || above.starts_with("#[")) {
                break;
            }
            reason |= above.contains(LONG_REASON);
        }
        if !reason {
            let name = trimmed
                .split("fn ")
                .nth(1)
                .and_then(|rest| rest.split(['(', '<']).next())
                .unwrap_or(trimmed);
            out.push(format!(
                "{}:{}: `{name}` has {length} lines",
                file.display(),
                i + 1
            ));
        }
    }
    out
}

#[test]
fn long_functions_say_why() {
    let mut files = Vec::new();
    for dir in ["core/src", "host/src", "wasm/guest/src", "wasm/web/src"] {
        rust_files(&root().join(dir), &mut files);
    }
    let problems: Vec<String> = files.iter().flat_map(|f| long_functions(f)).collect();
    assert!(
        problems.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines without a comment above saying \
         \"{LONG_REASON} ...\":\n{}",
        problems.join("\n")
    );
}

/// The one file of the core allowed `unsafe` code: a cache hint that
/// cannot be unsound (the crate denies `unsafe_code` everywhere else).
const UNSAFE_ALLOWED: &str = "repo/prefetch.rs";

#[test]
fn unsafe_code_is_in_one_file() {
    let src = root().join("core/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let holding: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).expect("a source file");
            let code = code_of(&text);
            let b = code.as_bytes();
            code.match_indices("unsafe").any(|(i, _)| {
                let before = i.checked_sub(1).map(|j| b[j]);
                !before.is_some_and(is_ident_byte)
                    && !b
                        .get(i + "unsafe".len())
                        .copied()
                        .is_some_and(is_ident_byte)
            })
        })
        .map(|f| {
            f.strip_prefix(&src)
                .expect("below src")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(
        holding,
        [UNSAFE_ALLOWED],
        "`unsafe` outside {UNSAFE_ALLOWED} (or not in it any more: move the constant)"
    );
}

/// The one module of the core that computes transcendental functions of
/// floats (docs/ARCHITECTURE.md, "Invariants"), with pxfm.
const FLOAT_MATH: &str = "float_math";

/// The float methods that are not correctly rounded on every target (std
/// calls glibc natively and Rust's `libm` in wasm32): `sqrt`, `mul_add`
/// and the rounding ones are IEEE 754's everywhere and stay allowed.
const TRANSCENDENTAL: &[&str] = &[
    "exp", "exp2", "exp_m1", "ln", "ln_1p", "log", "log2", "log10", "sin", "cos", "tan", "sin_cos",
    "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "powf",
    "powi", "cbrt", "hypot", "gamma", "ln_gamma",
];

/// The crates whose functions must go through `float_math`.
const MATH_CRATES: &[&str] = &["num_complex", "libm", "pxfm"];

/// Where a file's code computes a transcendental function: a method
/// call `.exp(`, a path `f64::exp` or `f32::sin`, or a math crate named.
fn transcendental_uses(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut found = |what: String| out.push(format!("{}: {what}", n + 1));
        for name in TRANSCENDENTAL {
            if line.contains(&format!(".{name}(")) {
                found(format!(".{name}("));
            }
            for ty in ["f64", "f32"] {
                let path = format!("{ty}::{name}");
                let ends_word = |i: usize| {
                    !line
                        .as_bytes()
                        .get(i + path.len())
                        .copied()
                        .is_some_and(is_ident_byte)
                };
                if line.match_indices(&path).any(|(i, _)| ends_word(i)) {
                    found(path);
                }
            }
        }
        for krate in MATH_CRATES {
            let starts_word = |i: usize| i == 0 || !is_ident_byte(line.as_bytes()[i - 1]);
            if line
                .match_indices(&format!("{krate}::"))
                .any(|(i, _)| starts_word(i))
            {
                found(format!("{krate}::"));
            }
        }
    }
    out
}

#[test]
fn transcendental_functions_are_float_math_s() {
    let src = root().join("core/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let tests = test_module_files(&files);
    let mut problems = Vec::new();
    for file in files.iter().filter(|f| !tests.contains(f)) {
        let path = module_path(&src, file);
        if path.first().map(String::as_str) == Some(FLOAT_MATH) {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("a readable source file");
        let shown = file.strip_prefix(root()).unwrap_or(file).display();
        for place in transcendental_uses(&code_of(&text)) {
            problems.push(format!("{shown}:{place}"));
        }
    }
    assert!(
        problems.is_empty(),
        "transcendental functions outside core/src/{FLOAT_MATH} (call `crate::{FLOAT_MATH}`, \
         whose functions give the same bits on every face):\n{}",
        problems.join("\n")
    );
    // The module exists, and is where the math crate is used.
    let own = src.join(FLOAT_MATH).join("mod.rs");
    let text = std::fs::read_to_string(&own).expect("core/src/float_math/mod.rs");
    assert!(
        text.contains("pxfm::"),
        "{} no longer uses pxfm",
        own.display()
    );
}

#[test]
fn the_float_checker_sees_calls_paths_and_crates() {
    let code = code_of(
        "let a = x.exp(); let b = f64::sin; let c = y.atan2(x);\n\
         use num_complex::Complex64; let d = x.sqrt() + x.mul_add(y, z);\n\
         let e = my_exp(x); let f = f64::exponent; let g = xlibm::y; // x.ln()\n\
         #[cfg(test)]\nmod tests { fn t() { 1f64.cos(); } }\n",
    );
    let uses: Vec<String> = transcendental_uses(&code);
    assert_eq!(
        uses,
        ["1: .exp(", "1: f64::sin", "1: .atan2(", "2: num_complex::"]
    );
}

#[test]
fn the_checker_sees_every_kind_of_path() {
    let code = code_of(
        "use crate::{heap::Heap, value::{Object, Value}};\n\
         use super::super::vm::Vm; // crate::api in a comment\n\
         let s = \"crate::repo\"; fn f() -> crate::number::Num {}\n\
         #[cfg(test)]\nmod tests { use crate::api::Engine; }\n",
    );
    let path = vec!["compiler".to_string(), "front".to_string()];
    assert_eq!(
        used_modules(&code, &path),
        vec!["heap", "value", "vm", "number"]
    );
    // One `super::` from a top-level module's own file is the crate root.
    assert_eq!(
        used_modules("use super::api::X;", &["vm".to_string()]),
        vec!["api"]
    );
    assert_eq!(
        used_modules("use super::call::X;", &["vm".to_string(), "x".to_string()]),
        Vec::<String>::new()
    );
}

/// The files that are test modules: declared `#[cfg(test)] mod NAME;` by
/// their parent (tests beside the code, in their own file).
fn test_module_files(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).expect("a readable source file");
        let dir = match file.file_stem().and_then(|s| s.to_str()) {
            Some("mod" | "lib" | "main") => file.parent().expect("a parent").to_path_buf(),
            _ => file.with_extension(""),
        };
        let mut rest = text.as_str();
        while let Some(at) = rest.find("#[cfg(test)]") {
            rest = rest[at + "#[cfg(test)]".len()..].trim_start();
            let Some(decl) = rest.strip_prefix("mod ") else {
                continue;
            };
            let name: String = decl
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if decl[name.len()..].trim_start().starts_with(';') {
                out.push(dir.join(format!("{name}.rs")));
                out.push(dir.join(&name).join("mod.rs"));
            }
        }
    }
    out
}

/// Code outside tests never calls `.unwrap()`: where a failure cannot
/// happen, `expect("why")` says why; everywhere else the error goes to the
/// caller. No `todo!`, `unimplemented!` or reasonless `unreachable!()`.
#[test]
fn code_outside_tests_says_why_it_cannot_fail() {
    let mut files = Vec::new();
    for dir in ["core/src", "host/src", "wasm/guest/src", "wasm/web/src"] {
        rust_files(&root().join(dir), &mut files);
    }
    let tests = test_module_files(&files);
    let mut problems = Vec::new();
    for file in files.iter().filter(|f| !tests.contains(f)) {
        let text = std::fs::read_to_string(file).expect("a readable source file");
        for (i, line) in code_of(&text).lines().enumerate() {
            for bad in [".unwrap()", "todo!", "unimplemented!", "unreachable!()"] {
                if line.contains(bad) {
                    problems.push(format!("{}:{}: {bad}", file.display(), i + 1));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "code outside tests that can fail without saying why:\n{}",
        problems.join("\n")
    );
}
