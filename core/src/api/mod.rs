//! The engine's public face: create an engine, install a host, set limits,
//! evaluate text; the knowledge base in and out.
//!
//! This is also where the engine is assembled: the primitive table (the
//! R7RS primitives and the `arb:` procedures), the VM, the prelude.

use crate::arb;
use crate::builtins::{self, PrimTable};
use crate::heap::MemoryMeter;
use crate::host::{Host, InterruptCheck};
use crate::pos::Pos;
use crate::repo::forest::{ForestError, Hash, ImportError, Snapshot, VersionForest};
use crate::repo::index::{Embedder, Indexes, Lexicon, SemanticConfig, SharedEmbedder};
use crate::repo::knowledge::{Knowledge, KnowledgeStore};
use crate::repo::Tier;
use crate::vm::{ErrorKind, Limits, ValueForm, Vm, VmError};
use std::rc::Rc;

pub(crate) mod tools;

/// A line:column position in the evaluated source text (both 1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: u32,
    pub column: u32,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// An evaluation that did not complete.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalError {
    pub kind: ErrorKind,
    /// What went wrong, e.g. `car: expected a pair, got ()`.
    pub message: String,
    /// Where in the evaluated text, when known.
    pub position: Option<Position>,
    /// Innermost first: `name (line:column)` of the Scheme procedures active at the error.
    pub backtrace: Vec<String>,
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.position {
            Some(p) => write!(f, "{}: {}", p, self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

impl EvalError {
    /// The variable an "unbound variable" error is about (without what
    /// may follow it, such as "(not imported from ...)").
    pub fn unbound_name(&self) -> Option<&str> {
        if self.kind != ErrorKind::Runtime {
            return None;
        }
        let (_, rest) = self.message.split_once("unbound variable: ")?;
        rest.split(' ').next().filter(|name| !name.is_empty())
    }

    /// The error as the `arbores` command prints it and the Scheme suite's
    /// expectations hold it: `error: [ORIGIN:]LINE:COL: MESSAGE` (the
    /// position when known), then `  at FRAME` for each frame of the
    /// backtrace, every line ended by a newline.
    pub fn report(&self, origin: Option<&str>) -> String {
        let mut place = String::new();
        if let Some(origin) = origin {
            place.push_str(origin);
            place.push(':');
        }
        if let Some(p) = self.position {
            place.push_str(&format!("{p}:"));
        }
        if !place.is_empty() {
            place.push(' ');
        }
        let mut s = format!("error: {place}{}\n", self.message);
        for frame in &self.backtrace {
            s.push_str(&format!("  at {frame}\n"));
        }
        s
    }
}

/// "did you mean `x`?" for an unbound variable `name`: the `names` nearest
/// it by edit distance (transpositions count one), within 1 for names of up
/// to 3 characters, 2 up to 7, 3 beyond; the nearest ones, three at most,
/// in order. None when no name is that near. The `arbores` command and the
/// playground give this note after the error.
pub fn did_you_mean<S: AsRef<str>>(name: &str, names: &[S]) -> Option<String> {
    let limit = match name.chars().count() {
        0..=3 => 1,
        4..=7 => 2,
        _ => 3,
    };
    let mut near: Vec<(usize, &str)> = names
        .iter()
        .map(AsRef::as_ref)
        .filter(|n| *n != name)
        .map(|n| (strsim::damerau_levenshtein(name, n), n))
        .filter(|(d, _)| *d <= limit)
        .collect();
    near.sort();
    near.dedup();
    let best = near.first()?.0;
    let shown: Vec<String> = near
        .into_iter()
        .take_while(|(d, _)| *d == best)
        .take(3)
        .map(|(_, n)| format!("`{n}`"))
        .collect();
    Some(format!("did you mean {}?", shown.join(" or ")))
}

/// The result of evaluating a source text: the value of its last form (in
/// `write` form), what was written to the current output port, and the error
/// that ended it, if any. Output written before an error is kept.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    /// `None` when the last form has no value to show (a definition, an
    /// unspecified value) or the evaluation failed.
    pub value: Option<String>,
    /// The text written to the current output port that the host did not
    /// take as it was written: all of it with a host that does not stream
    /// (the default, [`crate::BasicHost`]); nothing when the host's
    /// [`Host::write_output`] took every piece, which it was handed in
    /// order before the evaluation returned.
    pub output: String,
    pub error: Option<EvalError>,
}

/// An Arbores engine: one Scheme session with its global environment.
pub struct Engine {
    pub(crate) limits: Limits,
    pub(crate) vm: Vm,
    /// The host tools defined so far (see `tools.rs`).
    pub(crate) tools: Vec<crate::api::tools::Tool>,
    /// The key of the hash that checks dumps (see `Engine::set_dump_key`).
    pub(crate) dump_key: [u8; 32],
    /// The host's embedder and lexicon, if it set them: every knowledge
    /// base the engine opens or imports is indexed with them.
    pub(crate) index_setup: IndexSetup,
}

/// What a host chose for the indexes (`Engine::set_embedder`,
/// `Engine::set_lexicon`).
#[derive(Clone, Default)]
pub(crate) struct IndexSetup {
    embedder: Option<(Rc<dyn Embedder>, SemanticConfig)>,
    lexicon: Option<Option<std::sync::Arc<Lexicon>>>,
}

impl IndexSetup {
    /// Empty indexes as the host chose them.
    fn indexes(&self) -> Indexes {
        let mut ix = match &self.embedder {
            Some((e, config)) => {
                Indexes::with_embedder(Box::new(SharedEmbedder(e.clone())), config.clone())
            }
            None => Indexes::new(),
        };
        if let Some(l) = &self.lexicon {
            ix.lexicon = l.clone();
        }
        ix
    }

    /// `indexes` as a function, for the knowledge base the engine creates
    /// on first use.
    fn factory(&self) -> Rc<dyn Fn() -> Indexes> {
        let setup = self.clone();
        Rc::new(move || setup.indexes())
    }
}

impl Default for Engine {
    fn default() -> Self {
        Self::new()
    }
}

const PRELUDE: &str = include_str!("../prelude.scm");

/// Every primitive of the engine: the R7RS ones, then the `arb:`
/// procedures, then the engine's own.
fn primitives() -> PrimTable {
    let mut t = PrimTable::default();
    builtins::register(&mut t);
    arb::register(&mut t);
    // Where the thread's prepared image came from: the symbol `image` when
    // it was loaded from the bytes the face built in, else why the prelude
    // was compiled (a string). What tests of each face check.
    t.add("%prepared-from", 0, Some(0), |c, _| {
        Ok(match Engine::prepared_from() {
            PreparedFrom::Image => crate::value::Value::Sym(c.syms.intern("image")),
            PreparedFrom::Compiled(why) => c.heap.string(&why),
        })
    });
    t
}

/// The hash of the core's code, which a prepared image must have been made
/// from (see `build.rs`).
mod source {
    include!(concat!(env!("OUT_DIR"), "/source_hash.rs"));
}

/// The prepared image the embedder built in (`install_prepared_image`).
static INSTALLED: std::sync::OnceLock<&'static [u8]> = std::sync::OnceLock::new();

/// Hands the engine the bytes of a prepared image made at build time
/// (`Engine::prepared_image_bytes`, written by `scripts/build-image`), which
/// the first `Engine::new` of each thread then loads instead of compiling
/// the prelude. Call it before the first engine is made; later calls
/// change nothing. Bytes that are stale (made from other code), damaged
/// or of another prelude are not used: the engine compiles the prelude as
/// if none were given, and `Engine::prepared_from` says why.
pub fn install_prepared_image(bytes: &'static [u8]) {
    let _ = INSTALLED.set(bytes);
}

/// Where the prepared image of a thread came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreparedFrom {
    /// Loaded from the bytes given to `install_prepared_image`.
    Image,
    /// The prelude compiled and run, for the reason given (no image was
    /// installed, or it could not be used).
    Compiled(String),
}

