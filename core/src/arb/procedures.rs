//! The `arb:` procedures (docs/API.md is their reference) and the `%arb:`
//! primitives the prelude builds `arb:transaction`, `arb:eval` and
//! `arb:eval-readonly` on.
//!
//! Every failure is an error alist; every procedure checks the tier of the
//! running code before it does anything.

use crate::builtins::{KCtx, PrimTable};
use crate::heap::Heap;
use crate::reader;
use crate::repo::builtins::tier_of;
use crate::repo::forest::{ForestError, NodeChanges, Op};
use crate::repo::index::{hybrid, SemanticHit, SemanticQuery, SymbolIndex, SymbolMode};
use crate::repo::node::{is_reserved, Node, NodeId, VersionId};
use crate::repo::Tier;
use crate::symbol::SymbolTable;
use crate::value::Value;

use super::closure;
use super::deltas::{self, op_summary, transaction_summary};
use super::values::{
    alist, alist_get, as_id, as_name, as_string, id, ids, is_error_alist, list_items, opt_string,
    shown, string, strings, ArbError, Args, Extra,
};

/// Most hits a search returns unless told otherwise.
const DEFAULT_SYMBOL_LIMIT: usize = 100;
const DEFAULT_TOP_K: usize = 10;
const DEFAULT_REFLOG_LIMIT: usize = 50;
const DEFAULT_CHAIN_LIMIT: usize = 100;

/// What one node may hold. The knowledge base lives outside the Scheme
/// heap and its memory cap, so each node is bounded instead: a runaway
/// program cannot store a gigabyte of code in one call.
const MAX_CODE_BYTES: usize = 1 << 20;
const MAX_TEXT_BYTES: usize = 64 << 10;
const MAX_NAMES: usize = 64;
const MAX_NAME_BYTES: usize = 256;
const MAX_DEPENDENCIES: usize = 4096;

fn too_big(who: &str, what: &str, size: usize, max: usize, unit: &str) -> ArbError {
    ArbError::argument(
        who,
        format!("{what} has {size} {unit}; a node holds at most {max}"),
    )
}

/// Registers knowledge primitives written as `fn(&mut KCtx, &[Value]) ->
/// Result<Value, ArbError>`: a failure becomes its error alist.
macro_rules! knowledge {
    ($t:expr, $($name:literal => $f:path),* $(,)?) => {
        $($t.knowledge($name, |ctx, args| match $f(ctx, args) {
            Ok(v) => v,
            Err(e) => e.to_value(ctx.heap),
        });)*
    };
}

pub fn register(t: &mut PrimTable) {
    knowledge!(t,
        "arb:current-version" => current_version,
        "arb:reflog" => reflog,
        "arb:version-info" => version_info,
        "arb:version-chain" => version_chain,
        "arb:version-successors" => version_successors,
        "arb:switch-version" => switch_version,
        "arb:semantic-search" => semantic_search,
        "arb:search-by-symbol" => search_by_symbol,
        "arb:get-metadata" => get_metadata,
        "arb:get-dependencies" => get_dependencies,
        "arb:get-dependents" => get_dependents,
        "arb:closure" => closure_text,
        "arb:create" => create,
        "arb:update" => update,
        "arb:delete" => delete,
        "%arb:check-tier" => check_tier,
        "%arb:tx-begin" => tx_begin,
        "%arb:tx-commit" => tx_commit,
        "%arb:tx-abort" => tx_abort,
    );
    t.add("%arb:error-alist?", 1, Some(1), |ctx, args| {
        Ok(Value::Bool(is_error_alist(ctx.heap, args[0])))
    });
    t.add("%condition-text", 1, Some(1), |ctx, args| {
        let text = crate::printer::condition_text(ctx.heap, ctx.syms, args[0]);
        Ok(ctx.heap.string(&text))
    });
}

// ---- helpers ----------------------------------------------------------------

/// Refuses a call the running code's tier does not allow.
fn need(ctx: &KCtx, who: &str) -> Result<(), ArbError> {
    let required = tier_of(who).unwrap_or(Tier::System);
    need_tier(ctx, who, required)
}

