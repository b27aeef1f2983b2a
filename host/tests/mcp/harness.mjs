// Starts `arbores mcp` as an MCP client would: the official TypeScript SDK's
// Client over its stdio transport, which spawns the command.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** The binary under test: ARBORES_BIN, else the release build. */
export const BIN = process.env.ARBORES_BIN ?? join(root, 'target/release/arbores');
if (!existsSync(BIN)) {
  throw new Error(`${BIN} does not exist: build it first (scripts/build)`);
}

/** A directory of its own for a test's store; removed by `cleanup`. */
export function scratch(name) {
  return mkdtempSync(join(tmpdir(), `arbores-mcp-${name}-`));
}

export function cleanup(dir) {
  rmSync(dir, { recursive: true, force: true });
}

/** Environment of every arbores this suite starts: a shared compile cache. */
function env(extra = {}) {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    ARBORES_CACHE_DIR: join(root, 'target/arbores-test-cache'),
    ...extra,
  };
}

/**
 * An MCP session with `arbores [options] mcp`; `args` are the options
 * before `mcp` (engine, store, tier, limits).
 */
export async function connect(args) {
  const transport = new StdioClientTransport({
    command: BIN,
    args: [...args, 'mcp'],
    env: env(),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const client = new Client({ name: 'arbores-tests', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    /** Calls a tool; the result as the SDK returns it. */
    call: (name, args = {}) => client.callTool({ name, arguments: args }),
    close: () => client.close(),
  };
}

/** Runs `arbores ARGS` to the end (another process on the same store). */
export function arbores(args) {
  return execFileSync(BIN, args, { env: env(), encoding: 'utf8' });
}
