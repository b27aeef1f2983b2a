// The page's first script, kept tiny and inlined at the top of index.html
// by the build (web/build.mjs), so it runs as soon as the page's first
// bytes are parsed: it starts the engine's worker and compiles the
// engine's wasm module at once, then loads the page's own code (app.js,
// which brings the editor; index.html preloads it) once the page is
// parsed. app.js adopts the worker, the compiled module (for the workers
// that replace a stopped one) and the messages the worker sent meanwhile.
//
// The module is compiled here rather than in the worker because a worker
// takes 100-300 ms to start: its bytes are fetched and compiled meanwhile
// (streaming) and handed to the worker as a WebAssembly.Module.

import { ToWorker } from './protocol.js';

const base = document.baseURI;
const worker = new Worker(new URL('worker.js', base), { type: 'module' });
const early = [];
worker.onmessage = (event) => early.push(event);
worker.onerror = (event) => {
  event.preventDefault();
  early.push(event);
};
// null when it cannot be compiled here: the worker then loads it itself and
// reports what went wrong.
const module = (async () => {
  try {
    return await WebAssembly.compileStreaming(fetch(new URL('pkg/arbores_web_bg.wasm', base)));
  } catch {
    return null;
  }
})();
module.then((m) => worker.postMessage({ type: ToWorker.MODULE, module: m }));
window.arboresBoot = { worker, early, module };
if (document.readyState === 'loading') {
  document.addEventListener('DOMContentLoaded', () => import('./app.js'), { once: true });
} else {
  import('./app.js');
}
