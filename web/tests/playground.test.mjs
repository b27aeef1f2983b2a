// End-to-end test of the playground: serves web/dist, drives headless Chromium
// through the page and checks what a user would see.
//
//   scripts/build-web && cargo build --release -p arbores-host   (or whatever builds target/release/arbores)
//   node --test web/tests/
//
// The server is, in order of preference:
//   ARBORES_PLAYGROUND_CMD   a shell command; {port} and {dir} are replaced
//   target/release/arbores playground --port PORT --dir web/dist   (ARBORES_BIN overrides the path)
//   python3 -m http.server   only when the arbores binary does not exist
// CHROMIUM overrides /usr/bin/chromium. A screenshot of the final page is
// written to target/web-test/playground.png (PLAYGROUND_SCREENSHOT overrides).
//
// The browser runs with a persistent profile in a temporary directory, so the
// knowledge base the page keeps in IndexedDB survives reloads and a restart
// of the browser, as it does for a person using the playground.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = path.join(root, 'web', 'dist');
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
const screenshotPath = process.env.PLAYGROUND_SCREENSHOT || path.join(root, 'target', 'web-test', 'playground.png');

// Headless Chromium that stays off the network and uses no shared profile.
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

const ENGINE_START_MS = 30_000;
const EVAL_MS = 20_000;
const LOOP_BUDGET = '1000000000000'; // steps: a loop runs until stopped

let server; // {child, port, label, log}
let context;
let page;
let profileDir;
const pageProblems = []; // console errors and uncaught page errors, shown when a test fails

// ------------------------------------------------------------------ server ---

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function serverCommand(port) {
  if (process.env.ARBORES_PLAYGROUND_CMD) {
    const cmd = process.env.ARBORES_PLAYGROUND_CMD.replaceAll('{port}', String(port)).replaceAll('{dir}', dist);
    return { file: '/bin/sh', args: ['-c', cmd], label: `ARBORES_PLAYGROUND_CMD: ${cmd}` };
  }
  const bin = process.env.ARBORES_BIN || path.join(root, 'target', 'release', 'arbores');
  if (fs.existsSync(bin)) {
    const args = ['playground', '--port', String(port), '--dir', dist];
    return { file: bin, args, label: `${bin} ${args.join(' ')}` };
  }
  const args = ['-m', 'http.server', '--bind', '127.0.0.1', '--directory', dist, String(port)];
  return { file: 'python3', args, label: `python3 ${args.join(' ')} (fallback: ${bin} does not exist)` };
}

