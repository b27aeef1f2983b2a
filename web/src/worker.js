// The engine's thread. It loads the wasm module, owns the one Engine of a
// session and its BrowserStore (the knowledge base in IndexedDB, kept by the
// wasm module: wasm/web/src/store.rs); the page never calls the engine
// directly, so a long evaluation can only ever block this worker, and the
// page stops it by terminating the worker.
//
// The knowledge base outlives the worker: before its first evaluation a
// worker loads what is stored, and after every evaluation that changed the
// knowledge base it saves, before it reports the result. So whatever an
// evaluation reported as done is stored, and the worker that replaces a
// stopped one starts from it. (An evaluation stopped while it runs is lost
// with its worker, changes to the knowledge base included.)
//
// The session's definitions outlive the worker the same way (when the engine
// can save a session: SESSION_SNAPSHOTS): after every evaluation that changed
// them, the session's bytes (Engine.saveSession) are stored in IndexedDB
// (SessionStore, wasm/web/src/session.rs) before the result is reported, and
// a new worker restores them after loading the knowledge base, unless the
// page sent NEW_SESSION. The page's files (what `(scheme file)` writes, held
// in memory by the engine: wasm/web/src/files.rs) are kept the same way, in
// the same database, and "New session" empties them too.
//
// The messages are defined in protocol.js.

import initModule, * as glue from './pkg/arbores_web.js';
import { DEFAULT_LIMITS, Query, StoreState, ToPage, ToWorker } from './protocol.js';

// How many reflog entries the page shows.
const REFLOG_SHOWN = 15;

// When each step of the start ended, in ms since the epoch (the page's clock
// and the worker's differ in origin only): sent with READY, printed by
// web/bench/ready.mjs --stages.
const marks = {};
const mark = (name) => { marks[name] = performance.timeOrigin + performance.now(); };
mark('worker');

let wasm = null; // the module's exports (the glue), once it is instantiated
let engine = null;
let broken = false;
let pendingLimits = null;

// The IndexedDB side: the open store (null when IndexedDB is unavailable)
// and the state reported to the page.
let store = null;
const status = {
  state: StoreState.SAVED,
  message: '',
  loaded: null,
  moveFailed: false, // START_FRESH could not copy the damaged records
};

// The engine's module, compiled by the page (ToWorker.MODULE): boot.js
// compiles it while this worker starts. null from the page: it could not,
// and this worker fetches and compiles it itself.
let receiveModule;
const handedModule = new Promise((resolve) => { receiveModule = resolve; });

const ready = (async () => {
  try {
    const handed = await handedModule;
    mark('handed');
    await initModule({ module_or_path: handed ?? fetch(new URL('./pkg/arbores_web_bg.wasm', import.meta.url)) });
    wasm = glue;
    mark('module');
    const received = performance.getEntriesByType('resource').find((e) => e.name.endsWith('.wasm'));
    if (received) marks.bytes = performance.timeOrigin + received.responseEnd;
  } catch (e) {
    throw new Error(`could not load the engine module (pkg/arbores_web_bg.wasm): ${describe(e)}`);
  }
  // IndexedDB opens both databases (creates them, on a first visit) while
  // the engine is built: the open requests go out on the next microtask,
  // so they are sent before the engine's synchronous start.
  const opening = wasm.BrowserStore.open().then((opened) => ({ opened }), (error) => ({ error }));
  const sessionOpening = SESSION_SNAPSHOTS()
    ? wasm.SessionStore.open().then((opened) => ({ opened }), (error) => ({ error }))
    : null;
  await null;
  engine = new wasm.Engine();
  engine.setLimits(DEFAULT_LIMITS.steps, DEFAULT_LIMITS.memoryBytes);
  engine.setTier('system');
  if (pendingLimits) applyLimits(pendingLimits, false);
  mark('engine');
  await loadKnowledge(opening);
  mark('knowledge');
  const knowledge = readKnowledge();
  // A first visit: the knowledge base was just created; store it.
  const saved = await save();
  mark('saved');
  await loadSession(sessionOpening);
  mark('session');
  return { knowledge, saved };
})();

// Whether this engine can save and restore a whole session (its heap, so
// `define`s survive Stop and reload). The page says so when it cannot.
const SESSION_SNAPSHOTS = () => typeof wasm?.Engine?.prototype?.saveSession === 'function';

