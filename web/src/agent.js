// Host tools as JavaScript async functions, over the engine's suspensions
// (Engine.defineTool / start / resume; docs/AGENTS.md, "The loop, in
// JavaScript"). A tool call does not block inside the engine: the
// evaluation suspends with every pending call (all the waiting branches of a
// `par` at once), these functions run them concurrently, and the
// evaluation resumes with their answers in the calls' order.

// Defines each tool of `tools` in `engine`:
//   { name: { params: ['query', ...], description: '...', run: async (query, ...) => value }, ... }
export function defineTools(engine, tools) {
  for (const [name, tool] of Object.entries(tools)) {
    if (typeof tool?.run !== 'function') throw new TypeError(`tool ${name}: run must be a function`);
    engine.defineTool({ name, params: tool.params ?? [], description: tool.description ?? '' });
  }
}

// One call's answer: the function's value as JSON (the engine reads it by
// its JSON mapping: arrays become vectors, objects association lists,
// null the symbol null), or its exception's message as an error Scheme can
// `guard`. The arguments are JSON values where each has a JSON form, else
// their `write` form (strings of Scheme text).
async function answer(tools, call) {
  const tool = tools[call.tool];
  if (!tool) return { error: `no JavaScript function answers the tool ${call.tool}` };
  const args = call.json === null ? call.args : JSON.parse(call.json);
  try {
    const value = await tool.run(...args);
    const json = JSON.stringify(value === undefined ? null : value);
    if (json === undefined) return { error: `tool ${call.tool}: its value has no JSON form` };
    return { json };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

// Evaluates `source` in `engine`, answering its tool calls with `tools`
// (the object given to defineTools) until it ends. Returns what `eval`
// returns, {value, output, error}, with the output of every run slice and
// `calls`, how many tool calls were answered.
export async function runWithTools(engine, source, tools) {
  let run = engine.start(source);
  let output = '';
  let calls = 0;
  while (run.status === 'suspended') {
    output += run.output;
    calls += run.calls.length;
    const answers = await Promise.all(run.calls.map((call) => answer(tools, call)));
    run = engine.resume(run.id, answers);
  }
  return { value: run.value, output: output + run.output, error: run.error, calls };
}
