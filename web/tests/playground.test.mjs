// End-to-end test of the playground's REPL and its stored knowledge base:
// serves web/dist, drives headless Chromium through the page and checks
// what a user would see (harness.mjs says how). The workbench's other parts
// (editor, browser, help, sharing, offline, phone) are in workbench.test.mjs.
//
//   scripts/build-web && cargo build --release -p arbores-host
//   node --test --test-concurrency=1 web/tests/
//
// A screenshot of the final page is written to target/web-test/playground.png
// (PLAYGROUND_SCREENSHOT overrides).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  field, root, shown, startSession, stopServer,
} from './harness.mjs';

const screenshotPath = process.env.PLAYGROUND_SCREENSHOT || path.join(root, 'target', 'web-test', 'playground.png');
const LOOP_BUDGET = '1000000000000'; // steps: a loop runs until stopped

let server;
let s; // the browser session
const page = () => s.page;
const waitFor = (...a) => s.waitFor(...a);
const engineReady = (what) => s.engineReady(what);
const openPage = (what) => s.open(what);
const submit = (...a) => s.submit(...a);
const readEntry = (id) => s.readEntry(id);
const evaluate = (...a) => s.evaluate(...a);
const value = (...a) => s.value(...a);
const panel = () => s.panel();
const readStored = () => s.readStored();

// Runs `source` with a budget that lets it run until stopped, presses Stop
// after a second and waits for the replacement worker.
async function runLoopThenStop(source) {
  await page().evaluate(() => { document.getElementById('limits').open = true; });
  await page().fill('#limit-steps', LOOP_BUDGET);
  const id = await submit(source);
  await page().waitForTimeout(1000);
  const during = await readEntry(id);
  assert.equal(during.state, 'running', `${source} should still be running after 1 s; the page shows ${shown(during)}`);
  const session = Number(await page().getAttribute('body', 'data-session'));
  await page().click('#stop');
  await waitFor(`#transcript .entry[data-id="${id}"][data-state="stopped"]`, 'the stopped entry', 5000);
  await waitFor(`body[data-session="${session + 1}"]`, 'a new session after Stop', 5000);
  await engineReady('the restarted engine to load after Stop');
}