thread_local! {
    /// The prepared image every new engine of this thread starts from: a
    /// VM with the prelude loaded, made by the thread's first engine from
    /// the installed image or else by compiling the prelude, and where it
    /// came from.
    static PREPARED: (Vm, PreparedFrom) = load_prepared();
}

/// The thread's prepared VM: the installed image when it loads, else the
/// prelude compiled.
fn load_prepared() -> (Vm, PreparedFrom) {
    let Some(bytes) = INSTALLED.get() else {
        return (
            prepared_vm(),
            PreparedFrom::Compiled("no prepared image was installed".into()),
        );
    };
    match Vm::from_prepared_image(primitives(), bytes, &source::SOURCE_HASH, PRELUDE) {
        Ok(vm) => (vm, PreparedFrom::Image),
        Err(e) => (prepared_vm(), PreparedFrom::Compiled(e)),
    }
}

/// A VM with the primitives bound and the prelude compiled and run.
fn prepared_vm() -> Vm {
    let mut vm = Vm::new(primitives());
    if let Err(e) = vm.load_prelude(PRELUDE) {
        // The prelude is part of the engine: a test fails first.
        panic!("{e}");
    }
    vm
}

impl Engine {
    /// A new engine: an empty session with the default limits, tier and
    /// host. Its state is a copy of a prepared image (the primitives bound,
    /// the prelude compiled and run) that the thread's first engine makes,
    /// so the first `Engine::new` of a thread takes milliseconds and later
    /// ones microseconds (docs/PERFORMANCE.md, "A new engine"); the
    /// compiled code is shared, everything a session can change is its own.
    pub fn new() -> Engine {
        let vm = PREPARED.with(|(vm, _)| vm.fresh_copy());
        Engine {
            limits: Limits::default(),
            vm,
            tools: Vec::new(),
            dump_key: crate::api::tools::DEFAULT_DUMP_KEY,
            index_setup: IndexSetup::default(),
        }
    }

