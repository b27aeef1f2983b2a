// The page ↔ worker protocol, defined once: the message types each side
// sends, what each carries, and the default limits of an evaluation. Both
// app.js and worker.js import this file; neither spells a type as a string.
//
// Page → worker (ToWorker):
//   MODULE      {module}    the engine's wasm module, compiled by the page (a
//                           WebAssembly.Module), or null: then the worker
//                           fetches and compiles it itself. Every worker
//                           waits for it before it starts the engine.
//   EVAL        {id, source}
//   LIMITS      {steps, memoryBytes}
//   START_FRESH {discard}   give up a damaged store: move its records to a
//                           database "arbores-damaged-<time>" (discard: delete
//                           them), then save this session's knowledge base
//   QUERY       {id, query, args}   a read for the knowledge browser; one of
//                           Query below; answered by ANSWER with the same id
//   IMPORT      {id, bytes}  replace the knowledge base with a bundle file;
//                           answered by ANSWER {id, value: {version, blobs,
//                           kept}} (kept: the database holding what was
//                           stored before, or null) or {id, error}, then STORE
//   NEW_SESSION {}           forget the saved definitions: sent to a new worker
//                           before it is ready, so it starts with none
//
// Worker → page (ToPage):
//   READY       {limits, tier, store, knowledge, session, marks}  the engine is loaded
//                                                       (marks: when each step of its start ended)
//   RESULT      {id, result, ms, memory, store, knowledge, session}  result as Engine.eval gives it;
//               memory: the bytes the engine's linear memory has grown to
//   STORE       {store, knowledge}      after START_FRESH or IMPORT
//   LIMITS      {limits}                the limits now in force
//   LIMITS_ERROR {message}
//   ANSWER      {id, value} or {id, error}
//   CRASHED     {id, message}           the engine failed; this worker is done
//   FATAL       {message}               the engine could not be loaded
//
// session: {snapshots, restored, error}: snapshots, whether definitions are
// kept across Stop and reload; restored, {bindings, skipped} when a saved
// session was restored at start; error, why definitions could not be
// restored or saved (null when they were).
// store: {state, message, loaded, saved, moveFailed}; state is one of
// StoreState. knowledge: {version, nodes, reflog: [{version, timestamp,
// description}]} or {error}.

export const ToWorker = /* @__PURE__ */ Object.freeze({
  MODULE: 'module',
  EVAL: 'eval',
  LIMITS: 'limits',
  START_FRESH: 'start-fresh',
  QUERY: 'query',
  IMPORT: 'import',
  NEW_SESSION: 'new-session',
});

export const ToPage = /* @__PURE__ */ Object.freeze({
  READY: 'ready',
  RESULT: 'result',
  STORE: 'store',
  LIMITS: 'limits',
  LIMITS_ERROR: 'limits-error',
  ANSWER: 'answer',
  CRASHED: 'crashed',
  FATAL: 'fatal',
});

// The reads the knowledge browser asks for (QUERY.query), each answered by
// the engine (wasm/web, over the core's browse module) as plain data.
export const Query = /* @__PURE__ */ Object.freeze({
  NODES: 'nodes', //        {version, type, sort, offset, limit} → a page of nodes
  NODE: 'node', //          {id, version} → one node, its links and history
  SEARCH: 'search', //      {text, mode, version} → hits of both searches
  VERSIONS: 'versions', //  {} → every version, for the graph
  DIFF: 'diff', //          {from, to} → nodes added, removed, changed
  CLOSURE: 'closure', //    {id, version} → standalone source text
  EXPORT: 'export', //      {} → the knowledge base as a bundle file (bytes)
});

export const StoreState = /* @__PURE__ */ Object.freeze({
  SAVED: 'saved', //             everything the knowledge base holds is stored
  ERROR: 'error', //             the last save failed; the next evaluation tries again
  DAMAGED: 'damaged', //         what is stored cannot be loaded; nothing is written
  CONFLICT: 'conflict', //       another tab saved first; nothing more is written
  UNAVAILABLE: 'unavailable', // no IndexedDB: the knowledge base lives in memory
});

// Defaults for a playground: generous enough for real programs, small enough
// that a runaway loop ends on its own within seconds.
export const MIB = 1024 * 1024;
export const DEFAULT_LIMITS = /* @__PURE__ */ Object.freeze({ steps: 50_000_000, memoryBytes: 256 * MIB });
// A wasm32 memory is addressed with 32 bits: just under 4 GiB.
export const MAX_MEMORY_MIB = 4095;
