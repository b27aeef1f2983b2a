// The playground page: the transcript, the input and the worker that runs the
// engine. Nothing here evaluates Scheme; see worker.js.

const $ = (id) => document.getElementById(id);
const els = {
  transcript: $('transcript'),
  welcome: $('welcome'),
  input: $('input'),
  run: $('run'),
  stop: $('stop'),
  clear: $('clear'),
  steps: $('limit-steps'),
  memory: $('limit-memory'),
  status: $('status'),
  statusLimits: $('status-limits'),
  storeState: $('store-state'),
  storeActions: $('store-actions'),
  storeFresh: $('store-fresh'),
  storeDiscard: $('store-discard'),
  storeReload: $('store-reload'),
  kbVersion: $('kb-version'),
  kbReflog: $('kb-reflog'),
  kbNote: $('kb-note'),
};

// What the page asks the worker for; the worker has its own fallbacks.
const DEFAULT_STEPS = 50_000_000;
const DEFAULT_MEMORY_MIB = 256;
const MAX_MEMORY_MIB = 4095; // a wasm32 memory is addressed with 32 bits: just under 4 GiB
const MIB = 1024 * 1024;

const ERROR_TITLES = {
  'syntax-error': 'Syntax error',
  'runtime-error': 'Runtime error',
  'step-limit': 'Step limit reached',
  'memory-limit': 'Memory limit reached',
  'interrupted': 'Interrupted',
  'internal-error': 'Engine failure',
};

// Running out of a budget is not a bug in the program: say how to allow more.
const LIMIT_HINTS = {
  'step-limit': 'Raise “Steps per evaluation” under Limits to let it run longer.',
  'memory-limit': 'Raise “Memory” under Limits to allow more.',
};

let worker = null;
let session = 0;
let nextId = 1;
let running = null; // {id, entry, started} while an evaluation is under way
let tick = null;
let appliedLimits = null; // the {steps, memoryBytes} last sent to the worker
let engineLimits = null; // what the worker reported as in force
let storeState = null; // the worker's last report on the stored knowledge base

const history = [];
let historyPos = 0;
let draft = '';

// ---------------------------------------------------------------- worker ---

function startWorker() {
  session += 1;
  document.body.dataset.session = String(session);
  setEngineState('loading', 'Loading the engine…');
  const w = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  // A terminated worker's late messages must not touch the new session.
  w.onmessage = (event) => { if (w === worker) onWorkerMessage(event.data); };
  w.onerror = (event) => {
    if (w !== worker) return;
    event.preventDefault();
    engineFailed(event.message || 'the worker script could not be started');
  };
  worker = w;
  appliedLimits = null;
  engineLimits = null;
  sendLimits();
}

function onWorkerMessage(msg) {
  switch (msg.type) {
    case 'ready':
      engineLimits = msg.limits;
      showLimits();
      showStore(msg.store);
      showKnowledge(msg.knowledge);
      if (running) setEngineState('running', 'Running…');
      else setEngineState('ready', 'Ready');
      break;
    case 'result':
      showStore(msg.store);
      showKnowledge(msg.knowledge);
      if (running && running.id === msg.id) finishEntry(msg.result, msg.ms, msg.store?.saved);
      break;
    case 'store':
      showStore(msg.store);
      showKnowledge(msg.knowledge);
      break;
    case 'limits':
      engineLimits = msg.limits;
      showLimits();
      break;
    case 'limits-error':
      appliedLimits = null;
      addNotice(`Limits not changed: ${msg.message}`, 'warning');
      break;
    case 'crashed':
      if (running && running.id === msg.id) {
        const entry = running.entry;
        endRun('error');
        renderError(entry, { kind: 'internal-error', message: msg.message, line: null, column: null, backtrace: [] }, '');
        scrollToEnd();
      }
      addNotice('The engine failed and the session was restarted: its definitions are gone; the knowledge base is reloaded from this browser’s storage.', 'warning');
      worker.terminate();
      startWorker();
      break;
    case 'fatal':
      engineFailed(msg.message);
      break;
    default:
      console.warn('page: unknown message from the worker', msg);
  }
}

function engineFailed(message) {
  if (running) {
    const entry = running.entry;
    endRun('error');
    renderError(entry, { kind: 'internal-error', message, line: null, column: null, backtrace: [] }, '');
  }
  setEngineState('failed', `The engine could not be loaded: ${message}`);
  addNotice(`The engine could not be loaded: ${message}`, 'warning');
}

// ------------------------------------------------------------- evaluation ---