    /// A new engine that compiles the prelude itself instead of copying
    /// the prepared image: what every engine did before there was one, kept
    /// to measure [`Engine::new`] against and to check that both start in
    /// the same state.
    pub fn new_unprepared() -> Engine {
        Engine {
            limits: Limits::default(),
            vm: prepared_vm(),
            tools: Vec::new(),
            dump_key: tools::DEFAULT_DUMP_KEY,
            index_setup: IndexSetup::default(),
        }
    }

    /// Where this thread's prepared image came from: the installed
    /// image, or the prelude compiled (and why). Makes the image if no
    /// engine of the thread has yet.
    pub fn prepared_from() -> PreparedFrom {
        PREPARED.with(|(_, from)| from.clone())
    }

    /// The prepared image of this build of the engine as bytes: the
    /// prelude compiled and run in a new VM, written with the hash of the
    /// core's code (what `scripts/build-image` writes and the faces build
    /// in, `install_prepared_image`). The same code always gives the same
    /// bytes.
    pub fn prepared_image_bytes() -> Result<Vec<u8>, String> {
        prepared_vm().prepared_image(&source::SOURCE_HASH)
    }

    /// An engine made from the prepared image `bytes` itself rather than
    /// the thread's: to check an image (tests; `arbores` does not use it).
    pub fn from_prepared_image(bytes: &[u8]) -> Result<Engine, String> {
        let vm = Vm::from_prepared_image(primitives(), bytes, &source::SOURCE_HASH, PRELUDE)?;
        Ok(Engine {
            limits: Limits::default(),
            vm,
            tools: Vec::new(),
            dump_key: tools::DEFAULT_DUMP_KEY,
            index_setup: IndexSetup::default(),
        })
    }

