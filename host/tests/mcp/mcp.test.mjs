// `arbores mcp` end to end: the official MCP TypeScript SDK as the client,
// the real binary as the server, on both engines.

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { McpError } from '@modelcontextprotocol/sdk/types.js';

import { arbores, cleanup, connect, scratch } from './harness.mjs';

const TOOLS = ['create', 'eval', 'get', 'restore', 'search', 'snapshot', 'snapshots'];

/** The JSON-RPC error a call fails with. */
async function rejected(promise) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof McpError, `not an MCP error: ${e}`);
    return e;
  }
  assert.fail('the call succeeded');
}

for (const engine of ['wasm', 'native']) {
  describe(`arbores mcp (${engine})`, () => {
    let dir;
    let store;
    let mcp;

    before(async () => {
      dir = scratch(engine);
      store = join(dir, 'kb');
      mcp = await connect(['--engine', engine, '--store', store, '--fuel', '50000000']);
    });

    after(async () => {
      await mcp?.close();
      cleanup(dir);
    });

    test('lists its tools with their schemas', async () => {
      const { tools } = await mcp.client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), TOOLS);
      const evalTool = tools.find((t) => t.name === 'eval');
      assert.deepEqual(evalTool.inputSchema.required, ['source']);
      for (const field of ['steps', 'memory', 'timeout']) {
        assert.ok(field in evalTool.inputSchema.properties, field);
      }
      assert.ok('value' in evalTool.outputSchema.properties);
      assert.equal(tools.find((t) => t.name === 'search').annotations?.readOnlyHint, true);
      const info = mcp.client.getServerVersion();
      assert.equal(info.name, 'arbores');
      assert.match(mcp.client.getInstructions(), /read-write/);
    });

    test('eval returns the value, the output and the error', async () => {
      const ok = await mcp.call('eval', { source: '(display "hi") (newline) (+ 1 2)' });
      assert.equal(ok.isError, false);
      assert.equal(ok.structuredContent.value, '3');
      assert.equal(ok.structuredContent.output, 'hi\n');
      assert.equal(ok.structuredContent.error, null);
      // The text content carries the same object, for clients that read text.
      assert.deepEqual(JSON.parse(ok.content[0].text), ok.structuredContent);

      const defined = await mcp.call('eval', { source: '(define (sq x) (* x x))' });
      assert.equal(defined.structuredContent.value, null);
      const used = await mcp.call('eval', { source: '(sq 12)' });
      assert.equal(used.structuredContent.value, '144');

      const bad = await mcp.call('eval', { source: '(display "before")\n  (car (quote ()))' });
      assert.equal(bad.isError, true);
      const { error, output } = bad.structuredContent;
      assert.equal(output, 'before');
      assert.equal(error.kind, 'runtime-error');
      assert.match(error.message, /car: expected a pair/);
      assert.deepEqual([error.line, error.column], [2, 3]);

      const unread = await mcp.call('eval', { source: '(+ 1' });
      assert.equal(unread.isError, true);
      assert.equal(unread.structuredContent.error.kind, 'syntax-error');

      // Programs have no standard input: it carries the protocol.
      const stdin = await mcp.call('eval', { source: '(read-line)' });
      assert.equal(stdin.isError, true);
      assert.match(stdin.structuredContent.error.message, /standard input is not the program's/);
      // (exit) ends the evaluation, not the server.
      const exit = await mcp.call('eval', { source: '(exit 3)' });
      assert.equal(exit.structuredContent.error.kind, 'exit');
      assert.equal((await mcp.call('eval', { source: '(sq 3)' })).structuredContent.value, '9');
    });

    test('a limit ends one evaluation and the session goes on', async () => {
      await mcp.call('eval', { source: '(define kept 42)' });
      const steps = await mcp.call('eval', { source: '(let loop () (loop))', steps: 100000 });
      assert.equal(steps.isError, true);
      assert.equal(steps.structuredContent.error.kind, 'step-limit');
      const time = await mcp.call('eval', { source: '(let loop () (loop))', timeout: 0.3 });
      assert.equal(time.structuredContent.error.kind, 'time-limit');
      const memory = await mcp.call('eval', {
        source: '(let loop ((l (list))) (loop (cons (make-vector 100) l)))',
        memory: '16M',
      });
      assert.equal(memory.structuredContent.error.kind, 'memory-limit');
      const after = await mcp.call('eval', { source: 'kept' });
      assert.equal(after.isError, false);
      assert.equal(after.structuredContent.value, '42');
    });

    test('a cancelled request stops its evaluation', async () => {
      const controller = new AbortController();
      const pending = mcp.client.callTool(
        { name: 'eval', arguments: { source: '(define spun 0) (let loop () (set! spun 1) (loop))' } },
        undefined,
        { signal: controller.signal },
      );
      setTimeout(() => controller.abort(new Error('enough')), 300);
      await assert.rejects(pending, /enough/);
      // Without the cancellation this would wait for the server's 60 s timeout.
      const started = Date.now();
      const next = await mcp.call('eval', { source: '(+ 1 2)' });
      assert.equal(next.structuredContent.value, '3');
      assert.ok(Date.now() - started < 10000, `${Date.now() - started} ms`);
    });

    test('create, then search, get and eval find it', async () => {
      const created = await mcp.call('create', {
        code: '(define (zebra-crossing n) (* n 3))',
        description: 'signal where pedestrians walk across the street',
        type: 'function',
        names: ['zebra-crossing'],
      });
      assert.equal(created.isError, false, JSON.stringify(created));
      const { id, version } = created.structuredContent;
      assert.ok(id >= 256 && version >= 2, JSON.stringify(created.structuredContent));

      const byName = await mcp.call('search', { pattern: 'zebra' });
      assert.deepEqual(byName.structuredContent.hits.map((h) => h.id), [id]);
      assert.deepEqual(byName.structuredContent.hits[0].names, ['zebra-crossing']);
      const byMeaning = await mcp.call('search', { query: 'pedestrian street crossing', limit: 3 });
      assert.equal(byMeaning.structuredContent.hits[0].id, id);
      assert.deepEqual(byMeaning.structuredContent.hits[0].names, ['zebra-crossing']);
      assert.ok(byMeaning.structuredContent.hits[0].score > 0);
      const regex = await mcp.call('search', { pattern: '^zeb.*ing$', mode: 'regex' });
      assert.deepEqual(regex.structuredContent.hits.map((h) => h.id), [id]);

      const uses = await mcp.call('create', {
        code: '(define (double-crossing n) (* 2 (zc n)))',
        description: 'twice the crossing',
        names: ['double-crossing'],
        dependencies: [{ id, name: 'zc' }],
      });
      const got = await mcp.call('get', { id: uses.structuredContent.id });
      assert.deepEqual(got.structuredContent, {
        id: uses.structuredContent.id,
        description: 'twice the crossing',
        type: null,
        names: ['double-crossing'],
        dependencies: [id],
        code: '(define (double-crossing n) (* 2 (zc n)))',
        dependents: [],
      });
      assert.deepEqual((await mcp.call('get', { id })).structuredContent.dependents, [
        uses.structuredContent.id,
      ]);
      const missing = await mcp.call('get', { id: 99999 });
      assert.equal(missing.isError, true);
      assert.equal(missing.structuredContent.error.kind, 's-expression-not-found');

      // The session uses stored code by name.
      const ran = await mcp.call('eval', { source: '(double-crossing 5)' });
      assert.equal(ran.structuredContent.value, '30');

      // A session's own definitions never change what the tools do.
      await mcp.call('eval', {
        source: '(define (scheme->json . _) "[]") (define (arb:search-by-symbol . _) (list))',
      });
      const still = await mcp.call('search', { pattern: 'zebra' });
      assert.deepEqual(still.structuredContent.hits.map((h) => h.id), [id]);

      const unread = await mcp.call('create', { code: '(define (broken' });
      assert.equal(unread.isError, true);
      assert.equal(unread.structuredContent.error.kind, 'syntax-error');
    });

    test('search by meaning returns stored nodes only, each with its names', async () => {
      const made = [];
      for (const [name, description] of [
        ['version-label', 'the label shown for the current version of a document'],
        ['version-bump', 'makes the next version number of a release'],
        ['tree-depth', 'how deep a tree is'],
      ]) {
        const created = await mcp.call('create', {
          code: `(define (${name} x) x)`,
          description,
          type: 'function',
          names: [name],
        });
        assert.equal(created.isError, false, JSON.stringify(created));
        made.push(created.structuredContent.id);
      }
      // The words of builtin arb: procedures ("The id of the current
      // version of the knowledge base", "Makes another version current"):
      // without the filter they rank first.
      const query = 'the current version of the knowledge base';
      const hits = (await mcp.call('search', { query, limit: 2 })).structuredContent.hits;
      assert.equal(hits.length, 2, JSON.stringify(hits));
      for (const hit of hits) {
        assert.deepEqual(Object.keys(hit).sort(), ['description', 'id', 'names', 'score'], JSON.stringify(hit));
        assert.ok(hit.id % 65536 >= 256, `a builtin: ${JSON.stringify(hit)}`);
        assert.ok(made.includes(hit.id), JSON.stringify(hit));
        assert.ok(hit.score > 0 && hit.score <= 1, JSON.stringify(hit));
      }
      assert.deepEqual(hits[0].names, ['version-label']);
      assert.equal(hits[0].description, 'the label shown for the current version of a document');
      // Every hit without a limit: still no builtin, and the best first.
      const all = (await mcp.call('search', { query, limit: 50 })).structuredContent.hits;
      assert.ok(all.length >= 2 && all.every((h) => h.id % 65536 >= 256), JSON.stringify(all));
      const scores = all.map((h) => h.score);
      assert.deepEqual(scores, [...scores].sort((a, b) => b - a));
      // The builtins are there to be found by name.
      const byName = await mcp.call('search', { pattern: 'arb:current-version', mode: 'exact' });
      assert.equal(byName.structuredContent.hits.length, 1);
    });

    test("another process's commit is seen by the next evaluation", async () => {
      arbores([
        '--engine', engine, '--store', store, 'eval',
        '(arb:create "(define (from-outside) 77)" (list) "made by another process" "function" (list "from-outside"))',
      ]);
      const seen = await mcp.call('eval', { source: '(from-outside)' });
      assert.equal(seen.structuredContent.value, '77', JSON.stringify(seen.structuredContent));
      const found = await mcp.call('search', { pattern: 'from-outside', mode: 'exact' });
      assert.equal(found.structuredContent.hits.length, 1);
    });

    test('snapshot, then restore, in this session and in a later one', async () => {
      await mcp.call('eval', {
        source: '(define bump! (let ((n 0)) (lambda () (set! n (+ n 1)) n))) (bump!) (bump!)',
      });
      const saved = await mcp.call('snapshot', { name: `work-${engine}` });
      assert.equal(saved.isError, false, JSON.stringify(saved));
      assert.ok(saved.structuredContent.bytes > 0);
      assert.ok(existsSync(saved.structuredContent.path));
      assert.equal((await mcp.call('eval', { source: '(bump!)' })).structuredContent.value, '3');
      await mcp.call('eval', { source: '(define later 1)' });

      const restored = await mcp.call('restore', { name: `work-${engine}` });
      assert.equal(restored.isError, false, JSON.stringify(restored));
      assert.ok(restored.structuredContent.bindings.includes('bump!'));
      assert.equal((await mcp.call('eval', { source: '(bump!)' })).structuredContent.value, '3');
      const gone = await mcp.call('eval', { source: 'later' });
      assert.equal(gone.structuredContent.error.kind, 'runtime-error');

      const listed = await mcp.call('snapshots');
      const names = listed.structuredContent.snapshots.map((s) => s.name);
      assert.ok(names.includes(`work-${engine}`), names.join());

      // A later connection, on the other engine, brings it back too.
      const other = await connect(['--engine', engine === 'wasm' ? 'native' : 'wasm', '--store', store]);
      try {
        await other.call('restore', { name: `work-${engine}` });
        assert.equal((await other.call('eval', { source: '(bump!)' })).structuredContent.value, '3');
      } finally {
        await other.close();
      }

      const none = await mcp.call('restore', { name: 'never-saved' });
      assert.equal(none.isError, true);
      assert.match(none.structuredContent.error.message, /no saved session/);
    });

    test('bad arguments are clear errors', async () => {
      // A tool error the model can read and correct (the protocol's advice
      // for arguments that do not fit), always of kind invalid-argument.
      const refused = async (name, args, pattern) => {
        const r = await mcp.call(name, args);
        assert.equal(r.isError, true, JSON.stringify(r));
        assert.equal(r.structuredContent.error.kind, 'invalid-argument', JSON.stringify(r));
        assert.match(r.structuredContent.error.message, pattern);
        assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent);
      };
      await refused('eval', {}, /do not fit the tool's schema: missing field `source`/);
      await refused('eval', { source: '1', step: 5 }, /unknown field `step`/);
      await refused('eval', { source: '1', steps: 1e12 },
        /steps: 1000000000000 is not between 1 and the server's budget of 50000000/);
      await refused('eval', { source: '1', timeout: 1e6 }, /timeout: 1000000 is not/);
      await refused('eval', { source: '1', memory: 'lots' }, /memory: `lots` is not a size/);
      await refused('search', { query: 'a', pattern: 'b' }, /either `query`.*or `pattern`/);
      await refused('search', { pattern: 'a', mode: 'glob' }, /unknown variant `glob`/);
      await refused('get', { id: 'seven' }, /invalid type: string "seven"/);
      await refused('snapshot', { name: '../escape' }, /name: a session name is 1 to 64/);
      // A tool that does not exist is a protocol error.
      const unknown = await rejected(mcp.call('compile', { source: '1' }));
      assert.equal(unknown.code, -32602);
      assert.match(unknown.message, /no tool named "compile"; the tools are create, eval/);
      // The session is still there.
      assert.equal((await mcp.call('eval', { source: '(+ 1 2)' })).structuredContent.value, '3');
    });
  });
}