function run() {
  const source = els.input.value;
  if (!source.trim()) {
    els.input.focus();
    return;
  }
  if (running) {
    flash('An evaluation is still running: wait for it or press Stop.');
    return;
  }
  if (document.body.dataset.engine === 'failed') {
    flash('The engine is not available; reload the page to try again.');
    return;
  }
  sendLimits();
  pushHistory(source);
  els.input.value = '';
  const id = nextId++;
  const entry = addEntry(id, source);
  running = { id, entry, started: performance.now() };
  els.run.disabled = true;
  els.stop.disabled = false;
  const loading = document.body.dataset.engine === 'loading';
  setEngineState(loading ? 'loading' : 'running', loading ? 'Waiting for the engine…' : 'Running…');
  tick = setInterval(() => {
    if (document.body.dataset.engine === 'running') {
      els.status.textContent = `Running… ${seconds(performance.now() - running.started)}`;
    }
  }, 200);
  worker.postMessage({ type: 'eval', id, source });
}

function stop() {
  if (!running) return;
  const entry = running.entry;
  const elapsed = performance.now() - running.started;
  worker.terminate();
  endRun('stopped');
  addMeta(entry, `stopped after ${seconds(elapsed)}`);
  scrollToEnd();
  addNotice(`Evaluation stopped after ${seconds(elapsed)}. The session was restarted: its definitions are gone; the knowledge base is reloaded from this browser’s storage.`, 'stopped');
  startWorker();
}

function finishEntry(result, ms, saved) {
  const entry = running.entry;
  const source = entry.dataset.source;
  endRun(result.error ? 'error' : 'done');
  if (result.output) {
    entry.append(el('pre', { class: 'output' }, result.output));
  }
  if (result.value != null) {
    entry.append(el('pre', { class: 'value' }, result.value));
  }
  if (result.error) {
    renderError(entry, result.error, source);
  }
  const meta = addMeta(entry, `${formatMs(ms)}${!result.error && result.value == null && !result.output ? ' · no value' : ''}`);
  if (saved) {
    meta.append(' · ', el('span', {
      class: 'saved',
      title: `${saved.blobs} blob${saved.blobs === 1 ? '' : 's'}, ${formatBytes(saved.bytes)}, written in ${formatMs(saved.ms)}`,
    }, 'knowledge saved'));
  }
  setEngineState('ready', 'Ready');
  scrollToEnd();
}

function endRun(state) {
  running.entry.dataset.state = state;
  running = null;
  clearInterval(tick);
  tick = null;
  els.run.disabled = false;
  els.stop.disabled = true;
  els.input.focus();
}

// ------------------------------------------------------------- transcript ---

function addEntry(id, source) {
  els.welcome?.remove();
  const entry = el('article', { class: 'entry', 'data-id': String(id), 'data-state': 'running' });
  entry.dataset.source = source;
  const input = el('pre', { class: 'input', title: 'Click to edit again' }, source);
  input.addEventListener('click', () => {
    els.input.value = source;
    els.input.focus();
  });
  entry.append(input);
  append(entry);
  return entry;
}

function renderError(entry, error, source) {
  const box = el('div', { class: 'error', 'data-kind': error.kind, role: 'alert' });
  const head = el('div', { class: 'error-head' });
  head.append(el('span', { class: 'error-kind' }, ERROR_TITLES[error.kind] ?? error.kind));
  if (error.line != null) {
    head.append(el('span', { class: 'error-where' }, `${error.line}:${error.column ?? '?'}`));
  }
  box.append(head, el('div', { class: 'error-message' }, error.message));
  const excerpt = sourceExcerpt(source, error.line, error.column);
  if (excerpt) box.append(el('pre', { class: 'error-excerpt' }, excerpt));
  const hint = LIMIT_HINTS[error.kind];
  if (hint) box.append(el('div', { class: 'error-hint' }, hint));
  if (error.backtrace?.length) {
    const list = el('ol', { class: 'backtrace' });
    for (const frame of error.backtrace) list.append(el('li', {}, frame));
    box.append(el('div', { class: 'backtrace-title' }, 'Backtrace (innermost first)'), list);
  }
  entry.append(box);
}

// The offending line with a caret under the column, when the position is known.
function sourceExcerpt(source, line, column) {
  if (line == null || !source) return null;
  const text = source.split('\n')[line - 1];
  if (text === undefined) return null;
  if (column == null) return text;
  const pad = Array.from(text.slice(0, Math.max(0, column - 1)), (c) => (c === '\t' ? '\t' : ' ')).join('');
  return `${text}\n${pad}^`;
}

function addMeta(entry, text) {
  const meta = el('div', { class: 'meta' }, text);
  entry.append(meta);
  return meta;
}

function addNotice(text, kind) {
  append(el('div', { class: `notice ${kind}`, role: 'status' }, text));
}

function append(node) {
  els.transcript.append(node);
  scrollToEnd();
}

// Keeps the newest output in view, as a terminal does.
function scrollToEnd() {
  els.transcript.scrollTop = els.transcript.scrollHeight;
}

// -------------------------------------------------------------- knowledge ---

const STORE_TEXT = {
  saved: 'Saved in this browser',
  error: 'Not saved',
  damaged: 'Stored knowledge cannot be loaded',
  conflict: 'Not saved: changed elsewhere',
  unavailable: 'Kept in memory only',
};

