// End-to-end tests of the playground as a place to work: the editor
// (highlighting, brackets, indentation, history across reloads), the
// session kept across Stop and reload and "New session", the knowledge browser (nodes, search,
// node view, the version graph, switching and diffs by clicking), help and
// the tour, sharing by URL, the store written by the page before its store
// moved into the wasm module, offline reload, and the phone layout.
//
//   node --test --test-concurrency=1 web/tests/
//
// UPDATE_SCREENSHOTS=1 also writes the screenshots of docs/ (small PNGs of
// the main views).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { closeTour, field, root, startSession, stopServer } from './harness.mjs';

const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';
const fixture = JSON.parse(fs.readFileSync(path.join(root, 'web', 'tests', 'fixtures', 'store-written-by-the-page-before.json'), 'utf8'));

let server;
let s;
const page = () => s.page;

async function screenshot(name, p = page()) {
  if (!SCREENSHOTS) return;
  const file = path.join(root, 'docs', 'images', `${name}.png`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  await p.screenshot({ path: file });
  console.log(`  screenshot: docs/images/${name}.png`);
}

// The list of the node browser: [{id, name, score}].
function listed() {
  return page().$$eval('#kb-list li[data-id]', (ls) => ls.map((li) => ({
    id: li.dataset.id,
    name: li.querySelector('.kb-name')?.textContent,
    score: li.querySelector('.kb-score')?.textContent ?? null,
  })));
}

// Runs `loop` (an evaluation that never ends) with a budget large enough
// to keep it running, presses Stop once it runs, and waits for the engine
// that replaces the stopped one.
async function stopWhileRunning(loop) {
  await page().evaluate(() => { document.getElementById('limits').open = true; });
  await page().fill('#limit-steps', '1000000000000');
  const id = await s.submit(loop);
  await page().waitForTimeout(700);
  assert.equal((await s.readEntry(id)).state, 'running', 'the loop runs until stopped');
  const session = Number(await page().getAttribute('body', 'data-session'));
  await page().click('#stop');
  await s.waitFor(`body[data-session="${session + 1}"]`, 'a new session after Stop', 5000);
  await s.engineReady('the engine after Stop');
  await page().fill('#limit-steps', '50000000');
}

// Presses "New session" and waits for its engine.
async function newSession() {
  const session = Number(await page().getAttribute('body', 'data-session'));
  await page().click('#new-session');
  await s.waitFor(`body[data-session="${session + 1}"]`, 'a new session', 5000);
  await s.engineReady('the new session');
}

describe('workbench', () => {
  before(async () => {
    ({ server, session: s } = await startSession());
  });

  after(async () => {
    await s?.close();
    stopServer(server);
  });

  test('a database written by the page before its store moved into the wasm module loads as it was', async () => {
    // Write it exactly as that page did, before the playground first opens.
    await page().goto(`${server.url}favicon.svg`);
    await page().evaluate(async ({ refs, blobs }) => {
      const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const db = await new Promise((resolve, reject) => {
        const r = indexedDB.open('arbores', 1);
        r.onupgradeneeded = () => { r.result.createObjectStore('blobs'); r.result.createObjectStore('refs'); };
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
      const tx = db.transaction(['blobs', 'refs'], 'readwrite');
      for (const [k, v] of Object.entries(blobs)) tx.objectStore('blobs').put(bytes(v), k);
      tx.objectStore('refs').put(bytes(refs), 'current');
      await new Promise((resolve, reject) => { tx.oncomplete = resolve; tx.onerror = () => reject(tx.error); });
      db.close();
    }, fixture);
    await s.open('over a store written by the earlier page');
    const p = await s.panel();
    assert.equal(p.store, 'saved', `the stored knowledge loads; the panel shows ${JSON.stringify(p)}`);
    assert.equal(Number(p.version), fixture.expect.version);
    assert.deepEqual(p.reflog.map((e) => Number(e.version)), fixture.expect.reflog);
    for (const [source, expected] of Object.entries(fixture.expect.values)) await s.value(source, expected, ' from the earlier store');
  });

  test('the first visit shows a tour of three examples; it puts an example in the editor and is not shown again', async () => {
    await page().evaluate(() => localStorage.clear());
    await page().goto(server.url, { waitUntil: 'load' });
    await s.waitFor('#tour[open]', 'the tour on a first visit', 10_000);
    const titles = [];
    for (;;) {
      titles.push(await page().textContent('#tour h2'));
      if (!(await page().isVisible('#tour-next'))) break;
      await page().click('#tour-next');
    }
    assert.equal(titles.length, 3, `three steps: ${titles.join(' / ')}`);
    await page().click('#tour-try');
    assert.match(await s.inputText(), /arb:semantic-search/, 'the last example is in the editor');
    await s.engineReady('after the tour');
    await page().reload({ waitUntil: 'load' });
    await s.engineReady('after a reload');
    assert.ok(!(await page().isVisible('#tour[open]')), 'the tour is shown once');
    await page().click('#tour-open');
    assert.ok(await page().isVisible('#tour[open]'), 'the Tour link opens it again');
    await closeTour(page());
  });

  test('the editor highlights Scheme, closes and matches brackets, indents in Lisp style, and runs with Ctrl+Enter', async () => {
    await s.setInput('');
    await page().keyboard.type('(define (twice x');
    assert.equal(await s.inputText(), '(define (twice x))', 'typing an opening bracket adds its closing one');
    await page().keyboard.press('End');
    await page().keyboard.press('ArrowLeft');
    await page().keyboard.press('Enter');
    await page().keyboard.type('(* 2 x');
    const text = await s.inputText();
    assert.equal(text, '(define (twice x)\n  (* 2 x))', `Enter indents the body two columns; the editor holds ${JSON.stringify(text)}`);
    assert.ok(await page().$('#input .cm-matchingBracket'), 'the bracket at the cursor and its partner are marked');
    const tokens = await page().$$eval('#input .cm-line span', (ss) => ss.map((x) => x.className).filter(Boolean));
    assert.ok(tokens.length >= 3, `Scheme is highlighted: ${tokens.join(' ')}`);
    await page().keyboard.press('Home');
    await page().keyboard.press('Tab');
    assert.match(await s.inputText(), /\n {4}\(\* 2 x\)\)/, 'Tab indents the line instead of leaving the editor');
    assert.equal(await page().evaluate(() => document.activeElement?.classList.contains('cm-content')), true, 'the editor keeps the focus after Tab');
    const ids = await page().$$eval('#transcript .entry', (es) => es.length);
    await page().keyboard.press('Control+Enter');
    await s.waitFor(`#transcript .entry:nth-of-type(${ids + 1})`, 'the entry run by Ctrl+Enter', 5000);
    await s.value('(twice 21)', '42');
  });

  test('history (Up/Down at the first/last line) and the transcript survive a reload', async () => {
    await s.value('(+ 40 2)', '42');
    await s.open('after a reload');
    assert.match(await page().textContent('#transcript'), /\(\+ 40 2\)/, 'the transcript is kept');
    assert.ok(await page().$('#transcript .entry.restored .value'), 'restored entries show their values');
    await s.setInput('');
    await page().keyboard.press('ArrowUp');
    assert.equal(await s.inputText(), '(+ 40 2)', 'Up in an empty editor brings back the last input');
    await page().keyboard.press('ArrowUp');
    assert.equal(await s.inputText(), '(twice 21)', 'Up again, the one before');
    await page().keyboard.press('ArrowDown');
    await page().keyboard.press('ArrowDown');
    assert.equal(await s.inputText(), '', 'Down past the newest gives back the draft');
  });

  test('definitions survive a reload and Stop, closures with their state; "New session" starts empty and keeps the knowledge base', async () => {
    assert.ok(!(await page().isVisible('#session-note')), 'no notice that definitions are lost');
    await s.value('(define kept-here 5)');
    await s.value('(define bump! (let ((n 0)) (lambda () (set! n (+ n 1)) n)))');
    await s.value('(bump!)', '1');
    await s.value('(define-record-type pt (make-pt x y) pt? (x pt-x) (y pt-y))');
    await s.value('(define p1 (make-pt 3 4))');
    await s.value('(arb:create "(define stored-here 6)" \'() "a stored constant" "constant" \'("stored-here"))', /"new-version-id"/);
    await s.open('after a reload');
    assert.ok(Number(await page().getAttribute('body', 'data-restored')) >= 5, 'the page knows the session was restored');
    await s.value('(list kept-here (bump!) (pt? p1) (pt-x p1))', '(5 2 #t 3)', ' after a reload');

    // Stop a loop: the restarted engine has the definitions of the last
    // evaluation that finished.
    await s.value('(define (spin) (spin))');
    await stopWhileRunning('(begin (set! kept-here 99) (spin))');
    assert.match(await page().textContent('#transcript'), /restarted with the definitions of the last evaluation that finished/);
    await s.value('(list kept-here (bump!))', '(5 3)', ' after Stop');

    await newSession();
    const gone = await s.evaluate('kept-here');
    assert.match(gone.error?.message ?? '', /unbound variable: kept-here/);
    await s.value('stored-here', '6', ' in the new session');
    await s.open('after a reload of the new session');
    const still = await s.evaluate('bump!');
    assert.match(still.error?.message ?? '', /unbound variable: bump!/, 'the forgotten session stays forgotten');
  });

  test('the page\'s files: (scheme file) writes and reads them, load runs one, they survive a reload and Stop, and "New session" empties them', async () => {
    await s.value('(call-with-output-file "notes/a.txt" (lambda (p) (write \'(1 "two" 3.5) p)))');
    await s.value('(call-with-input-file "./notes/a.txt" read)', '(1 "two" 3.5)');
    await s.value('(with-output-to-file "lib.scm" (lambda () (write \'(define (twice x) (* 2 x)))))');
    await s.value('(begin (load "/lib.scm") (twice 21))', '42');
    await s.value('(list (file-exists? "notes/../notes/a.txt") (file-exists? "b.txt"))', '(#t #f)');
    const missing = await s.evaluate('(open-input-file "nowhere.txt")');
    assert.match(missing.error?.message ?? '', /no such file: \/nowhere\.txt/);
    await s.open('after a reload');
    await s.value('(call-with-input-file "notes/a.txt" read)', '(1 "two" 3.5)', ' after a reload');
    await s.value('(delete-file "lib.scm")');

    // Stop: the files of the last evaluation that finished are there.
    await stopWhileRunning('(begin (call-with-output-file "late.txt" (lambda (p) (display "x" p))) (let spin () (spin)))');
    await s.value('(list (file-exists? "notes/a.txt") (file-exists? "lib.scm") (file-exists? "late.txt"))', '(#t #f #f)', ' after Stop');

    await newSession();
    await s.value('(file-exists? "notes/a.txt")', '#f', ' in a new session');
    await s.open('after a reload of the new session');
    await s.value('(file-exists? "notes/a.txt")', '#f', ' after a reload of the new session');
  });

  test('the node list pages, filters by type and sorts; search finds by name and by meaning with scores', async () => {
    const sq = field((await s.value('(arb:create "(define (sq7 x) (* x x))" \'() "multiplies a number by itself" "function" \'("sq7"))')).value, 's-expression-id');
    await s.value(`(arb:create "(define (cube7 x) (* x (sq7 x)))" '((${sq} . "sq7")) "raises a number to the third power" "function" '("cube7"))`, /"new-version-id"/);
    await s.value('(arb:create "(define pi 3.14159)" \'() "the ratio of a circle to its diameter" "constant" \'("pi"))', /"new-version-id"/);
    await page().click('#tab-nodes');
    await page().selectOption('#kb-sort', 'name');
    await s.waitFor('#kb-list li[data-id] .kb-name', 'the node list');
    let names = (await listed()).map((n) => n.name);
    assert.deepEqual(names, [...names].sort(), `sorted by name: ${names}`);
    assert.ok(['cube7', 'pi', 'sq7'].every((n) => names.includes(n)), `the new nodes are listed: ${names}`);
    await page().selectOption('#kb-type', 'constant');
    await page().waitForFunction(() => [...document.querySelectorAll('#kb-list .kb-type')].every((t) => t.textContent === 'constant'));
    names = (await listed()).map((n) => n.name);
    assert.ok(names.includes('pi') && !names.includes('cube7'), `filtered by type: ${names}`);
    await page().selectOption('#kb-type', '');
    await page().selectOption('#kb-sort', 'recency');
    await page().waitForFunction(() => document.querySelector('#kb-list li[data-id] .kb-name')?.textContent === 'pi');
    await page().check('#kb-builtins');
    await page().waitForFunction(() => /of \d+/.test(document.querySelector('#kb-pager')?.textContent ?? ''));
    assert.match(await page().textContent('#kb-pager'), /1–25 of \d+/, 'with the builtins the list is paged');
    await page().click('#kb-pager button:last-child');
    await page().waitForFunction(() => /^‹ Newer26–/.test(document.querySelector('#kb-pager')?.textContent ?? ''));
    await page().uncheck('#kb-builtins');

    await page().fill('#kb-search', 'cube7');
    await s.waitFor('#kb-list[data-query="cube7"]', 'the search results');
    const byName = await page().$$eval('#kb-list li', (ls) => ls.map((l) => l.textContent));
    assert.equal(byName[0], 'By name (prefix)');
    assert.match(byName[1], /^cube7/, `by name first: ${JSON.stringify(byName)}`);
    await page().fill('#kb-search', 'raise it to the third power');
    await s.waitFor('#kb-list[data-query="raise it to the third power"]', 'the search results');
    const meaning = (await listed()).filter((h) => h.score !== null);
    assert.equal(meaning[0].name, 'cube7', `by meaning, best first: ${JSON.stringify(meaning)}`);
    assert.match(meaning[0].score, /^(0|1)\.\d{3}$/, 'with its score');
    await page().fill('#kb-search', '');
  });

  test('the node view shows code, links, history; links navigate; insert a call and show closure work', async () => {
    await page().fill('#kb-search', 'cube7');
    await s.waitFor('#kb-list[data-query="cube7"] li[data-id] .kb-name', 'a hit');
    await page().click('#kb-list li[data-id] button');
    await s.waitFor('#kb-node:not([hidden]) h3', 'the node view');
    assert.equal(await page().textContent('#kb-node h3'), 'cube7');
    assert.match(await page().textContent('#kb-node .kb-code'), /\(define \(cube7 x\) \(\* x \(sq7 x\)\)\)/);
    assert.match(await page().textContent('#kb-node .kb-description'), /raises a number to the third power/);
    assert.match(await page().textContent('#kb-node .kb-history'), /v\d+ created/);
    await screenshot('node-view');
    await page().click('#kb-node .kb-links button');
    await page().waitForFunction(() => document.querySelector('#kb-node h3')?.textContent === 'sq7');
    assert.match(await page().textContent('#kb-node'), /Dependents\s*cube7/, 'sq7 lists cube7 among its dependents');
    await page().click('#kb-node .kb-actions button:first-child');
    assert.equal(await s.inputText(), '(sq7 )', 'Insert a call puts a call in the editor');
    await page().click('#kb-node .kb-links button'); // back to cube
    await page().waitForFunction(() => document.querySelector('#kb-node h3')?.textContent === 'cube7');
    await page().click('text=Show closure');
    await s.waitFor('#kb-node .kb-closure .cm-editor', 'the closure');
    const closure = await page().textContent('#kb-node .kb-closure');
    assert.match(closure, /define \(sq7 x\)/, `the closure holds the dependency: ${closure}`);
    await page().fill('#kb-search', '');
  });

  test('the version graph: a branch after switching back, click to view a version read-only, switch, diff', async () => {
    const before = Number((await s.panel()).version);
    await s.value(`(arb:switch-version ${before - 1})`, String(before - 1));
    const made = await s.value('(arb:create "(define e 2.71828)" \'() "Euler\'s number" "constant" \'("e"))', /"new-version-id"/);
    const branch = Number(field(made.value, 'new-version-id'));
    await page().click('#tab-versions');
    await s.waitFor(`.graph .version[data-version="${branch}"]`, 'the new version in the graph');
    const lanes = await page().$$eval('.graph .version', (gs) => Object.fromEntries(gs.map((g) => [g.dataset.version, g.querySelector('circle').getAttribute('cx')])));
    assert.notEqual(lanes[branch], lanes[before], `the branch has a lane of its own: ${JSON.stringify(lanes)}`);
    assert.ok(await page().$(`.graph .version.current[data-version="${branch}"]`), 'the current version is marked');
    await screenshot('versions');

    // View the version before the switch: read-only, its nodes listed.
    await page().click(`.graph .version[data-version="${before}"]`);
    await s.waitFor('#kb-as-of:not([hidden])', 'the read-only banner');
    assert.match(await page().textContent('#kb-as-of'), new RegExp(`Viewing version ${before}, read-only`));
    await page().click('#tab-nodes');
    await page().waitForFunction(() => [...document.querySelectorAll('#kb-list .kb-name')].some((n) => n.textContent === 'pi'));
    const names = (await listed()).map((n) => n.name);
    assert.ok(!names.includes('e'), `version ${before} has no e: ${names}`);
    await page().click('#tab-versions');

    // The diff against its parent, then switch to it by clicking.
    await page().click('#kb-diff');
    await s.waitFor('#kb-diff-out .kb-diff-summary', 'the diff');
    assert.match(await page().textContent('#kb-diff-out'), /1 added, 0 removed, 0 changed/);
    assert.match(await page().textContent('#kb-diff-out .code-diff'), /\+ \(define pi 3\.14159\)/);
    await page().selectOption('#kb-diff-from', String(branch));
    await page().click('#kb-diff');
    await page().waitForFunction((b) => document.querySelector('#kb-diff-out .kb-diff-summary')?.textContent.startsWith(`From version ${b}`), branch);
    assert.match(await page().textContent('#kb-diff-out'), /1 added, 1 removed/, 'pi added, e removed');
    await page().click('#kb-switch');
    await s.waitFor(`.graph .version.current[data-version="${before}"]`, `version ${before} to become current`);
    assert.equal(Number((await s.panel()).version), before);
    assert.ok(await page().isHidden('#kb-as-of'), 'after switching, the version shown is the current one: no read-only banner');
    await s.value('pi', '3.14159');
    await page().click('#tab-nodes');
  });

  test(',help lists the arb: procedures from docs/API.md; ,help NAME shows one with its example; the Help tab and the docs links work', async () => {
    const api = fs.readFileSync(path.join(root, 'docs', 'API.md'), 'utf8');
    const documented = [...api.matchAll(/^### `\((arb:[^\s)]+)/gm)].map((m) => m[1]);
    await s.setInput(',help');
    await page().press('#input .cm-content', 'Control+Enter');
    await s.waitFor('#transcript .help-entry .help-list', 'the help list');
    const listedNames = await page().$$eval('#transcript .help-entry:last-of-type .help-list code', (cs) => cs.map((c) => c.textContent.slice(1).split(/[\s)]/)[0]));
    assert.deepEqual(listedNames, documented, 'every procedure of docs/API.md, in its order');
    await s.setInput(',help arb:create');
    await page().press('#input .cm-content', 'Control+Enter');
    await page().waitForFunction(() => document.querySelector('#transcript .help-entry:last-of-type .help-item')?.dataset.name === 'arb:create');
    assert.match(await page().textContent('#transcript .help-entry:last-of-type'), /\(arb:create CODE/);
    await page().click('#transcript .help-entry:last-of-type .help-try');
    assert.match(await s.inputText(), /^\(arb:create\n/, 'Try it puts the example in the editor');
    await page().click('#tab-help');
    await s.waitFor('#help-panel .help-item[data-name="arb:switch-version"]', 'the Help tab');
    await screenshot('help');
    await page().click('#tab-nodes');
    for (const href of ['docs/readme.html', 'docs/api.html']) {
      assert.ok(await page().$(`a[href="${href}"]`), `a link to ${href}`);
      const res = await fetch(server.url + href);
      assert.equal(res.status, 200, href);
      assert.match(await res.text(), href.includes('api') ? /arb:semantic-search/ : /Arbores/);
    }
  });

  test('a shared URL puts its code in the editor and never runs it without a click', async () => {
    const code = '(define shared-value (* 6 7))\nshared-value';
    await s.setInput(code);
    await page().click('#share');
    const url = page().url();
    assert.match(url, /#code=/, `Share puts the code in the address: ${url}`);
    await s.setInput('');
    const other = await s.context.newPage();
    s.watch(other);
    try {
      await other.goto(url, { waitUntil: 'load' });
      await s.engineReady('from a shared link', undefined, other);
      await other.waitForTimeout(500);
      assert.equal(await s.inputText(other), code, 'the shared code is in the editor');
      assert.match(await other.textContent('#transcript .notice.shared'), /runs only when you press Run/);
      assert.equal(await other.$$eval('#transcript .entry:not(.restored)', (es) => es.length), 0, 'nothing ran');
      const entry = await s.evaluate(code, undefined, other);
      assert.equal(entry.value, '42', 'it runs when asked');
    } finally {
      await other.close();
    }
  });

  test('after one visit the playground opens and evaluates offline (service worker)', async () => {
    await s.open('to install the service worker');
    await page().evaluate(async () => { await navigator.serviceWorker.ready; });
    await page().waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 10_000 }).catch(async () => {
      await page().reload({ waitUntil: 'load' }); // the first page load is not yet controlled
    });
    await s.context.setOffline(true);
    try {
      await page().reload({ waitUntil: 'load' });
      await s.engineReady('offline');
      await s.value('(* 6 7)', '42', ' offline');
      assert.equal((await s.panel()).store, 'saved', 'the knowledge base loads offline');
      await page().click('#tab-help');
      await s.waitFor('#help-panel .help-item', 'help offline');
      await page().click('#tab-nodes');
    } finally {
      await s.context.setOffline(false);
    }
  });

  test('on a 390 px phone the panels stack, nothing overflows, and the buttons are reachable', async () => {
    const phone = await s.context.newPage();
    s.watch(phone);
    try {
      await phone.setViewportSize({ width: 390, height: 844 });
      await s.open('on a phone', { page: phone });
      const box = await phone.evaluate(() => {
        const r = (sel) => document.querySelector(sel).getBoundingClientRect();
        return {
          scrollWidth: document.documentElement.scrollWidth,
          transcript: r('#transcript'),
          editor: r('.editor'),
          side: r('#knowledge'),
          run: r('#run'),
          stop: r('#stop'),
          share: r('#share'),
        };
      });
      assert.ok(box.scrollWidth <= 390, `no horizontal scrolling: ${box.scrollWidth}px wide`);
      assert.ok(box.transcript.width >= 360, `the transcript uses the width: ${box.transcript.width}px`);
      assert.ok(box.side.top >= box.editor.bottom - 1, 'the knowledge base is below the editor');
      for (const b of ['run', 'stop', 'share']) {
        assert.ok(box[b].right <= 390 && box[b].left >= 0 && box[b].height >= 36, `${b} is within the screen and tall enough: ${JSON.stringify(box[b])}`);
      }
      const entry = await s.evaluate('(+ 1 2)', undefined, phone);
      assert.equal(entry.value, '3');
      await screenshot('phone', phone);
    } finally {
      await phone.close();
    }
  });

  test('screenshot of the main view', async () => {
    await s.open('for the main view');
    await page().click('#tab-nodes');
    await screenshot('playground');
  });
});