    /// This engine's state as a prepared image, if it is idle and has not
    /// changed since it was made: what a test compares between an engine
    /// made from an image and one that compiled the prelude.
    pub fn state_as_prepared_image(&self) -> Result<Vec<u8>, String> {
        self.vm.prepared_image(&source::SOURCE_HASH)
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// Installs the host everything from outside comes from: the clock,
    /// the interrupt check (see [`Host`]).
    pub fn set_host(&mut self, host: Box<dyn Host>) {
        self.vm.install_host(host);
    }

    /// Has the memory cap (`Limits::max_memory`) checked against `meter`:
    /// the bytes the embedder's allocator counts as held by its process or
    /// wasm instance. An embedder that installs a counting global allocator
    /// should give it: without one the engine checks its own estimate of the
    /// Scheme heap, which misses what Rust structures hold around it (the
    /// spare capacity of growing vectors, strings being built, the stacks'
    /// spare room), so the process may hold several times the cap.
    pub fn set_memory_meter(&mut self, meter: Option<MemoryMeter>) {
        self.vm.set_memory_meter(meter);
    }

    /// Ends the engine without freeing its heap's objects or its knowledge
    /// base one by one, for a process about to end (the operating system
    /// takes the memory back at once; ten million objects take a tenth of
    /// a second to drop, and so do the caches of a million-node store's
    /// indexes). Nothing the knowledge base holds is unsaved: a commit is
    /// stored before the call that made it returns, and a transaction left
    /// open is abandoned whether it is dropped or not; its handles on the
    /// host's store are not dropped either, so the host closes the store
    /// itself. Everything else is dropped as usual.
    pub fn end_leaving_heap(mut self) {
        self.vm.leave_heap();
    }

    /// Has one-buffer allocations also checked against `footprint`: the
    /// bytes the engine's memory has grown to, when that never shrinks
    /// (a wasm instance's linear memory, whose freed room stays resident
    /// and is reused only by what fits in its holes). With it, a buffer
    /// that may not fit in the free room (the stack doubling, a large
    /// vector or string) is made only if the memory grown by all of it
    /// stays within the cap, so a program that grows to the cap leaves the
    /// instance's memory at most at the cap, whatever the sizes its
    /// buffers happen to have there. Needs the meter too.
    pub fn set_memory_footprint(&mut self, footprint: Option<MemoryMeter>) {
        self.vm.set_memory_footprint(footprint);
    }

    /// Installs (or removes) the check that lets a host stop a running
    /// evaluation: a timeout, a Stop button, Ctrl-C. This configures the
    /// engine's own [`crate::BasicHost`], which replaces one given to
    /// [`Engine::set_host`].
    pub fn set_interrupt_check(&mut self, check: Option<InterruptCheck>) {
        self.vm.basic_host().interrupt = check;
    }

    /// Sets the clock the engine reads (`(scheme time)`, version
    /// timestamps), in seconds since the Unix epoch: it stays at that
    /// moment until set again. This configures the engine's own
    /// [`crate::BasicHost`], which replaces one given to
    /// [`Engine::set_host`].
    pub fn set_clock(&mut self, seconds_since_epoch: f64) {
        self.vm.basic_host().clock = seconds_since_epoch;
    }

    /// The tier evaluations start in (what they may do with the knowledge
    /// base). The default is [`Tier::ReadWrite`]: an operator's own REPL or
    /// command line sets [`Tier::System`].
    pub fn set_tier(&mut self, tier: Tier) {
        self.vm.set_session_tier(tier);
    }

    pub fn tier(&self) -> Tier {
        self.vm.session_tier()
    }

    /// The knowledge base (created, holding only the builtins, on first use).
    pub fn knowledge(&mut self) -> &mut Knowledge {
        self.vm.knowledge()
    }

    /// Replaces the semantic index's embedder with a host's model.
    /// Every knowledge base the engine opens or imports later is indexed
    /// with it too (a stored index made by another embedder is not used).
    pub fn set_embedder(&mut self, embedder: Box<dyn Embedder>, config: SemanticConfig) {
        let shared: Rc<dyn Embedder> = Rc::from(embedder);
        self.index_setup.embedder = Some((shared.clone(), config.clone()));
        self.vm.set_new_indexes(Some(self.index_setup.factory()));
        // A knowledge base not made yet (an engine about to open a store)
        // is made with it when needed: nothing is embedded twice.
        if self.vm.existing_knowledge().is_some() {
            self.vm
                .knowledge()
                .set_embedder(Box::new(SharedEmbedder(shared)), config);
            self.vm.forget_loaded();
        }
    }

    /// Replaces the Chinese-English lexicon the lexical scorer cuts and
    /// translates queries with (`None`: no lexicon). Only queries change:
    /// nothing stored depends on it.
    pub fn set_lexicon(&mut self, lexicon: Option<std::sync::Arc<Lexicon>>) {
        self.index_setup.lexicon = Some(lexicon.clone());
        self.vm.set_new_indexes(Some(self.index_setup.factory()));
        if self.vm.existing_knowledge().is_some() {
            self.vm.knowledge().indexes.lexicon = lexicon;
        }
    }

    /// The whole state of the knowledge base as blobs and a refs record.
    /// Later `export_new` calls start from here.
    pub fn export_full(&mut self) -> Result<Snapshot, ImportError> {
        self.vm.knowledge().forest.export_full()
    }

    /// The blobs a store lacks that holds the history up to the reflog
    /// entry that made version `since`, and the refs record: an
    /// incremental export (`arbores export --since`).
    pub fn export_since(&mut self, since: u64) -> Result<Snapshot, ImportError> {
        self.vm.knowledge().forest.export_since(since)
    }

    /// What is new since the last export or import: the blobs of the
    /// versions committed since, and the refs record. A host stores the
    /// blobs, then the refs.
    pub fn export_new(&mut self) -> Snapshot {
        self.vm.knowledge().forest.export_new()
    }

    /// Whether anything was committed or switched since the last export or
    /// import (whether `export_new` has something to store). A knowledge
    /// base that holds only its initial version (the builtins) has nothing
    /// worth storing: a host need not create a store for it.
    pub fn has_unsaved_changes(&self) -> bool {
        match self.vm.existing_knowledge() {
            Some(k) => k.forest.has_unsaved_work(),
            None => false,
        }
    }

    /// Keeps the knowledge base in `store` from now on: what it holds (read
    /// lazily, as evaluations need it) replaces the knowledge base, and
    /// every commit is stored there before the call that made it returns
    /// (see `Knowledge`). An empty store gets the initial version with the
    /// first commit. On error nothing changes.
    pub fn open_store(&mut self, store: Rc<dyn KnowledgeStore>) -> Result<(), ImportError> {
        let timestamp = self.vm.timestamp();
        let knowledge = Knowledge::open_with(store, timestamp, self.index_setup.indexes())
            .map_err(store_error)?;
        self.vm.install_knowledge(knowledge);
        Ok(())
    }

    /// Sees what other writers stored since the knowledge base was opened
    /// or last stored: a host calls it before each evaluation, so that a
    /// long-lived session works on the newest state. Returns whether the
    /// state moved.
    pub fn sync(&mut self) -> Result<bool, ImportError> {
        self.vm.sync_store().map_err(store_error)
    }

    /// "did you mean `x`?" for an error about an unbound variable, from
    /// the names this session binds (what `%bound-names` lists: globals,
    /// syntax and the stored knowledge's names); see [`did_you_mean`].
    pub fn unbound_hint(&self, error: &EvalError) -> Option<String> {
        did_you_mean(error.unbound_name()?, &self.vm.bound_names(""))
    }

    /// The current version of the knowledge base.
    pub fn current_version(&mut self) -> u64 {
        self.vm.knowledge().current()
    }

    /// The versions committed (and stored, with a store) since the last
    /// call, in order.
    pub fn take_committed(&mut self) -> Vec<u64> {
        self.vm.take_committed()
    }

    /// Replaces the knowledge base with the one stored under `refs`, whose
    /// blobs `lookup` fetches by name. Everything is checked; on error
    /// nothing changes.
    pub fn import<F, B>(&mut self, refs: &[u8], lookup: F) -> Result<(), ImportError>
    where
        F: FnMut(&Hash) -> Option<B>,
        B: AsRef<[u8]>,
    {
        let forest = VersionForest::import(refs, lookup)?;
        self.install(forest)
    }

    /// Replaces the knowledge base with the one in `snapshots` (a full
    /// export, then any later incremental ones). On error nothing changes.
    pub fn import_snapshots<'a, I>(&mut self, snapshots: I) -> Result<(), ImportError>
    where
        I: IntoIterator<Item = &'a Snapshot>,
    {
        let forest = VersionForest::import_snapshots(snapshots)?;
        self.install(forest)
    }

    fn install(&mut self, forest: VersionForest) -> Result<(), ImportError> {
        let knowledge =
            Knowledge::with_forest_and(forest, self.index_setup.indexes()).map_err(store_error)?;
        self.vm.install_knowledge(knowledge);
        Ok(())
    }

    /// Reads and evaluates every form of `source` in order.
    pub fn eval(&mut self, source: &str) -> Evaluation {
        self.evaluate(source, ValueForm::Write)
    }

    /// Like [`Engine::eval`], but the value is JSON text, by the engine's
    /// one mapping between Scheme values and JSON (docs/API.md, "Values as
    /// JSON"). A last value with no JSON form (a procedure, `+inf.0`, a
    /// character) makes a `runtime-error` whose message says what and
    /// where in the value; what the evaluation did stays done.
    pub fn eval_json(&mut self, source: &str) -> Evaluation {
        self.evaluate(source, ValueForm::Json)
    }

    fn evaluate(&mut self, source: &str, form: ValueForm) -> Evaluation {
        let outcome = self.vm.evaluate_as(source, self.limits, form);
        Evaluation::of(outcome.value, outcome.output)
    }
}

impl Evaluation {
    /// An evaluation that ended with `value` (or its error), having
    /// written `output`.
    pub(crate) fn of(value: Result<Option<String>, VmError>, output: String) -> Evaluation {
        match value {
            Ok(value) => Evaluation {
                value,
                output,
                error: None,
            },
            Err(e) => Evaluation {
                value: None,
                output,
                error: Some(eval_error(e)),
            },
        }
    }
}

/// Where each top-level form of `source` ends: byte ranges that tile the
/// text, one per form, each from the end of the previous form (blanks and
/// comments before a form go with it) to the end of its own, the last to
/// the end of the text. `None` when the text holds fewer than two forms,
/// does not read (the evaluation will say why), or changes how it is read
/// as it goes (`#!fold-case`). How a REPL evaluates and prints each form
/// of a line by itself; reading needs no engine.
pub fn split_forms(source: &str) -> Option<Vec<std::ops::Range<usize>>> {
    if source.contains("#!fold-case") || source.contains("#!no-fold-case") {
        return None;
    }
    let mut symbols = crate::symbol::SymbolTable::default();
    let mut reader = crate::reader::Reader::new(source, &mut symbols);
    let mut ends = Vec::new();
    while reader.read().ok()?.is_some() {
        ends.push(reader.consumed());
    }
    if ends.len() < 2 {
        return None;
    }
    // Characters consumed to byte offsets.
    let offsets: Vec<usize> = source
        .char_indices()
        .map(|(b, _)| b)
        .chain([source.len()])
        .collect();
    let mut at = 0;
    let mut ranges = Vec::with_capacity(ends.len());
    for end in ends {
        let byte = *offsets.get(end)?;
        ranges.push(at..byte);
        at = byte;
    }
    if let Some(r) = ranges.last_mut() {
        r.end = source.len();
    }
    Some(ranges)
}

fn store_error(e: ForestError) -> ImportError {
    match e {
        ForestError::Store(e) => e,
        other => ImportError::Inconsistent(other.to_string()),
    }
}

pub(crate) fn eval_error(e: VmError) -> EvalError {
    EvalError {
        kind: e.kind,
        message: e.message,
        position: e.pos.filter(|p| p.is_known()).map(position),
        backtrace: e.backtrace,
    }
}

fn position(p: Pos) -> Position {
    Position {
        line: p.line,
        column: p.col,
    }
}

#[cfg(test)]
mod error_sweep;

#[cfg(test)]
mod tests {
    use super::split_forms;