const STORE_HINTS = {
  error: 'Saving is tried again after the next evaluation.',
  damaged: 'The stored data is left untouched and nothing is saved: changes to the knowledge base last only as long as this page. “Start fresh…” moves the damaged data aside.',
  conflict: 'Nothing more is saved from this page; reload it to continue with the stored knowledge base.',
  unavailable: 'Changes to the knowledge base last only as long as this page.',
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
  els.storeActions.hidden = !['damaged', 'conflict'].includes(store.state);
  els.storeFresh.hidden = store.state !== 'damaged';
  els.storeDiscard.hidden = !(store.state === 'damaged' && store.moveFailed);
  els.storeReload.hidden = false;
  const changed = !previous || previous.state !== store.state || previous.message !== store.message;
  if (changed && store.state !== 'saved') {
    addNotice(`${title}: ${store.message}${hint ? `\n${hint}` : ''}`, `store ${store.state}`);
  } else if (changed && previous && previous.state !== 'saved' && store.message) {
    addNotice(store.message, 'store saved');
  }
}

// The current version and the newest reflog entries, from arb:current-version
// and arb:reflog in the worker.
function showKnowledge(knowledge) {
  if (!knowledge) return;
  if (knowledge.error) {
    els.kbVersion.textContent = '?';
    els.kbNote.textContent = `Cannot read the versions: ${knowledge.error}`;
    els.kbNote.hidden = false;
    return;
  }
  els.kbNote.hidden = true;
  els.kbVersion.textContent = knowledge.version;
  const items = knowledge.reflog.map((e) => {
    const when = new Date(e.timestamp);
    const time = el('time', { datetime: e.timestamp, title: e.timestamp },
      Number.isNaN(when.getTime()) ? e.timestamp : when.toLocaleTimeString());
    const button = el('button', {
      type: 'button',
      class: 'reflog-entry',
      title: `Put (arb:switch-version ${e.version}) in the input`,
    });
    button.append(el('span', { class: 'reflog-version' }, e.version),
      el('span', { class: 'reflog-description' }, e.description), time);
    button.addEventListener('click', () => {
      els.input.value = `(arb:switch-version ${e.version})`;
      els.input.focus();
    });
    const li = el('li', { 'data-version': e.version });
    if (e.version === knowledge.version) li.classList.add('current');
    li.append(button);
    return li;
  });
  els.kbReflog.replaceChildren(...items);
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
  worker.postMessage({ type: 'start-fresh', discard });
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
  worker.postMessage({ type: 'limits', ...limits });
}

function showLimits() {
  if (!engineLimits) return;
  els.statusLimits.textContent =
    `${compact(engineLimits.steps)} steps · ${Math.round(engineLimits.memoryBytes / MIB)} MiB · session ${session}`;
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

function el(tag, attrs = {}, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

function formatMs(ms) {
  return ms < 1000 ? `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms` : seconds(ms);
}

function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / MIB).toFixed(1)} MiB`;
}

function compact(n) {
  return new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 }).format(n);
}

function pushHistory(source) {
  if (history[history.length - 1] !== source) history.push(source);
  historyPos = history.length;
  draft = '';
}

// Ctrl+Up/Down walks through earlier inputs, keeping the unsent draft.
function walkHistory(delta) {
  if (!history.length) return;
  if (historyPos === history.length) draft = els.input.value;
  historyPos = Math.min(history.length, Math.max(0, historyPos + delta));
  els.input.value = historyPos === history.length ? draft : history[historyPos];
  els.input.setSelectionRange(els.input.value.length, els.input.value.length);
}

// ------------------------------------------------------------------ wiring ---

els.steps.value = String(DEFAULT_STEPS);
els.memory.value = String(DEFAULT_MEMORY_MIB);
els.steps.addEventListener('change', sendLimits);
els.memory.addEventListener('change', sendLimits);

els.run.addEventListener('click', run);
els.storeFresh.addEventListener('click', () => startFresh(false));
els.storeDiscard.addEventListener('click', () => startFresh(true));
els.storeReload.addEventListener('click', () => window.location.reload());
els.stop.addEventListener('click', stop);
els.clear.addEventListener('click', () => {
  for (const node of [...els.transcript.children]) {
    if (!(running && node === running.entry)) node.remove();
  }
  els.input.focus();
});

els.input.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    run();
  } else if ((e.ctrlKey || e.metaKey) && (e.key === 'ArrowUp' || e.key === 'ArrowDown')) {
    e.preventDefault();
    walkHistory(e.key === 'ArrowUp' ? -1 : 1);
  }
});

document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && running) {
    e.preventDefault();
    stop();
  }
});

for (const button of document.querySelectorAll('.example')) {
  button.addEventListener('click', () => {
    els.input.value = button.textContent;
    els.input.focus();
  });
}

startWorker();
els.input.focus();
