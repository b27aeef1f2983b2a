// How fast the playground is ready, and how big it is: prints figures, run
// by hand (not a test). For each page directory given (default web/dist),
// alternating between them, it starts `arbores playground`, opens the page
// in headless Chromium and takes the time from navigation start to the
// engine being ready (body[data-engine="ready"]: the wasm module compiled,
// the knowledge base loaded from IndexedDB), on a fresh profile (a first
// visit) and on a reload (the browser's caches and the service worker warm).
// With --stages it also prints, for the first visits, when each step of the
// start ended (medians, ms from navigation start): the page's code started
// and done (main thread), the engine's worker started, the module's glue
// loaded (a page that imports it apart), the compiled module handed to
// the worker (a page that compiles it in boot.js), its bytes received, the
// module instantiated, the engine built, the knowledge base read, the first save,
// the session opened, and then on the page READY taken and the engine shown
// ready. A page that does not report a step shows "-".
//
//   node web/bench/ready.mjs [DIR ...] [--runs N] [--stages]
//
// Needs target/release/arbores (ARBORES_BIN overrides the path) and Chromium
// (as the tests do).

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath, dist, root } from '../tests/harness.mjs';

const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const runs = runsAt >= 0 ? Number(args.splice(runsAt, 2)[1]) : 5;
const stagesAt = args.indexOf('--stages');
const showStages = stagesAt >= 0;
if (showStages) args.splice(stagesAt, 1);
const dirs = args.length ? args.map((d) => path.resolve(d)) : [dist];
const bin = process.env.ARBORES_BIN || path.join(root, 'target', 'release', 'arbores');

async function serve(dir, port) {
  const child = spawn(bin, ['playground', '--port', String(port), '--dir', dir], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    try { if ((await fetch(`http://127.0.0.1:${port}/`)).ok) return child; } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill();
  throw new Error(`no server for ${dir}`);
}

async function readyMs(page, url, reload) {
  if (reload) await page.reload({ waitUntil: 'commit' });
  else await page.goto(url, { waitUntil: 'commit' });
  // The time is taken in the page when it is first seen ready (polled every
  // 5 ms), not by a later call from here, whose round trip through the
  // DevTools protocol took 70-300 ms more on a loaded machine.
  const seen = await page.waitForFunction(() => document.body?.dataset.engine === 'ready' && performance.now(), null, { timeout: 30_000, polling: 5 });
  // ...and as this program measured it until 2026-11-27: by that later call.
  const late = await page.evaluate(() => performance.now());
  return { at: await seen.jsonValue(), late };
}

// The steps of the start, in ms from navigation start (see the top).
const STAGES = ['app', 'page', 'worker', 'glue', 'handed', 'bytes', 'module', 'engine', 'knowledge', 'saved', 'session', 'message', 'shown'];
function stagesOf(page) {
  return page.evaluate(() => {
    const at = {};
    // The module's bytes fetched by the page (boot.js), else by the worker (below).
    const wasm = performance.getEntriesByType('resource').find((e) => e.name.endsWith('.wasm'));
    if (wasm) at.bytes = wasm.responseEnd;
    for (const name of ['app', 'page', 'message', 'shown']) {
      const m = performance.getEntriesByName(`arbores:${name}`)[0];
      if (m) at[name] = m.startTime;
    }
    for (const [name, t] of Object.entries(window.arboresMarks ?? {})) at[name] = t - performance.timeOrigin;
    return at;
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = dirs.map(() => ({ first: [], reload: [], stages: [], late: [] }));
const servers = [];
for (const [i, dir] of dirs.entries()) servers.push({ dir, port: 18700 + i, child: await serve(dir, 18700 + i) });
try {
  for (let r = 0; r < runs; r++) {
    for (const [i, s] of servers.entries()) {
      const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'arbores-bench-'));
      const context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath, headless: true, args: CHROMIUM_ARGS });
      const page = context.pages()[0] || await context.newPage();
      const url = `http://127.0.0.1:${s.port}/`;
      const first = await readyMs(page, url, false);
      results[i].first.push(first.at);
      results[i].late.push(first.late);
      if (showStages) results[i].stages.push(await stagesOf(page));
      await page.waitForTimeout(500); // let the service worker install
      results[i].reload.push((await readyMs(page, url, true)).at);
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    }
  }
} finally {
  for (const s of servers) s.child.kill();
}

const gz = (f) => zlib.gzipSync(fs.readFileSync(f), { level: 9 }).length;
const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
console.log(`machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model}; chromium ${execFileSync(chromiumPath, ['--version']).toString().trim()}; ${runs} runs each, alternating`);
console.log('page                               first visit (median, min-max)   reload (median, min-max)   loaded at start (gzip: js+css+html+wasm)');
for (const [i, s] of servers.entries()) {
  const { first, reload } = results[i];
  const files = ['index.html', 'boot.js', 'app.js', 'worker.js', 'style.css', 'pkg/arbores_web_bg.wasm', 'sexp.js', 'store.js']
    .map((f) => path.join(s.dir, f)).filter((f) => fs.existsSync(f));
  const total = files.reduce((n, f) => n + gz(f), 0);
  const fmt = (xs) => `${median(xs).toFixed(0)} ms (${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)})`;
  console.log(`${path.relative(process.cwd(), s.dir).padEnd(34)} ${fmt(first).padEnd(31)} ${fmt(reload).padEnd(26)} ${kib(total)}`);
}
if (showStages) {
  console.log(`first visit, when each step ended (median ms from navigation start): ${STAGES.join(', ')}`);
  for (const [i, s] of servers.entries()) {
    const cells = STAGES.map((name) => {
      const xs = results[i].stages.map((at) => at[name]).filter((x) => x !== undefined);
      return xs.length ? median(xs).toFixed(0) : '-';
    });
    console.log(`${path.relative(process.cwd(), s.dir).padEnd(34)} ${cells.map((c) => c.padStart(6)).join(' ')}`);
  }
}
console.log('first visit as measured before 2026-11-27 (by a call after the page is seen ready; median, min-max):');
for (const [i, s] of servers.entries()) {
  const xs = results[i].late;
  console.log(`${path.relative(process.cwd(), s.dir).padEnd(34)} ${median(xs).toFixed(0)} ms (${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)})`);
}
