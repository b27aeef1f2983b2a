// What the page keeps in the browser's localStorage across reloads, bounded:
// the input history and the transcript. (The knowledge base is not here: the
// worker keeps it in IndexedDB.) Storage that is full or refused only means
// nothing is kept; the page works the same.

const HISTORY_KEY = 'arbores.history';
const TRANSCRIPT_KEY = 'arbores.transcript';
const TOURED_KEY = 'arbores.toured';
export const HISTORY_MAX = 200;
export const TRANSCRIPT_MAX = 100;

function load(key, fallback) {
  try {
    const text = localStorage.getItem(key);
    return text == null ? fallback : JSON.parse(text);
  } catch {
    return fallback;
  }
}

function store(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // full or refused: keep going without it
  }
}

/** The inputs run before, oldest first, with a cursor for Up/Down. */
export class InputHistory {
  constructor() {
    const items = load(HISTORY_KEY, []);
    this.items = Array.isArray(items) ? items.filter((s) => typeof s === 'string').slice(-HISTORY_MAX) : [];
    this.pos = this.items.length;
    this.draft = '';
  }

  push(source) {
    if (this.items[this.items.length - 1] !== source) this.items.push(source);
    if (this.items.length > HISTORY_MAX) this.items.splice(0, this.items.length - HISTORY_MAX);
    this.pos = this.items.length;
    this.draft = '';
    store(HISTORY_KEY, this.items);
  }

  /** One step back (-1) or forward (+1) from `current`; null at either end. */
  walk(delta, current) {
    if (!this.items.length) return null;
    if (this.pos === this.items.length) this.draft = current;
    const pos = Math.min(this.items.length, Math.max(0, this.pos + delta));
    if (pos === this.pos) return null;
    this.pos = pos;
    return pos === this.items.length ? this.draft : this.items[pos];
  }
}

/** The transcript's entries as data ({source, result, ms, state} or
 *  {notice, kind}), newest last. */
export class SavedTranscript {
  constructor() {
    const items = load(TRANSCRIPT_KEY, []);
    this.items = Array.isArray(items) ? items.slice(-TRANSCRIPT_MAX) : [];
  }

  add(item) {
    this.items.push(item);
    if (this.items.length > TRANSCRIPT_MAX) this.items.splice(0, this.items.length - TRANSCRIPT_MAX);
    store(TRANSCRIPT_KEY, this.items);
  }

  clear() {
    this.items = [];
    store(TRANSCRIPT_KEY, this.items);
  }
}

export const firstVisit = () => !load(TOURED_KEY, false);
export const toured = () => store(TOURED_KEY, true);