fn need_tier(ctx: &KCtx, who: &str, required: Tier) -> Result<(), ArbError> {
    if ctx.tier <= required {
        return Ok(());
    }
    Err(ArbError::new(
        "permission-denied",
        format!(
            "{who} needs the {} tier; this code runs in the {} tier",
            required.as_str(),
            ctx.tier.as_str()
        ),
    )
    .with("procedure", Extra::Str(who.to_string())))
}

fn forest_error(who: &str, e: ForestError) -> ArbError {
    let mut err = ArbError::new(e.kind(), format!("{who}: {e}"));
    match e {
        ForestError::VersionNotFound(v) => err = err.with("version-id", Extra::Id(v)),
        ForestError::NodeNotFound(id) | ForestError::ReservedId(id) => {
            err = err.with("s-expression-id", Extra::Id(id))
        }
        ForestError::DependencyNotFound { node, dependency } => {
            if let Some(n) = node {
                err = err.with("s-expression-id", Extra::Id(n));
            }
            err = err.with("dependency", Extra::Id(dependency));
        }
        _ => {}
    }
    err
}

fn node_not_found(who: &str, id: NodeId) -> ArbError {
    forest_error(who, ForestError::NodeNotFound(id))
}

/// The optional version argument at `i`: `None` for the working state
/// (the current version, with the changes of an open transaction).
fn version_arg(ctx: &KCtx, a: &Args, i: usize) -> Result<Option<VersionId>, ArbError> {
    let v = a.opt_id(ctx.heap, ctx.syms, i)?;
    if let Some(v) = v {
        if !ctx.k.forest.contains_version(v) {
            return Err(forest_error(a.who, ForestError::VersionNotFound(v)));
        }
    }
    Ok(v)
}

/// Whether a read at `version` can use the indexes (which describe the
/// working state).
fn indexed(ctx: &KCtx, version: Option<VersionId>) -> bool {
    match version {
        None => true,
        Some(v) => v == ctx.k.current() && ctx.k.depth() == 0,
    }
}

fn node_at<'k>(
    ctx: &'k KCtx,
    who: &str,
    version: Option<VersionId>,
    id: NodeId,
) -> Result<&'k Node, ArbError> {
    ctx.k
        .get_at(version, id)
        .map_err(|e| forest_error(who, e))?
        .ok_or_else(|| node_not_found(who, id))
}

fn timestamp_text(t: crate::repo::forest::Timestamp) -> String {
    t.to_iso8601()
}

// ---- versions -------------------------------------------------------------------

fn current_version(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("arb:current-version", args);
    a.arity(0, 0)?;
    need(ctx, a.who)?;
    Ok(id(ctx.heap, ctx.k.current()))
}

fn reflog(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("arb:reflog", args);
    a.arity(0, 2)?;
    need(ctx, a.who)?;
    let skip = a.count(ctx.heap, ctx.syms, 0, 0)?;
    let limit = a.count(ctx.heap, ctx.syms, 1, DEFAULT_REFLOG_LIMIT)?;
    let entries: Vec<_> = ctx
        .k
        .forest
        .reflog(skip, limit)
        .map_err(|e| forest_error(a.who, e))?
        .into_iter()
        .map(|e| {
            (
                e.version,
                timestamp_text(e.timestamp),
                e.description.clone(),
            )
        })
        .collect();
    let mut out = Vec::with_capacity(entries.len());
    for (v, t, d) in entries {
        let v = id(ctx.heap, v);
        let t = string(ctx.heap, &t);
        let d = string(ctx.heap, &d);
        out.push(alist(
            ctx.heap,
            &[("version-id", v), ("timestamp", t), ("description", d)],
        ));
    }
    Ok(ctx.heap.list(&out))
}

fn version_info(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("arb:version-info", args);
    a.arity(1, 1)?;
    need(ctx, a.who)?;
    let v = a.id(ctx.heap, ctx.syms, 0)?;
    let record = ctx
        .k
        .forest
        .version_info(v)
        .map_err(|e| forest_error(a.who, e))?
        .clone();
    let (parent, forward, reverse) = match record.parent {
        None => (Value::Bool(false), Value::Bool(false), Value::Bool(false)),
        Some(p) => (
            id(ctx.heap, p),
            deltas::ops_value(ctx.heap, ctx.syms, &record.forward),
            deltas::ops_value(ctx.heap, ctx.syms, &record.reverse),
        ),
    };
    Ok(alist(
        ctx.heap,
        &[
            ("parent-version", parent),
            ("forward-delta", forward),
            ("reverse-delta", reverse),
        ],
    ))
}

