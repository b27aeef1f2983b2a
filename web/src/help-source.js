// Reads the reference of the arb: procedures out of docs/API.md, so the
// page's help says exactly what the documentation says (and what the test
// suite runs: every example there is checked by core/tests/api_doc.rs).
// Used at build time by web/build.mjs; the page loads the result as
// help.json.
//
// A procedure is a heading "### `(arb:NAME ARGS...)` — TIER" (or
// "— special form, TIER"); its summary is the first paragraph under it, its
// example the first form of its first ```scheme block with the lines
// ";; => ..." that follow that form.

const HEADING = /^### `\((arb:[^\s)]+)([^`]*)\)` — (.+)$/;

/** `{procedures: [{name, signature, tier, special, section, summary, example, result}]}` */
export function apiHelp(markdown) {
  const lines = markdown.split('\n');
  const procedures = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith('## ')) {
      section = line.slice(3).trim();
      continue;
    }
    const m = HEADING.exec(line);
    if (!m) continue;
    const [, name, args, tail] = m;
    const special = tail.includes('special form');
    const tier = (/\bT[0-2]\b/.exec(tail) ?? [''])[0];
    let j = i + 1;
    const body = [];
    while (j < lines.length && !lines[j].startsWith('#')) body.push(lines[j++]);
    procedures.push({
      name,
      signature: `(${name}${args})`,
      tier,
      special,
      section,
      summary: firstParagraph(body),
      ...firstExample(body),
    });
  }
  return { procedures };
}

function firstParagraph(body) {
  const out = [];
  for (const line of body) {
    if (line.startsWith('```')) break;
    if (!line.trim()) {
      if (out.length) break;
      continue;
    }
    out.push(line.trim());
  }
  return out.join(' ');
}

// The first form of the first scheme block (the lines up to the first
// ";; =>" or ";; prints:" or blank line) and what the block says it gives.
function firstExample(body) {
  const start = body.findIndex((l) => l.startsWith('```scheme'));
  if (start < 0) return { example: null, result: null };
  const form = [];
  const result = [];
  for (let k = start + 1; k < body.length && !body[k].startsWith('```'); k++) {
    const l = body[k];
    if (l.startsWith(';;')) {
      result.push(l.replace(/^;; ?(=> ?|prints: ?)?/, ''));
      continue;
    }
    if (result.length || (!l.trim() && form.length)) break;
    if (l.trim()) form.push(l);
  }
  return { example: form.join('\n') || null, result: result.join('\n').trim() || null };
}
