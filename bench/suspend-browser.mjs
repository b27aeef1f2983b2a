#!/usr/bin/env node
// What a suspended evaluation costs in the browser's engine
// (web/dist/engine.js, the module the playground loads), run in Node:
// the dump's size, and the time to start an evaluation until it suspends
// (`Engine.start`), to dump it (`dump`), to load the dump into another
// engine (`loadSuspension`) and to resume it there to the end (`resume`).
//
//   scripts/build-web   # web/dist, which this reads
//   node bench/suspend-browser.mjs [ROUNDS] [--json]
//
// The programs and the tool are those of core/examples/suspend_bench.rs
// (core/examples/suspend/*.scm). Each time is taken in JavaScript around
// one call of the module's, so it includes wasm-bindgen's copying across
// the boundary and turning the result into JavaScript objects; `start`
// and `loadSuspension` also give each pending call's arguments as JSON,
// which the module converts with an engine of its own (as a host reading
// `calls[i].json` needs). Node's V8 runs the module: a browser's engine
// may differ. Each figure is the median of ROUNDS (default 200), with the
// fastest and slowest beside it; for scale, a new `Engine` of the module.
// `--json` prints one JSON object per program (what bench/suspend reads).

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'web', 'dist');
const programs = path.join(root, 'core', 'examples', 'suspend');

const args = process.argv.slice(2);
const json = args.includes('--json');
const rounds = Math.max(1, Number(args.find((a) => /^\d+$/.test(a)) ?? 200));

const entry = path.join(dist, 'engine.js');
if (!fs.existsSync(entry)) {
  console.error(`${entry} is needed: run scripts/build-web`);
  process.exit(1);
}
const api = await import(pathToFileURL(entry).href);
api.initSync({ module: fs.readFileSync(path.join(dist, 'pkg', 'arbores_web_bg.wasm')) });

// The tool and the answer of core/examples/suspend/native.rs.
function engine() {
  const e = new api.Engine();
  e.defineTool({ name: 'search', params: ['query'], description: '' });
  return e;
}

function round(a, b, source) {
  let t = performance.now();
  const s = a.start(source);
  const start = performance.now() - t;
  if (s.status !== 'suspended') throw new Error(`the program did not suspend: ${JSON.stringify(s)}`);
  t = performance.now();
  const bytes = a.dump(s.id);
  const dump = performance.now() - t;
  a.abandon(s.id);
  t = performance.now();
  const loaded = b.loadSuspension(bytes);
  const load = performance.now() - t;
  const answers = loaded.calls.map(() => ({ value: '"ok"' }));
  t = performance.now();
  const done = b.resume(loaded.id, answers);
  const resume = performance.now() - t;
  if (done.status !== 'done' || done.error) throw new Error(`resume: ${JSON.stringify(done)}`);
  return { bytes: bytes.length, times: [start, dump, load, resume] };
}

const spread = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  // Milliseconds to microseconds.
  return [s[s.length >> 1], s[0], s[s.length - 1]].map((x) => Math.round(x * 1e5) / 100);
};

// For scale: a new Engine of the module (the module also makes one of its
// own for each pending call's JSON, see above).
const made = [];
for (let i = 0; i < Math.min(rounds, 50); i++) {
  const t = performance.now();
  const e = new api.Engine();
  made.push(performance.now() - t);
  e.free();
}

const keys = ['start', 'dump', 'load', 'resume'];
const steps = ['start until suspended', 'dump', 'load into another engine', 'resume to the end'];
if (json) {
  console.log(JSON.stringify({ face: 'browser', program: 'new engine', rounds, new_engine: spread(made) }));
} else {
  console.log(`rounds: ${rounds}; Node ${process.version}`);
  const [m, lo, hi] = spread(made);
  console.log(`  ${'new Engine (for scale)'.padEnd(26)} ${m.toFixed(1)} µs (${lo.toFixed(1)} .. ${hi.toFixed(1)})`);
}
for (const [name, file] of [['small program', 'small.scm'], ['larger session', 'larger.scm']]) {
  const source = fs.readFileSync(path.join(programs, file), 'utf8');
  const a = engine();
  const b = engine();
  const times = keys.map(() => []);
  let bytes = 0;
  for (let i = 0; i < rounds; i++) {
    const r = round(a, b, source);
    bytes = r.bytes;
    r.times.forEach((x, k) => times[k].push(x));
  }
  if (json) {
    const line = { face: 'browser', program: name, rounds, bytes };
    keys.forEach((k, i) => (line[k] = spread(times[i])));
    console.log(JSON.stringify(line));
  } else {
    console.log(`${name}: dump ${bytes} bytes (median, fastest .. slowest)`);
    steps.forEach((step, i) => {
      const [m, lo, hi] = spread(times[i]);
      console.log(`  ${step.padEnd(26)} ${m.toFixed(1)} µs (${lo.toFixed(1)} .. ${hi.toFixed(1)})`);
    });
  }
  a.free();
  b.free();
}