fn version_chain(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("arb:version-chain", args);
    a.arity(1, 2)?;
    need(ctx, a.who)?;
    let v = a.id(ctx.heap, ctx.syms, 0)?;
    let limit = a.count(ctx.heap, ctx.syms, 1, DEFAULT_CHAIN_LIMIT)?;
    let chain = ctx
        .k
        .forest
        .chain(v, limit)
        .map_err(|e| forest_error(a.who, e))?;
    Ok(ids(ctx.heap, chain))
}

fn version_successors(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("arb:version-successors", args);
    a.arity(1, 1)?;
    need(ctx, a.who)?;
    let v = a.id(ctx.heap, ctx.syms, 0)?;
    let succ = ctx
        .k
        .forest
        .successors(v)
        .map_err(|e| forest_error(a.who, e))?
        .to_vec();
    Ok(ids(ctx.heap, succ))
}

fn switch_version(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("arb:switch-version", args);
    a.arity(1, 1)?;
    need(ctx, a.who)?;
    let v = a.id(ctx.heap, ctx.syms, 0)?;
    let from = ctx.k.current();
    let ts = ctx.timestamp();
    ctx.k
        .switch(v, &format!("switch from version {from} to {v}"), ts)
        .map_err(|e| forest_error(a.who, e))?;
    Ok(id(ctx.heap, v))
}

// ---- searches ----------------------------------------------------------------------

fn semantic_search(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("arb:semantic-search", args);
    a.arity(1, 5)?;
    need(ctx, a.who)?;
    let query = a.string(ctx.heap, ctx.syms, 0)?;
    let top_k = a.count(ctx.heap, ctx.syms, 1, DEFAULT_TOP_K)?;
    let threshold = match a.opt(2) {
        None => 0.0,
        Some(v) => match crate::number::Num::from_value(ctx.heap, v) {
            Some(n) if n.to_f64().is_finite() && (0.0..=1.0).contains(&n.to_f64()) => {
                n.to_f64() as f32
            }
            _ => {
                return Err(ArbError::argument(
                    a.who,
                    format!(
                        "the threshold must be a number from 0 to 1, got {}",
                        shown(ctx.heap, ctx.syms, v)
                    ),
                ))
            }
        },
    };
    let kind = a.opt_string(ctx.heap, ctx.syms, 3)?;
    let version = version_arg(ctx, &a, 4)?;
    let q = SemanticQuery {
        top_k,
        threshold,
        kind: kind.as_deref(),
    };
    let err = |e: crate::repo::index::IndexError| {
        ArbError::new(e.kind(), format!("{}: {}", a.who, e.message()))
    };
    let hits = if indexed(ctx, version) {
        // Loading the stored index (or building it, when there is none
        // this engine can use) and graph work left by switches are done
        // here, when a search needs them; long work is reported as it goes.
        let host = &mut *ctx.host;
        let mut report = |text: &str| {
            host.write_error(&format!("arbores: {text}\n"));
        };
        ctx.k
            .search_with(&query, &q, &mut report)
            .map_err(|e| forest_error(a.who, e))?
            .map_err(err)?
    } else {
        // A node that cannot be read ends the scan; the search then fails
        // with what went wrong rather than answer from part of the version.
        let mut unreadable = None;
        let nodes = ctx
            .k
            .nodes_at(version)
            .map_err(|e| forest_error(a.who, e))?
            .map_while(|n| n.map_err(|e| unreadable = Some(e)).ok());
        let hits = hybrid::scan(nodes, ctx.k.indexes.scoring(), &query, &q).map_err(err)?;
        if let Some(e) = unreadable {
            return Err(forest_error(a.who, e.into()));
        }
        hits
    };
    let mut out = Vec::with_capacity(hits.len());
    for SemanticHit { id: node, score } in hits {
        let desc = node_at(ctx, a.who, version, node)
            .ok()
            .and_then(|n| n.description.clone());
        let idv = id(ctx.heap, node);
        // Four decimals: the embedding is f32, more digits would be noise.
        let score = Value::Float((f64::from(score) * 10_000.0).round() / 10_000.0);
        let d = opt_string(ctx.heap, desc.as_deref());
        out.push(alist(
            ctx.heap,
            &[("id", idv), ("score", score), ("description", d)],
        ));
    }
    Ok(ctx.heap.list(&out))
}