ready.then(
  ({ knowledge, saved }) => post(ToPage.READY, {
    limits: currentLimits(),
    tier: engine.tier,
    store: storeReport(saved),
    knowledge,
    session: sessionReport(),
    marks,
  }),
  (e) => {
    broken = true;
    post(ToPage.FATAL, { message: describe(e) });
  },
);

function post(type, fields) {
  self.postMessage({ type, ...fields });
}

// One message at a time, in order: an evaluation's save finishes before the
// next message is looked at. The embedder's table is not waited for: the
// page is ready without it, and it takes its turn in the queue when it
// arrives (see loadEmbedderTable).
let queue = ready.catch(() => {});
const table = ready.then(() => fetch(new URL('./embedder.table', import.meta.url)));
table.catch(() => {}); // reported by loadEmbedderTable
queue = queue.then(() => loadEmbedderTable(table));
const lexicon = ready.then(() => fetch(new URL('./zh-en.lexicon', import.meta.url)));
lexicon.catch(() => {}); // reported by loadLexicon
queue = queue.then(() => loadLexicon(lexicon));
self.onmessage = ({ data }) => {
  if (data?.type === ToWorker.MODULE) {
    receiveModule(data.module ?? null);
    return;
  }
  // Seen at once: the saved session must not be restored.
  if (data?.type === ToWorker.NEW_SESSION) session.forget = true;
  if (data?.type === ToWorker.LIMITS && !engine) {
    // Remember the latest; applied as soon as the engine exists.
    pendingLimits = data;
    return;
  }
  queue = queue.then(() => handle(data)).catch((e) => {
    console.error('worker: a message failed', e);
  });
};

async function handle(data) {
  if (broken || !engine) return; // a load failure is already reported as fatal
  switch (data?.type) {
    case ToWorker.EVAL:
      await evaluate(data.id, String(data.source ?? ''));
      break;
    case ToWorker.LIMITS:
      applyLimits(data, true);
      break;
    case ToWorker.START_FRESH:
      await startFresh(Boolean(data.discard));
      break;
    case ToWorker.QUERY:
      answer(data.id, () => query(data.query, data.args ?? {}));
      break;
    case ToWorker.IMPORT:
      await importBundle(data.id, data.bytes);
      break;
    case ToWorker.NEW_SESSION:
      await forgetSession();
      break;
    default:
      console.warn('worker: unknown message', data);
  }
}

async function evaluate(id, source) {
  const started = performance.now();
  let result;
  let knowledge;
  try {
    result = engine.eval(source);
  } catch (e) {
    crashed(id, e);
    return;
  }
  const ms = performance.now() - started;
  try {
    knowledge = readKnowledge();
  } catch (e) {
    crashed(id, e);
    return;
  }
  const saved = await save();
  await saveSession();
  await saveFiles();
  const memory = engine.memoryBytes;
  post(ToPage.RESULT, { id, result, ms, memory, store: storeReport(saved), knowledge, session: sessionReport() });
}

// Scheme errors come back inside the result; a throw means the engine itself
// failed (a Rust panic aborts as "unreachable"). Its state can no longer be
// trusted, so this worker refuses further work, and saves nothing more.
function crashed(id, e) {
  broken = true;
  let panic = null;
  try {
    panic = wasm.panicMessage();
  } catch {
    // the module is too damaged to say more
  }
  post(ToPage.CRASHED, { id, message: panic || describe(e) });
}

// --------------------------------------------------------------- session ---

const session = {
  store: null, //    the open SessionStore, null when definitions are not kept
  empty: null, //    the bytes of this engine's session before any definition
  last: null, //     the bytes last stored or restored (an unchanged session is not written again)
  forget: false, //  NEW_SESSION came: start empty, delete what is stored
  restored: null, // {bindings, skipped} when a saved session was restored
  error: null, //    why definitions could not be restored or saved
  filesSaved: 0, //  the engine's filesGeneration when its files were last stored or restored
};

function sessionReport() {
  return { snapshots: SESSION_SNAPSHOTS(), restored: session.restored, error: session.error };
}

