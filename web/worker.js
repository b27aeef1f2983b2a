// The engine's thread. It loads the wasm module and owns the one Engine of a
// session; the page never calls the engine directly, so a long evaluation can
// only ever block this worker, and the page stops it by terminating the worker.
//
// Messages from the page:
//   {type: 'eval', id, source}
//   {type: 'limits', steps, memoryBytes}
// Messages to the page:
//   {type: 'ready', limits}                 the engine is loaded
//   {type: 'result', id, result, ms}        result as returned by Engine.eval
//   {type: 'limits', limits}                limits now in force
//   {type: 'limits-error', message}
//   {type: 'crashed', id, message}          the engine itself failed; this worker is done
//   {type: 'fatal', message}                the engine could not be loaded

// Defaults for a playground: generous enough for real programs, small enough
// that a runaway loop ends on its own within seconds.
const DEFAULT_LIMITS = { steps: 50_000_000, memoryBytes: 256 * 1024 * 1024 };

let engine = null;
let broken = false;
let pendingLimits = null;

const ready = (async () => {
  let wasm;
  try {
    wasm = await import('./pkg/arbores_web.js');
    await wasm.default();
  } catch (e) {
    throw new Error(`could not load the engine module (pkg/arbores_web.js): ${describe(e)}`);
  }
  engine = new wasm.Engine();
  engine.setLimits(DEFAULT_LIMITS.steps, DEFAULT_LIMITS.memoryBytes);
  if (pendingLimits) applyLimits(pendingLimits, false);
  return wasm;
})();

ready.then(
  () => self.postMessage({ type: 'ready', limits: currentLimits() }),
  (e) => {
    broken = true;
    self.postMessage({ type: 'fatal', message: describe(e) });
  },
);

// Messages that arrive while the module loads wait for it, in order: every
// handler awaits the same promise, and its continuations run first-in first-out.
self.onmessage = async ({ data }) => {
  if (data?.type === 'limits' && !engine) {
    // Remember the latest; applied as soon as the engine exists.
    pendingLimits = data;
    return;
  }
  let wasm;
  try {
    wasm = await ready;
  } catch {
    return; // already reported as fatal
  }
  if (broken) return;
  switch (data?.type) {
    case 'eval':
      evaluate(wasm, data.id, String(data.source ?? ''));
      break;
    case 'limits':
      applyLimits(data, true);
      break;
    default:
      console.warn('worker: unknown message', data);
  }
};

function evaluate(wasm, id, source) {
  const started = performance.now();
  let result;
  try {
    result = engine.eval(source);
  } catch (e) {
    // Scheme errors come back inside the result; a throw means the engine
    // itself failed (a Rust panic aborts as "unreachable"). Its state can no
    // longer be trusted, so this worker refuses further work.
    broken = true;
    let panic = null;
    try {
      panic = wasm.panicMessage();
    } catch {
      // the module is too damaged to say more
    }
    self.postMessage({ type: 'crashed', id, message: panic || describe(e) });
    return;
  }
  self.postMessage({ type: 'result', id, result, ms: performance.now() - started });
}

function applyLimits({ steps, memoryBytes }, report) {
  try {
    engine.setLimits(Number(steps), Number(memoryBytes));
    if (report) self.postMessage({ type: 'limits', limits: currentLimits() });
  } catch (e) {
    self.postMessage({ type: 'limits-error', message: describe(e) });
  }
}

function currentLimits() {
  return { steps: engine.maxSteps, memoryBytes: engine.maxMemory };
}

function describe(e) {
  return e instanceof Error ? e.message : String(e);
}