fn search_by_symbol(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("arb:search-by-symbol", args);
    a.arity(1, 4)?;
    need(ctx, a.who)?;
    let pattern = a.string(ctx.heap, ctx.syms, 0)?;
    let mode = match a.opt(1) {
        None => SymbolMode::Prefix,
        Some(v) => match as_name(ctx.heap, ctx.syms, v).as_deref().and_then(SymbolMode::parse) {
            Some(m) => m,
            None => {
                return Err(ArbError::argument(
                    a.who,
                    format!(
                        "the mode must be \"exact\", \"prefix\", \"wildcard\", \"regex\" or \"fuzzy\", got {}",
                        shown(ctx.heap, ctx.syms, v)
                    ),
                ))
            }
        },
    };
    let limit = a.count(ctx.heap, ctx.syms, 2, DEFAULT_SYMBOL_LIMIT)?;
    let version = version_arg(ctx, &a, 3)?;
    let search = |ix: &SymbolIndex| {
        ix.search(&pattern, mode, limit)
            .map_err(|e| ArbError::new(e.kind(), format!("{}: {}", a.who, e.message())))
    };
    let hits = if indexed(ctx, version) {
        search(&ctx.k.indexes.symbols)?
    } else {
        match ctx
            .k
            .forest
            .indexes_of(version.unwrap_or(0))
            .ok()
            .and_then(|maps| {
                maps.iter()
                    .find(|(n, _)| n == crate::repo::index::SYMBOLS)
                    .map(|(_, m)| SymbolIndex::from_map(m.clone()))
            }) {
            // An older version's own persisted index.
            Some(ix) => search(&ix)?,
            None => {
                let mut ix = SymbolIndex::new();
                for n in ctx
                    .k
                    .nodes_at(version)
                    .map_err(|e| forest_error(a.who, e))?
                {
                    let n = n.map_err(|e| forest_error(a.who, e.into()))?;
                    ix.insert(n).map_err(|e| forest_error(a.who, e.into()))?;
                }
                search(&ix)?
            }
        }
    };
    let mut rows = Vec::with_capacity(hits.len());
    for h in hits {
        let n = node_at(ctx, a.who, version, h.id)?;
        rows.push((h.id, n.symbol_names.clone(), n.description.clone()));
    }
    let mut out = Vec::with_capacity(rows.len());
    for (node, names, desc) in rows {
        let idv = id(ctx.heap, node);
        let names = strings(ctx.heap, &names);
        let d = opt_string(ctx.heap, desc.as_deref());
        out.push(alist(
            ctx.heap,
            &[("id", idv), ("symbol-names", names), ("description", d)],
        ));
    }
    Ok(ctx.heap.list(&out))
}

// ---- nodes -------------------------------------------------------------------------

fn get_metadata(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("arb:get-metadata", args);
    a.arity(1, 2)?;
    need(ctx, a.who)?;
    let node_id = a.id(ctx.heap, ctx.syms, 0)?;
    let version = version_arg(ctx, &a, 1)?;
    let n = node_at(ctx, a.who, version, node_id)?.clone();
    let idv = id(ctx.heap, n.id);
    let desc = opt_string(ctx.heap, n.description.as_deref());
    let kind = opt_string(ctx.heap, n.kind.as_deref());
    let names = strings(ctx.heap, &n.symbol_names);
    let deps = ids(ctx.heap, n.dependencies.iter().map(|(d, _)| *d));
    let code = opt_string(ctx.heap, n.code.as_deref());
    Ok(alist(
        ctx.heap,
        &[
            ("id", idv),
            ("description", desc),
            ("type", kind),
            ("symbol-names", names),
            ("dependencies", deps),
            ("code", code),
        ],
    ))
}

fn get_dependencies(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("arb:get-dependencies", args);
    a.arity(1, 2)?;
    need(ctx, a.who)?;
    let node_id = a.id(ctx.heap, ctx.syms, 0)?;
    let version = version_arg(ctx, &a, 1)?;
    let deps: Vec<NodeId> = node_at(ctx, a.who, version, node_id)?
        .dependencies
        .iter()
        .map(|(d, _)| *d)
        .collect();
    Ok(ids(ctx.heap, deps))
}