// Takes the session's database (opening: the promise of SessionStore.open
// as {opened} or {error}; null when this engine cannot save a session) and
// restores what is saved there. Never throws: what went wrong becomes
// session.error. Bytes that cannot be restored are kept aside, not
// overwritten by the next save.
async function loadSession(opening) {
  if (!opening) return;
  try {
    session.empty = engine.saveSession();
    const { opened, error } = await opening;
    if (error !== undefined) throw error;
    session.store = opened;
  } catch (e) {
    session.error = `Definitions are not kept across Stop and reload: ${describe(e)}`;
    return;
  }
  if (session.forget) {
    await forgetSession();
    return;
  }
  let bytes;
  try {
    bytes = await session.store.load();
  } catch (e) {
    session.error = `The saved definitions cannot be read: ${describe(e)}`;
    return;
  }
  if (bytes) {
    try {
      session.restored = engine.restoreSession(bytes);
      session.last = bytes;
    } catch (e) {
      session.error = `The saved definitions could not be restored (${describe(e)}); they are kept in IndexedDB (database "arbores-session", key "unrestored").`;
      await session.store.keepUnrestored(bytes).catch(() => {});
    }
  }
  await loadFiles();
}

// Restores the page's files saved with the session. Files that cannot be
// restored are kept aside (key "files-unrestored") and said.
async function loadFiles() {
  let bytes;
  try {
    bytes = await session.store.loadFiles();
  } catch (e) {
    session.error = `The saved files cannot be read: ${describe(e)}`;
    return;
  }
  if (bytes) {
    try {
      engine.restoreFiles(bytes);
    } catch (e) {
      session.error = `The saved files could not be restored (${describe(e)}); they are kept in IndexedDB (database "arbores-session", key "files-unrestored").`;
      await session.store.keepUnrestoredFiles(bytes).catch(() => {});
    }
  }
  session.filesSaved = engine.filesGeneration;
}

// Stores the page's files if an evaluation changed them.
async function saveFiles() {
  if (!session.store || broken || engine.filesGeneration === session.filesSaved) return;
  const generation = engine.filesGeneration;
  try {
    await session.store.saveFiles(engine.saveFiles());
    session.filesSaved = generation;
  } catch (e) {
    session.error = `The files could not be saved: ${describe(e)}`;
  }
}

// Stores the session if it changed since it was last stored or restored.
async function saveSession() {
  if (!session.store || broken) return;
  let bytes;
  try {
    bytes = engine.saveSession();
  } catch (e) {
    session.error = `The definitions could not be saved: ${describe(e)}`;
    return;
  }
  if (session.last && sameBytes(bytes, session.last)) return;
  try {
    await session.store.save(bytes);
    session.last = bytes;
    session.error = null;
  } catch (e) {
    session.error = `The definitions could not be saved: ${describe(e)}`;
  }
}

// Starts over with no definitions, and deletes the saved ones.
async function forgetSession() {
  if (!session.store) return;
  try {
    if (session.empty) engine.restoreSession(session.empty);
    engine.clearFiles();
    session.filesSaved = engine.filesGeneration;
    session.last = session.empty;
    session.restored = null;
    await session.store.clear();
  } catch (e) {
    session.error = `The saved definitions could not be deleted: ${describe(e)}`;
  }
}

function sameBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return false;
  return true;
}

// ------------------------------------------------------------- knowledge ---

// The static embedder's table (semantic search by meaning, Chinese and
// English; docs/SEARCH.md), 3.9 MB: fetched once the page is ready, so that
// a first visit does not wait for it (the service worker keeps it for the
// next). Until it is set, and if it cannot be had, search works by words
// and the model-free hashing embedder; a failure is reported on the
// console, not fatal. Setting it rebuilds the search indexes lazily.
async function loadEmbedderTable(table) {
  if (broken || !engine) return;
  try {
    const response = await table;
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    engine.setEmbedderTable(new Uint8Array(await response.arrayBuffer()));
  } catch (e) {
    console.error(`embedder.table could not be loaded; search matches words only: ${describe(e)}`);
  }
}

// The Chinese-English lexicon (Chinese queries find English descriptions
// by their words; docs/SEARCH.md), 3.4 MB: fetched once the page is ready,
// like the embedder's table. Until it is set, and if it cannot be had,
// search works without it; a failure is reported on the console.
async function loadLexicon(lexicon) {
  if (broken || !engine) return;
  try {
    const response = await lexicon;
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    engine.setLexicon(new Uint8Array(await response.arrayBuffer()));
  } catch (e) {
    console.error(`zh-en.lexicon could not be loaded; Chinese queries find English text by meaning only: ${describe(e)}`);
  }
}

