// Builds the playground's page into web/dist/ (scripts/build-web runs it
// after wasm-bindgen has written web/dist/pkg/):
//
//   dist/index.html               with src/boot.js inlined: the first script,
//                                 it starts the worker, compiles the engine's
//                                 module, loads app.js
//   dist/app.js, dist/worker.js   the page and the engine's worker, bundled by
//                                 esbuild from src/ with their npm packages
//                                 (CodeMirror) and, in the worker, the module's
//                                 glue (pkg/arbores_web.js, then removed from
//                                 dist), minified, one copy of each
//   dist/engine.js                the engine for other JavaScript hosts: the
//                                 glue's Engine and init, and src/agent.js
//                                 (tools as async functions); not the page's,
//                                 so not kept by the service worker
//   dist/help.json                the arb: procedures' reference, read from
//                                 docs/API.md (the same source as the docs)
//   dist/docs/*.html              README.md and docs/API.md as pages
//   dist/index.html, style.css, favicon.svg
//   dist/sw.js                    the service worker, with the list of files
//                                 to keep for offline use and a version that
//                                 changes whenever one of them does
//
// Prints the size of each file, raw and gzipped.
//
//   node web/build.mjs [--check]     --check: fail if the editor bundle grows
//                                    past its budget (see EDITOR_BUDGET)

import { build } from 'esbuild';
import { marked } from 'marked';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { apiHelp } from './src/help-source.js';

const web = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(web);
const dist = path.join(web, 'dist');

function log(text) {
  process.stderr.write(`\x1b[1mbuild-web:\x1b[0m ${text}\n`);
}

function die(text) {
  log(`error: ${text}`);
  process.exit(1);
}

if (!fs.existsSync(path.join(dist, 'pkg', 'arbores_web.js'))) {
  die('web/dist/pkg/arbores_web.js is missing: scripts/build-web runs wasm-bindgen first');
}

// ---------------------------------------------------------------- bundles ---

// boot.js starts the worker and then imports app.js: kept apart, so the
// engine starts loading before the browser evaluates the editor's code, and
// inlined into index.html (below) as a classic script, which runs as soon
// as the parser reaches it.
const boot = await build({
  entryPoints: { boot: path.join(web, 'src', 'boot.js') },
  write: false,
  bundle: true,
  format: 'esm', // no import or export is left: wrapped in a function below
  minify: true,
  target: ['es2022'],
  external: ['./app.js'],
  logLevel: 'warning',
});
const result = await build({
  // engine.js is not the page's: it is the engine for other JavaScript
  // hosts (the Engine class and agent.js's tool loop).
  entryPoints: {
    app: path.join(web, 'src', 'app.js'),
    worker: path.join(web, 'src', 'worker.js'),
    engine: path.join(web, 'src', 'engine.js'),
  },
  outdir: dist,
  bundle: true,
  format: 'esm',
  minify: true,
  target: ['es2022'],
  // The worker holds the module's glue (./pkg/arbores_web.js, which
  // wasm-bindgen wrote into dist/pkg); the module itself is compiled at run
  // time from pkg/arbores_web_bg.wasm (boot.js).
  plugins: [{
    name: 'wasm-bindgen-glue',
    setup(b) {
      b.onResolve({ filter: /^\.\/pkg\/arbores_web\.js$/ }, () => ({ path: path.join(dist, 'pkg', 'arbores_web.js') }));
    },
  }],
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
});

// The glue is in worker.js now: pkg/ keeps only the module.
fs.rmSync(path.join(dist, 'pkg', 'arbores_web.js'));

// One copy of @codemirror/state: two copies break the editor ("Unrecognized
// extension value").
const stateCopies = new Set(
  Object.keys(result.metafile.inputs)
    .filter((f) => f.includes('@codemirror/state/'))
    .map((f) => f.slice(0, f.indexOf('@codemirror/state/'))),
);
if (stateCopies.size > 1) die(`the bundle holds ${stateCopies.size} copies of @codemirror/state: ${[...stateCopies].join(', ')}`);

// -------------------------------------------------------------- help data ---

const apiText = fs.readFileSync(path.join(root, 'docs', 'API.md'), 'utf8');
const help = apiHelp(apiText);
if (help.procedures.length < 15) die(`docs/API.md gave only ${help.procedures.length} procedures: has its heading format changed?`);
fs.writeFileSync(path.join(dist, 'help.json'), JSON.stringify(help));

// ------------------------------------------------------------------- docs ---