fn get_dependents(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("arb:get-dependents", args);
    a.arity(1, 2)?;
    need(ctx, a.who)?;
    let node_id = a.id(ctx.heap, ctx.syms, 0)?;
    let version = version_arg(ctx, &a, 1)?;
    node_at(ctx, a.who, version, node_id)?;
    let mut found: Vec<NodeId> = if indexed(ctx, version) {
        ctx.k
            .indexes
            .dependencies
            .dependents(node_id)
            .map_err(|e| forest_error(a.who, e.into()))?
    } else {
        let mut found = Vec::new();
        for n in ctx
            .k
            .nodes_at(version)
            .map_err(|e| forest_error(a.who, e))?
        {
            let n = n.map_err(|e| forest_error(a.who, e.into()))?;
            if n.dependencies.iter().any(|(d, _)| *d == node_id) {
                found.push(n.id);
            }
        }
        found
    };
    found.sort_unstable();
    found.dedup();
    Ok(ids(ctx.heap, found))
}

fn closure_text(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("arb:closure", args);
    a.arity(1, 2)?;
    need(ctx, a.who)?;
    let v = a.get(0);
    let roots: Vec<NodeId> = match as_id(ctx.heap, v) {
        Some(single) => vec![single],
        None => list_items(ctx.heap, v)
            .and_then(|items| items.iter().map(|x| as_id(ctx.heap, *x)).collect())
            .ok_or_else(|| {
                ArbError::argument(
                    a.who,
                    format!(
                        "expected a list of ids, got {}",
                        shown(ctx.heap, ctx.syms, v)
                    ),
                )
            })?,
    };
    let version = version_arg(ctx, &a, 1)?;
    let text = closure::standalone(ctx.k, ctx.syms, &roots, version)?;
    Ok(string(ctx.heap, &text))
}

// ---- changes -------------------------------------------------------------------------

/// Code given to `arb:create` or `arb:update`: it must read.
fn checked_code(
    heap: &Heap,
    syms: &mut SymbolTable,
    who: &str,
    v: Value,
) -> Result<String, ArbError> {
    let Some(code) = as_string(heap, v) else {
        return Err(ArbError::argument(
            who,
            format!("the code must be a string, got {}", shown(heap, syms, v)),
        ));
    };
    if code.len() > MAX_CODE_BYTES {
        return Err(too_big(
            who,
            "the code",
            code.len(),
            MAX_CODE_BYTES,
            "bytes",
        ));
    }
    // Read into a table of its own: stored code is only checked here, and
    // interning its names in the session's table would keep every name of
    // every node stored alive (and count it against the memory cap).
    let mut scratch = SymbolTable::default();
    match reader::read_all(&code, &mut scratch) {
        Ok(forms) if forms.is_empty() => Err(ArbError::new(
            "syntax-error",
            format!("{who}: the code is empty: it must hold at least one form"),
        )),
        Ok(_) => Ok(code),
        Err(e) => Err(ArbError::new(
            "syntax-error",
            format!(
                "{who}: the code does not read: {}:{}: {}",
                e.pos.line, e.pos.col, e.message
            ),
        )),
    }
}

