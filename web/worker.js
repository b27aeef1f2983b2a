// The engine's thread. It loads the wasm module, owns the one Engine of a
// session and keeps the engine's knowledge base in IndexedDB (store.js); the
// page never calls the engine directly, so a long evaluation can only ever
// block this worker, and the page stops it by terminating the worker.
//
// The knowledge base outlives the worker: before its first evaluation a
// worker loads what is stored, and after every evaluation that changed the
// knowledge base it writes the new blobs and the refs record, before it
// reports the result. So whatever an evaluation reported as done is stored,
// and the worker that replaces a stopped one starts from it. (An evaluation
// stopped while it runs is lost with its worker, changes to the knowledge
// base included.) Definitions made with `define` live in the session only.
//
// Messages from the page:
//   {type: 'eval', id, source}
//   {type: 'limits', steps, memoryBytes}
//   {type: 'start-fresh', discard}  give up a damaged store: move its records
//                                   to a database "arbores-damaged-<time>"
//                                   (discard: delete them instead), then save
//                                   this session's knowledge base there
// Messages to the page:
//   {type: 'ready', limits, tier, store, knowledge}   the engine is loaded
//   {type: 'result', id, result, ms, store, knowledge}
//                                           result as returned by Engine.eval
//   {type: 'store', store, knowledge}       after 'start-fresh'
//   {type: 'limits', limits}                limits now in force
//   {type: 'limits-error', message}
//   {type: 'crashed', id, message}          the engine itself failed; this worker is done
//   {type: 'fatal', message}                the engine could not be loaded
//
// store: {state, message, ...}, state one of
//   'saved'        everything the knowledge base holds is stored
//   'error'        the last save failed (message); the next evaluation tries again
//   'damaged'      what is stored cannot be loaded (message); nothing is written
//                  until the page sends 'start-fresh'
//   'conflict'     another tab saved first; nothing more is written (reload)
//   'unavailable'  no IndexedDB (message); the knowledge base lives in memory
// plus `loaded` ({blobs, bytes, ms}) after a load, `saved` ({blobs, bytes,
// ms}) after the save of this evaluation, and `moveFailed` when 'start-fresh'
// could not copy the damaged records (the page then offers to delete them).
// knowledge: {version, reflog: [{version, timestamp, description}]} read with
// arb:current-version and arb:reflog, or {error}.

import { clearStore, moveAside, openStore, readStore, StoreError, writeExport } from './store.js';
import { alistGet, readDatum } from './sexp.js';

// Defaults for a playground: generous enough for real programs, small enough
// that a runaway loop ends on its own within seconds.
const DEFAULT_LIMITS = { steps: 50_000_000, memoryBytes: 256 * 1024 * 1024 };
// How many reflog entries the page shows.
const REFLOG_SHOWN = 15;

let engine = null;
let wasmModule = null;
let broken = false;
let pendingLimits = null;

// The IndexedDB side: the open database, what this worker knows is stored
// there (the refs record it loaded or last wrote), and the state reported.
const store = {
  db: null,
  refs: undefined,
  needFull: false, // after a failed save, export everything, not just what is new
  state: 'saved',
  message: '',
  loaded: null,
  moveFailed: false, // 'start-fresh' could not copy the damaged records
};

const ready = (async () => {
  try {
    wasmModule = await import('./pkg/arbores_web.js');
    await wasmModule.default();
  } catch (e) {
    throw new Error(`could not load the engine module (pkg/arbores_web.js): ${describe(e)}`);
  }
  engine = new wasmModule.Engine();
  engine.setLimits(DEFAULT_LIMITS.steps, DEFAULT_LIMITS.memoryBytes);
  engine.setTier('system');
  if (pendingLimits) applyLimits(pendingLimits, false);
  await loadKnowledge();
  const knowledge = readKnowledge();
  // A first visit: the knowledge base was just created; store it.
  const saved = await save();
  return { knowledge, saved };
})();

ready.then(
  ({ knowledge, saved }) => self.postMessage({
    type: 'ready', limits: currentLimits(), tier: engine.tier, store: storeReport(saved), knowledge,
  }),
  (e) => {
    broken = true;
    self.postMessage({ type: 'fatal', message: describe(e) });
  },
);

