// The engine for JavaScript hosts other than the playground, built into
// web/dist/engine.js: the Engine class (wasm-bindgen's glue) and the tool
// loop of agent.js. The module itself is web/dist/pkg/arbores_web_bg.wasm;
// give its place or bytes to init:
//
//   import init, { Engine, defineTools, runWithTools } from './engine.js';
//   await init({ module_or_path: new URL('./pkg/arbores_web_bg.wasm', import.meta.url) });
//
// docs/AGENTS.md, "The loop, in JavaScript", shows the whole loop.

export { default, initSync, Engine } from './pkg/arbores_web.js';
export { defineTools, runWithTools } from './agent.js';