describe('arbores mcp: tiers and stores', () => {
  test('the read-only tier refuses create with a clear error and changes nothing', async () => {
    const dir = scratch('read-only');
    const store = join(dir, 'kb');
    arbores(['--store', store, 'eval', '(arb:create "(define seeded 1)" (list) "seed" "constant" (list "seeded"))']);
    const before = readFileSync(store);
    const mcp = await connect(['--store', store, '--tier', 'read-only']);
    try {
      assert.match(mcp.client.getInstructions(), /read-only/);
      const refused = await mcp.call('create', { code: '(define x 1)', names: ['x'] });
      assert.equal(refused.isError, true);
      assert.equal(refused.structuredContent.error.kind, 'permission-denied');
      assert.match(refused.structuredContent.error.message, /arb:create/);
      const inScheme = await mcp.call('eval', { source: '(arb:error? (arb:create "(define y 2)"))' });
      assert.equal(inScheme.structuredContent.value, '#t');
      // Reads work.
      assert.equal((await mcp.call('eval', { source: 'seeded' })).structuredContent.value, '1');
      const found = await mcp.call('search', { pattern: 'seeded' });
      assert.equal(found.structuredContent.hits.length, 1);
    } finally {
      await mcp.close();
    }
    assert.deepEqual(readFileSync(store), before);
    cleanup(dir);
  });

  test('a server started before its store existed sees the first commit of another process', async () => {
    const dir = scratch('no-store-yet');
    const store = join(dir, 'kb');
    const mcp = await connect(['--store', store]);
    try {
      assert.equal((await mcp.call('search', { pattern: 'early' })).structuredContent.hits.length, 0);
      arbores(['--store', store, 'eval', '(arb:create "(define early 5)" (list) "first" "constant" (list "early"))']);
      assert.equal((await mcp.call('eval', { source: 'early' })).structuredContent.value, '5');
      assert.equal((await mcp.call('search', { pattern: 'early' })).structuredContent.hits.length, 1);
    } finally {
      await mcp.close();
    }
    cleanup(dir);
  });

  test('the server ends when the client closes', async () => {
    const dir = scratch('close');
    const mcp = await connect(['--store', join(dir, 'kb')]);
    const pid = mcp.client.transport?.pid;
    await mcp.close();
    if (pid) {
      // Gone within a few seconds.
      const deadline = Date.now() + 5000;
      let alive = true;
      while (alive && Date.now() < deadline) {
        try {
          process.kill(pid, 0);
          await new Promise((r) => setTimeout(r, 50));
        } catch {
          alive = false;
        }
      }
      assert.equal(alive, false, 'arbores mcp is still running');
    }
    cleanup(dir);
  });
});
