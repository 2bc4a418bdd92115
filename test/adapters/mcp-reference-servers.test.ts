// The MCP adapter against the reference servers from npm: filesystem and memory over stdio,
// server-everything over streamable HTTP and SSE (including a server restart).
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McpAdapter } from '../../src/adapters/mcp.js';
import { silentLogger } from '../../src/log.js';
import type { JsonObject, PluginResult } from '../../src/protocol/types.js';
import type { Registry } from '../../src/registry/registry.js';
import { freePort, makeRegistry, mcpDescriptor, referenceServerEntry, startEverythingHttp, stdioConfig, stopChild, waitFor } from '../fixtures/mcp/harness.js';

let registry: Registry;
let closeDb: () => void;
let adapter: McpAdapter;
let tempDir: string;
const children: ChildProcess[] = [];

beforeEach(() => {
  ({ registry, close: closeDb } = makeRegistry());
  adapter = new McpAdapter({ registry, log: silentLogger(), restart_backoff: { initial_ms: 100, max_ms: 500 }, connect_timeout_ms: 5000 });
  tempDir = mkdtempSync(join(tmpdir(), 'homeclaw-mcp-'));
});

afterEach(async () => {
  await adapter.stop();
  for (const child of children.splice(0)) await stopChild(child);
  closeDb();
  rmSync(tempDir, { recursive: true, force: true });
});

async function register(id: string, config: JsonObject): Promise<void> {
  const outcome = registry.register({ descriptor: mcpDescriptor(id, config), owner: 'api' });
  if (!outcome.ok) throw new Error('register failed');
  await adapter.attach(outcome.record);
  expect(await adapter.whenConnected(id, 15_000)).toBe(true);
}

function invoke(pluginId: string, capabilityId: string, parameters: JsonObject, timeoutMs = 10_000): Promise<PluginResult> {
  const record = registry.get(pluginId)!;
  const capability = record.descriptor.capabilities.find((c) => c.id === capabilityId);
  if (!capability) throw new Error(`${pluginId} has no capability ${capabilityId}: ${record.descriptor.capabilities.map((c) => c.id).join(', ')}`);
  return adapter.invoke({
    record,
    capability,
    request: { request_id: `r${Date.now()}`, plugin_id: pluginId, capability_id: capabilityId, parameters, deadline: Date.now() + timeoutMs },
    signal: new AbortController().signal,
  });
}

describe('server-filesystem (stdio)', () => {
  it('reads and writes files inside the allowed directory and refuses outside it', async () => {
    writeFileSync(join(tempDir, 'hello.txt'), 'hello from disk');
    await register('files', stdioConfig(referenceServerEntry('server-filesystem'), [tempDir]));
    const read = await invoke('files', 'read_text_file', { path: join(tempDir, 'hello.txt') });
    expect(read).toMatchObject({ success: true, text: 'hello from disk', data: { content: 'hello from disk' } });
    const written = await invoke('files', 'write_file', { path: join(tempDir, 'new.txt'), content: 'written via MCP' });
    expect(written.success).toBe(true);
    expect(readFileSync(join(tempDir, 'new.txt'), 'utf8')).toBe('written via MCP');
    const outside = await invoke('files', 'read_text_file', { path: '/etc/hostname' });
    expect(outside.success).toBe(false);
    expect(outside.error).toMatch(/denied|outside|not allowed/i);
  });
});

describe('server-memory (stdio)', () => {
  it('creates entities and reads them back from the graph', async () => {
    const memoryFile = join(tempDir, 'memory.jsonl');
    await register('memory', stdioConfig(referenceServerEntry('server-memory'), [], { MEMORY_FILE_PATH: memoryFile }));
    const created = await invoke('memory', 'create_entities', {
      entities: [{ name: 'Kitchen lamp', entityType: 'device', observations: ['is blue'] }],
    });
    expect(created.success).toBe(true);
    const graph = await invoke('memory', 'read_graph', {});
    expect(graph.success).toBe(true);
    expect(graph.data).toMatchObject({ entities: [{ name: 'Kitchen lamp', entityType: 'device', observations: ['is blue'] }] });
    expect(readFileSync(memoryFile, 'utf8')).toContain('Kitchen lamp');
  });
});

describe('server-everything over HTTP transports', () => {
  it('streamable HTTP: lists and calls tools; a server restart makes the plugin stale then online again', async () => {
    const port = await freePort();
    children.push(await startEverythingHttp('streamableHttp', port));
    await register('everything-http', { transport: 'streamable-http', url: `http://127.0.0.1:${port}/mcp` });
    expect(await invoke('everything-http', 'echo', { message: 'over http' })).toMatchObject({ success: true, text: 'Echo: over http' });

    const pending = invoke('everything-http', 'trigger-long-running-operation', { duration: 20, steps: 2 }, 30_000);
    await new Promise((r) => setTimeout(r, 300));
    await stopChild(children.pop()!);
    const failed = await pending;
    expect(failed.success).toBe(false);
    await waitFor(() => registry.get('everything-http')?.state === 'stale', 10_000, 'stale after the server died');

    children.push(await startEverythingHttp('streamableHttp', port));
    expect(await adapter.whenConnected('everything-http', 15_000)).toBe(true);
    expect(registry.get('everything-http')!.state).toBe('online');
    expect(await invoke('everything-http', 'get-sum', { a: 1, b: 2 })).toMatchObject({ success: true });
  });

  it('SSE: lists and calls tools', async () => {
    const port = await freePort();
    children.push(await startEverythingHttp('sse', port));
    await register('everything-sse', { transport: 'sse', url: `http://127.0.0.1:${port}/sse` });
    expect(registry.get('everything-sse')!.descriptor.capabilities.map((c) => c.id)).toContain('echo');
    expect(await invoke('everything-sse', 'echo', { message: 'over sse' })).toMatchObject({ success: true, text: 'Echo: over sse' });
  });
});
