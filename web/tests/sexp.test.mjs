// Unit tests of web/sexp.js, the reader the worker uses for what arb: calls
// return. No browser needed: node --test web/tests/sexp.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alistGet, Dotted, readDatum, ReadError, Sym } from '../sexp.js';

test('a reflog as arb:reflog writes it', () => {
  const text = '((("version-id" . 4) ("timestamp" . "2025-07-29T10:30:00Z") ("description" . "create 257 (other)"))'
    + ' (("version-id" . 2) ("timestamp" . "2025-07-29T10:30:00.5Z") ("description" . "switch from version 3 to 2")))';
  const log = readDatum(text);
  assert.equal(log.length, 2);
  assert.equal(alistGet(log[0], 'version-id'), 4);
  assert.equal(alistGet(log[0], 'description'), 'create 257 (other)');
  assert.equal(alistGet(log[1], 'timestamp'), '2025-07-29T10:30:00.5Z');
  assert.equal(alistGet(log[1], 'missing'), undefined);
});

test('lists as alist values, #f, floats and symbols', () => {
  const hit = readDatum('(("id" . 18) ("symbol-names" "arb:ref" "ref") ("score" . 0.8123) ("description" . #f) ("forward-delta" arb:delete 256))');
  assert.deepEqual(alistGet(hit, 'symbol-names'), ['arb:ref', 'ref']);
  assert.equal(alistGet(hit, 'score'), 0.8123);
  assert.equal(alistGet(hit, 'description'), false);
  const delta = alistGet(hit, 'forward-delta');
  assert.ok(delta[0] instanceof Sym);
  assert.equal(delta[0].name, 'arb:delete');
  assert.equal(delta[1], 256);
});

test('string escapes as write prints them', () => {
  assert.equal(readDatum('"a\\"b\\\\c\\nd\\te\\x7f;f"'), 'a"b\\c\nd\te\x7ff');
  assert.equal(readDatum('"快速排序实现"'), '快速排序实现');
  assert.equal(readDatum('|two words|').name, 'two words');
});

test('numbers: ids beyond 2^53 stay exact', () => {
  assert.equal(readDatum('18446744073709551615'), 18446744073709551615n);
  assert.equal(readDatum('-3'), -3);
  assert.equal(readDatum('1e3'), 1000);
});

test('dotted lists and quote', () => {
  const d = readDatum('(1 2 . 3)');
  assert.ok(d instanceof Dotted);
  assert.deepEqual(d.items, [1, 2]);
  assert.equal(d.tail, 3);
  const q = readDatum("'(a)");
  assert.equal(q[0].name, 'quote');
  assert.equal(q[1][0].name, 'a');
});

test('deep nesting does not overflow', () => {
  const n = 100_000;
  let v = readDatum('('.repeat(n) + ')'.repeat(n));
  let depth = 0;
  while (Array.isArray(v) && v.length) { v = v[0]; depth++; }
  assert.equal(depth, n - 1);
});

test('bad input is a ReadError that says where', () => {
  for (const bad of ['', '(', ')', '(1 . )', '( . 1)', '(1 . 2 3)', '"open', '"\\q"', '"\\x;"', '#\\a', '1 2', "'"]) {
    assert.throws(() => readDatum(bad), (e) => e instanceof ReadError && /at offset \d+/.test(e.message), `input ${JSON.stringify(bad)}`);
  }
  assert.throws(() => readDatum(undefined), ReadError);
});
