// The transcript: one entry per evaluation (its input, output, value or
// error, and a line of facts), notices between them. Entries are drawn from
// plain data, so the saved transcript (saved.js) draws the same after a
// reload.

import { el, formatBytes, formatMs } from './dom.js';

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

export class Transcript {
  /** `onEdit(source)`: an entry's input was clicked, to edit it again. */
  constructor(container, onEdit) {
    this.container = container;
    this.onEdit = onEdit;
  }

  /** A new entry for `source`, in the state "running"; returns its element. */
  start(id, source) {
    this.container.querySelector('.welcome')?.remove();
    const entry = el('article', { class: 'entry', 'data-id': String(id), 'data-state': 'running' });
    entry.dataset.source = source;
    entry.append(el('pre', { class: 'input', title: 'Click to edit again', onclick: () => this.onEdit(source) }, source));
    this.append(entry);
    return entry;
  }

  /** Fills an entry with what the evaluation gave. */
  finish(entry, { result, ms, saved, state, memory }) {
    entry.dataset.state = state ?? (result?.error ? 'error' : 'done');
    if (result?.output) entry.append(el('pre', { class: 'output' }, result.output));
    if (result?.value != null) entry.append(el('pre', { class: 'value' }, result.value));
    if (result?.error) this.error(entry, result.error, entry.dataset.source);
    if (ms !== undefined) {
      const noValue = !result?.error && result?.value == null && !result?.output;
      const meta = this.meta(entry, `${formatMs(ms)}${noValue ? ' · no value' : ''}`);
      if (memory !== undefined) {
        // What the memory cap bounds (Limits), as a hint.
        entry.dataset.memory = String(memory);
        meta.title = `engine memory after it: ${formatBytes(memory)}`;
      }
      if (saved) {
        meta.append(' · ', el('span', {
          class: 'saved',
          title: `${saved.blobs} blob${saved.blobs === 1 ? '' : 's'}, ${formatBytes(saved.bytes)}, written in ${formatMs(saved.ms)}`,
        }, 'knowledge saved'));
      }
    }
    this.scrollToEnd();
  }

  /** Draws a saved entry ({source, result, ms, saved, state, meta}). */
  restore(item, id) {
    if (item.notice) {
      this.notice(item.notice, item.kind);
      return;
    }
    const entry = this.start(id, item.source);
    this.finish(entry, item);
    if (item.meta) this.meta(entry, item.meta);
    entry.classList.add('restored');
  }

  error(entry, error, source) {
    const box = el('div', { class: 'error', 'data-kind': error.kind, role: 'alert' });
    const head = el('div', { class: 'error-head' }, el('span', { class: 'error-kind' }, ERROR_TITLES[error.kind] ?? error.kind));
    if (error.line != null) head.append(el('span', { class: 'error-where' }, `${error.line}:${error.column ?? '?'}`));
    box.append(head, el('div', { class: 'error-message' }, error.message));
    const excerpt = sourceExcerpt(source, error.line, error.column);
    if (excerpt) box.append(el('pre', { class: 'error-excerpt' }, excerpt));
    // "did you mean `x`?" for an unbound variable (the engine's guess, as
    // the arbores command gives it), then what a limit's error means.
    for (const hint of [error.hint, LIMIT_HINTS[error.kind]]) {
      if (hint) box.append(el('div', { class: 'error-hint' }, hint));
    }
    if (error.backtrace?.length) {
      box.append(
        el('div', { class: 'backtrace-title' }, 'Backtrace (innermost first)'),
        el('ol', { class: 'backtrace' }, error.backtrace.map((f) => el('li', {}, f))),
      );
    }
    entry.append(box);
  }

  meta(entry, text) {
    const meta = el('div', { class: 'meta' }, text);
    entry.append(meta);
    return meta;
  }

  notice(text, kind) {
    const node = el('div', { class: `notice ${kind}`, role: 'status' }, text);
    this.append(node);
    return node;
  }

  /** Any element (help, closures) as an entry of its own. */
  block(node) {
    this.container.querySelector('.welcome')?.remove();
    this.append(node);
  }

  clear(keep) {
    for (const node of [...this.container.children]) if (node !== keep) node.remove();
  }

  append(node) {
    this.container.append(node);
    this.scrollToEnd();
  }

  // Keeps the newest output in view, as a terminal does.
  scrollToEnd() {
    this.container.scrollTop = this.container.scrollHeight;
  }
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