async function startServer() {
  const port = await freePort();
  const { file, args, label } = serverCommand(port);
  console.log(`playground server: ${label}`);
  // Own process group, so the whole server (a shell and its child too) can be stopped.
  const child = spawn(file, args, { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = [];
  const keep = (chunk) => { log.push(chunk.toString()); if (log.length > 200) log.shift(); };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = null;
  child.on('exit', (code, signal) => { exited = signal ? `signal ${signal}` : `exit code ${code}`; });
  child.on('error', (e) => { exited = `could not start: ${e.message}`; });
  // Also when the runner is interrupted before `after` runs: no server left behind.
  process.once('exit', () => stopServer({ child }));
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.once(sig, () => { stopServer({ child }); process.exit(130); });
  }

  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (exited) {
      throw new Error(`the playground server (${label}) stopped before serving (${exited}); its output:\n${log.join('')}`);
    }
    try {
      const res = await fetch(url);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      stopServer({ child });
      throw new Error(`the playground server (${label}) did not answer GET ${url} within 20 s; its output:\n${log.join('')}`);
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  return { child, port, label, log, url };
}

function stopServer(s) {
  if (!s?.child || s.child.exitCode !== null || s.child.signalCode !== null) return;
  try {
    process.kill(-s.child.pid, 'SIGTERM');
  } catch {
    s.child.kill('SIGTERM');
  }
}

// ------------------------------------------------------------------- page ---

// Waits for a selector, failing with what was awaited and why it matters.
async function waitFor(selector, what, timeout = EVAL_MS, state = 'attached') {
  try {
    await page.waitForSelector(selector, { timeout, state });
  } catch (e) {
    throw new Error(
      `timed out after ${timeout / 1000} s waiting for ${what} (selector ${selector}).` +
      `\nstatus line: ${await statusText()}${problems()}\n(${e.message.split('\n')[0]})`,
    );
  }
}

async function statusText() {
  try {
    return JSON.stringify(await page.locator('#status').textContent({ timeout: 1000 }));
  } catch {
    return '(unreadable)';
  }
}

function problems() {
  return pageProblems.length ? `\npage console/errors:\n  ${pageProblems.slice(-10).join('\n  ')}` : '';
}

// Types `source` into the input, runs it (Run button or Ctrl+Enter) and
// returns the new transcript entry's id.
async function submit(source, how = 'button') {
  const ids = await page.$$eval('#transcript .entry', (es) => es.map((e) => Number(e.dataset.id)));
  await page.fill('#input', source);
  if (how === 'keys') await page.press('#input', 'Control+Enter');
  else await page.click('#run');
  const newest = `#transcript .entry:not(${ids.map((id) => `[data-id="${id}"]`).join(',') || '[data-none]'})`;
  await waitFor(newest, `a transcript entry for ${source}`, 5000);
  return page.$eval(newest, (e) => e.dataset.id);
}

// What the page shows for one entry.
function readEntry(id) {
  return page.$eval(`#transcript .entry[data-id="${id}"]`, (e) => {
    const text = (sel) => e.querySelector(sel)?.textContent ?? null;
    const err = e.querySelector('.error');
    return {
      state: e.dataset.state,
      input: text('.input'),
      value: text('.value'),
      output: text('.output'),
      meta: text('.meta'),
      error: err && {
        kind: err.dataset.kind,
        where: text('.error-where'),
        message: text('.error-message'),
      },
    };
  });
}

async function evaluate(source, how) {
  const id = await submit(source, how);
  await waitFor(`#transcript .entry[data-id="${id}"]:not([data-state="running"])`, `the result of ${source}`);
  return readEntry(id);
}

function shown(entry) {
  const err = entry.error ? `${entry.error.kind}${entry.error.where ? ` at ${entry.error.where}` : ''}: ${entry.error.message}` : 'none';
  return `state=${entry.state} value=${JSON.stringify(entry.value)} output=${JSON.stringify(entry.output)} error=${err}`;
}

const engineReady = (what, timeout = ENGINE_START_MS) => waitFor('body[data-engine="ready"]', what, timeout);

// Starts Chromium on the test profile (again, after a restart) with a page.
async function launchBrowser() {
  context = await chromium.launchPersistentContext(profileDir, {
    executablePath: chromiumPath,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1100, height: 760 },
  });
  page = context.pages()[0] || await context.newPage();
  watch(page);
}

function watch(p) {
  p.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') pageProblems.push(`[${m.type()}] ${m.text()}`); });
  p.on('pageerror', (e) => pageProblems.push(`[pageerror] ${e.message}`));
}

// Loads (or reloads) the page and waits for the engine, which has loaded the
// stored knowledge base by then.
async function openPage(what) {
  const res = await page.goto(server.url, { waitUntil: 'load' });
  assert.equal(res?.status(), 200, `GET ${server.url}`);
  await engineReady(`the engine to load ${what}`);
}

// What the knowledge panel shows.
function panel() {
  return page.evaluate(() => ({
    store: document.body.dataset.store,
    storeText: document.querySelector('#store-state')?.textContent ?? '',
    storeTitle: document.querySelector('#store-state')?.title ?? '',
    version: document.querySelector('#kb-version')?.textContent ?? '',
    reflog: [...document.querySelectorAll('#kb-reflog li')].map((li) => ({
      version: li.dataset.version,
      current: li.classList.contains('current'),
      description: li.querySelector('.reflog-description')?.textContent ?? '',
    })),
  }));
}

// Evaluates and insists on a value without error; returns the entry.
async function value(source, expected, why = '') {
  const entry = await evaluate(source);
  assert.equal(entry.error, null, `${source}${why}: unexpected error; the page shows ${shown(entry)}`);
  if (expected instanceof RegExp) assert.match(entry.value ?? '', expected, `${source}${why}: the page shows ${shown(entry)}`);
  else if (expected !== undefined) assert.equal(entry.value, expected, `${source}${why}: the page shows ${shown(entry)}`);
  return entry;
}

// The number after the last `("key" . ` in a written alist (the outermost
// one: a transaction's result holds its body's results first).
function field(text, key) {
  const all = [...(text ?? '').matchAll(new RegExp(`\\("${key}" \\. (\\d+)\\)`, 'g'))];
  assert.ok(all.length, `no ("${key}" . N) in ${text}`);
  return all[all.length - 1][1];
}

// The playground's IndexedDB database as the page sees it: the refs record,
// how many blobs, and the first blob's name.
function readStored() {
  return page.evaluate(async () => {
    const db = await new Promise((resolve, reject) => {
      const r = indexedDB.open('arbores');
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    const tx = db.transaction(['blobs', 'refs'], 'readonly');
    const get = (r) => new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error); });
    const refs = await get(tx.objectStore('refs').get('current'));
    const keys = await get(tx.objectStore('blobs').getAllKeys());
    db.close();
    return { refs: refs ? Array.from(refs) : null, blobs: keys.length, firstBlob: keys[0] ?? null };
  });
}

