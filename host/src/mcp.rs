//! `arbores mcp`: a Model Context Protocol server over standard input and
//! output, written with the protocol's Rust SDK (`rmcp`).
//!
//! One process serves one client connection (an MCP client starts the
//! command and talks to it through its pipes), so the connection's session
//! is the process's: one engine (the sandbox by default, `--engine
//! native` possible), the tier the operator gave (read-write by default)
//! and the operator's limits as maxima, which a call may lower. The
//! knowledge store is the same SQLite file every other `arbores` uses:
//! each evaluation first adopts what other processes committed.
//!
//! Two threads. The protocol runs on a single-threaded tokio runtime; the
//! engines live on the thread that called [`serve`] (the command's thread
//! with its large stack, which the engines need), and the protocol hands
//! them each call as a job through a channel, so calls run one at a time,
//! in the order they came. The knowledge tools (`search`, `get`, `create`)
//! run their `arb:` calls in an engine of their own, started on first use,
//! so that nothing the client defined in its session (a `display` of its
//! own, say) changes what they do; they have the session's tier and its
//! store, and so the session sees what they commit at its next evaluation.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use arbores_core::Limits;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::backend::{Settings, Stopper};
use crate::exit::{Exit, Failure};
use crate::session::Session;
use crate::store::Store;
use crate::{report, snapshots};

/// Why a program run by `arbores mcp` reads no standard input.
pub const NO_STDIN: &str = "the standard input is not the program's: `arbores mcp` speaks the \
     Model Context Protocol on it";

/// What the engine thread holds: the client's session and, once a
/// knowledge tool was called, the engine those tools use.
struct Engines {
    settings: Settings,
    stopper: Stopper,
    session: Session,
    knowledge: Option<Session>,
}

type Job = Box<dyn FnOnce(&mut Engines) + Send>;

/// Serves one MCP client on standard input and output until the client
/// closes its end. `settings` are the operator's: the engine, the tier,
/// and the limits each call may lower.
pub fn serve(settings: Settings, stopper: Stopper, store: Store) -> Result<Exit, Failure> {
    let session = Session::new(&settings, &stopper, store)?;
    let mut engines = Engines {
        settings: settings.clone(),
        stopper,
        session,
        knowledge: None,
    };
    let (jobs, queue) = mpsc::channel::<Job>();
    let server = Server::new(jobs, &settings, engines.stopper.clone());
    let protocol = std::thread::Builder::new()
        .name("arbores-mcp".into())
        .spawn(move || -> Result<(), String> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the protocol's runtime: {e}"))?;
            runtime.block_on(async move {
                let running = server
                    .serve(rmcp::transport::stdio())
                    .await
                    .map_err(|e| format!("the MCP client did not start the session: {e}"))?;
                running
                    .waiting()
                    .await
                    .map(|_| ())
                    .map_err(|e| format!("the MCP server failed: {e}"))
            })
        })
        .map_err(|e| Failure::from(format!("cannot start the protocol's thread: {e}")))?;
    // Ends when the protocol's side drops the last sender: the client is gone.
    for job in queue {
        // A job that panics (a bug, reported by the panic hook) drops its
        // reply, which the client gets as an internal error; the server
        // goes on.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(&mut engines)));
    }
    match protocol.join() {
        Ok(Ok(())) => Ok(Exit::Ok),
        Ok(Err(message)) => Err(Failure::from(message)),
        Err(_) => Err(Failure::from("the MCP server failed".to_string())),
    }
}

// ---- arguments and results ------------------------------------------------------

/// A memory size: bytes, or text with a K, M or G suffix.
#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum Size {
    Bytes(u64),
    Text(String),
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EvalArgs {
    /// Scheme source: one or more forms, evaluated in order in this
    /// connection's session (its definitions stay for the next call).
    source: String,
    /// Step budget of this evaluation (procedure calls); at most the
    /// server's (`--fuel`), which is the default.
    #[serde(default)]
    steps: Option<u64>,
    /// Memory cap of this evaluation: bytes, or text such as "64M"; at
    /// most the server's (`--memory`), which is the default.
    #[serde(default)]
    memory: Option<Size>,
    /// Wall-clock limit of this evaluation in seconds; at most the
    /// server's (`--timeout`), which is the default.
    #[serde(default)]
    timeout: Option<f64>,
}