// One message at a time, in order: an evaluation's save finishes before the
// next message is looked at.
let queue = ready.catch(() => {});
self.onmessage = ({ data }) => {
  if (data?.type === 'limits' && !engine) {
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
    case 'eval':
      await evaluate(data.id, String(data.source ?? ''));
      break;
    case 'limits':
      applyLimits(data, true);
      break;
    case 'start-fresh':
      await startFresh(Boolean(data.discard));
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
  self.postMessage({ type: 'result', id, result, ms, store: storeReport(saved), knowledge });
}

// Scheme errors come back inside the result; a throw means the engine itself
// failed (a Rust panic aborts as "unreachable"). Its state can no longer be
// trusted, so this worker refuses further work, and saves nothing more.
function crashed(id, e) {
  broken = true;
  let panic = null;
  try {
    panic = wasmModule.panicMessage();
  } catch {
    // the module is too damaged to say more
  }
  self.postMessage({ type: 'crashed', id, message: panic || describe(e) });
}

// ------------------------------------------------------------- knowledge ---

// Loads the stored knowledge base into the engine. Never throws: what went
// wrong becomes the store's state, and the engine keeps an empty knowledge
// base (created on first use).
async function loadKnowledge() {
  const started = performance.now();
  try {
    store.db = await openStore();
  } catch (e) {
    setState(e instanceof StoreError ? e.kind : 'unavailable', describe(e));
    return;
  }
  let stored;
  try {
    stored = await readStore(store.db);
  } catch (e) {
    setState('damaged', describe(e));
    return;
  }
  if (stored.refs === undefined) {
    if (stored.count > 0) {
      setState('damaged', `the store holds ${stored.count} blobs but no refs record, so nothing says which state is current`);
    }
    return; // an empty store: a first visit
  }
  try {
    engine.importStored(stored.refs, stored.blobs);
  } catch (e) {
    setState('damaged', `the stored knowledge base does not load: ${describe(e)}`);
    return;
  }
  store.refs = stored.refs;
  store.loaded = { blobs: stored.count, bytes: stored.bytes, ms: performance.now() - started };
}

// Writes what changed since the last save. Returns {blobs, bytes, ms} when
// something was written, else null.
async function save() {
  if (!store.db || !['saved', 'error'].includes(store.state)) return null;
  if (!store.needFull && !engine.hasUnsavedChanges()) return null;
  const started = performance.now();
  let exp;
  try {
    exp = store.needFull ? engine.exportFull() : engine.exportNew();
  } catch (e) {
    setState('error', `the knowledge base could not be exported: ${describe(e)}`);
    return null;
  }
  try {
    await writeExport(store.db, exp, store.refs);
  } catch (e) {
    // The engine counts this export as saved: the next save sends everything.
    store.needFull = true;
    if (e instanceof StoreError && e.kind === 'conflict') setState('conflict', e.message);
    else setState('error', `the knowledge base could not be saved: ${describe(e)}`);
    return null;
  }
  store.refs = exp.refs;
  store.needFull = false;
  setState('saved', '');
  return { blobs: exp.blobs.length, bytes: exp.size, ms: performance.now() - started };
}

async function startFresh(discard) {
  let saved = null;
  if (store.state === 'damaged' && store.db) {
    try {
      let where;
      if (discard) {
        await clearStore(store.db);
        where = 'The damaged records were deleted.';
      } else {
        where = `The damaged records were moved to the IndexedDB database "${await moveAside(store.db)}".`;
      }
      store.refs = undefined;
      store.needFull = true;
      store.moveFailed = false;
      setState('saved', '');
      saved = await save();
      store.message = store.state === 'saved'
        ? `${where} From now on the knowledge base is saved again.`
        : `${where}\n${store.message}`;
    } catch (e) {
      // Still damaged: say why the records could not be moved.
      store.message = `${store.message.split('\n')[0]}\nStarting fresh failed: ${describe(e)}`;
      store.moveFailed = !discard;
    }
  }
  let knowledge;
  try {
    knowledge = readKnowledge();
  } catch (e) {
    crashed(null, e);
    return;
  }
  self.postMessage({ type: 'store', store: storeReport(saved), knowledge });
}

function setState(state, message) {
  store.state = state;
  store.message = message;
}

function storeReport(saved) {
  return { state: store.state, message: store.message, loaded: store.loaded, moveFailed: store.moveFailed, saved };
}

// The current version and the newest reflog entries, as Scheme reports them.
// Throws only when the engine itself fails.
function readKnowledge() {
  const version = engine.eval('(arb:current-version)');
  const log = engine.eval(`(arb:reflog 0 ${REFLOG_SHOWN})`);
  const failed = version.error || log.error;
  if (failed) return { error: failed.message };
  try {
    const entries = readDatum(log.value ?? '');
    if (!Array.isArray(entries)) throw new Error(`arb:reflog returned ${log.value}`);
    return {
      version: String(readDatum(version.value ?? '')),
      reflog: entries.map((e) => ({
        version: String(alistGet(e, 'version-id')),
        timestamp: String(alistGet(e, 'timestamp') ?? ''),
        description: String(alistGet(e, 'description') ?? ''),
      })),
    };
  } catch (e) {
    return { error: `the version list cannot be read: ${describe(e)}` };
  }
}

// ---------------------------------------------------------------- limits ---

function applyLimits({ steps, memoryBytes }, report) {
  try {
    engine.setLimits(Number(steps), Number(memoryBytes));
    if (report) self.postMessage({ type: 'limits', limits: currentLimits() });
  } catch (e) {
    self.postMessage({ type: 'limits-error', message: describe(e) });
  }
}

function currentLimits() {
  return { steps: engine.maxSteps, memoryBytes: engine.maxMemory };
}

function describe(e) {
  return e instanceof Error ? e.message : String(e);
}