// Runs `source` with a budget that lets it run until stopped, presses Stop
// after a second and waits for the replacement worker.
async function runLoopThenStop(source) {
  await page.evaluate(() => { document.getElementById('limits').open = true; });
  await page.fill('#limit-steps', LOOP_BUDGET);
  const id = await submit(source);
  await page.waitForTimeout(1000);
  const during = await readEntry(id);
  assert.equal(during.state, 'running', `${source} should still be running after 1 s; the page shows ${shown(during)}`);
  const session = Number(await page.getAttribute('body', 'data-session'));
  await page.click('#stop');
  await waitFor(`#transcript .entry[data-id="${id}"][data-state="stopped"]`, 'the stopped entry', 5000);
  await waitFor(`body[data-session="${session + 1}"]`, 'a new session after Stop', 5000);
  await engineReady('the restarted engine to load after Stop');
}

// ------------------------------------------------------------------ tests ---

describe('playground', () => {
  before(async () => {
    for (const f of ['index.html', 'app.js', 'worker.js', 'style.css', 'pkg/arbores_web.js', 'pkg/arbores_web_bg.wasm']) {
      assert.ok(fs.existsSync(path.join(dist, f)), `web/dist/${f} is missing: run scripts/build-web first`);
    }
    assert.ok(fs.existsSync(chromiumPath), `no Chromium at ${chromiumPath} (set CHROMIUM, or run scripts/bootstrap --test)`);
    server = await startServer();
    profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbores-playground-profile-'));
    process.once('exit', () => fs.rmSync(profileDir, { recursive: true, force: true }));
    await launchBrowser();
  });

  after(async () => {
    try {
      if (page) {
        fs.mkdirSync(path.dirname(screenshotPath), { recursive: true });
        await page.screenshot({ path: screenshotPath });
        console.log(`screenshot: ${screenshotPath}`);
      }
    } catch (e) {
      console.log(`no screenshot: ${e.message}`);
    }
    await context?.close();
    stopServer(server);
    if (profileDir) fs.rmSync(profileDir, { recursive: true, force: true });
  });

  test('serves the wasm module as application/wasm', async () => {
    const res = await fetch(`${server.url}pkg/arbores_web_bg.wasm`);
    assert.equal(res.status, 200, `GET /pkg/arbores_web_bg.wasm from ${server.label}`);
    assert.match(res.headers.get('content-type') ?? '', /^application\/wasm/,
      `browsers compile a module while it downloads only when it is served as application/wasm (${server.label})`);
  });

  test('the page loads and the engine starts in a worker', async () => {
    const res = await page.goto(server.url, { waitUntil: 'load' });
    assert.equal(res?.status(), 200, `GET ${server.url}`);
    assert.equal(await page.title(), 'Arbores · Scheme playground');
    await engineReady('the engine to load (body[data-engine] = "ready")');
    const workers = page.workers().map((w) => w.url());
    assert.ok(workers.some((u) => u.endsWith('/worker.js')), `expected a worker running worker.js, found: ${workers.join(', ') || 'none'}`);
    assert.equal(await page.getAttribute('body', 'data-session'), '1');
    assert.match(await page.textContent('#status'), /Ready/);
  });

  test('(+ 1 2) shows the value 3', async () => {
    const entry = await evaluate('(+ 1 2)', 'keys');
    assert.equal(entry.input, '(+ 1 2)', 'the transcript repeats the input');
    assert.equal(entry.value, '3', `(+ 1 2) via Ctrl+Enter: expected value "3"; the page shows ${shown(entry)}`);
    assert.equal(entry.error, null, `(+ 1 2): unexpected error; the page shows ${shown(entry)}`);
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

  test('Stop ends a runaway loop, restarts the session, and the next evaluation works', async () => {
    // A budget large enough that the loop runs until stopped.
    await page.click('#limits summary');
    await page.fill('#limit-steps', '1000000000000');
    const loop = '(let loop () (loop))';
    const id = await submit(loop);
    await page.waitForTimeout(1000);
    const during = await readEntry(id);
    assert.equal(during.state, 'running',
      `${loop} should still be running after 1 s with a budget of 10^12 steps; the page shows ${shown(during)}`);
    assert.ok(await page.isEnabled('#stop'), 'the Stop button (#stop) is enabled while running');
    assert.equal(await page.getAttribute('body', 'data-engine'), 'running');

    await page.click('#stop');
    await waitFor('#transcript .notice.stopped', 'the "evaluation stopped" notice in the transcript', 5000);
    const notice = await page.textContent('#transcript .notice.stopped');
    assert.match(notice, /stopped/i);
    assert.match(notice, /restarted/i);
    assert.equal((await readEntry(id)).state, 'stopped', 'the stopped entry is marked as stopped');
    assert.equal(await page.getAttribute('body', 'data-session'), '2', 'Stop starts a second session');
    await engineReady('the restarted engine to load after Stop');
    assert.ok(await page.isDisabled('#stop'), 'the Stop button (#stop) is disabled when nothing runs');

    const entry = await evaluate('(* 6 7)');
    assert.equal(entry.value, '42', `(* 6 7) after Stop: expected value "42"; the page shows ${shown(entry)}`);
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
    assert.ok(!(await page.isVisible('#store-actions')), 'no store actions are offered while all is saved');
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

  test('arb:switch-version moves the current version and clicking the reflog prepares a switch', async () => {
    const latest = (await panel()).version;
    await value(`(arb:switch-version ${versionBeforeTriple})`, versionBeforeTriple);
    const gone = await evaluate('(triple 1)');
    assert.equal(gone.error?.kind, 'runtime-error', `triple is not in version ${versionBeforeTriple}; the page shows ${shown(gone)}`);
    assert.match(gone.error.message, /unbound variable: triple/);
    let p = await panel();
    assert.equal(p.version, versionBeforeTriple);
    assert.match(p.reflog[0].description, /switch/, `the switch is in the reflog; ${JSON.stringify(p.reflog[0])}`);

    await page.click(`#kb-reflog li[data-version="${latest}"] button`);
    assert.equal(await page.inputValue('#input'), `(arb:switch-version ${latest})`);
    await page.click('#run');
    await waitFor(`#kb-reflog li.current[data-version="${latest}"]`, `version ${latest} to be current again`);
    p = await panel();
    assert.equal(p.version, latest);
    await value('(triple 3)', '9');
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
    const gone = await evaluate('session-only');
    assert.match(gone.error?.message ?? '', /unbound variable: session-only/, `a plain definition lasts only for its session; ${shown(gone)}`);
  });

  test('the knowledge base survives a restart of the browser', async () => {
    const before = await panel();
    await context.close();
    await launchBrowser();
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
    const other = await context.newPage();
    watch(other);
    try {
      await other.goto(server.url, { waitUntil: 'load' });
      await other.waitForSelector('body[data-engine="ready"]', { timeout: ENGINE_START_MS });
      // The other tab saves first.
      await other.fill('#input', '(arb:create "(define from-other-tab 1)" \'() "made in another tab" "constant" \'("from-other-tab"))');
      await other.click('#run');
      await other.waitForSelector('#transcript .entry[data-state="done"]', { timeout: EVAL_MS });
      // This tab still has the state it loaded: its save is refused.
      await evaluate('(arb:create "(define from-this-tab 1)" \'() "made here" "constant" \'("from-this-tab"))');
      const p = await panel();
      assert.equal(p.store, 'conflict', `this tab must not overwrite the other tab's save; the panel shows ${JSON.stringify(p)}`);
      assert.match(p.storeText, /another tab/);
      assert.ok(await page.isVisible('#store-reload'), 'a Reload button is offered');
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
    await page.evaluate(async (key) => {
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
    assert.match(await page.textContent('#transcript'), /cannot be loaded/, 'the transcript says it too');
    assert.ok(await page.isVisible('#store-fresh'), 'a Start fresh button is offered');

    // The playground still works, in memory, and writes nothing.
    await value('(arb:create "(define (kept x) (list x x))" \'() "made while the store was damaged" "function" \'("kept"))', /"new-version-id"/);
    await value('(kept 1)', '(1 1)');
    assert.deepEqual(await readStored(), before, 'nothing is written over a damaged store');

    // Declining changes nothing; accepting moves the records aside.
    page.once('dialog', (d) => d.dismiss());
    await page.click('#store-fresh');
    await page.waitForTimeout(300);
    assert.equal((await panel()).store, 'damaged');
    assert.deepEqual(await readStored(), before, 'a declined Start fresh writes nothing');
    page.once('dialog', (d) => d.accept());
    await page.click('#store-fresh');
    await waitFor('body[data-store="saved"]', 'the store to be saved again after Start fresh');
    assert.match(await page.textContent('#transcript'), /moved to the IndexedDB database "arbores-damaged-/);
    const copy = await page.evaluate(async () => {
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
