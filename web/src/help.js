// Help: the arb: procedures with their signatures, tiers and one example
// each, from help.json (which the build reads out of docs/API.md, so it is
// the reference itself), shown in the Help tab and by typing ,help in the
// editor; and a first-visit tour of three examples.

import { el } from './dom.js';
import { showCode } from './editor.js';

let loaded = null;

/** The procedures, loaded once. */
export function helpData() {
  loaded ??= fetch(new URL('help.json', document.baseURI)).then((r) => {
    if (!r.ok) throw new Error(`help.json: ${r.status} ${r.statusText}`);
    return r.json();
  });
  return loaded;
}

/** One procedure as an element; `tryIt(text)` puts its example in the editor. */
function procedureItem(p, tryIt) {
  const item = el('article', { class: 'help-item', 'data-name': p.name }, [
    el('header', {}, [
      el('code', { class: 'help-signature' }, p.signature),
      el('span', { class: 'help-tier', title: tierTitle(p.tier) }, p.special ? `special form · ${p.tier}` : p.tier),
    ]),
    p.summary ? el('p', {}, p.summary) : null,
  ]);
  if (p.example) {
    const code = el('div', { class: 'help-example' });
    item.append(code);
    showCode(code, p.result ? `${p.example}\n;; => ${p.result.split('\n')[0]}` : p.example);
    item.append(el('button', { type: 'button', class: 'help-try', onclick: () => tryIt(p.example) }, 'Try it'));
  }
  return item;
}

function tierTitle(tier) {
  return {
    T0: 'system tier: the operator (this page)',
    T1: 'read-write tier and above',
    T2: 'any tier, read-only included',
  }[tier] ?? '';
}

/** Fills the Help tab. */
export async function drawHelpPanel(container, tryIt) {
  try {
    const { procedures } = await helpData();
    let section = null;
    const nodes = [];
    for (const p of procedures) {
      if (p.section !== section) {
        section = p.section;
        nodes.push(el('h3', {}, section));
      }
      nodes.push(procedureItem(p, tryIt));
    }
    container.replaceChildren(...nodes);
  } catch (e) {
    container.replaceChildren(el('p', { class: 'kb-error' }, `Help cannot be loaded: ${e.message}`));
  }
}

/** `,help` or `,help NAME` typed in the editor: an element for the
 *  transcript, or null when `source` is not a help command. */
export async function helpCommand(source, tryIt) {
  const m = /^\s*,help(?:\s+(\S+))?\s*$/.exec(source);
  if (!m) return null;
  const box = el('article', { class: 'entry help-entry', 'data-state': 'done' }, el('pre', { class: 'input' }, source.trim()));
  let procedures;
  try {
    ({ procedures } = await helpData());
  } catch (e) {
    box.append(el('p', { class: 'kb-error' }, `Help cannot be loaded: ${e.message}`));
    return box;
  }
  const want = m[1];
  const shown = want ? procedures.filter((p) => p.name === want || p.name.includes(want)) : procedures;
  if (!want) {
    box.append(el('p', {}, [
      'The arb: procedures (',
      el('a', { href: 'docs/api.html', target: '_blank' }, 'API reference'),
      '). Type ,help NAME for one, with an example. Ctrl+Enter runs, Up/Down on the first/last line walk the history.',
    ]));
    box.append(el('ul', { class: 'help-list' }, shown.map((p) => el('li', {}, [
      el('code', {}, p.signature), ` — ${p.tier} — `, p.summary.split('. ')[0].replace(/\.$/, ''),
    ]))));
  } else if (!shown.length) {
    box.append(el('p', {}, `No arb: procedure matches “${want}”. Type ,help for the list.`));
  } else {
    for (const p of shown) box.append(procedureItem(p, tryIt));
  }
  return box;
}

// ------------------------------------------------------------------ tour ---

export const TOUR = [
  {
    title: '1 · Scheme, right here',
    text: 'Define a procedure and call it. Press Run (or Ctrl+Enter). Definitions last for the session.',
    code: '(define (fact n) (if (= n 0) 1 (* n (fact (- n 1)))))\n(fact 20)',
  },
  {
    title: '2 · Knowledge that stays',
    text: 'arb:create stores code with a description and names in the knowledge base, saved in this browser. It is then usable by name, and listed under Nodes.',
    code: '(arb:create "(define (square x) (* x x))" \'() "multiplies a number by itself" "function" \'("square"))\n(square 12)',
  },
  {
    title: '3 · Find it, and go back in time',
    text: 'Search by name or by meaning. Every change is a version: the Versions tab draws them; click one to look at the store as it was, and switch back to it.',
    code: '(arb:semantic-search "multiply a number by itself")',
  },
];

/** Shows the tour in `dialog`; `tryIt(code)` puts an example in the editor. */
export function showTour(dialog, tryIt, onDone) {
  let step = 0;
  const draw = () => {
    const s = TOUR[step];
    const code = el('div', { class: 'tour-code' });
    dialog.replaceChildren(el('div', { class: 'tour-card', role: 'document' }, [
      el('h2', {}, s.title),
      el('p', {}, s.text),
      code,
      el('div', { class: 'tour-buttons' }, [
        el('button', { type: 'button', class: 'primary', id: 'tour-try', onclick: () => { tryIt(s.code); close(); } }, 'Put it in the editor'),
        step > 0 ? el('button', { type: 'button', onclick: () => { step -= 1; draw(); } }, 'Back') : null,
        step < TOUR.length - 1
          ? el('button', { type: 'button', id: 'tour-next', onclick: () => { step += 1; draw(); } }, 'Next')
          : null,
        el('button', { type: 'button', id: 'tour-close', onclick: () => close() }, step < TOUR.length - 1 ? 'Skip' : 'Done'),
      ]),
      el('p', { class: 'tour-step' }, `${step + 1} of ${TOUR.length}`),
    ]));
    showCode(code, s.code);
  };
  const close = () => {
    dialog.close();
    onDone();
  };
  draw();
  if (!dialog.open) dialog.showModal();
}