// Loads the stored knowledge base into the engine. Never throws: what went
// wrong becomes the store's state, and the engine keeps an empty knowledge
// base (created on first use).
async function loadKnowledge(opening) {
  const started = performance.now();
  const { opened, error } = await opening;
  if (error !== undefined) {
    setState(StoreState.UNAVAILABLE, describe(error));
    return;
  }
  store = opened;
  let stored;
  try {
    stored = await store.read();
  } catch (e) {
    setState(StoreState.DAMAGED, describe(e));
    return;
  }
  try {
    store.loadInto(stored, engine);
    if (stored.hasRefs) status.loaded = { blobs: stored.count, bytes: stored.bytes, ms: performance.now() - started };
  } catch (e) {
    setState(StoreState.DAMAGED, describe(e));
  } finally {
    stored.free();
  }
}

// Saves what changed since the last save. Returns {blobs, bytes, ms} when
// something was written, else null.
async function save() {
  if (!store || ![StoreState.SAVED, StoreState.ERROR].includes(status.state)) return null;
  try {
    const saved = await store.save(engine);
    setState(StoreState.SAVED, '');
    return saved;
  } catch (e) {
    if (e?.name === 'conflict') setState(StoreState.CONFLICT, describe(e));
    else setState(StoreState.ERROR, `the knowledge base could not be saved: ${describe(e)}`);
    return null;
  }
}

async function startFresh(discard) {
  let saved = null;
  if (status.state === StoreState.DAMAGED && store) {
    try {
      let where;
      if (discard) {
        await store.clear();
        where = 'The damaged records were deleted.';
      } else {
        where = `The damaged records were moved to the IndexedDB database "${await store.moveAside()}".`;
      }
      store.startOver();
      status.moveFailed = false;
      setState(StoreState.SAVED, '');
      saved = await save();
      status.message = status.state === StoreState.SAVED
        ? `${where} From now on the knowledge base is saved again.`
        : `${where}\n${status.message}`;
    } catch (e) {
      // Still damaged: say why the records could not be moved.
      status.message = `${status.message.split('\n')[0]}\nStarting fresh failed: ${describe(e)}`;
      status.moveFailed = !discard;
    }
  }
  postStore(saved);
}

// Replaces the knowledge base with a bundle file's: read and checked
// whole first (nothing changes when it is not a bundle or does not load),
// then stored in place of what was stored (kept in a database of its own;
// see BrowserStore.replace), then installed in the engine. Answers with
// {version, blobs, kept} or an error, then sends the new STORE.
async function importBundle(id, bytes) {
  let bundle;
  try {
    bundle = wasm.Bundle.read(new Uint8Array(bytes));
  } catch (e) {
    post(ToPage.ANSWER, { id, error: `This file cannot be imported: ${describe(e)}` });
    return;
  }
  try {
    let kept = null;
    if (store) {
      if (status.state !== StoreState.SAVED && status.state !== StoreState.ERROR) {
        throw new Error(`the knowledge base is not being saved (${status.state}): ${status.message}`);
      }
      kept = await store.replace(bundle);
      setState(StoreState.SAVED, '');
    }
    engine.installBundle(bundle);
    post(ToPage.ANSWER, { id, value: { version: bundle.version, blobs: bundle.blobs, kept } });
  } catch (e) {
    if (e?.name === 'conflict') setState(StoreState.CONFLICT, describe(e));
    post(ToPage.ANSWER, { id, error: `Nothing was imported: ${describe(e)}` });
  } finally {
    bundle.free();
  }
  postStore(null);
}

// Sends the page the store's state (`saved`: what loading it found, or
// null) and the knowledge base as the engine now has it.
function postStore(saved) {
  let knowledge;
  try {
    knowledge = readKnowledge();
  } catch (e) {
    crashed(null, e);
    return;
  }
  post(ToPage.STORE, { store: storeReport(saved), knowledge });
}

function setState(state, message) {
  status.state = state;
  status.message = message;
}

function storeReport(saved) {
  return { ...status, saved };
}