/// An evaluation's result: the object `arbores eval --json` prints.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EvalResult {
    /// The last form's value in `write` form; null for none (a
    /// definition, an unspecified value, an error).
    value: Option<String>,
    /// What the evaluation wrote to its current output port.
    output: String,
    /// Why the evaluation did not complete, or null.
    error: Option<EvalErrorInfo>,
    /// The current version of the knowledge base before and after.
    version: VersionMove,
    /// The versions the evaluation committed (stored), in order.
    committed: Vec<u64>,
    /// The exit status `arbores eval` would have given (docs/API.md).
    exit: u8,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EvalErrorInfo {
    /// One of syntax-error, runtime-error, step-limit, memory-limit,
    /// time-limit, interrupted, store-error, exit.
    kind: String,
    message: String,
    /// Where in the source, 1-based, when known.
    line: Option<u32>,
    column: Option<u32>,
    /// The active procedures, innermost first: `name (line:column)`.
    backtrace: Vec<String>,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct VersionMove {
    before: Option<u64>,
    after: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// Find by meaning: words in any language, matched against
    /// descriptions, names and the words of the code, best first with a
    /// score from 0 to 1 (`arb:semantic-search`). Give this or `pattern`.
    #[serde(default)]
    query: Option<String>,
    /// Find by symbol name (`arb:search-by-symbol`), as `mode` says.
    /// Give this or `query`.
    #[serde(default)]
    pattern: Option<String>,
    /// How `pattern` matches: prefix (the default), exact, wildcard (`*`,
    /// `?`), regex or fuzzy.
    #[serde(default)]
    mode: Option<SymbolMode>,
    /// At most this many hits (default 10 by meaning, 100 by symbol).
    #[serde(default)]
    limit: Option<u32>,
    /// By meaning: only hits scoring at least this (0 to 1).
    #[serde(default)]
    threshold: Option<f64>,
    /// By meaning: only nodes of this type (e.g. "function").
    #[serde(default, rename = "type")]
    kind: Option<String>,
    /// Search this version instead of the current one.
    #[serde(default)]
    version: Option<u64>,
}

#[derive(Deserialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum SymbolMode {
    Prefix,
    Exact,
    Wildcard,
    Regex,
    Fuzzy,
}

