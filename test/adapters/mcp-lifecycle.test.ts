// Crashes, restarts, garbage and shutdown of stdio MCP servers: the Core keeps running and leaves no
// orphan processes.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McpAdapter } from '../../src/adapters/mcp.js';
import { silentLogger } from '../../src/log.js';
import type { JsonObject, PluginResult } from '../../src/protocol/types.js';
import type { PluginState } from '../../src/registry/record.js';
import type { Registry } from '../../src/registry/registry.js';
import { PAGED_SERVER, isAlive, makeRegistry, mcpDescriptor, referenceServerEntry, stdioConfig, waitFor } from '../fixtures/mcp/harness.js';

let registry: Registry;
let closeDb: () => void;
let adapter: McpAdapter;

beforeEach(() => {
  ({ registry, close: closeDb } = makeRegistry());
  adapter = new McpAdapter({ registry, log: silentLogger(), restart_backoff: { initial_ms: 100, max_ms: 800 }, connect_timeout_ms: 3000 });
});

afterEach(async () => {
  await adapter.stop();
  closeDb();
});

async function register(id: string, config: JsonObject): Promise<void> {
  const outcome = registry.register({ descriptor: mcpDescriptor(id, config), owner: 'api' });
  if (!outcome.ok) throw new Error('register failed');
  await adapter.attach(outcome.record);
}

function invoke(pluginId: string, capabilityId: string, parameters: JsonObject, timeoutMs = 10_000): Promise<PluginResult> {
  const record = registry.get(pluginId)!;
  const capability = record.descriptor.capabilities.find((c) => c.id === capabilityId)!;
  return adapter.invoke({
    record,
    capability,
    request: { request_id: `r${Date.now()}`, plugin_id: pluginId, capability_id: capabilityId, parameters, deadline: Date.now() + timeoutMs },
    signal: new AbortController().signal,
  });
}

describe('MCP adapter lifecycle', () => {
  it('a server killed mid-call fails the call at once, goes stale, and is online again after restart', async () => {
    await register('paged', stdioConfig(PAGED_SERVER));
    expect(await adapter.whenConnected('paged', 10_000)).toBe(true);
    const firstPid = adapter.serverPid('paged')!;
    const states: PluginState[] = [];
    registry.events.on('plugin.health', ({ record }) => {
      states.push(record.state);
    });

    const pending = invoke('paged', 'sleep', { ms: 20_000 }, 30_000);
    await new Promise((r) => setTimeout(r, 200));
    const killedAt = Date.now();
    process.kill(firstPid, 'SIGKILL');
    const result = await pending;
    expect(Date.now() - killedAt).toBeLessThan(1500);
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^MCP server paged exited \(signal SIGKILL\)/);

    await waitFor(() => states.includes('stale'), 3000, 'stale');
    expect(await adapter.whenConnected('paged', 10_000)).toBe(true);
    expect(registry.get('paged')!.state).toBe('online');
    const secondPid = adapter.serverPid('paged')!;
    expect(secondPid).not.toBe(firstPid);
    expect(await invoke('paged', 'greet', { name: 'again' })).toMatchObject({ success: true, text: expect.stringContaining('Hello, again!') });
  });

  it('a server that exits by itself mid-call: the error names its exit code', async () => {
    await register('paged', stdioConfig(PAGED_SERVER));
    expect(await adapter.whenConnected('paged', 10_000)).toBe(true);
    const result = await invoke('paged', 'crash', {});
    expect(result).toMatchObject({ success: false, error_code: 'adapter_error' });
    expect(result.error).toMatch(/^MCP server paged exited \(code 3\)/);
    expect(result.error).toContain('paged-server pid');
    expect(await adapter.whenConnected('paged', 10_000)).toBe(true);
  });

  it('restarts with growing delays while the server keeps crashing', async () => {
    await register('flaky', stdioConfig(PAGED_SERVER, [], { EXIT_AFTER_START: '1' }));
    const pids = new Set<number>();
    const until = Date.now() + 2500;
    while (Date.now() < until) {
      const pid = adapter.serverPid('flaky');
      if (pid) pids.add(pid);
      await new Promise((r) => setTimeout(r, 20));
    }
    // 100, 200, 400, 800, 800 ms delays plus start-up: a handful of restarts, not hundreds.
    expect(pids.size).toBeGreaterThanOrEqual(2);
    expect(pids.size).toBeLessThanOrEqual(8);
  });

  it('garbage lines before the handshake are skipped with a warning and the server still works', async () => {
    await register('noisy', stdioConfig(PAGED_SERVER, [], { GARBAGE: '3' }));
    expect(await adapter.whenConnected('noisy', 10_000)).toBe(true);
    expect(await invoke('noisy', 'greet', { name: 'x' })).toMatchObject({ success: true });
  });

  it('a server that only writes garbage: stale with a clear reason quoting the output; the adapter keeps working', async () => {
    await register('garbage', stdioConfig(PAGED_SERVER, [], { GARBAGE_ONLY: '1' }));
    await waitFor(
      () => registry.get('garbage')?.state === 'stale' && /not JSON-RPC|non-JSON-RPC/.test(registry.get('garbage')?.state_reason ?? ''),
      10_000,
      'garbage reason',
    );
    expect(registry.get('garbage')!.state_reason).toContain('Welcome to the garbage server!');
    await register('paged', stdioConfig(PAGED_SERVER));
    expect(await adapter.whenConnected('paged', 10_000)).toBe(true);
  });

  it('stop() ends every server process (including ones started through a shell wrapper)', async () => {
    await register('paged', stdioConfig(PAGED_SERVER));
    await register('everything', stdioConfig(referenceServerEntry('server-everything'), ['stdio']));
    // A wrapper that forks the real server as a grandchild, as npx does.
    await register('wrapped', { transport: 'stdio', command: '/bin/sh', args: ['-c', `"${process.execPath}" "${PAGED_SERVER}"; echo done >&2`] });
    for (const id of ['paged', 'everything', 'wrapped']) expect(await adapter.whenConnected(id, 15_000)).toBe(true);
    const pids = ['paged', 'everything', 'wrapped'].map((id) => adapter.serverPid(id)!);
    const grandchild = await findChildPid(adapter.serverPid('wrapped')!);
    expect(grandchild).toBeDefined();
    await adapter.stop();
    for (const pid of [...pids, grandchild!]) expect(isAlive(pid), `pid ${pid} still alive`).toBe(false);
  });

  it('detach() stops the server of that plugin only', async () => {
    await register('a', stdioConfig(PAGED_SERVER));
    await register('b', stdioConfig(PAGED_SERVER));
    expect(await adapter.whenConnected('a', 10_000)).toBe(true);
    expect(await adapter.whenConnected('b', 10_000)).toBe(true);
    const pidA = adapter.serverPid('a')!;
    await adapter.detach(registry.get('a')!);
    expect(isAlive(pidA)).toBe(false);
    expect(await invoke('b', 'greet', { name: 'b' })).toMatchObject({ success: true });
  });
});

async function findChildPid(parent: number): Promise<number | undefined> {
  const { readdirSync, readFileSync } = await import('node:fs');
  for (let attempt = 0; attempt < 50; attempt += 1) {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (ppid === parent) return Number(entry);
      } catch {
        // process went away while reading
      }
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return undefined;
}
