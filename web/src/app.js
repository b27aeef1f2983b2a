// The playground page: the editor, the transcript, the knowledge browser and
// the worker that runs the engine. Nothing here evaluates Scheme (see
// worker.js); the messages are defined in protocol.js.

import { $, compact, el, formatBytes, formatMs, seconds } from './dom.js';
import { createEditor } from './editor.js';
import { KnowledgeBrowser } from './browser.js';
import { drawHelpPanel, helpCommand, showTour } from './help.js';
import { DEFAULT_LIMITS, MAX_MEMORY_MIB, MIB, Query, StoreState, ToPage, ToWorker } from './protocol.js';
import { firstVisit, InputHistory, SavedTranscript, toured } from './saved.js';
import { Transcript } from './transcript.js';
import { sharedCode, shareUrl } from './share.js';

const els = {
  transcript: $('transcript'),
  run: $('run'),
  stop: $('stop'),
  clear: $('clear'),
  newSession: $('new-session'),
  share: $('share'),
  tour: $('tour-open'),
  tourDialog: $('tour'),
  steps: $('limit-steps'),
  memory: $('limit-memory'),
  status: $('status'),
  statusLimits: $('status-limits'),
  sessionNote: $('session-note'),
  storeState: $('store-state'),
  storeActions: $('store-actions'),
  storeFresh: $('store-fresh'),
  storeDiscard: $('store-discard'),
  storeReload: $('store-reload'),
  kbVersion: $('kb-version'),
  kbReflog: $('kb-reflog'),
  kbNote: $('kb-note'),
  kbExport: $('kb-export'),
  kbImport: $('kb-import'),
  kbImportFile: $('kb-import-file'),
  help: $('help-panel'),
};

let worker = null;
// The engine's compiled module (a promise, from boot.js), handed to every
// worker that replaces a stopped one; null in it when boot.js could not
// compile it.
let engineModule = Promise.resolve(null);
let session = 0;
let nextId = 1;
let running = null; // {id, entry, started, source} while an evaluation is under way
let tick = null;
let appliedLimits = null; // the {steps, memoryBytes} last sent to the worker
let engineLimits = null; // what the worker reported as in force
let storeState = null; // the worker's last report on the stored knowledge base
const pending = new Map(); // query id → {resolve, reject}

performance.mark('arbores:app'); // the page's code starts (its imports evaluated)

// The engine first: it loads in its worker while the page builds the rest.
els.steps.value = String(DEFAULT_LIMITS.steps);
els.memory.value = String(DEFAULT_LIMITS.memoryBytes / MIB);
startWorker();

const inputs = new InputHistory();
const saved = new SavedTranscript();
const transcript = new Transcript(els.transcript, (source) => { editor.setText(source); editor.focus(); });
const editor = createEditor({
  parent: $('input'),
  label: 'Scheme input',
  onRun: () => run(),
  onHistory: (delta) => inputs.walk(delta, editor.getText()),
});

const browser = new KnowledgeBrowser({
  ask,
  insert: (text) => { editor.setText(text); editor.focus(); },
  run: (source) => run(source),
  show: (node) => transcript.block(node),
});

// ---------------------------------------------------------------- worker ---

function startWorker() {
  session += 1;
  document.body.dataset.session = String(session);
  setEngineState('loading', 'Loading the engine…');
  // The first worker was started by boot.js, before this module loaded.
  const boot = window.arboresBoot;
  window.arboresBoot = null;
  if (boot) engineModule = boot.module;
  let w = boot?.worker;
  if (!w) {
    w = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    // The module boot.js compiled (or null: the worker loads it itself).
    engineModule.then((module) => w.postMessage({ type: ToWorker.MODULE, module }));
  }
  // A terminated worker's late messages must not touch the new session.
  const onMessage = (event) => { if (w === worker) onWorkerMessage(event.data); };
  const onError = (event) => {
    if (w !== worker) return;
    event.preventDefault();
    engineFailed(event.message || 'the worker script could not be started');
  };
  w.onmessage = onMessage;
  w.onerror = onError;
  worker = w;
  // What the boot worker said before this module took it over.
  for (const event of boot?.early ?? []) queueMicrotask(() => (event.type === 'error' ? onError(event) : onMessage(event)));
  appliedLimits = null;
  engineLimits = null;
  for (const { reject } of pending.values()) reject(new Error('the session was restarted'));
  pending.clear();
  sendLimits();
}

