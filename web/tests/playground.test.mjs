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
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: chromiumPath,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1100, height: 760 },
    });
    page = context.pages()[0] || await context.newPage();
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') pageProblems.push(`[${m.type()}] ${m.text()}`); });
    page.on('pageerror', (e) => pageProblems.push(`[pageerror] ${e.message}`));
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
});
