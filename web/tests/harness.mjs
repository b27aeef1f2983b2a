// What the browser tests share: a server for web/dist on a free port,
// headless Chromium on a persistent profile (so IndexedDB, localStorage and
// the service worker survive reloads and restarts, as for a person), and
// helpers that drive the page as a person would and fail with what the page
// shows.
//
// The server is, in order of preference:
//   ARBORES_PLAYGROUND_CMD   a shell command; {port} and {dir} are replaced
//   target/release/arbores playground --port PORT --dir web/dist   (ARBORES_BIN overrides the path)
//   python3 -m http.server   only when the arbores binary does not exist
// CHROMIUM overrides /usr/bin/chromium.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const dist = path.join(root, 'web', 'dist');
export const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';

// Headless Chromium that stays off the network and uses no shared profile.
export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

export const ENGINE_START_MS = 30_000;
export const EVAL_MS = 20_000;

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

export async function startServer() {
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

export function stopServer(s) {
  if (!s?.child || s.child.exitCode !== null || s.child.signalCode !== null) return;
  try {
    process.kill(-s.child.pid, 'SIGTERM');
  } catch {
    s.child.kill('SIGTERM');
  }
}

export function checkBuilt() {
  for (const f of ['index.html', 'app.js', 'worker.js', 'style.css', 'sw.js', 'help.json', 'pkg/arbores_web_bg.wasm']) {
    assert.ok(fs.existsSync(path.join(dist, f)), `web/dist/${f} is missing: run scripts/build-web first`);
  }
  assert.ok(fs.existsSync(chromiumPath), `no Chromium at ${chromiumPath} (set CHROMIUM, or run scripts/bootstrap --test)`);
}

/** Checks the build, starts a server and a browser on a fresh profile. */
export async function startSession() {
  checkBuilt();
  const server = await startServer();
  const session = new Session(server);
  await session.launch();
  return { server, session };
}

// ----------------------------------------------------------------- browser ---

/** A browser session on its own profile directory, with the page helpers. */
export class Session {
  constructor(server) {
    this.server = server;
    this.profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbores-playground-profile-'));
    process.once('exit', () => fs.rmSync(this.profileDir, { recursive: true, force: true }));
    this.problems = []; // console errors and uncaught page errors, shown when a test fails
  }

  async launch(viewport = { width: 1100, height: 760 }) {
    this.context = await chromium.launchPersistentContext(this.profileDir, {
      executablePath: chromiumPath,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport,
    });
    this.page = this.context.pages()[0] || await this.context.newPage();
    this.watch(this.page);
    return this.page;
  }

  watch(p) {
    p.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') this.problems.push(`[${m.type()}] ${m.text()}`); });
    p.on('pageerror', (e) => this.problems.push(`[pageerror] ${e.message}`));
  }

  async close() {
    await this.context?.close();
    fs.rmSync(this.profileDir, { recursive: true, force: true });
  }

  problemText() {
    return this.problems.length ? `\npage console/errors:\n  ${this.problems.slice(-10).join('\n  ')}` : '';
  }

  // Waits for a selector, failing with what was awaited and why it matters.
  async waitFor(selector, what, timeout = EVAL_MS, state = 'attached', page = this.page) {
    try {
      await page.waitForSelector(selector, { timeout, state });
    } catch (e) {
      throw new Error(
        `timed out after ${timeout / 1000} s waiting for ${what} (selector ${selector}).` +
        `\nstatus line: ${await this.statusText(page)}${this.problemText()}\n(${e.message.split('\n')[0]})`,
      );
    }
  }

  async statusText(page = this.page) {
    try {
      return JSON.stringify(await page.locator('#status').textContent({ timeout: 1000 }));
    } catch {
      return '(unreadable)';
    }
  }

  engineReady(what, timeout = ENGINE_START_MS, page = this.page) {
    return this.waitFor('body[data-engine="ready"]', what, timeout, 'attached', page);
  }

  /** Loads (or reloads) the page and waits for the engine, which has loaded
   *  the stored knowledge base by then; closes the first-visit tour. */
  async open(what, { hash = '', page = this.page } = {}) {
    const res = await page.goto(this.server.url + hash, { waitUntil: 'load' });
    if (res) assert.equal(res.status(), 200, `GET ${this.server.url}`);
    await this.engineReady(`the engine to load ${what}`, ENGINE_START_MS, page);
    await closeTour(page);
  }

  // ------------------------------------------------------------- editor ---

  /** Replaces the editor's text (as a paste would: no bracket closing). */
  async setInput(text, page = this.page) {
    await closeTour(page);
    await page.click('#input .cm-content');
    await page.keyboard.press('Control+A');
    if (text) await page.keyboard.insertText(text);
    else await page.keyboard.press('Delete');
  }

  inputText(page = this.page) {
    // The placeholder shown in an empty editor is not text.
    return page.$$eval('#input .cm-line', (ls) => ls.map((l) => [...l.childNodes]
      .filter((n) => !n.classList?.contains('cm-placeholder')).map((n) => n.textContent).join('')).join('\n'));
  }

  /** Types `source` into the editor, runs it (Run button or Ctrl+Enter)
   *  and returns the new transcript entry's id. */
  async submit(source, how = 'button', page = this.page) {
    const ids = await page.$$eval('#transcript .entry', (es) => es.map((e) => e.dataset.id));
    await this.setInput(source, page);
    if (how === 'keys') await page.press('#input .cm-content', 'Control+Enter');
    else await page.click('#run');
    const newest = `#transcript .entry:not(${ids.map((id) => `[data-id="${id}"]`).join(',') || '[data-none]'})`;
    await this.waitFor(newest, `a transcript entry for ${source}`, 5000, 'attached', page);
    return page.$eval(newest, (e) => e.dataset.id);
  }

  // What the page shows for one entry.
  readEntry(id, page = this.page) {
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
          hints: [...err.querySelectorAll('.error-hint')].map((h) => h.textContent),
        },
      };
    });
  }

  async evaluate(source, how, page = this.page) {
    const id = await this.submit(source, how, page);
    await this.waitFor(`#transcript .entry[data-id="${id}"]:not([data-state="running"])`, `the result of ${source}`, EVAL_MS, 'attached', page);
    return this.readEntry(id, page);
  }

  /** Evaluates and insists on a value without error; returns the entry. */
  async value(source, expected, why = '', page = this.page) {
    const entry = await this.evaluate(source, undefined, page);
    assert.equal(entry.error, null, `${source}${why}: unexpected error; the page shows ${shown(entry)}`);
    if (expected instanceof RegExp) assert.match(entry.value ?? '', expected, `${source}${why}: the page shows ${shown(entry)}`);
    else if (expected !== undefined) assert.equal(entry.value, expected, `${source}${why}: the page shows ${shown(entry)}`);
    return entry;
  }

  // What the knowledge panel shows.
  panel(page = this.page) {
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

  // The playground's IndexedDB database as the page sees it: the refs
  // record, how many blobs, and the first blob's name.
  readStored(page = this.page) {
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
}

export function shown(entry) {
  const err = entry.error ? `${entry.error.kind}${entry.error.where ? ` at ${entry.error.where}` : ''}: ${entry.error.message}` : 'none';
  return `state=${entry.state} value=${JSON.stringify(entry.value)} output=${JSON.stringify(entry.output)} error=${err}`;
}

/** Closes the first-visit tour if it is open. */
export async function closeTour(page) {
  if (await page.isVisible('#tour[open] #tour-close')) await page.click('#tour-close');
}

// The number after the last `("key" . ` in a written alist (the outermost
// one: a transaction's result holds its body's results first).
export function field(text, key) {
  const all = [...(text ?? '').matchAll(new RegExp(`\\("${key}" \\. (\\d+)\\)`, 'g'))];
  assert.ok(all.length, `no ("${key}" . N) in ${text}`);
  return all[all.length - 1][1];
}