function onWorkerMessage(msg) {
  switch (msg.type) {
    case ToPage.READY:
      performance.mark('arbores:message'); // the page takes READY
      window.arboresMarks = msg.marks; // for web/bench/ready.mjs
      registerServiceWorker();
      engineLimits = msg.limits;
      showLimits();
      showStore(msg.store);
      showKnowledge(msg.knowledge);
      showSession(msg.session);
      if (running) setEngineState('running', 'Running…');
      else setEngineState('ready', 'Ready');
      performance.mark('arbores:shown'); // ...and shows the engine ready
      break;
    case ToPage.RESULT:
      showSessionError(msg.session);
      showStore(msg.store);
      showKnowledge(msg.knowledge);
      if (running && running.id === msg.id) finishEntry(msg.result, msg.ms, msg.store?.saved, msg.memory);
      break;
    case ToPage.STORE:
      showStore(msg.store);
      showKnowledge(msg.knowledge);
      break;
    case ToPage.LIMITS:
      engineLimits = msg.limits;
      showLimits();
      break;
    case ToPage.LIMITS_ERROR:
      appliedLimits = null;
      notice(`Limits not changed: ${msg.message}`, 'warning');
      break;
    case ToPage.ANSWER: {
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (!p) break;
      if ('error' in msg) p.reject(new Error(msg.error));
      else p.resolve(msg.value);
      break;
    }
    case ToPage.CRASHED:
      if (running && running.id === msg.id) {
        const { entry } = running;
        endRun();
        transcript.finish(entry, { result: { error: internalError(msg.message) }, state: 'error' });
      }
      notice(`The engine failed. ${restartText()}`, 'warning');
      worker.terminate();
      startWorker();
      break;
    case ToPage.FATAL:
      engineFailed(msg.message);
      break;
    default:
      console.warn('page: unknown message from the worker', msg);
  }
}

const internalError = (message) => ({ kind: 'internal-error', message, line: null, column: null, backtrace: [] });

function engineFailed(message) {
  if (running) {
    const { entry } = running;
    endRun();
    transcript.finish(entry, { result: { error: internalError(message) }, state: 'error' });
  }
  setEngineState('failed', `The engine could not be loaded: ${message}`);
  notice(`The engine could not be loaded: ${message}`, 'warning');
}

// A read for the knowledge browser, answered by the worker.
let nextQuery = 1;
function ask(query, args) {
  return request({ type: ToWorker.QUERY, query, args });
}

// A message to the worker answered by ANSWER with the same id.
function request(message, transfer = []) {
  const id = nextQuery++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    worker.postMessage({ ...message, id }, transfer);
  });
}

// ------------------------------------------------------ export and import ---

