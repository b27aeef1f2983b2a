// Reads the data the engine prints in `write` form (the value of an
// evaluation) back into JavaScript, so the page can show what `arb:` calls
// return without a second source of truth. Only data: lists, dotted pairs,
// strings, numbers, booleans and symbols.
//
//   proper list   -> Array
//   dotted list   -> Dotted {items: [...], tail}
//   string        -> string
//   exact integer -> number (BigInt beyond 2^53)
//   other number  -> number
//   #t / #f       -> true / false
//   symbol        -> Sym {name}

export class Sym {
  constructor(name) { this.name = name; }
}

export class Dotted {
  constructor(items, tail) {
    this.items = items;
    this.tail = tail;
  }
}

export class ReadError extends Error {}

const DELIMITERS = new Set(['(', ')', '"', ';', "'"]);
const NAMED_ESCAPES = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\x08', '"': '"', '\\': '\\', '|': '|' };

/** The one datum of `text` (surrounding whitespace allowed). */
export function readDatum(text) {
  if (typeof text !== 'string') throw new ReadError(`expected text, got ${typeof text}`);
  const r = { text, pos: 0 };
  const value = datum(r);
  skipSpace(r);
  if (r.pos < text.length) fail(r, 'unexpected text after the datum');
  return value;
}

function fail(r, what) {
  throw new ReadError(`${what} at offset ${r.pos}`);
}

function skipSpace(r) {
  while (r.pos < r.text.length && /\s/.test(r.text[r.pos])) r.pos++;
}

function datum(r) {
  // An explicit stack of open lists: deep nesting cannot overflow the JS stack.
  const stack = [];
  for (;;) {
    skipSpace(r);
    if (r.pos >= r.text.length) fail(r, stack.length ? 'unexpected end: a list is not closed' : 'no datum');
    const c = r.text[r.pos];
    let value;
    if (c === '(') {
      r.pos++;
      stack.push({ items: [], tail: undefined, dot: false, quote: false });
      continue;
    } else if (c === ')') {
      const top = stack.pop();
      if (!top || top.quote) fail(r, 'unexpected )');
      if (top.dot && top.tail === undefined) fail(r, 'missing datum after .');
      r.pos++;
      value = top.dot ? new Dotted(top.items, top.tail) : top.items;
    } else if (c === "'") {
      r.pos++;
      stack.push({ quote: true });
      continue;
    } else if (c === '"') {
      value = string(r);
    } else if (c === '|') {
      value = new Sym(barSymbol(r));
    } else {
      const start = r.pos;
      while (r.pos < r.text.length && !/\s/.test(r.text[r.pos]) && !DELIMITERS.has(r.text[r.pos])) r.pos++;
      const token = r.text.slice(start, r.pos);
      if (token === '.') {
        const top = stack[stack.length - 1];
        if (!top || top.quote || top.dot || top.items.length === 0) fail(r, 'unexpected .');
        top.dot = true;
        continue;
      }
      value = atom(r, token);
    }
    // Hand the value to the innermost open list, or return it.
    for (;;) {
      const top = stack[stack.length - 1];
      if (!top) return value;
      if (top.quote) {
        stack.pop();
        value = [new Sym('quote'), value];
        continue;
      }
      if (top.dot) {
        if (top.tail !== undefined) fail(r, 'more than one datum after .');
        top.tail = value;
      } else {
        top.items.push(value);
      }
      break;
    }
  }
}

function string(r) {
  r.pos++; // opening quote
  let out = '';
  for (;;) {
    if (r.pos >= r.text.length) fail(r, 'unexpected end: a string is not closed');
    const c = r.text[r.pos++];
    if (c === '"') return out;
    if (c !== '\\') {
      out += c;
      continue;
    }
    out += escape(r);
  }
}

function barSymbol(r) {
  r.pos++;
  let out = '';
  for (;;) {
    if (r.pos >= r.text.length) fail(r, 'unexpected end: a |symbol| is not closed');
    const c = r.text[r.pos++];
    if (c === '|') return out;
    out += c === '\\' ? escape(r) : c;
  }
}

function escape(r) {
  const e = r.text[r.pos++];
  if (e === undefined) fail(r, 'unexpected end after \\');
  if (e in NAMED_ESCAPES) return NAMED_ESCAPES[e];
  if (e === 'x' || e === 'X') {
    const end = r.text.indexOf(';', r.pos);
    const digits = end < 0 ? '' : r.text.slice(r.pos, end);
    if (!/^[0-9a-fA-F]{1,6}$/.test(digits)) fail(r, 'bad \\x escape');
    const code = parseInt(digits, 16);
    if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) fail(r, 'bad \\x escape');
    r.pos = end + 1;
    return String.fromCodePoint(code);
  }
  fail(r, `unknown escape \\${e}`);
}

function atom(r, token) {
  if (token === '#t' || token === '#true') return true;
  if (token === '#f' || token === '#false') return false;
  if (/^[+-]?\d+$/.test(token)) {
    const n = Number(token);
    return Number.isSafeInteger(n) ? n : BigInt(token);
  }
  if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(token)) return Number(token);
  if (token.startsWith('#')) fail(r, `unsupported syntax ${token}`);
  return new Sym(token);
}

/** The value under `key` in an association list with string keys, as the
 *  `arb:` procedures return them, or undefined. */
export function alistGet(alist, key) {
  if (!Array.isArray(alist)) return undefined;
  for (const entry of alist) {
    if (Array.isArray(entry) && entry[0] === key) return entry.slice(1);
    if (entry instanceof Dotted && entry.items[0] === key) {
      return entry.items.length === 1 ? entry.tail : new Dotted(entry.items.slice(1), entry.tail);
    }
  }
  return undefined;
}