    fn pieces(text: &str) -> Option<Vec<&str>> {
        split_forms(text).map(|r| r.into_iter().map(|r| &text[r]).collect())
    }

    #[test]
    fn forms_of_a_line() {
        assert_eq!(pieces("1 2 (+ 1 2)\n"), Some(vec!["1", " 2", " (+ 1 2)\n"]));
        assert_eq!(
            pieces("'a #;(x) \"λ\" ; c\n#(1) b"),
            Some(vec!["'a", " #;(x) \"λ\"", " ; c\n#(1)", " b"])
        );
        assert_eq!(pieces("(define (f x)\n  x)\n"), None);
        assert_eq!(pieces("1 (2"), None);
        assert_eq!(pieces("#!fold-case A B"), None);
        assert_eq!(pieces(""), None);
    }

    /// The nearest names within the length's distance, three at most, in
    /// order; transpositions count one; the name itself is no guess.
    #[test]
    fn guesses_for_an_unbound_name() {
        let names = [
            "string-append",
            "string-length",
            "car",
            "cdr",
            "cadr",
            "list",
        ];
        let guess = |name| super::did_you_mean(name, &names);
        assert_eq!(
            guess("string-apend").as_deref(),
            Some("did you mean `string-append`?")
        );
        assert_eq!(guess("cra").as_deref(), Some("did you mean `car`?"));
        assert_eq!(
            guess("cxr").as_deref(),
            Some("did you mean `car` or `cdr`?")
        );
        assert_eq!(guess("lsit").as_deref(), Some("did you mean `list`?"));
        assert_eq!(
            guess("car").as_deref(),
            Some("did you mean `cadr` or `cdr`?")
        );
        assert_eq!(guess("zzqqxx"), None);
        let error = |kind, message: &str| super::EvalError {
            kind,
            message: message.into(),
            position: None,
            backtrace: vec![],
        };
        let runtime = super::ErrorKind::Runtime;
        assert_eq!(
            error(
                runtime,
                "unbound variable: f (not imported from (scheme base))"
            )
            .unbound_name(),
            Some("f")
        );
        assert_eq!(
            error(runtime, "car: expected a pair, got 1").unbound_name(),
            None
        );
        let syntax = super::ErrorKind::Syntax;
        assert_eq!(error(syntax, "unbound variable: f").unbound_name(), None);
    }
}