/// Dependencies: a list of `(ID . local-name)` pairs or bare ids (a bare
/// id is bound by the dependency's first symbol name, if it has one).
fn dependencies_arg(ctx: &KCtx, who: &str, v: Value) -> Result<Vec<(NodeId, String)>, ArbError> {
    let bad = |what: &str, x: Value| {
        ArbError::argument(
            who,
            format!(
                "dependencies must be a list of (id . \"local-name\") or ids; {what}: {}",
                shown(ctx.heap, ctx.syms, x)
            ),
        )
    };
    if matches!(v, Value::Bool(false)) {
        return Ok(Vec::new());
    }
    let items = list_items(ctx.heap, v).ok_or_else(|| bad("not a list", v))?;
    let mut out: Vec<(NodeId, String)> = Vec::with_capacity(items.len());
    for item in items {
        let (dep, local) = match as_id(ctx.heap, item) {
            Some(dep) => {
                let name = ctx
                    .k
                    .get(dep)
                    .map_err(|e| forest_error(who, e))?
                    .and_then(|n| n.symbol_names.first().cloned())
                    .unwrap_or_default();
                (dep, name)
            }
            None => match ctx.heap.pair(item) {
                Some((d, n)) => {
                    let dep = as_id(ctx.heap, d).ok_or_else(|| bad("not an id", d))?;
                    let name = match n {
                        Value::Bool(false) => String::new(),
                        _ => as_name(ctx.heap, ctx.syms, n)
                            .ok_or_else(|| bad("a local name must be a string", n))?,
                    };
                    (dep, name)
                }
                None => return Err(bad("bad entry", item)),
            },
        };
        if let Some((_, existing)) = out.iter().find(|(d, _)| *d == dep) {
            if *existing != local {
                return Err(ArbError::argument(
                    who,
                    format!("dependency {dep} is given twice with different local names"),
                ));
            }
            continue;
        }
        if local.len() > MAX_NAME_BYTES {
            return Err(too_big(
                who,
                "a local name",
                local.len(),
                MAX_NAME_BYTES,
                "bytes",
            ));
        }
        out.push((dep, local));
        if out.len() > MAX_DEPENDENCIES {
            return Err(too_big(
                who,
                "the dependency list",
                out.len(),
                MAX_DEPENDENCIES,
                "entries",
            ));
        }
    }
    Ok(out)
}

fn names_arg(ctx: &KCtx, who: &str, v: Value) -> Result<Vec<String>, ArbError> {
    if matches!(v, Value::Bool(false)) {
        return Ok(Vec::new());
    }
    let bad = || {
        ArbError::argument(
            who,
            format!(
                "symbol names must be a list of strings, got {}",
                shown(ctx.heap, ctx.syms, v)
            ),
        )
    };
    let items = list_items(ctx.heap, v).ok_or_else(bad)?;
    if items.len() > MAX_NAMES {
        return Err(too_big(
            who,
            "the list of symbol names",
            items.len(),
            MAX_NAMES,
            "names",
        ));
    }
    let mut out = Vec::with_capacity(items.len());
    for i in items {
        let name = as_name(ctx.heap, ctx.syms, i).ok_or_else(bad)?;
        if name.len() > MAX_NAME_BYTES {
            return Err(too_big(
                who,
                "a symbol name",
                name.len(),
                MAX_NAME_BYTES,
                "bytes",
            ));
        }
        out.push(name);
    }
    Ok(out)
}

fn bounded_text(who: &str, what: &str, t: Option<String>) -> Result<Option<String>, ArbError> {
    match &t {
        Some(s) if s.len() > MAX_TEXT_BYTES => {
            Err(too_big(who, what, s.len(), MAX_TEXT_BYTES, "bytes"))
        }
        _ => Ok(t),
    }
}

/// The result of a change: `(("s-expression-id" . ID) ("new-version-id" . V))`,
/// with `#f` as the version inside a transaction.
fn change_result(ctx: &mut KCtx, node: NodeId, version: Option<VersionId>) -> Value {
    let n = id(ctx.heap, node);
    let v = match version {
        Some(v) => id(ctx.heap, v),
        None => Value::Bool(false),
    };
    alist(ctx.heap, &[("s-expression-id", n), ("new-version-id", v)])
}

fn create(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("arb:create", args);
    a.arity(1, 5)?;
    need(ctx, a.who)?;
    let code = checked_code(ctx.heap, ctx.syms, a.who, a.get(0))?;
    let dependencies = dependencies_arg(ctx, a.who, a.get(1))?;
    let description = bounded_text(
        a.who,
        "the description",
        a.opt_string(ctx.heap, ctx.syms, 2)?,
    )?;
    let kind = bounded_text(a.who, "the type", a.opt_string(ctx.heap, ctx.syms, 3)?)?;
    let symbol_names = names_arg(ctx, a.who, a.get(4))?;
    let node = Node {
        id: 0,
        code: Some(code),
        description,
        symbol_names,
        kind,
        dependencies,
    };
    let summary_node = node.clone();
    let ts = ctx.timestamp();
    prepare_commit(ctx, a.who)?;
    let done = ctx
        .k
        .create(
            node,
            &|id| {
                let mut n = summary_node.clone();
                n.id = id;
                op_summary(&Op::Create(n))
            },
            ts,
        )
        .map_err(|e| forest_error(a.who, e))?;
    Ok(change_result(ctx, done.id, done.version))
}