// The knowledge base as one bundle file, every version: the format
// `arbores export` writes and `arbores import` reads.
async function exportKnowledge() {
  try {
    const bytes = await ask(Query.EXPORT, {});
    const name = `arbores-v${els.kbVersion.textContent}.bundle`;
    const link = el('a', { href: URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' })), download: name });
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
    flash(`Exported ${name} (${formatBytes(bytes.length)}).`);
  } catch (e) {
    notice(`The knowledge base could not be exported: ${e.message}`, 'warning');
  }
}

async function importKnowledge() {
  const file = els.kbImportFile.files[0];
  els.kbImportFile.value = '';
  if (!file) return;
  if (running) {
    flash('Wait for the evaluation to finish, or stop it.');
    return;
  }
  const question = `Replace the knowledge base with the one in “${file.name}”?\n\n`
    + 'What is stored now is kept, unchanged, in a separate IndexedDB database of this site '
    + '(“arbores-before-import-…”); to keep it as a file, Export it first. '
    + 'The definitions of this session stay.';
  if (!window.confirm(question)) return;
  try {
    const bytes = await file.arrayBuffer();
    const r = await request({ type: ToWorker.IMPORT, bytes }, [bytes]);
    const kept = r.kept ? ` The previous knowledge base is kept in the IndexedDB database “${r.kept}”.` : '';
    notice(`Imported ${file.name}: ${r.blobs} blobs, current version ${r.version}.${kept}`, 'store saved');
  } catch (e) {
    notice(e.message, 'warning');
  }
}

// ------------------------------------------------------------- evaluation ---

async function run(given) {
  const source = given ?? editor.getText();
  if (!source.trim()) {
    editor.focus();
    return;
  }
  if (running) {
    flash('An evaluation is still running: wait for it or press Stop.');
    return;
  }
  const help = await helpCommand(source, (code) => { editor.setText(code); editor.focus(); });
  if (help) {
    inputs.push(source);
    if (given === undefined) editor.setText('');
    transcript.block(help);
    return;
  }
  if (document.body.dataset.engine === 'failed') {
    flash('The engine is not available; reload the page to try again.');
    return;
  }
  sendLimits();
  inputs.push(source);
  if (given === undefined) editor.setText('');
  const id = nextId++;
  const entry = transcript.start(id, source);
  running = { id, entry, source, started: performance.now() };
  els.run.disabled = true;
  els.stop.disabled = false;
  const loading = document.body.dataset.engine === 'loading';
  setEngineState(loading ? 'loading' : 'running', loading ? 'Waiting for the engine…' : 'Running…');
  tick = setInterval(() => {
    if (document.body.dataset.engine === 'running') {
      els.status.textContent = `Running… ${seconds(performance.now() - running.started)}`;
    }
  }, 200);
  worker.postMessage({ type: ToWorker.EVAL, id, source });
}

function stop() {
  if (!running) return;
  const { entry, source } = running;
  const elapsed = performance.now() - running.started;
  worker.terminate();
  endRun();
  entry.dataset.state = 'stopped';
  transcript.meta(entry, `stopped after ${seconds(elapsed)}`);
  saved.add({ source, state: 'stopped', meta: `stopped after ${seconds(elapsed)}` });
  notice(`Evaluation stopped after ${seconds(elapsed)}. ${restartText()}`, 'stopped');
  startWorker();
}

// What a restart keeps, which depends on whether sessions can be saved.
function restartText() {
  if (sessionsKept) {
    return 'The session was restarted with the definitions of the last evaluation that finished; the knowledge base is reloaded from this browser’s storage.';
  }
  return 'The session was restarted: its definitions are gone; the knowledge base is reloaded from this browser’s storage.';
}

function newSession() {
  if (running) {
    flash('Wait for the evaluation to finish, or stop it.');
    return;
  }
  worker.terminate();
  notice('A new session: definitions start empty; the knowledge base is reloaded from this browser’s storage.', 'stopped');
  startWorker();
  // Before the new worker is ready: it must not restore the saved session.
  worker.postMessage({ type: ToWorker.NEW_SESSION });
}

function finishEntry(result, ms, savedStats, memory) {
  const { entry, source } = running;
  endRun();
  transcript.finish(entry, { result, ms, saved: savedStats, memory });
  saved.add({ source, result, ms, saved: savedStats });
  setEngineState('ready', 'Ready');
}

function endRun() {
  running = null;
  clearInterval(tick);
  tick = null;
  els.run.disabled = false;
  els.stop.disabled = true;
  editor.focus();
}

function notice(text, kind) {
  transcript.notice(text, kind);
  saved.add({ notice: text, kind });
}

// -------------------------------------------------------------- knowledge ---

const STORE_TEXT = {
  [StoreState.SAVED]: 'Saved in this browser',
  [StoreState.ERROR]: 'Not saved',
  [StoreState.DAMAGED]: 'Stored knowledge cannot be loaded',
  [StoreState.CONFLICT]: 'Not saved: changed elsewhere',
  [StoreState.UNAVAILABLE]: 'Kept in memory only',
};

const STORE_HINTS = {
  [StoreState.ERROR]: 'Saving is tried again after the next evaluation.',
  [StoreState.DAMAGED]: 'The stored data is left untouched and nothing is saved: changes to the knowledge base last only as long as this page. “Start fresh…” moves the damaged data aside.',
  [StoreState.CONFLICT]: 'Nothing more is saved from this page; reload it to continue with the stored knowledge base.',
  [StoreState.UNAVAILABLE]: 'Changes to the knowledge base last only as long as this page.',
};

// What the worker says about the stored knowledge base. A state that needs
// the user's attention is also said once in the transcript.
function showStore(store) {
  if (!store) return;
  const previous = storeState;
  storeState = store;
  document.body.dataset.store = store.state;
  els.storeState.dataset.state = store.state;
  const title = STORE_TEXT[store.state] ?? store.state;
  const hint = STORE_HINTS[store.state];
  els.storeState.replaceChildren(el('strong', {}, title));
  if (store.message) els.storeState.append(el('div', { class: 'store-message' }, store.message));
  if (hint) els.storeState.append(el('div', { class: 'store-hint' }, hint));
  if (store.loaded) {
    els.storeState.title = `loaded ${store.loaded.blobs} blobs (${formatBytes(store.loaded.bytes)}) in ${formatMs(store.loaded.ms)}`;
  }
  els.storeActions.hidden = ![StoreState.DAMAGED, StoreState.CONFLICT].includes(store.state);
  els.storeFresh.hidden = store.state !== StoreState.DAMAGED;
  els.storeDiscard.hidden = !(store.state === StoreState.DAMAGED && store.moveFailed);
  const changed = !previous || previous.state !== store.state || previous.message !== store.message;
  if (changed && store.state !== StoreState.SAVED) {
    notice(`${title}: ${store.message}${hint ? `\n${hint}` : ''}`, `store ${store.state}`);
  } else if (changed && previous && previous.state !== StoreState.SAVED && store.message) {
    notice(store.message, 'store saved');
  }
}

// The current version and the newest reflog entries.
function showKnowledge(knowledge) {
  if (!knowledge) return;
  els.kbNote.hidden = true;
  els.kbVersion.textContent = String(knowledge.version);
  els.kbVersion.title = `${knowledge.nodes} nodes, builtins included`;
  els.kbReflog.replaceChildren(...knowledge.reflog.map((e) => {
    const li = el('li', { 'data-version': e.version, class: e.version === knowledge.version ? 'current' : null },
      el('button', { type: 'button', class: 'reflog-entry', title: `View version ${e.version}`, onclick: () => { browser.tab('versions'); browser.viewAt(e.version); } }, [
        el('span', { class: 'reflog-version' }, String(e.version)),
        el('span', { class: 'reflog-description' }, e.description),
      ]));
    return li;
  }));
  browser.changed(knowledge).catch((e) => console.warn('browser:', e));
}

// Whether definitions survive Stop and reload (the engine saves sessions).
let sessionsKept = false;
let sessionErrorShown = null;

function showSession(info) {
  const note = els.sessionNote;
  sessionsKept = Boolean(info?.snapshots);
  note.hidden = sessionsKept;
  document.body.dataset.restored = String(info?.restored?.bindings ?? 0);
  if (info?.restored?.skipped?.length) {
    notice(`Some macros (made by another macro, or in a local scope) are not kept across a restart: define ${info.restored.skipped.join(', ')} again to use them.`, 'warning');
  }
  showSessionError(info);
}

function showSessionError(info) {
  const error = info?.error ?? null;
  if (error && error !== sessionErrorShown) notice(error, 'warning');
  sessionErrorShown = error;
}

function startFresh(discard) {
  if (running) {
    flash('Wait for the evaluation to finish, or stop it.');
    return;
  }
  const question = discard
    ? 'Delete the stored knowledge base that cannot be loaded? This cannot be undone.'
    : 'Start with this session’s knowledge base and keep saving it?\n\nThe stored data that cannot be loaded is moved, unchanged, to a separate IndexedDB database of this site (“arbores-damaged-…”); the playground does not read it again.';
  if (!window.confirm(question)) return;
  worker.postMessage({ type: ToWorker.START_FRESH, discard });
}

// ----------------------------------------------------------------- limits ---

function readLimits() {
  const steps = Number(els.steps.value);
  const mib = Number(els.memory.value);
  const stepsOk = Number.isSafeInteger(steps) && steps >= 1;
  const mibOk = Number.isSafeInteger(mib) && mib >= 1 && mib <= MAX_MEMORY_MIB;
  els.steps.setAttribute('aria-invalid', String(!stepsOk));
  els.memory.setAttribute('aria-invalid', String(!mibOk));
  if (!stepsOk || !mibOk) return null;
  return { steps, memoryBytes: mib * MIB };
}

// Sends the form's limits when they differ from what the worker was last told.
function sendLimits() {
  const limits = readLimits();
  if (!limits) {
    flash(`Limits ignored: steps must be a whole number ≥ 1, memory 1–${MAX_MEMORY_MIB} MiB.`);
    return;
  }
  if (appliedLimits && appliedLimits.steps === limits.steps && appliedLimits.memoryBytes === limits.memoryBytes) return;
  appliedLimits = limits;
  worker.postMessage({ type: ToWorker.LIMITS, ...limits });
}

function showLimits() {
  if (!engineLimits) return;
  els.statusLimits.textContent =
    `${compact(engineLimits.steps)} steps · ${Math.round(engineLimits.memoryBytes / MIB)} MiB · session ${session}`;
}

// Offline use after the first visit: the service worker keeps the built
// files. Registered once the engine is ready, so that its downloads do not
// compete with the page's own.
let serviceWorkerRegistered = false;
function registerServiceWorker() {
  if (serviceWorkerRegistered || !('serviceWorker' in navigator) || window.location.protocol === 'file:') return;
  serviceWorkerRegistered = true;
  const hadController = Boolean(navigator.serviceWorker.controller);
  navigator.serviceWorker.register(new URL('sw.js', document.baseURI), { updateViaCache: 'none' }).catch((e) => {
    console.warn('page: no offline copy:', e.message);
  });
  navigator.serviceWorker.addEventListener('controllerchange', () => {
    if (hadController) flash('A newer playground was installed: reload to use it.');
  });
}

// ---------------------------------------------------------------- helpers ---

function setEngineState(state, text) {
  document.body.dataset.engine = state;
  els.status.textContent = text;
}

let flashTimer = null;
function flash(text) {
  const previous = els.status.textContent;
  els.status.textContent = text;
  clearTimeout(flashTimer);
  flashTimer = setTimeout(() => {
    if (els.status.textContent === text) els.status.textContent = running ? 'Running…' : previous;
  }, 3000);
}

// ------------------------------------------------------------------ wiring ---

els.steps.addEventListener('change', sendLimits);
els.memory.addEventListener('change', sendLimits);

els.run.addEventListener('click', () => run());
els.stop.addEventListener('click', stop);
els.newSession.addEventListener('click', newSession);
els.storeFresh.addEventListener('click', () => startFresh(false));
els.storeDiscard.addEventListener('click', () => startFresh(true));
els.storeReload.addEventListener('click', () => window.location.reload());
els.kbExport.addEventListener('click', exportKnowledge);
els.kbImport.addEventListener('click', () => els.kbImportFile.click());
els.kbImportFile.addEventListener('change', importKnowledge);
els.clear.addEventListener('click', () => {
  transcript.clear(running?.entry);
  saved.clear();
  editor.focus();
});
els.share.addEventListener('click', async () => {
  const url = shareUrl(editor.getText());
  history.replaceState(null, '', url);
  try {
    await navigator.clipboard.writeText(url);
    flash('A link to this code is in the clipboard (and the address bar).');
  } catch {
    flash('A link to this code is in the address bar.');
  }
});

document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && running) {
    e.preventDefault();
    stop();
  }
});

const tryIt = (code) => { editor.setText(code); editor.focus(); };
for (const button of document.querySelectorAll('.example')) {
  button.addEventListener('click', () => tryIt(button.textContent));
}
els.tour.addEventListener('click', () => showTour(els.tourDialog, tryIt, toured));
// The reference is drawn when the Help tab is first opened.
$('tab-help').addEventListener('click', () => drawHelpPanel(els.help, tryIt), { once: true });

// The saved transcript first, then this visit.
for (const item of saved.items) transcript.restore(item, nextId++);

// Code from a shared link goes into the editor, and runs only when asked.
const shared = sharedCode(window.location.hash);
if (shared !== null) {
  editor.setText(shared);
  transcript.notice('Code from a shared link is in the editor. It runs only when you press Run.', 'shared');
} else if (firstVisit() && !saved.items.length) {
  showTour(els.tourDialog, tryIt, toured);
}
editor.focus();
performance.mark('arbores:page'); // the page's code is done