// The current version, its node count and the newest reflog entries.
// Throws only when the engine itself fails.
function readKnowledge() {
  return engine.knowledge(REFLOG_SHOWN);
}

// ----------------------------------------------------------------- queries ---

function answer(id, work) {
  let value;
  try {
    value = work();
  } catch (e) {
    post(ToPage.ANSWER, { id, error: describe(e) });
    return;
  }
  post(ToPage.ANSWER, { id, value });
}

const num = (v) => (v == null || v === '' ? undefined : Number(v));

function query(what, a) {
  switch (what) {
    case Query.NODES:
      return engine.nodes(num(a.version), a.type || undefined, a.sort ?? 'name', a.offset ?? 0, a.limit ?? 50, Boolean(a.builtins));
    case Query.NODE:
      return engine.node(Number(a.id), num(a.version));
    case Query.VERSIONS:
      return engine.versions();
    case Query.DIFF:
      return engine.diff(Number(a.from), Number(a.to));
    case Query.CLOSURE:
      return closure(Number(a.id), num(a.version));
    case Query.SEARCH:
      return search(String(a.text ?? ''), num(a.version));
    case Query.EXPORT:
      return engine.exportBundle();
    default:
      throw new Error(`unknown query ${JSON.stringify(what)}`);
  }
}

// A Scheme string literal holding `text`.
function schemeString(text) {
  return `"${text.replace(/[\\"]/g, (c) => `\\${c}`).replace(/[\u0000-\u001f]/g, (c) => `\\x${c.charCodeAt(0).toString(16)};`)}"`;
}

const versionArg = (version) => (version === undefined ? '#f' : String(version));

// Runs a Scheme program whose output is the answer: it prints the error
// message and returns #t when the arb: call returned an error alist.
function evalForOutput(program) {
  const r = engine.eval(program);
  if (r.error) throw new Error(r.error.message);
  if (r.value === '#t') throw new Error(r.output);
  return r.output;
}

function closure(id, version) {
  return evalForOutput(`(let ((r (arb:closure (list ${id}) ${versionArg(version)})))
  (if (arb:error? r) (display (cdr (assoc "message" r))) (display r))
  (arb:error? r))`);
}

// Both searches of `text`: by symbol name (prefix, then fuzzy when nothing
// starts so) and by meaning, with scores. The arb: procedures answer; their
// hits are printed as "id score" lines and described by the node view.
function search(text, version) {
  const q = schemeString(text);
  const v = versionArg(version);
  const hits = (call) => evalForOutput(`(let ((r ${call}))
  (if (arb:error? r)
      (display (cdr (assoc "message" r)))
      (for-each (lambda (h)
                  (display (cdr (assoc "id" h)))
                  (let ((s (assoc "score" h))) (if s (begin (display " ") (display (cdr s)))))
                  (newline))
                r))
  (arb:error? r))`).split('\n').filter(Boolean).map((line) => {
    const [id, score] = line.split(' ');
    return { id: Number(id), score: score === undefined ? null : Number(score) };
  });
  let symbol = hits(`(arb:search-by-symbol ${q} "prefix" 50 ${v})`);
  let mode = 'prefix';
  if (!symbol.length) {
    symbol = hits(`(arb:search-by-symbol ${q} "fuzzy" 50 ${v})`);
    mode = 'fuzzy';
  }
  const meaning = hits(`(arb:semantic-search ${q} 20 0 #f ${v})`);
  const describeHit = (h) => {
    const n = engine.node(h.id, version);
    return n && { ...h, symbolNames: n.node.symbolNames, type: n.node.type, description: n.node.description };
  };
  return {
    symbol: { mode, hits: symbol.map(describeHit).filter(Boolean) },
    meaning: meaning.map(describeHit).filter(Boolean),
  };
}

// ---------------------------------------------------------------- limits ---

function applyLimits({ steps, memoryBytes }, report) {
  try {
    engine.setLimits(Number(steps), Number(memoryBytes));
    if (report) post(ToPage.LIMITS, { limits: currentLimits() });
  } catch (e) {
    post(ToPage.LIMITS_ERROR, { message: describe(e) });
  }
}

function currentLimits() {
  return { steps: engine.maxSteps, memoryBytes: engine.maxMemory };
}

function describe(e) {
  return e instanceof Error ? e.message : String(e);
}
