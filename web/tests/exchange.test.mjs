// A knowledge base moves between the playground and the `arbores` command
// as one bundle file, both ways: Export from the page is read by `arbores
// import`, and what `arbores export` writes is read by Import in the page.
// A file that is not a bundle changes nothing.
//
//   node --test --test-concurrency=1 web/tests/
//
// Needs target/release/arbores (ARBORES_BIN overrides the path).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { field, root, shown, startSession, stopServer } from './harness.mjs';

const bin = process.env.ARBORES_BIN || path.join(root, 'target', 'release', 'arbores');

let server;
let s;
let dir;
const page = () => s.page;

// `arbores --store STORE ARGS...`: its standard output; fails with its
// standard error.
function arbores(store, ...args) {
  try {
    return execFileSync(bin, ['--store', store, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    throw new Error(`arbores --store ${store} ${args.join(' ')} failed (${e.status}): ${e.stderr}`);
  }
}

// Presses Import, accepts the question, gives the page `file`, and returns
// the notice the import left in the transcript.
async function importFile(file) {
  const notices = await page().$$eval('#transcript .notice', (ns) => ns.length);
  page().once('dialog', (d) => d.accept());
  const chooser = page().waitForEvent('filechooser');
  await page().click('#kb-import');
  await (await chooser).setFiles(file);
  await page().waitForFunction((n) => document.querySelectorAll('#transcript .notice').length > n, notices, { timeout: 20_000 });
  return page().$eval('#transcript .notice:last-of-type', (n) => n.textContent);
}

describe('export and import', () => {
  before(async () => {
    assert.ok(fs.existsSync(bin), `${bin} is needed: cargo build --release -p arbores-host`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arbores-exchange-'));
    ({ server, session: s } = await startSession());
  });

  after(async () => {
    await s?.close();
    stopServer(server);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('Export from the page is a bundle that `arbores import` reads, every version included', async () => {
    await s.open('a first visit');
    const made = await s.value(`(arb:create "(define (cube x) (* x x x))" '() "raises a number to the third power" "function" '("cube"))`);
    const id = field(made.value, 's-expression-id');
    const updated = await s.value(`(arb:update ${id} '(("description" . "the cube of a number")))`);
    const version = field(updated.value, 'new-version-id');

    const download = page().waitForEvent('download');
    await page().click('#kb-export');
    const file = path.join(dir, 'from-the-page.bundle');
    await (await download).saveAs(file);
    assert.match(fs.readFileSync(file).subarray(0, 14).toString(), /^arbores-bundle/, 'the file is a bundle');

    const store = path.join(dir, 'cli-store');
    arbores(store, 'import', file);
    assert.equal(arbores(store, 'eval', '(begin (arb:eval (quote (define c (cube 3)))) 1)').trim(), '1');
    const meta = arbores(store, 'show', String(id));
    assert.match(meta, /the cube of a number/, `arbores show after import:\n${meta}`);
    const log = arbores(store, 'log');
    assert.match(log, new RegExp(`\\bv?${version}\\b`), `the page's versions are in the CLI's log:\n${log}`);
  });

  test('what `arbores export` writes, Import in the page reads; the knowledge base it replaced is kept', async () => {
    const store = path.join(dir, 'cli-made');
    arbores(store, 'eval', `(arb:create "(define (halve x) (/ x 2))" '() "half of a number" "function" '("halve"))`);
    const file = path.join(dir, 'from-the-cli.bundle');
    arbores(store, 'export', file);

    const text = await importFile(file);
    assert.match(text, /Imported from-the-cli\.bundle/, `the import's notice: ${text}`);
    assert.match(text, /arbores-before-import-/, `the notice names where the replaced knowledge base is kept: ${text}`);
    await s.value('(arb:eval \'(halve 10))', /5/, ' after the import');
    const gone = await s.evaluate('(arb:search-by-symbol "cube")');
    assert.equal(gone.value, '()', `the replaced knowledge base is no longer current: ${shown(gone)}`);

    // Stored, not only loaded: a reload reads it from IndexedDB.
    await s.open('after the import');
    await s.value('(arb:eval \'(halve 10))', /5/, ' after a reload');
    const kept = await page().evaluate(async () => (await indexedDB.databases()).map((d) => d.name));
    assert.ok(kept.some((n) => n.startsWith('arbores-before-import-')), `databases: ${kept}`);
  });

  test('a file that is not a bundle is refused with a reason, and nothing changes', async () => {
    const before = await s.panel();
    const file = path.join(dir, 'not-a-bundle.bundle');
    fs.writeFileSync(file, '(define x 1)\n');
    const text = await importFile(file);
    assert.match(text, /Nothing was imported|cannot be imported/, `the notice: ${text}`);
    assert.match(text, /not an arbores bundle/, `the reason: ${text}`);
    const after = await s.panel();
    assert.equal(after.version, before.version);
    await s.value('(arb:eval \'(halve 10))', /5/, ' after a refused import');

    // A bundle cut short is refused too.
    const good = fs.readFileSync(path.join(dir, 'from-the-cli.bundle'));
    const cut = path.join(dir, 'cut.bundle');
    fs.writeFileSync(cut, good.subarray(0, Math.floor(good.length / 2)));
    const cutText = await importFile(cut);
    assert.match(cutText, /damaged|cut|does not load/, `the notice: ${cutText}`);
    assert.equal((await s.panel()).version, before.version);
  });
});