impl SymbolMode {
    fn name(self) -> &'static str {
        match self {
            SymbolMode::Prefix => "prefix",
            SymbolMode::Exact => "exact",
            SymbolMode::Wildcard => "wildcard",
            SymbolMode::Regex => "regex",
            SymbolMode::Fuzzy => "fuzzy",
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetArgs {
    /// The node's id.
    id: u64,
    /// Read it as it was in this version instead of the current one.
    #[serde(default)]
    version: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CreateArgs {
    /// The Scheme source of the node, e.g. "(define (square x) (* x x))";
    /// it must read, or nothing is stored.
    code: String,
    /// What it is for, in any language: what search by meaning reads.
    #[serde(default)]
    description: Option<String>,
    /// Its type, e.g. "function".
    #[serde(default, rename = "type")]
    kind: Option<String>,
    /// The names it is found and used by (in code, by name).
    #[serde(default)]
    names: Vec<String>,
    /// The nodes its code uses: an id (under that node's first name) or
    /// {"id", "name"} (under the name the code uses for it).
    #[serde(default)]
    dependencies: Vec<Dependency>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum Dependency {
    Id(u64),
    Named { id: u64, name: String },
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NameArgs {
    /// The snapshot's name: 1 to 64 of A-Z a-z 0-9 _ . - not starting
    /// with a dot.
    name: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

// ---- the server -----------------------------------------------------------------

#[derive(Clone)]
struct Server {
    jobs: mpsc::Sender<Job>,
    /// The engines' stopper, to stop the evaluation of a cancelled request.
    stopper: Stopper,
    /// The number of the last request sent to the engines.
    last_job: Arc<AtomicU64>,
    /// The operator's limits: each call's maxima and defaults.
    limits: Limits,
    timeout: Option<Duration>,
    instructions: String,
    tool_router: ToolRouter<Server>,
}

/// Arguments that do not fit: a tool error the model can read and
/// correct (as the SDK reports arguments that do not fit the schema).
fn invalid(message: impl Into<String>) -> CallToolResult {
    failed("invalid-argument", &message.into())
}

/// Arguments of `eval` that do not fit, in the shape of its results (the
/// output schema, which clients check error results against too).
fn invalid_eval(message: impl Into<String>) -> CallToolResult {
    CallToolResult::structured_error(json!({
        "value": null,
        "output": "",
        "error": {"kind": "invalid-argument", "message": message.into(),
                  "line": null, "column": null, "backtrace": []},
        "version": {"before": null, "after": null},
        "committed": [],
        "exit": Exit::Usage.status(),
    }))
}

/// A tool's failure the client's model should read (not a protocol error).
fn failed(kind: &str, message: &str) -> CallToolResult {
    CallToolResult::structured_error(json!({"error": {"kind": kind, "message": message}}))
}

#[tool_router]
impl Server {
    fn new(jobs: mpsc::Sender<Job>, settings: &Settings, stopper: Stopper) -> Server {
        let limits = settings.limits;
        let instructions = format!(
            "Arbores: an R7RS Scheme with a versioned knowledge base of Scheme code. \
             `eval` runs Scheme in this connection's session (definitions persist between \
             calls; each call is limited to {} steps, {} of memory and {} of wall-clock time \
             unless it asks for less). The knowledge base is shared with every other user of \
             the store: find code with `search` (by meaning or by name), read it with `get`, \
             add it with `create`; stored code is used in `eval` by its names. The `arb:` \
             procedures do all of this and more from Scheme. Tier: {} ({}). `snapshot` keeps \
             the session's definitions under a name, `restore` brings them back (in this or a \
             later connection), `snapshots` lists them.",
            limits.max_steps,
            report::size(limits.max_memory as u64),
            report::duration(settings.timeout),
            settings.tier.as_str(),
            settings.tier.rights(),
        );
        Server {
            jobs,
            stopper,
            last_job: Arc::default(),
            limits,
            timeout: settings.timeout,
            instructions,
            tool_router: Self::tool_router(),
        }
    }

    /// Runs `f` on the engine thread and waits for its answer. When the
    /// client cancels the request, its evaluation is stopped (now, or as
    /// soon as it starts).
    /// `f` with the engines, the store's path and a snapshot name that
    /// has been checked (a bad name is refused before the engine runs).
    async fn with_snapshot(
        &self,
        request: &RequestContext<RoleServer>,
        name: String,
        f: impl FnOnce(&mut Engines, &Path, String) -> CallToolResult + Send + 'static,
    ) -> Result<CallToolResult, ErrorData> {
        if let Err(m) = snapshots::check_name(&name) {
            return Ok(invalid(format!("name: {m}")));
        }
        self.run(request, move |e| {
            let store = e.session.store().path().to_path_buf();
            f(e, &store, name)
        })
        .await
    }

    async fn run<T: Send + 'static>(
        &self,
        request: &RequestContext<RoleServer>,
        f: impl FnOnce(&mut Engines) -> T + Send + 'static,
    ) -> Result<T, ErrorData> {
        let job = self.last_job.fetch_add(1, Ordering::SeqCst) + 1;
        let (reply, mut answer) = tokio::sync::oneshot::channel();
        self.jobs
            .send(Box::new(move |engines| {
                engines.stopper.set_job(job);
                let result = f(engines);
                engines.stopper.set_job(0);
                let _ = reply.send(result);
            }))
            .map_err(|_| ErrorData::internal_error("the engine has stopped", None))?;
        let answer = tokio::select! {
            answer = &mut answer => answer,
            _ = request.ct.cancelled() => {
                self.stopper.cancel(job);
                answer.await
            }
        };
        answer.map_err(|_| {
            ErrorData::internal_error(
                "the engine failed while answering (an internal error; see the server's \
                 standard error)",
                None,
            )
        })
    }

    /// The call's limits: the operator's, lowered where it asks.
    fn limits_of(&self, args: &EvalArgs) -> Result<(Limits, Option<Duration>), CallToolResult> {
        let invalid = |message: String| invalid_eval(message);
        let mut limits = self.limits;
        if let Some(steps) = args.steps {
            if steps == 0 || steps > self.limits.max_steps {
                return Err(invalid(format!(
                    "steps: {steps} is not between 1 and the server's budget of {} steps (--fuel)",
                    self.limits.max_steps
                )));
            }
            limits.max_steps = steps;
        }
        if let Some(memory) = &args.memory {
            let bytes = match memory {
                Size::Bytes(n) => *n,
                Size::Text(text) => {
                    report::parse_size(text).map_err(|e| invalid(format!("memory: {e}")))?
                }
            };
            let max = self.limits.max_memory as u64;
            if !(1 << 20..=max).contains(&bytes) {
                return Err(invalid(format!(
                    "memory: {bytes} bytes is not between 1M and the server's cap of {} (--memory)",
                    report::size(max)
                )));
            }
            limits.max_memory = bytes as usize;
        }
        let mut timeout = self.timeout;
        if let Some(secs) = args.timeout {
            let within = match self.timeout {
                Some(max) => secs <= max.as_secs_f64(),
                None => secs <= 1e9,
            };
            if !(secs.is_finite() && secs > 0.0 && within) {
                return Err(invalid(format!(
                    "timeout: {secs} is not a number of seconds above 0 and at most the \
                     server's {} (--timeout)",
                    report::duration(self.timeout)
                )));
            }
            timeout = Some(Duration::from_secs_f64(secs));
        }
        Ok((limits, timeout))
    }

    #[tool(
        description = "Evaluate Scheme (R7RS) source in this connection's session. Returns the \
                       last value in write form, the output, and the error (kind, message, \
                       line, column, backtrace) when it failed; a Scheme error is a tool error \
                       and the session goes on. Definitions stay for later calls. Optional \
                       limits (steps, memory, timeout) may lower the server's.",
        output_schema = rmcp::handler::server::tool::schema_for_output::<EvalResult>()
    )]
    async fn eval(
        &self,
        Parameters(args): Parameters<EvalArgs>,
        request: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let (limits, timeout) = match self.limits_of(&args) {
            Ok(limits) => limits,
            Err(refused) => return Ok(refused),
        };
        let source = args.source;
        let object = self
            .run(&request, move |e| {
                let settings = Settings {
                    limits,
                    timeout,
                    ..e.settings.clone()
                };
                if let Err(m) = e.session.set_limits(limits) {
                    return Err(m);
                }
                let outcome = e.session.eval(&e.stopper, timeout, &source);
                // Later calls start from the operator's limits again.
                let _ = e.session.set_limits(e.settings.limits);
                let exit = report::exit_of(&outcome);
                Ok(report::json(&outcome, &settings, exit))
            })
            .await?
            .map_err(|m| ErrorData::internal_error(m, None))?;
        // Checked against the declared schema's type: a change of the
        // `--json` object that the schema misses fails here, in the tests.
        let checked: EvalResult = serde_json::from_value(object.clone()).map_err(|e| {
            ErrorData::internal_error(format!("an evaluation result out of shape: {e}"), None)
        })?;
        Ok(if checked.error.is_some() {
            CallToolResult::structured_error(object)
        } else {
            CallToolResult::structured(object)
        })
    }

    #[tool(
        description = "Search the knowledge base: by meaning with `query` (any language; \
                       best first, with a score) or by symbol name with `pattern` and `mode` \
                       (prefix, exact, wildcard, regex, fuzzy). Returns {hits}, best first: \
                       {id, names, description, score} by meaning, {id, names, description} by \
                       name. Only stored knowledge: the builtin arb: procedures are not hits.",
        annotations(read_only_hint = true)
    )]
    async fn search(
        &self,
        Parameters(args): Parameters<SearchArgs>,
        request: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let opt_num = |n: Option<u64>| n.map_or("#f".to_string(), |n| n.to_string());
        let version = opt_num(args.version);
        let expr = match (&args.query, &args.pattern) {
            (Some(query), None) => {
                if args.mode.is_some() {
                    return Ok(invalid("mode: only with `pattern` (search by symbol name)"));
                }
                let threshold = match args.threshold {
                    None => "#f".to_string(),
                    Some(t) if (0.0..=1.0).contains(&t) => format!("{t:?}"),
                    Some(t) => {
                        return Ok(invalid(format!("threshold: {t} is not between 0 and 1")))
                    }
                };
                // Stored knowledge only: the builtin nodes (the `arb:`
                // procedures, in the reserved ids) are left out, so as many
                // more are asked for as there are; each hit gets its names.
                let limit = args.limit.map_or(DEFAULT_MEANING_LIMIT, u64::from);
                let builtins = arbores_core::repo::builtins::ARB_PROCEDURES.len() as u64;
                format!(
                    "(let ((hits (arb:semantic-search {query} {ask} {threshold} {kind} {version})))
                       (if (arb:error? hits) hits
                           (let loop ((h hits) (out '()) (n 0))
                             (if (or (null? h) (= n {limit})) (reverse out)
                                 (let* ((hit (car h)) (id (cdr (assoc \"id\" hit))))
                                   (if (< (modulo id 65536) 256)
                                       (loop (cdr h) out n)
                                       (let ((m (arb:get-metadata id {version})))
                                         (if (arb:error? m) m
                                             (loop (cdr h)
                                                   (cons (list (cons \"id\" id)
                                                               (assoc \"symbol-names\" m)
                                                               (assoc \"description\" hit)
                                                               (assoc \"score\" hit))
                                                         out)
                                                   (+ n 1))))))))))",
                    query = scheme_string(query),
                    ask = limit.saturating_add(builtins),
                    kind = args.kind.as_deref().map_or("#f".to_string(), scheme_string),
                )
            }
            (None, Some(pattern)) => {
                if args.threshold.is_some() || args.kind.is_some() {
                    return Ok(invalid(
                        "threshold and type: only with `query` (search by meaning)",
                    ));
                }
                format!(
                    "(arb:search-by-symbol {} {} {} {version})",
                    scheme_string(pattern),
                    scheme_string(args.mode.unwrap_or(SymbolMode::Prefix).name()),
                    opt_num(args.limit.map(u64::from)),
                )
            }
            _ => {
                return Ok(invalid(
                    "give either `query` (search by meaning) or `pattern` (search by symbol \
                     name), not both, not neither",
                ))
            }
        };
        Ok(match self.knowledge(&request, expr).await? {
            Ok(Value::Array(hits)) => CallToolResult::structured(
                json!({"hits": hits.into_iter().map(tidy_node).collect::<Vec<_>>()}),
            ),
            Ok(other) => failed("internal", &format!("search: unexpected answer {other}")),
            Err(result) => result,
        })
    }

    #[tool(
        description = "A node of the knowledge base by id: its code, description, names, type, \
                       dependencies (ids) and dependents (ids).",
        annotations(read_only_hint = true)
    )]
    async fn get(
        &self,
        Parameters(args): Parameters<GetArgs>,
        request: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let version = args.version.map_or("#f".to_string(), |v| v.to_string());
        let expr = format!(
            "(let ((m (arb:get-metadata {id} {version})))
               (if (arb:error? m) m
                   (append m (list (cons \"dependents\" (arb:get-dependents {id} {version}))))))",
            id = args.id
        );
        Ok(match self.knowledge(&request, expr).await? {
            Ok(node @ Value::Object(_)) => CallToolResult::structured(tidy_node(node)),
            Ok(other) => failed("internal", &format!("get: unexpected answer {other}")),
            Err(result) => result,
        })
    }

    #[tool(
        description = "Store new code in the knowledge base (a new version): Scheme source that \
                       must read, with a description, a type, the names it is found and used by, \
                       and the nodes it depends on. Returns {id, version}. Refused in the \
                       read-only tier."
    )]
    async fn create(
        &self,
        Parameters(args): Parameters<CreateArgs>,
        request: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let text = |s: &Option<String>| s.as_deref().map_or("#f".to_string(), scheme_string);
        let names: Vec<String> = args.names.iter().map(|n| scheme_string(n)).collect();
        let deps: Vec<String> = args
            .dependencies
            .iter()
            .map(|d| match d {
                Dependency::Id(id) => id.to_string(),
                Dependency::Named { id, name } => format!("(cons {id} {})", scheme_string(name)),
            })
            .collect();
        let expr = format!(
            "(arb:create {} (list {}) {} {} (list {}))",
            scheme_string(&args.code),
            deps.join(" "),
            text(&args.description),
            text(&args.kind),
            names.join(" "),
        );
        Ok(match self.knowledge(&request, expr).await? {
            Ok(Value::Object(reply)) => CallToolResult::structured(json!({
                "id": reply.get("s-expression-id"),
                "version": reply.get("new-version-id"),
            })),
            Ok(other) => failed("internal", &format!("create: unexpected answer {other}")),
            Err(result) => result,
        })
    }

    #[tool(
        description = "Save this session's definitions (data, records, procedures, closures with \
                       their state) under a name, replacing what the name held; `restore` brings \
                       them back, in this connection or a later one."
    )]
    async fn snapshot(
        &self,
        Parameters(args): Parameters<NameArgs>,
        request: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.with_snapshot(&request, args.name, |e, store, name| {
            match e
                .session
                .save_session()
                .and_then(|bytes| snapshots::save(store, &name, &bytes).map(|p| (bytes.len(), p)))
            {
                Ok((bytes, path)) => CallToolResult::structured(json!({
                    "name": name, "bytes": bytes, "path": path.display().to_string(),
                })),
                Err(m) => failed("snapshot-error", &format!("the session was not saved: {m}")),
            }
        })
        .await
    }

    #[tool(
        description = "Replace this session's definitions with those saved under a name \
                       (`snapshot`); definitions made since are unbound. Macros come along; one \
                       made by another macro or in a local scope is not saved (`skipped` names it). Returns {name, bindings, skipped}."
    )]
    async fn restore(
        &self,
        Parameters(args): Parameters<NameArgs>,
        request: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.with_snapshot(
            &request,
            args.name,
            |e, store, name| match snapshots::load(store, &name)
                .and_then(|b| e.session.restore_session(&b))
            {
                Ok(restored) => CallToolResult::structured(json!({
                    "name": name, "bindings": restored.bindings, "skipped": restored.skipped,
                })),
                Err(m) => failed("snapshot-error", &format!("nothing was restored: {m}")),
            },
        )
        .await
    }

    #[tool(
        description = "The saved sessions: {snapshots: [{name, bytes, saved}]}, `saved` in seconds \
                       since the Unix epoch.",
        annotations(read_only_hint = true)
    )]
    async fn snapshots(
        &self,
        Parameters(_): Parameters<NoArgs>,
        request: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(&request, move |e| {
            let store = e.session.store().path().to_path_buf();
            match snapshots::list(&store) {
                Ok(list) => {
                    CallToolResult::structured(json!({"snapshots": list.iter().map(|s| json!({
                    "name": s.name,
                    "bytes": s.bytes,
                    "saved": s.modified
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map(|d| d.as_secs()),
                })).collect::<Vec<_>>()}))
                }
                Err(m) => failed("snapshot-error", &m),
            }
        })
        .await
    }
}

impl Server {
    /// Evaluates `expr`, an `arb:` call, in the knowledge tools' engine
    /// and reads its value as JSON: `Err` holds the tool's failure (an
    /// `arb:` error, a limit, a store that cannot be read).
    async fn knowledge(
        &self,
        request: &RequestContext<RoleServer>,
        expr: String,
    ) -> Result<Result<Value, CallToolResult>, ErrorData> {
        self.run(request, move |e| {
            if e.knowledge.is_none() {
                let store = e.session.store().clone();
                match Session::new(&e.settings, &e.stopper, store) {
                    Ok(s) => e.knowledge = Some(s),
                    Err(f) => return Err(failed(crate::exit::STORE_ERROR, &f.message)),
                }
            }
            let Some(session) = e.knowledge.as_mut() else {
                return Err(failed("internal", "the knowledge engine did not start"));
            };
            let source = format!("(display (scheme->json {expr}))");
            let outcome = session.eval(&e.stopper, e.settings.timeout, &source);
            if let Some(m) = &outcome.store_error {
                return Err(failed(crate::exit::STORE_ERROR, m));
            }
            if let Some(error) = &outcome.evaluation.error {
                let object = report::json(&outcome, &e.settings, report::exit_of(&outcome));
                let kind = object["error"]["kind"]
                    .as_str()
                    .unwrap_or(arbores_core::ErrorKind::Runtime.as_str())
                    .to_string();
                return Err(failed(&kind, &error.message));
            }
            let value: Value = serde_json::from_str(&outcome.evaluation.output).map_err(|err| {
                failed(
                    "internal",
                    &format!(
                        "the engine's answer is not JSON ({err}): {}",
                        outcome.evaluation.output
                    ),
                )
            })?;
            // An `arb:` failure: an object whose first entry is "error".
            if let Some(kind) = value.get("error").and_then(Value::as_str) {
                let mut error = value.as_object().cloned().unwrap_or_default();
                error.insert("kind".into(), Value::String(kind.to_string()));
                error.remove("error");
                return Err(CallToolResult::structured_error(json!({"error": error})));
            }
            Ok(value)
        })
        .await
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    /// The router's, with a message that names the tool a client asked
    /// for and the tools there are.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.tool_router.get(&request.name).is_none() {
            let mut names: Vec<String> = self
                .tool_router
                .list_all()
                .into_iter()
                .map(|t| t.name.to_string())
                .collect();
            names.sort();
            return Err(ErrorData::invalid_params(
                format!(
                    "no tool named {:?}; the tools are {}",
                    request.name,
                    names.join(", ")
                ),
                None,
            ));
        }
        let name = request.name.clone();
        let call = ToolCallContext::new(self, request, context);
        // Arguments that do not fit the schema come back from the router
        // as a tool error with text only; give them the shape of every
        // other error.
        Ok(match self.tool_router.call(call).await? {
            CallToolResponse::Complete(result)
                if result.is_error == Some(true) && result.structured_content.is_none() =>
            {
                let text: Vec<&str> = result
                    .content
                    .iter()
                    .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
                    .collect();
                let message = text.join("\n");
                let message = message
                    .strip_prefix("failed to deserialize parameters: ")
                    .unwrap_or(&message);
                let message = format!("the arguments do not fit the tool's schema: {message}");
                if name == "eval" {
                    invalid_eval(message).into()
                } else {
                    invalid(message).into()
                }
            }
            other => other,
        })
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("arbores", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.instructions.clone())
    }
}

/// Hits by meaning when the call gives no `limit` (`arb:semantic-search`'s
/// default).
const DEFAULT_MEANING_LIMIT: u64 = 10;

/// A node or a search hit as the tools show it: `names` for the `arb:`
/// procedures' `symbol-names`, null for an absent (`#f`) description,
/// type or code.
fn tidy_node(node: Value) -> Value {
    let Value::Object(fields) = node else {
        return node;
    };
    let mut out = serde_json::Map::new();
    for (key, value) in fields {
        let key = if key == "symbol-names" {
            "names".to_string()
        } else {
            key
        };
        let value = match (key.as_str(), value) {
            ("description" | "type" | "code", Value::Bool(false)) => Value::Null,
            (_, v) => v,
        };
        out.insert(key, value);
    }
    Value::Object(out)
}

/// `text` as a Scheme string literal.
fn scheme_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => out.push_str(&format!("\\x{:x};", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_read_back_as_written() {
        let mut engine = arbores_core::Engine::new();
        for text in [
            "plain",
            "quote \" and \\ back",
            "line\nbreak\ttab\u{0}nul",
            "平方 ✓",
        ] {
            let ev = engine.eval(&format!("(string=? {} {})", scheme_string(text), {
                // The same text built from its code points.
                let codes: Vec<String> = text.chars().map(|c| (c as u32).to_string()).collect();
                format!(
                    "(list->string (map integer->char (list {})))",
                    codes.join(" ")
                )
            }));
            assert_eq!(ev.value.as_deref(), Some("#t"), "{text:?}: {ev:?}");
        }
    }
}
