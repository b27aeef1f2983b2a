// The knowledge browser beside the REPL: a node list (paged, filtered by
// type, sorted by name or recency) with a search box (by symbol and by
// meaning, scores shown), a node view (code, description, names, type,
// dependencies and dependents as links, history across versions, "insert a
// call", "show closure"), and the version graph (click a version to view
// the store as of then, read-only; switch to it; diff two versions).
//
// Everything it shows comes from the worker (Query in protocol.js), which
// asks the engine; nothing here reads Scheme.

import { diffLines } from 'diff';
import { $, el, nodeName, timeEl } from './dom.js';
import { showCode } from './editor.js';
import { drawGraph } from './graph.js';
import { Query } from './protocol.js';

const PAGE = 25;

export class KnowledgeBrowser {
  /**
   * ask(query, args) → Promise of the answer
   * insert(text)      puts text in the editor
   * run(source)       runs source as if typed (for switching versions)
   * show(node)        puts an element in the transcript
   */
  constructor({ ask, insert, run, show }) {
    Object.assign(this, { ask, insert, run, show });
    this.viewing = null; // a version other than the current one, read-only
    this.current = null;
    this.offset = 0;
    this.graph = null;
    this.diffFrom = null;
    this.els = {
      tabs: document.querySelectorAll('.tabs [role="tab"]'),
      search: $('kb-search'),
      type: $('kb-type'),
      sort: $('kb-sort'),
      builtins: $('kb-builtins'),
      list: $('kb-list'),
      pager: $('kb-pager'),
      view: $('kb-node'),
      asOf: $('kb-as-of'),
      graph: $('kb-graph'),
      versionView: $('kb-version-view'),
    };
    for (const tab of this.els.tabs) tab.addEventListener('click', () => this.tab(tab.dataset.tab));
    let typing = null;
    this.els.search.addEventListener('input', () => {
      clearTimeout(typing);
      typing = setTimeout(() => this.refreshList(), 200);
    });
    for (const c of [this.els.type, this.els.sort, this.els.builtins]) {
      c.addEventListener('change', () => { this.offset = 0; this.refreshList(); });
    }
  }

  tab(name) {
    for (const t of this.els.tabs) {
      const on = t.dataset.tab === name;
      t.setAttribute('aria-selected', String(on));
      $(t.getAttribute('aria-controls')).hidden = !on;
    }
    document.body.dataset.tab = name;
    if (name === 'versions') this.refreshGraph();
  }

  /** After every evaluation: the knowledge base may have changed. */
  async changed(knowledge) {
    this.current = knowledge?.version ?? this.current;
    if (this.viewing === this.current) {
      // Switched to the version being viewed: it is the current one now.
      this.viewing = null;
      this.drawAsOf();
    }
    await Promise.all([this.refreshList(), this.refreshGraph(), this.refreshNode()]);
  }

  version() {
    return this.viewing ?? undefined;
  }

  // ------------------------------------------------------------ node list ---

  async refreshList() {
    const text = this.els.search.value.trim();
    const list = this.els.list;
    try {
      if (text) {
        const found = await this.ask(Query.SEARCH, { text, version: this.version() });
        if (text !== this.els.search.value.trim()) return; // a newer search is on its way
        this.drawSearch(found);
        list.dataset.query = text;
      } else {
        const page = await this.ask(Query.NODES, {
          version: this.version(),
          type: this.els.type.value,
          sort: this.els.sort.value,
          offset: this.offset,
          limit: PAGE,
          builtins: this.els.builtins.checked,
        });
        this.drawPage(page);
        delete list.dataset.query;
      }
    } catch (e) {
      list.replaceChildren(el('li', { class: 'kb-error' }, String(e.message ?? e)));
    }
  }

  drawPage(page) {
    const type = this.els.type;
    const chosen = type.value;
    type.replaceChildren(
      el('option', { value: '' }, 'all types'),
      ...page.types.map((t) => el('option', { value: t.type }, `${t.type || '(no type)'} (${t.count})`)),
    );
    type.value = page.types.some((t) => t.type === chosen) ? chosen : '';
    this.els.list.replaceChildren(...(page.nodes.length ? page.nodes.map((n) => this.nodeItem(n)) : [el('li', { class: 'kb-empty' }, 'No nodes yet: store one with arb:create.')]));
    const last = Math.min(page.offset + page.nodes.length, page.total);
    const pager = this.els.pager;
    pager.replaceChildren();
    if (page.total > PAGE || page.offset > 0) {
      pager.append(
        el('button', { type: 'button', disabled: page.offset === 0, onclick: () => { this.offset = Math.max(0, this.offset - PAGE); this.refreshList(); } }, '‹ Newer'),
        el('span', {}, `${page.offset + 1}–${last} of ${page.total}`),
        el('button', { type: 'button', disabled: last >= page.total, onclick: () => { this.offset += PAGE; this.refreshList(); } }, 'More ›'),
      );
    } else {
      pager.append(el('span', {}, `${page.total} node${page.total === 1 ? '' : 's'}`));
    }
  }

