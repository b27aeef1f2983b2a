// The engine for JavaScript hosts (web/dist/engine.js): tools as async
// functions, `par` calls answered concurrently, errors Scheme can guard,
// suspensions as bytes resumed in another engine and forked. Runs the
// built module in Node, without a browser.
//
//   node --test --test-concurrency=1 web/tests/
//
// Needs web/dist from scripts/build-web; the tests between this engine and
// the `arbores` command need target/release/arbores too (ARBORES_BIN
// overrides the path) and are skipped, saying so, without it.

import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { dist, root } from './harness.mjs';

let api;

before(async () => {
  const entry = path.join(dist, 'engine.js');
  assert.ok(fs.existsSync(entry), `${entry} is needed: scripts/build-web`);
  api = await import(pathToFileURL(entry).href);
  api.initSync({ module: fs.readFileSync(path.join(dist, 'pkg', 'arbores_web_bg.wasm')) });
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Tools that record how many of their calls were running at once.
function recordingTools() {
  const seen = { running: 0, most: 0, args: [] };
  const tools = {
    search: {
      params: ['query'],
      description: 'Finds titles.',
      run: async (query) => {
        seen.running += 1;
        seen.most = Math.max(seen.most, seen.running);
        seen.args.push(query);
        // The later call finishes first: the answers must still go back
        // in the calls' order.
        await sleep(query === 'first' ? 40 : 5);
        seen.running -= 1;
        return [`${query}-1`, `${query}-2`];
      },
    },
    fail: {
      params: [],
      description: 'Always fails.',
      run: async () => {
        throw new Error('quota exceeded');
      },
    },
    lookup: {
      params: ['record'],
      description: 'Takes an object.',
      run: async (record) => ({ got: record, keys: Object.keys(record) }),
    },
  };
  return { seen, tools };
}

function engineWith(tools) {
  const engine = new api.Engine();
  api.defineTools(engine, tools);
  return engine;
}

describe('tools as JavaScript async functions', () => {
  test('a call suspends, the function answers, Scheme goes on with the value', async () => {
    const { tools } = recordingTools();
    const engine = engineWith(tools);
    const r = await api.runWithTools(engine, '(display "start ") (vector-map string-upcase (search "arbores"))', tools);
    assert.equal(r.error, null);
    assert.equal(r.value, '#("ARBORES-1" "ARBORES-2")');
    assert.equal(r.output, 'start ');
    assert.equal(r.calls, 1);
  });

  test('par: both calls run at once and the answers keep the branches\' order', async () => {
    const { seen, tools } = recordingTools();
    const engine = engineWith(tools);
    const r = await api.runWithTools(engine, '(par (search "first") (+ 1 2) (search "second"))', tools);
    assert.equal(r.error, null);
    assert.equal(r.value, '(#("first-1" "first-2") 3 #("second-1" "second-2"))');
    assert.equal(seen.most, 2, 'the two calls were pending together');
    assert.deepEqual(seen.args, ['first', 'second']);
  });

  test('a function that throws raises an error Scheme can guard', async () => {
    const { tools } = recordingTools();
    const engine = engineWith(tools);
    const r = await api.runWithTools(
      engine,
      '(guard (c ((error-object? c) (list (error-object-message c) (error-object-irritants c)))) (fail))',
      tools,
    );
    assert.equal(r.error, null);
    assert.equal(r.value, '("quota exceeded" ("fail"))');
    const unguarded = await api.runWithTools(engine, '(fail)', tools);
    assert.match(unguarded.error.message, /quota exceeded/);
  });

  test('arguments arrive as JSON values, answers go back through the JSON mapping', async () => {
    const { tools } = recordingTools();
    const engine = engineWith(tools);
    const r = await api.runWithTools(engine, `(lookup '(("name" . "ada") ("born" . 1815)))`, tools);
    assert.equal(r.error, null);
    assert.equal(r.value, '(("got" ("name" . "ada") ("born" . 1815)) ("keys" . #("name" "born")))');
  });

  test('an argument without a JSON form arrives in write form', async () => {
    const engine = new api.Engine();
    engine.defineTool({ name: 'show', params: ['x'], description: '' });
    const run = engine.start('(show #\\a)');
    assert.equal(run.status, 'suspended');
    assert.equal(run.calls[0].json, null);
    assert.deepEqual(run.calls[0].args, ['#\\a']);
    const done = engine.resume(run.id, [{ value: '(a . b)' }]);
    assert.equal(done.status, 'done');
    assert.equal(done.value, '(a . b)');
  });
});

describe('suspensions from JavaScript', () => {
  test('dumped bytes resume in another engine, twice with different answers', () => {
    const a = new api.Engine();
    a.defineTool({ name: 'ask', params: ['q'], description: 'Asks.' });
    const run = a.start('(define (twice x) (* 2 x)) (twice (ask "n?"))');
    assert.equal(run.status, 'suspended');
    assert.deepEqual(run.calls.map((c) => [c.tool, c.json]), [['ask', '["n?"]']]);
    const bytes = a.dump(run.id);
    assert.ok(bytes.length < 10_000, `a small program's dump is small (${bytes.length} bytes)`);

    const b = new api.Engine();
    const first = b.loadSuspension(bytes);
    const second = b.loadSuspension(bytes);
    assert.notEqual(first.id, second.id);
    assert.equal(b.resume(first.id, [{ json: '21' }]).value, '42');
    assert.equal(b.resume(second.id, [{ value: '5' }]).value, '10');
    assert.deepEqual(b.suspended(), []);
    assert.deepEqual(a.suspended(), [run.id], 'the original stays suspended');
  });

  test('damaged bytes, unknown ids and wrong answers are refused and change nothing', () => {
    const a = new api.Engine();
    a.defineTool({ name: 'ask', params: ['q'], description: '' });
    const run = a.start('(ask 1)');
    const bytes = a.dump(run.id);
    const damaged = Uint8Array.from(bytes);
    damaged[damaged.length - 5] ^= 0xff;
    assert.throws(() => new api.Engine().loadSuspension(damaged), /hash|damaged/i);
    assert.throws(() => new api.Engine().loadSuspension(new Uint8Array([1, 2, 3])), /not a dump|ARBSUSP|short|truncated/i);
    assert.throws(() => a.resume(run.id + 100, [{ value: '1' }]), /no suspended|unknown|not suspended/i);
    assert.throws(() => a.resume(run.id, [{ value: '1', error: 'x' }]), /exactly one/);
    assert.throws(() => a.resume(run.id, [{ json: '{' }]), /answer 0/);
    assert.throws(() => a.resume(run.id, []), /answer/i);
    assert.throws(() => a.defineTool({ name: 'bad name', params: [] }), /bad name/);
    assert.deepEqual(a.suspended(), [run.id], 'still suspended');
    assert.equal(a.resume(run.id, [{ value: '"ok"' }]).value, '"ok"');
  });

  test('a call never answered is abandoned', () => {
    const a = new api.Engine();
    a.defineTool({ name: 'ask', params: [], description: '' });
    const run = a.start('(ask)');
    assert.equal(a.abandon(run.id), true);
    assert.equal(a.abandon(run.id), false);
    assert.deepEqual(a.suspended(), []);
    assert.equal(a.eval('(+ 1 2)').value, '3', 'the engine goes on');
  });

  test('an evaluation budget spans run slices', () => {
    const a = new api.Engine();
    a.defineTool({ name: 'ask', params: [], description: '' });
    a.setEvaluationBudget(50_000);
    const run = a.start('(ask) (let loop ((i 0)) (if (< i 1000000) (loop (+ i 1)) i))');
    const done = a.resume(run.id, [{ value: '1' }]);
    assert.equal(done.status, 'done');
    assert.equal(done.error.kind, 'step-limit');
    assert.throws(() => a.setEvaluationBudget(-1), /positive whole number/);
    a.setEvaluationBudget(null);
  });
});

// The browser's engine and the `arbores` command (`start --dump`, `resume`)
// read and write the same bytes: a suspension moves between them, both ways.
describe('suspensions between this engine and the arbores command', () => {
  const bin = process.env.ARBORES_BIN || path.join(root, 'target', 'release', 'arbores');
  const skip = fs.existsSync(bin) ? false : `no arbores binary at ${bin} (scripts/build makes it)`;
  let dir;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbores-agent-'));
  });

  // `arbores ARGS...` with a store of its own; its exit status, stdout, stderr.
  function arbores(...args) {
    const r = spawnSync(bin, args, {
      encoding: 'utf8',
      env: { ...process.env, ARBORES_STORE: path.join(dir, 'store') },
    });
    assert.equal(r.error, undefined, `running ${bin}: ${r.error}`);
    return r;
  }

  for (const engine of ['wasm', 'native']) {
    test(`a dump made here resumes in \`arbores --engine ${engine} resume\``, { skip }, () => {
      const a = new api.Engine();
      a.defineTool({ name: 'search', params: ['query'], description: '' });
      const run = a.start('(define base 40) (display "asked ") (+ base (vector-length (search "arbores")))');
      assert.equal(run.status, 'suspended');
      const file = path.join(dir, `browser-${engine}.arbs`);
      fs.writeFileSync(file, a.dump(run.id));
      const r = arbores('--engine', engine, '--json', 'resume', file, '--json-value', '["a", "b"]');
      assert.equal(r.status, 0, r.stdout + r.stderr);
      const result = JSON.parse(r.stdout);
      assert.equal(result.status, 'done');
      assert.equal(result.error, null);
      assert.equal(result.value, '42');
    });

    test(`a dump made by \`arbores --engine ${engine} start --dump\` resumes here`, { skip }, () => {
      const file = path.join(dir, `command-${engine}.arbs`);
      const r = arbores('--engine', engine, '--json', 'start', '--tool', 'search/query', '--tool', 'calc/expression',
        '--dump', file, '(define (twice x) (* 2 x)) (par (twice (calc "1+1")) (search "q"))');
      assert.equal(r.status, 10, r.stdout + r.stderr);
      const started = JSON.parse(r.stdout);
      assert.equal(started.status, 'suspended');
      const bytes = fs.readFileSync(file);
      assert.equal(started.dump.bytes, bytes.length);

      const b = new api.Engine();
      const loaded = b.loadSuspension(bytes);
      assert.deepEqual(loaded.calls.map((c) => [c.tool, c.args, JSON.parse(c.json)]),
        started.calls.map((c) => [c.tool, c.args, c.json]));
      const done = b.resume(loaded.id, [{ value: '2' }, { json: '{"hits": 3}' }]);
      assert.equal(done.status, 'done');
      assert.equal(done.error, null);
      assert.equal(done.value, '(4 (("hits" . 3)))');
      // Damaged on the way: refused here as by the command.
      const damaged = Uint8Array.from(bytes);
      damaged[10] ^= 0x01;
      assert.throws(() => new api.Engine().loadSuspension(damaged), /format|hash/);
    });
  }
});
