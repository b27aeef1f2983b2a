// Round-trip latency of `arbores mcp`, as an MCP client sees it: the time
// from the start of `callTool eval (+ 1 2)` to its result, through the
// official TypeScript SDK over stdio, on both engines; and the time from
// spawning the server to a finished handshake.
//
//   node host/tests/mcp/latency.mjs [CALLS]      (default 500)
//
// Not a test (node --test does not pick it up): it prints figures.

import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { BIN, cleanup, connect, scratch } from './harness.mjs';

const calls = Number(process.argv[2] ?? 500);

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return { median: at(0.5), p90: at(0.9), p99: at(0.99), mean };
}

const ms = (x) => `${x.toFixed(3)} ms`;

console.log(`arbores mcp round trips: ${BIN}, ${calls} calls of eval (+ 1 2) per engine`);
for (const engine of ['wasm', 'native']) {
  const dir = scratch(`latency-${engine}`);
  const starts = [];
  let mcp;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    mcp = await connect(['--engine', engine, '--store', join(dir, 'kb')]);
    starts.push(performance.now() - t0);
    if (i < 4) await mcp.close();
  }
  // Warm up: the first evaluation opens the store.
  for (let i = 0; i < 20; i++) await mcp.call('eval', { source: '(+ 1 2)' });
  const samples = [];
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    const r = await mcp.call('eval', { source: '(+ 1 2)' });
    samples.push(performance.now() - t0);
    if (r.structuredContent?.value !== '3') throw new Error(`unexpected result ${JSON.stringify(r)}`);
  }
  await mcp.close();
  cleanup(dir);
  const s = stats(samples);
  const st = stats(starts);
  console.log(
    `${engine.padEnd(6)} eval round trip: median ${ms(s.median)}, p90 ${ms(s.p90)}, ` +
      `p99 ${ms(s.p99)}, mean ${ms(s.mean)}; start to handshake done: median ${ms(st.median)} (5 starts)`,
  );
}
