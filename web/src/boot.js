// The page's first script, kept tiny: it starts the engine's worker at once,
// so the engine loads (its module downloaded and compiled, the knowledge
// base read from IndexedDB) while the browser is still busy with the
// page's own code (app.js, which brings the editor). app.js adopts the
// worker and the messages it sent meanwhile.

const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
const early = [];
worker.onmessage = (event) => early.push(event);
worker.onerror = (event) => {
  event.preventDefault();
  early.push(event);
};
window.arboresBoot = { worker, early };
import('./app.js');