  drawSearch(found) {
    const section = (title, hits, scored) => [
      el('li', { class: 'kb-heading' }, title),
      ...(hits.length ? hits.map((h) => this.nodeItem(h, scored ? h.score : null)) : [el('li', { class: 'kb-empty' }, 'nothing found')]),
    ];
    this.els.list.replaceChildren(
      ...section(`By name (${found.symbol.mode})`, found.symbol.hits, false),
      ...section('By meaning (score 0–1)', found.meaning, true),
    );
    this.els.pager.replaceChildren(el('span', {}, 'arb:search-by-symbol and arb:semantic-search'));
  }

  nodeItem(n, score = null) {
    const button = el('button', { type: 'button', class: 'kb-item', 'data-id': n.id, onclick: () => this.open(n.id) }, [
      el('span', { class: 'kb-name' }, nodeName(n)),
      n.symbolNames?.length > 1 ? el('span', { class: 'kb-alias' }, n.symbolNames.slice(1).join(' ')) : null,
      n.type ? el('span', { class: 'kb-type' }, n.type) : null,
      score != null ? el('span', { class: 'kb-score', title: 'cosine similarity of the descriptions' }, score.toFixed(3)) : null,
      el('span', { class: 'kb-desc' }, n.description ?? ''),
    ]);
    return el('li', { 'data-id': n.id }, button);
  }

  // ------------------------------------------------------------ node view ---

  async open(id) {
    this.openId = id;
    await this.refreshNode();
    this.els.view.scrollIntoView?.({ block: 'nearest' });
  }