/// Before a change whose version stores the indexes: the lexical index
/// built now if it has to be, with progress on the standard error
/// (`Knowledge::prepare_lexical`).
fn prepare_commit(ctx: &mut KCtx, who: &str) -> Result<(), ArbError> {
    let host = &mut *ctx.host;
    let mut report = |text: &str| {
        host.write_error(&format!("arbores: {text}\n"));
    };
    ctx.k
        .prepare_lexical(&mut report)
        .map_err(|e| forest_error(who, e))
}

/// The first argument of `arb:update` and `arb:delete`: the id of a node
/// of the working state that is not a builtin.
fn changeable_node(ctx: &KCtx, a: &Args) -> Result<NodeId, ArbError> {
    let node_id = a.id(ctx.heap, ctx.syms, 0)?;
    if is_reserved(node_id) {
        return Err(forest_error(a.who, ForestError::ReservedId(node_id)));
    }
    if ctx
        .k
        .get(node_id)
        .map_err(|e| forest_error(a.who, e))?
        .is_none()
    {
        return Err(node_not_found(a.who, node_id));
    }
    Ok(node_id)
}

fn update(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("arb:update", args);
    a.arity(2, 2)?;
    need(ctx, a.who)?;
    let node_id = changeable_node(ctx, &a)?;
    let fields = a.get(1);
    let entries = list_items(ctx.heap, fields).ok_or_else(|| {
        ArbError::argument(
            a.who,
            format!(
                "expected an alist of changes ((\"field\" . value) ...), got {}",
                shown(ctx.heap, ctx.syms, fields)
            ),
        )
    })?;
    let mut changes = NodeChanges::default();
    for e in entries {
        let Some((k, v)) = ctx.heap.pair(e) else {
            return Err(ArbError::argument(
                a.who,
                format!(
                    "a change must be (\"field\" . value), got {}",
                    shown(ctx.heap, ctx.syms, e)
                ),
            ));
        };
        let key = as_name(ctx.heap, ctx.syms, k).unwrap_or_default();
        let opt_text = |ctx: &KCtx, what: &str| -> Result<Option<String>, ArbError> {
            match v {
                Value::Bool(false) => Ok(None),
                _ => as_string(ctx.heap, v).map(Some).ok_or_else(|| {
                    ArbError::argument(
                        a.who,
                        format!(
                            "{what} must be a string or #f, got {}",
                            shown(ctx.heap, ctx.syms, v)
                        ),
                    )
                }),
            }
        };
        match key.as_str() {
            "code" => {
                changes.code = Some(Some(checked_code(ctx.heap, ctx.syms, a.who, v)?));
            }
            "description" => {
                changes.description = Some(bounded_text(
                    a.who,
                    "the description",
                    opt_text(ctx, "the description")?,
                )?)
            }
            "type" => {
                changes.kind = Some(bounded_text(a.who, "the type", opt_text(ctx, "the type")?)?)
            }
            "symbol-names" => changes.symbol_names = Some(names_arg(ctx, a.who, v)?),
            "dependencies" => changes.dependencies = Some(dependencies_arg(ctx, a.who, v)?),
            _ => {
                return Err(ArbError::argument(
                    a.who,
                    format!(
                        "unknown field {}: the fields are \"code\", \"description\", \"type\", \"symbol-names\" and \"dependencies\"",
                        shown(ctx.heap, ctx.syms, k)
                    ),
                ))
            }
        }
    }
    if changes.is_empty() {
        return Err(ArbError::argument(a.who, "no field to change was given"));
    }
    let summary = op_summary(&Op::Update {
        id: node_id,
        changes: changes.clone(),
    });
    let ts = ctx.timestamp();
    prepare_commit(ctx, a.who)?;
    let done = ctx
        .k
        .update(node_id, changes, &|_| summary.clone(), ts)
        .map_err(|e| forest_error(a.who, e))?;
    Ok(change_result(ctx, done.id, done.version))
}