const DOCS = [
  { from: 'README.md', to: 'readme.html', title: 'Arbores' },
  { from: 'docs/API.md', to: 'api.html', title: 'The arb: API' },
];
fs.mkdirSync(path.join(dist, 'docs'), { recursive: true });
for (const doc of DOCS) {
  const body = marked.parse(fs.readFileSync(path.join(root, doc.from), 'utf8'));
  fs.writeFileSync(path.join(dist, 'docs', doc.to), `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${doc.title} · Arbores</title><link rel="stylesheet" href="../style.css"></head>
<body class="doc"><nav class="doc-nav"><a href="../">← Playground</a> · <a href="readme.html">README</a> · <a href="api.html">API reference</a></nav>
<main class="doc-body">${body}</main></body></html>
`);
}

// ----------------------------------------------------------- static files ---

for (const f of ['style.css', 'favicon.svg']) {
  fs.copyFileSync(path.join(web, f), path.join(dist, f));
}
const BOOT_TAG = '<script src="boot.js"></script>';
const indexHtml = fs.readFileSync(path.join(web, 'index.html'), 'utf8');
if (!indexHtml.includes(BOOT_TAG)) die(`web/index.html has no ${BOOT_TAG} to inline`);
const bootCode = `(()=>{${boot.outputFiles[0].text.trim()}})();`;
if (/^\s*(import|export)\b/m.test(boot.outputFiles[0].text)) die('boot.js cannot be inlined as a classic script: it has an import or export');
if (bootCode.includes('</script')) die('boot.js cannot be inlined: its code holds "</script"');
fs.writeFileSync(path.join(dist, 'index.html'), indexHtml.replace(BOOT_TAG, () => `<script>${bootCode}</script>`));

// --------------------------------------------------------- service worker ---

// Every file the page needs, relative to the page; the service worker keeps
// them so the playground opens offline after one visit.
function listFiles(dir, prefix = '') {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix + e.name;
    if (e.isDirectory()) out.push(...listFiles(path.join(dir, e.name), `${rel}/`));
    else if (rel !== 'sw.js' && rel !== 'engine.js') out.push(rel); // engine.js: not the page's
  }
  return out.sort();
}
const files = listFiles(dist);
const digest = crypto.createHash('sha256');
for (const f of files) digest.update(f).update(fs.readFileSync(path.join(dist, f)));
const version = digest.digest('hex').slice(0, 16);
const sw = fs.readFileSync(path.join(web, 'src', 'sw.js'), 'utf8')
  .replace("'__VERSION__'", JSON.stringify(version))
  .replace("['__FILES__']", JSON.stringify(['./', ...files]));
fs.writeFileSync(path.join(dist, 'sw.js'), sw);

// ------------------------------------------------------------------ sizes ---

// The editor's share of app.js: what the CodeMirror packages add.
const appOut = Object.entries(result.metafile.outputs).find(([f]) => f.endsWith('app.js'))[1];
let editorBytes = 0;
for (const [input, { bytesInOutput }] of Object.entries(appOut.inputs)) {
  if (/node_modules\/(@codemirror|@lezer|style-mod|w3c-keyname|crelt|@marijn)\//.test(input)) editorBytes += bytesInOutput;
}
const gz = (buf) => zlib.gzipSync(buf, { level: 9 }).length;
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
const rows = [...files, 'sw.js'].map((f) => {
  const buf = fs.readFileSync(path.join(dist, f));
  return { f, raw: buf.length, gz: gz(buf) };
});
for (const r of rows) log(`  ${r.f.padEnd(28)} ${kib(r.raw).padStart(11)} ${kib(r.gz).padStart(11)} gzipped`);
// The editor's gzipped share, estimated as its fraction of app.js.
const app = rows.find((r) => r.f === 'app.js');
const editorGz = Math.round(app.gz * (editorBytes / app.raw));
log(`  editor (CodeMirror) in app.js: ${kib(editorBytes)}, about ${kib(editorGz)} gzipped`);
fs.writeFileSync(path.join(dist, 'sizes.json'), JSON.stringify({ files: rows, editor: { raw: editorBytes, gzip: editorGz } }, null, 1));

const EDITOR_BUDGET = 200 * 1024;
if (process.argv.includes('--check') && editorGz > EDITOR_BUDGET) {
  die(`the editor adds ${kib(editorGz)} gzipped, over its budget of ${kib(EDITOR_BUDGET)}`);
}
log(`done: ${dist} (version ${version})`);