  async refreshNode() {
    const view = this.els.view;
    if (this.openId == null) {
      view.hidden = true;
      return;
    }
    let v;
    try {
      v = await this.ask(Query.NODE, { id: this.openId, version: this.version() });
    } catch (e) {
      view.replaceChildren(el('p', { class: 'kb-error' }, String(e.message ?? e)));
      return;
    }
    view.hidden = false;
    if (!v) {
      view.replaceChildren(el('p', { class: 'kb-empty' }, `Node ${this.openId} is not in version ${this.viewing ?? this.current}.`));
      return;
    }
    const n = v.node;
    const links = (list, empty) => (list.length
      ? el('ul', { class: 'kb-links' }, list.map((l) => el('li', {}, el('button', { type: 'button', class: 'link', 'data-id': l.id, onclick: () => this.open(l.id) },
        `${l.symbolNames[0] ?? `#${l.id}`}${l.localName && l.localName !== l.symbolNames[0] ? ` as ${l.localName}` : ''}`))))
      : el('p', { class: 'kb-empty' }, empty));
    const code = el('div', { class: 'kb-code' });
    const closure = el('div', { class: 'kb-closure' });
    const builtin = n.code == null;
    view.replaceChildren(...[
      el('header', { class: 'kb-node-head' }, [
        el('h3', {}, nodeName(n)),
        el('span', { class: 'kb-id' }, `#${n.id}`),
        n.type ? el('span', { class: 'kb-type' }, n.type) : null,
        el('button', { type: 'button', class: 'close', title: 'Close', onclick: () => { this.openId = null; view.hidden = true; } }, '×'),
      ]),
      n.symbolNames.length > 1 ? el('p', { class: 'kb-names' }, `Names: ${n.symbolNames.join(', ')}`) : null,
      el('p', { class: 'kb-description' }, n.description ?? '(no description)'),
      builtin ? el('p', { class: 'kb-empty' }, 'A builtin procedure: see Help.') : code,
      el('div', { class: 'kb-actions' }, [
        el('button', { type: 'button', onclick: () => this.insert(`(${n.symbolNames[0] ?? `arb:ref ((f ${n.id})) (f`} )`) }, 'Insert a call'),
        builtin ? null : el('button', { type: 'button', onclick: () => this.showClosure(n.id, closure) }, 'Show closure'),
      ]),
      closure,
      el('h4', {}, 'Dependencies'),
      links(v.dependencies, 'none'),
      el('h4', {}, 'Dependents'),
      links(v.dependents, 'none'),
      el('h4', {}, 'History'),
      el('ol', { class: 'kb-history' }, v.history.map((h) => el('li', { 'data-version': h.version }, [
        el('button', { type: 'button', class: 'link', title: `View the store as of version ${h.version}`, onclick: () => this.viewAt(h.version) }, `v${h.version}`),
        ` ${h.change} `,
        timeEl(h.timestamp),
      ]))),
    ].filter(Boolean));
    if (!builtin) showCode(code, n.code);
  }

  async showClosure(id, box) {
    try {
      const text = await this.ask(Query.CLOSURE, { id, version: this.version() });
      box.replaceChildren(el('h4', {}, 'Closure: standalone source'));
      showCode(box, text);
    } catch (e) {
      box.replaceChildren(el('p', { class: 'kb-error' }, String(e.message ?? e)));
    }
  }

  // ------------------------------------------------------------- versions ---

  async refreshGraph() {
    if (document.body.dataset.tab !== 'versions' && this.graph) return;
    try {
      this.graph = await this.ask(Query.VERSIONS, {});
    } catch (e) {
      this.els.graph.replaceChildren(el('p', { class: 'kb-error' }, String(e.message ?? e)));
      return;
    }
    this.current = this.graph.current;
    drawGraph(this.els.graph, this.graph, { selected: this.viewing, onPick: (v) => this.viewAt(v) });
    this.drawAsOf();
  }

  /** Views the store as of `version` (read-only), or the current one. */
  async viewAt(version) {
    this.viewing = version === this.current ? null : version;
    this.offset = 0;
    this.drawAsOf();
    if (this.graph) drawGraph(this.els.graph, this.graph, { selected: this.viewing, onPick: (v) => this.viewAt(v) });
    await Promise.all([this.refreshList(), this.refreshNode()]);
    this.drawVersion(version);
  }

  drawAsOf() {
    const box = this.els.asOf;
    document.body.dataset.viewing = this.viewing ?? '';
    if (this.viewing == null) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    box.replaceChildren(
      el('span', {}, `Viewing version ${this.viewing}, read-only (current: ${this.current}).`),
      el('button', { type: 'button', id: 'kb-switch', onclick: () => this.run(`(arb:switch-version ${this.viewing})`) }, `Switch to ${this.viewing}`),
      el('button', { type: 'button', onclick: () => this.viewAt(this.current) }, 'Back to current'),
    );
  }

  drawVersion(version) {
    const v = this.graph?.versions.find((x) => x.id === version);
    const box = this.els.versionView;
    if (!v) {
      box.replaceChildren();
      return;
    }
    const others = this.graph.versions.map((x) => x.id).filter((x) => x !== version).reverse();
    const from = el('select', { id: 'kb-diff-from', 'aria-label': 'Compare with version' },
      others.map((x) => el('option', { value: x, selected: x === (v.parent ?? others[0]) }, `version ${x}`)));
    box.replaceChildren(
      el('h3', {}, `Version ${v.id}${v.id === this.current ? ' (current)' : ''}`),
      el('p', {}, [v.description, ' · ', timeEl(v.timestamp), ` · ${v.nodeCount} nodes`]),
      el('div', { class: 'kb-actions' }, [
        el('label', {}, ['Diff from ', from]),
        el('button', { type: 'button', id: 'kb-diff', onclick: () => this.showDiff(Number(from.value), v.id) }, 'Show diff'),
      ]),
      el('div', { id: 'kb-diff-out', class: 'kb-diff' }),
    );
  }

  async showDiff(from, to) {
    const out = $('kb-diff-out');
    let d;
    try {
      d = await this.ask(Query.DIFF, { from, to });
    } catch (e) {
      out.replaceChildren(el('p', { class: 'kb-error' }, String(e.message ?? e)));
      return;
    }
    const item = (cls, n, body) => el('li', { class: cls, 'data-id': n.id }, [
      el('button', { type: 'button', class: 'link', onclick: () => this.open(n.id) }, nodeName(n)), ' ', body ?? '',
    ]);
    const codeDiff = (a, b) => el('pre', { class: 'code-diff' }, diffLines(a ?? '', b ?? '').flatMap((part) => {
      const mark = part.added ? '+ ' : part.removed ? '- ' : '  ';
      const cls = part.added ? 'added' : part.removed ? 'removed' : 'same';
      return part.value.replace(/\n$/, '').split('\n').map((line) => el('span', { class: cls }, mark + line));
    }));
    const total = d.added.length + d.removed.length + d.changed.length;
    out.replaceChildren(
      el('p', { class: 'kb-diff-summary' }, `From version ${d.from} to ${d.to}: ${d.added.length} added, ${d.removed.length} removed, ${d.changed.length} changed.`),
      total ? el('ul', { class: 'kb-diff-list' }, [
        ...d.added.map((n) => item('added', n, codeDiff('', n.code))),
        ...d.removed.map((n) => item('removed', n, codeDiff(n.code, ''))),
        ...d.changed.map(({ before, after }) => item('changed', after, [
          before.description !== after.description ? el('div', { class: 'kb-desc-change' }, `description: “${before.description ?? ''}” → “${after.description ?? ''}”`) : null,
          JSON.stringify(before.symbolNames) !== JSON.stringify(after.symbolNames) ? el('div', {}, `names: ${before.symbolNames.join(', ')} → ${after.symbolNames.join(', ')}`) : null,
          codeDiff(before.code, after.code),
        ])),
      ]) : el('p', { class: 'kb-empty' }, 'The two versions hold the same nodes.'),
    );
  }
}