fn delete(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("arb:delete", args);
    a.arity(1, 1)?;
    need(ctx, a.who)?;
    let node_id = changeable_node(ctx, &a)?;
    // Deleting what others use would leave them broken: they go first.
    let mut users: Vec<NodeId> = ctx
        .k
        .indexes
        .dependencies
        .dependents(node_id)
        .map_err(|e| forest_error(a.who, e.into()))?
        .into_iter()
        .filter(|d| *d != node_id)
        .collect();
    users.sort_unstable();
    users.dedup();
    if !users.is_empty() {
        return Err(ArbError::new(
            "has-dependents",
            format!(
                "arb:delete: s-expression {node_id} is used by {}; delete or update them first",
                users
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .with("s-expression-id", Extra::Id(node_id))
        .with("dependents", Extra::Ids(users)));
    }
    let ts = ctx.timestamp();
    let summary = op_summary(&Op::Delete(node_id));
    prepare_commit(ctx, a.who)?;
    let done = ctx
        .k
        .delete(node_id, &|_| summary.clone(), ts)
        .map_err(|e| forest_error(a.who, e))?;
    Ok(change_result(ctx, done.id, done.version))
}

// ---- for the prelude ---------------------------------------------------------

/// `(%arb:check-tier LEVEL NAME)`: `#t`, or the permission error alist.
fn check_tier(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("%arb:check-tier", args);
    a.arity(2, 2)?;
    let level = a.count(ctx.heap, ctx.syms, 0, 0)?;
    let tier = u8::try_from(level)
        .ok()
        .and_then(Tier::from_level)
        .ok_or_else(|| ArbError::argument(a.who, "the tier must be 0, 1 or 2"))?;
    let who = a.string(ctx.heap, ctx.syms, 1)?;
    need_tier(ctx, &who, tier)?;
    Ok(Value::Bool(true))
}

/// `(%arb:tx-begin)`: opens a transaction; its token is the new depth.
fn tx_begin(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("arb:transaction", args);
    a.arity(0, 0)?;
    need(ctx, a.who)?;
    let depth = ctx.k.begin().map_err(|e| forest_error(a.who, e))?;
    Ok(Value::Int(depth as i64))
}

fn token_arg(ctx: &KCtx, a: &Args) -> Result<usize, ArbError> {
    let token = a.count(ctx.heap, ctx.syms, 0, 0)?;
    let depth = ctx.k.depth();
    if depth == 0 || token != depth {
        return Err(ArbError::new(
            "no-transaction",
            format!(
                "{}: transaction {token} is not the innermost open one",
                a.who
            ),
        ));
    }
    Ok(token)
}

/// `(%arb:tx-commit TOKEN LAST)`: commits the innermost transaction.
fn tx_commit(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("arb:transaction", args);
    a.arity(2, 2)?;
    need(ctx, a.who)?;
    token_arg(ctx, &a)?;
    let description = transaction_summary(ctx.k.pending_ops());
    let ts = ctx.timestamp();
    prepare_commit(ctx, a.who)?;
    let version = ctx
        .k
        .commit_transaction(&description, ts)
        .map_err(|e| forest_error(a.who, e))?;
    let v = match version {
        Some(v) => id(ctx.heap, v),
        None => Value::Bool(false),
    };
    Ok(alist(
        ctx.heap,
        &[("result", a.get(1)), ("new-version-id", v)],
    ))
}

/// `(%arb:tx-abort TOKEN INDEX ERROR)`: abandons the innermost transaction
/// and reports why: the error alist's kind and message, the index of the
/// failed body form and the version it rolled back to.
fn tx_abort(ctx: &mut KCtx, args: &[Value]) -> Result<Value, ArbError> {
    let a = Args::new("arb:transaction", args);
    a.arity(3, 3)?;
    token_arg(ctx, &a)?;
    ctx.k.abort_transaction();
    let error = a.get(2);
    let kind = alist_get(ctx.heap, error, "error").unwrap_or(Value::Bool(false));
    let kind = if matches!(kind, Value::Bool(false)) {
        string(ctx.heap, "transaction-aborted")
    } else {
        kind
    };
    let message = match alist_get(ctx.heap, error, "message") {
        Some(m) => m,
        None => string(ctx.heap, "the transaction was left before it finished"),
    };
    let failed_at = a.get(1);
    let current = id(ctx.heap, ctx.k.current());
    Ok(alist(
        ctx.heap,
        &[
            ("error", kind),
            ("message", message),
            ("failed-at", failed_at),
            ("rollback-version", current),
        ],
    ))
}