describe('playground', () => {
  before(async () => {
    ({ server, session: s } = await startSession());
  });

  after(async () => {
    try {
      if (s?.page) {
        fs.mkdirSync(path.dirname(screenshotPath), { recursive: true });
        await s.page.screenshot({ path: screenshotPath });
        console.log(`screenshot: ${screenshotPath}`);
      }
    } catch (e) {
      console.log(`no screenshot: ${e.message}`);
    }
    await s?.close();
    stopServer(server);
  });

  test('serves the wasm module as application/wasm', async () => {
    const res = await fetch(`${server.url}pkg/arbores_web_bg.wasm`);
    assert.equal(res.status, 200, `GET /pkg/arbores_web_bg.wasm from ${server.label}`);
    assert.match(res.headers.get('content-type') ?? '', /^application\/wasm/,
      `browsers compile a module while it downloads only when it is served as application/wasm (${server.label})`);
  });

  test('the page loads and the engine starts in a worker', async () => {
    await openPage('(body[data-engine] = "ready")');
    assert.equal(await page().title(), 'Arbores · Scheme playground');
    const workers = page().workers().map((w) => w.url());
    assert.ok(workers.some((u) => u.endsWith('/worker.js')), `expected a worker running worker.js, found: ${workers.join(', ') || 'none'}`);
    assert.equal(await page().getAttribute('body', 'data-session'), '1');
    assert.match(await page().textContent('#status'), /Ready/);
  });

  test('(+ 1 2) shows the value 3', async () => {
    const entry = await evaluate('(+ 1 2)', 'keys');
    assert.equal(entry.input, '(+ 1 2)', 'the transcript repeats the input');
    assert.equal(entry.value, '3', `(+ 1 2) via Ctrl+Enter: expected value "3"; the page shows ${shown(entry)}`);
    assert.equal(entry.error, null, `(+ 1 2): unexpected error; the page shows ${shown(entry)}`);
  });

  test('the engine starts from the prepared image built into the module', async () => {
    const entry = await evaluate('(%prepared-from)');
    assert.equal(entry.value, 'image',
      `the engine compiled its prelude at start-up instead of loading the image built in (scripts/build-web makes it first); the page shows ${shown(entry)}`);
  });

  test('(display "hi") shows the output hi', async () => {
    const entry = await evaluate('(display "hi")');
    assert.equal(entry.output, 'hi', `(display "hi"): expected output "hi"; the page shows ${shown(entry)}`);
    assert.equal(entry.error, null, `(display "hi"): unexpected error; the page shows ${shown(entry)}`);
  });

  test('deep non-tail recursion (a million frames) runs in the browser', async () => {
    const src = '(define (count n) (if (= n 0) 0 (+ 1 (count (- n 1))))) (count 1000000)';
    const entry = await evaluate(src);
    assert.equal(entry.value, '1000000', `(count 1000000): expected value "1000000"; the page shows ${shown(entry)}`);
  });

  test('call/cc, dynamic-wind and guard work in the browser', async () => {
    const src = "(guard (e (#t (list 'caught (error-object-message e)))) (dynamic-wind (lambda () #f) (lambda () (call/cc (lambda (k) (car '())))) (lambda () #f)))";
    const entry = await evaluate(src);
    assert.equal(entry.value, '(caught "car: expected a pair, got ()")', `guard: the page shows ${shown(entry)}`);
  });

  test('a syntax error is shown with its line:column', async () => {
    const entry = await evaluate('(+ 1');
    assert.ok(entry.error, `(+ 1: expected an error; the page shows ${shown(entry)}`);
    assert.equal(entry.state, 'error');
    assert.equal(entry.error.kind, 'syntax-error', `(+ 1: expected a syntax error; the page shows ${shown(entry)}`);
    assert.match(entry.error.where ?? '', /^\d+:\d+$/, `(+ 1: expected a line:column; the page shows ${shown(entry)}`);
    assert.ok(entry.error.message, '(+ 1: the error has a message');
  });

  test('an unbound variable gets the same guess as the arbores command gives', async () => {
    let entry = await evaluate('(string-apend "a" "b")');
    assert.equal(entry.error?.message, 'unbound variable: string-apend', `the page shows ${shown(entry)}`);
    assert.deepEqual(entry.error.hints, ['did you mean `string-append`?'], `the page shows ${shown(entry)}`);
    // The session's own definitions are guessed too.
    await value('(define (my-counter) 1)');
    entry = await evaluate('(my-countr)');
    assert.deepEqual(entry.error?.hints, ['did you mean `my-counter`?'], `the page shows ${shown(entry)}`);
    // Nothing near: no note; and other errors have none.
    entry = await evaluate('(zzqqxx 1)');
    assert.deepEqual(entry.error?.hints, [], `the page shows ${shown(entry)}`);
    entry = await evaluate("(car 1)");
    assert.deepEqual(entry.error?.hints, [], `the page shows ${shown(entry)}`);
  });

  test('Stop ends a runaway loop, restarts the session, and the next evaluation works', async () => {
    // A budget large enough that the loop runs until stopped.
    await page().click('#limits summary');
    await page().fill('#limit-steps', '1000000000000');
    const loop = '(let loop () (loop))';
    const id = await submit(loop);
    await page().waitForTimeout(1000);
    const during = await readEntry(id);
    assert.equal(during.state, 'running',
      `${loop} should still be running after 1 s with a budget of 10^12 steps; the page shows ${shown(during)}`);
    assert.ok(await page().isEnabled('#stop'), 'the Stop button (#stop) is enabled while running');
    assert.equal(await page().getAttribute('body', 'data-engine'), 'running');

    await page().click('#stop');
    await waitFor('#transcript .notice.stopped', 'the "evaluation stopped" notice in the transcript', 5000);
    const notice = await page().textContent('#transcript .notice.stopped');
    assert.match(notice, /stopped/i);
    assert.match(notice, /restarted/i);
    assert.equal((await readEntry(id)).state, 'stopped', 'the stopped entry is marked as stopped');
    assert.equal(await page().getAttribute('body', 'data-session'), '2', 'Stop starts a second session');
    await engineReady('the restarted engine to load after Stop');
    assert.ok(await page().isDisabled('#stop'), 'the Stop button (#stop) is disabled when nothing runs');

    const entry = await evaluate('(* 6 7)');
    assert.equal(entry.value, '42', `(* 6 7) after Stop: expected value "42"; the page shows ${shown(entry)}`);
  });

  test('a memory-hungry program is stopped with memory-limit within the cap, and the session lives on', async () => {
    // A string port grown to 30 million characters and copied out: the
    // port's text grows where the heap's own estimate does not see it, so
    // the cap holds only when it is checked against what the module's
    // allocator holds and what its linear memory has grown to.
    const capMiB = 64;
    await page().evaluate(() => { document.getElementById('limits').open = true; });
    await page().fill('#limit-memory', String(capMiB));
    await page().fill('#limit-steps', LOOP_BUDGET);
    const session = await page().getAttribute('body', 'data-session');
    await value('(define before-the-limit (list 1 2 3))');
    const hungry = '(define p (open-output-string)) (define chunk (make-string 1000 #\\a)) '
      + '(let loop ((i 0)) (if (< i 30000) (begin (write-string chunk p) (loop (+ i 1))))) '
      + '(string-length (get-output-string p))';
    const id = await submit(hungry);
    await waitFor(`#transcript .entry[data-id="${id}"]:not([data-state="running"])`, 'the memory-hungry program to end');
    const entry = await readEntry(id);
    assert.equal(entry.error?.kind, 'memory-limit', `the memory-hungry program: expected memory-limit; the page shows ${shown(entry)}`);
    // The module's memory never shrinks: what it grew to stays within the
    // cap plus what grows between two checks.
    const memory = Number(await page().getAttribute(`#transcript .entry[data-id="${id}"]`, 'data-memory'));
    assert.ok(memory > 0, 'the entry says how large the engine\'s memory was (data-memory)');
    assert.ok(memory <= (capMiB + 8) * 1024 * 1024,
      `the engine's memory grew to ${(memory / 1048576).toFixed(1)} MiB under a ${capMiB} MiB cap`);
    assert.equal(await page().getAttribute('body', 'data-session'), session, 'the same session, not a restarted one');
    await value('before-the-limit', '(1 2 3)', ' after the memory limit');
    await value('(* 6 7)', '42', ' after the memory limit');
    await page().fill('#limit-memory', '256');
    await page().fill('#limit-steps', '50000000');
  });

  // ------------------------------------------------------ knowledge base ---

  let tripleId; // the node made by arb:create below
  let versionWithTriple;
  let versionBeforeTriple;

  test('the knowledge panel shows the stored state and the current version', async () => {
    const p = await panel();
    assert.equal(p.store, 'saved', `the knowledge base is saved in IndexedDB; the panel shows ${JSON.stringify(p)}`);
    assert.match(p.version, /^\d+$/, `a current version number; the panel shows ${JSON.stringify(p)}`);
    assert.ok(p.reflog.length >= 1, `at least the first version in the reflog; the panel shows ${JSON.stringify(p)}`);
    assert.ok(p.reflog.some((e) => e.current && e.version === p.version), `the current version is marked; ${JSON.stringify(p)}`);
    assert.ok(!(await page().isVisible('#store-actions')), 'no store actions are offered while all is saved');
  });

  test('arb:create stores a node that is usable by name and found by both searches', async () => {
    versionBeforeTriple = (await panel()).version;
    const created = await value(
      '(arb:create "(define (triple x) (* 3 x))" \'() "multiplies a number by three" "function" \'("triple"))',
      /"s-expression-id"/);
    tripleId = field(created.value, 's-expression-id');
    versionWithTriple = field(created.value, 'new-version-id');
    assert.match(created.meta ?? '', /knowledge saved/, `the entry says the change was saved; the page shows ${created.meta}`);
    const p = await panel();
    assert.equal(p.version, versionWithTriple, `the panel shows the new version; ${JSON.stringify(p)}`);
    assert.equal(p.reflog[0].version, versionWithTriple, `the newest reflog entry is the new version; ${JSON.stringify(p.reflog)}`);
    assert.ok(p.reflog[0].current);
    assert.match(p.reflog[0].description, /triple/, `the reflog says what changed; ${JSON.stringify(p.reflog[0])}`);

    await value('(triple 14)', '42');
    const bySymbol = await value('(arb:search-by-symbol "trip")');
    assert.match(bySymbol.value, new RegExp(`\\("id" \\. ${tripleId}\\) \\("symbol-names" "triple"\\)`));
    const bySense = await value('(arb:semantic-search "multiply a number by three" 1)');
    assert.match(bySense.value, new RegExp(`^\\(\\(\\("id" \\. ${tripleId}\\) \\("score" \\. [0-9.]+\\)`));
    const builtins = await value('(length (arb:search-by-symbol "arb:"))');
    assert.ok(Number(builtins.value) >= 15, `the arb: procedures are builtin nodes; found ${builtins.value}`);
  });

  test('arb:transaction makes one version of several changes, or none', async () => {
    const before = (await panel()).version;
    const tx = await value(`(arb:transaction
  (arb:create "(define (double x) (* 2 x))" '() "doubles a number" "function" '("double"))
  (arb:create "(define (halve x) (/ x 2))" '() "halves a number" "function" '("halve")))`, /"new-version-id"/);
    const v = field(tx.value, 'new-version-id');
    assert.notEqual(v, before);
    const p = await panel();
    assert.equal(p.version, v);
    assert.equal(p.reflog.filter((e) => Number(e.version) > Number(before)).length, 1,
      `two creates in a transaction are one version; the reflog shows ${JSON.stringify(p.reflog)}`);
    await value('(list (double 4) (halve 8))', '(8 4)');

    const failed = await value(`(arb:transaction
  (arb:create "(define (never x) x)" '() "never stored" "function" '("never"))
  (arb:create "(broken" '() "does not read" "function" '("broken")))`, /"rollback-version" \. \d+/);
    assert.equal(field(failed.value, 'rollback-version'), v);
    assert.equal((await panel()).version, v, 'a failed transaction makes no version');
    await value('(arb:search-by-symbol "never" "exact")', '()');
  });

  test('arb:switch-version moves the current version; a reflog entry shows that version and switches back', async () => {
    const latest = (await panel()).version;
    await value(`(arb:switch-version ${versionBeforeTriple})`, versionBeforeTriple);
    const gone = await evaluate('(triple 1)');
    assert.equal(gone.error?.kind, 'runtime-error', `triple is not in version ${versionBeforeTriple}; the page shows ${shown(gone)}`);
    assert.match(gone.error.message, /unbound variable: triple/);
    let p = await panel();
    assert.equal(p.version, versionBeforeTriple);
    assert.match(p.reflog[0].description, /switch/, `the switch is in the reflog; ${JSON.stringify(p.reflog[0])}`);

    await page().click('#tab-versions');
    await page().click(`#kb-reflog li[data-version="${latest}"] button`);
    await waitFor('#kb-as-of:not([hidden])', `the browser to show version ${latest}, read-only`, 5000);
    assert.match(await page().textContent('#kb-as-of'), new RegExp(`Viewing version ${latest}, read-only`));
    await page().click('#kb-switch');
    await waitFor(`#kb-reflog li.current[data-version="${latest}"]`, `version ${latest} to be current again`);
    p = await panel();
    assert.equal(p.version, latest);
    await value('(triple 3)', '9');
    await page().click('#tab-nodes');
  });

  test('the knowledge base survives a reload of the page', async () => {
    const before = await panel();
    await value('(define session-only 1)');
    await openPage('after a reload');
    const after = await panel();
    assert.equal(after.store, 'saved', `after a reload: ${JSON.stringify(after)}`);
    assert.equal(after.version, before.version, 'the same current version after a reload');
    assert.deepEqual(after.reflog.map((e) => e.version), before.reflog.map((e) => e.version), 'the same reflog after a reload');
    assert.match(after.storeTitle, /^loaded \d+ blobs/, `the panel says what was loaded; ${after.storeTitle}`);
    console.log(`  stored knowledge base: ${after.storeTitle}`);
    await value('(triple 5)', '15', ' after a reload');
    await value('(list (double 5) (halve 5))', '(10 5/2)', ' after a reload');
    await value('session-only', '1', ': a definition of the session is restored after a reload');
  });

  test('the knowledge base survives a restart of the browser', async () => {
    const before = await panel();
    await s.context.close();
    await s.launch();
    await openPage('after restarting the browser');
    const after = await panel();
    assert.equal(after.version, before.version, 'the same current version after a browser restart');
    await value('(triple 7)', '21', ' after a browser restart');
  });

  test('Stop during a long evaluation: the new worker has the stored knowledge; the stopped evaluation\'s own changes are gone', async () => {
    await value('(arb:create "(define (quad x) (* 4 x))" \'() "multiplies by four" "function" \'("quad"))', /"new-version-id"/);
    const before = await panel();
    await runLoopThenStop('(arb:create "(define lost 0)" \'() "made by a stopped evaluation" "constant" \'("lost-node")) (let loop () (loop))');
    const after = await panel();
    assert.equal(after.store, 'saved');
    assert.equal(after.version, before.version, `the new worker starts from the stored version; ${JSON.stringify(after)}`);
    await value('(list (quad 2) (triple 2))', '(8 6)', ' in the worker that replaced the stopped one');
    await value('(arb:search-by-symbol "lost-node" "exact")', '()', ': a stopped evaluation is undone, knowledge included');
  });

  test('many nodes: saved incrementally, and loaded on start', async () => {
    const before = await readStored();
    const made = await value(`(arb:transaction
  (let loop ((i 0))
    (if (< i 1000)
        (begin
          (arb:create (string-append "(define (node-" (number->string i) " x) (+ x " (number->string i) "))")
                      '() (string-append "adds " (number->string i)) "function"
                      (list (string-append "node-" (number->string i))))
          (loop (+ i 1))))))`, /"new-version-id"/);
    const afterCreate = await readStored();
    console.log(`  1000 nodes in one transaction: ${afterCreate.blobs - before.blobs} new blobs; entry: ${made.meta}`);
    await value('(triple 1)', '3');
    const afterEval = await readStored();
    assert.equal(afterEval.blobs, afterCreate.blobs, 'an evaluation that changes no knowledge writes nothing');
    const started = Date.now();
    await openPage('with 1000 more nodes stored');
    const p = await panel();
    console.log(`  reload to ready: ${Date.now() - started} ms; ${p.storeTitle}`);
    await value('(node-999 1)', '1000', ' after a reload');
  });

  test('two tabs: a save over another tab\'s newer state is refused and said', async () => {
    const other = await s.context.newPage();
    s.watch(other);
    try {
      await s.open('in another tab', { page: other });
      // The other tab saves first.
      await s.value('(arb:create "(define from-other-tab 1)" \'() "made in another tab" "constant" \'("from-other-tab"))', /"new-version-id"/, ' in the other tab', other);
      // This tab still has the state it loaded: its save is refused.
      await evaluate('(arb:create "(define from-this-tab 1)" \'() "made here" "constant" \'("from-this-tab"))');
      const p = await panel();
      assert.equal(p.store, 'conflict', `this tab must not overwrite the other tab's save; the panel shows ${JSON.stringify(p)}`);
      assert.match(p.storeText, /another tab/);
      assert.ok(await page().isVisible('#store-reload'), 'a Reload button is offered');
    } finally {
      await other.close();
    }
    await openPage('after a conflict');
    assert.equal((await panel()).store, 'saved');
    await value('from-other-tab', '1', ': the other tab\'s save is what is stored');
    const mine = await evaluate('from-this-tab');
    assert.match(mine.error?.message ?? '', /unbound variable/, `the refused change is not stored; ${shown(mine)}`);
  });

  test('a damaged store is reported, left untouched, and moved aside only when asked', async () => {
    // Damage one stored blob: its bytes no longer match its name.
    const before = await readStored();
    assert.ok(before.firstBlob, 'something is stored');
    await page().evaluate(async (key) => {
      const db = await new Promise((resolve, reject) => {
        const r = indexedDB.open('arbores');
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
      const tx = db.transaction('blobs', 'readwrite');
      const blobs = tx.objectStore('blobs');
      const r = blobs.get(key);
      r.onsuccess = () => {
        const bytes = new Uint8Array(r.result);
        bytes[bytes.length - 1] ^= 0xff;
        blobs.put(bytes, key);
      };
      await new Promise((resolve, reject) => { tx.oncomplete = resolve; tx.onerror = () => reject(tx.error); });
      db.close();
    }, before.firstBlob);

    await openPage('over a damaged store');
    let p = await panel();
    assert.equal(p.store, 'damaged', `the page says the store cannot be loaded; ${JSON.stringify(p)}`);
    assert.match(p.storeText, /cannot be loaded/);
    assert.match(p.storeText, new RegExp(`blob ${before.firstBlob}.*(corrupt|hash)`), `the message names the damaged blob; ${p.storeText}`);
    assert.match(await page().textContent('#transcript'), /cannot be loaded/, 'the transcript says it too');
    assert.ok(await page().isVisible('#store-fresh'), 'a Start fresh button is offered');

    // The playground still works, in memory, and writes nothing.
    await value('(arb:create "(define (kept x) (list x x))" \'() "made while the store was damaged" "function" \'("kept"))', /"new-version-id"/);
    await value('(kept 1)', '(1 1)');
    assert.deepEqual(await readStored(), before, 'nothing is written over a damaged store');

    // Declining changes nothing; accepting moves the records aside.
    page().once('dialog', (d) => d.dismiss());
    await page().click('#store-fresh');
    await page().waitForTimeout(300);
    assert.equal((await panel()).store, 'damaged');
    assert.deepEqual(await readStored(), before, 'a declined Start fresh writes nothing');
    page().once('dialog', (d) => d.accept());
    await page().click('#store-fresh');
    await waitFor('body[data-store="saved"]', 'the store to be saved again after Start fresh');
    assert.match(await page().textContent('#transcript'), /moved to the IndexedDB database "arbores-damaged-/);
    const copy = await page().evaluate(async () => {
      const dbs = await indexedDB.databases();
      const name = dbs.map((d) => d.name).find((n) => n.startsWith('arbores-damaged-'));
      if (!name) return null;
      const db = await new Promise((resolve, reject) => {
        const r = indexedDB.open(name);
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
      const tx = db.transaction(['blobs', 'refs'], 'readonly');
      const get = (r) => new Promise((resolve) => { r.onsuccess = () => resolve(r.result); });
      const refs = await get(tx.objectStore('refs').get('current'));
      const count = await get(tx.objectStore('blobs').count());
      db.close();
      return { name, refs: Array.from(refs), blobs: count };
    });
    assert.ok(copy, 'a database arbores-damaged-… holds the damaged records');
    assert.deepEqual(copy.refs, before.refs, 'the copy has the damaged refs record');
    assert.equal(copy.blobs, before.blobs, 'the copy has every damaged blob');

    await openPage('after Start fresh');
    p = await panel();
    assert.equal(p.store, 'saved');
    await value('(kept 2)', '(2 2)', ': the session\'s knowledge is what is stored after Start fresh');
  });
});

// The page compiles the engine's module and hands it to its worker
// (src/boot.js); when it cannot, the worker fetches and compiles the module
// itself.
describe('the engine module', () => {
  test('when the page cannot compile the module, the worker loads it itself and the engine starts', async () => {
    const { server: srv, session } = await startSession();
    try {
      const asked = [];
      await session.context.route('**/pkg/arbores_web_bg.wasm', (route) => {
        asked.push(route.request().url());
        // The first request (the page's, in boot.js) fails; the worker's passes.
        return asked.length === 1 ? route.abort() : route.continue();
      });
      await session.open('with the page\'s module request failing');
      // By the page, then by the worker (and then by the service worker, which keeps it).
      assert.ok(asked.length >= 2, `the module was requested ${asked.length} times: expected the page's request, then the worker's`);
      await session.value('(+ 1 2)', '3', ': the engine the worker loaded itself evaluates');
    } finally {
      await session.close();
      stopServer(srv);
    }
  });
});
