// The MCP adapter against real MCP servers (stdio): tool listing into capabilities, pagination,
// calls, isError, list_changed, the single-tool form and odd tool names.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McpAdapter } from '../../src/adapters/mcp.js';
import type { AdapterCall } from '../../src/adapters/adapter.js';
import { silentLogger } from '../../src/log.js';
import type { JsonObject, PluginResult } from '../../src/protocol/types.js';
import type { Registry } from '../../src/registry/registry.js';
import { PAGED_SERVER, makeRegistry, mcpDescriptor, referenceServerEntry, stdioConfig, waitFor } from '../fixtures/mcp/harness.js';

let registry: Registry;
let closeDb: () => void;
let adapter: McpAdapter;

beforeEach(() => {
  ({ registry, close: closeDb } = makeRegistry());
  adapter = new McpAdapter({ registry, log: silentLogger(), restart_backoff: { initial_ms: 100, max_ms: 1000 } });
});

afterEach(async () => {
  await adapter.stop();
  closeDb();
});

async function attach(id: string, config: JsonObject, capabilities = mcpDescriptor(id, config).capabilities): Promise<void> {
  const outcome = registry.register({ descriptor: mcpDescriptor(id, config, capabilities), owner: 'api' });
  if (!outcome.ok) throw new Error('register failed');
  await adapter.attach(outcome.record);
  expect(await adapter.whenConnected(id, 15_000)).toBe(true);
}

function invoke(
  pluginId: string,
  capabilityId: string,
  parameters: JsonObject,
  timeoutMs = 10_000,
  signal = new AbortController().signal,
): Promise<PluginResult> {
  const record = registry.get(pluginId);
  if (!record) throw new Error(`no record ${pluginId}`);
  const capability = record.descriptor.capabilities.find((c) => c.id === capabilityId) ?? {
    id: capabilityId,
    name: capabilityId,
    description: capabilityId,
    parameters: [],
    post_process: false,
  };
  const call: AdapterCall = {
    record,
    capability,
    request: {
      request_id: `req-${Math.random().toString(36).slice(2)}`,
      plugin_id: pluginId,
      capability_id: capabilityId,
      parameters,
      deadline: Date.now() + timeoutMs,
    },
    signal,
  };
  return adapter.invoke(call);
}

describe('MCP adapter: server-everything over stdio', () => {
  it('lists its tools into capabilities, keeps user fields, and calls echo, get-sum and structured content', async () => {
    await attach('everything', stdioConfig(referenceServerEntry('server-everything'), ['stdio']));
    const record = registry.get('everything')!;
    expect(record.state).toBe('online');
    expect(record.descriptor.examples).toEqual(['an example utterance kept across re-registration']);
    const ids = record.descriptor.capabilities.map((c) => c.id);
    expect(ids).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-structured-content']));
    const echo = record.descriptor.capabilities.find((c) => c.id === 'echo')!;
    expect(echo.name).toBe('Echo Tool');
    expect(echo.description).toBe('Echoes back the input string');
    expect(echo.parameters).toEqual(
      [{ name: 'message', type: 'string', required: true, description: 'Message to echo' }].map((p) =>
        expect.objectContaining({ name: p.name, type: p.type, required: p.required }),
      ),
    );
    expect(echo.input_schema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } }, required: ['message'] });
    const structured = record.descriptor.capabilities.find((c) => c.id === 'get-structured-content')!;
    expect(structured.output_schema).toMatchObject({ type: 'object', properties: { temperature: { type: 'number' } } });

    const echoed = await invoke('everything', 'echo', { message: 'hi there' });
    expect(echoed).toMatchObject({ success: true, text: 'Echo: hi there' });
    const sum = await invoke('everything', 'get-sum', { a: 2, b: 40 });
    expect(sum.text).toContain('42');
    const weather = await invoke('everything', 'get-structured-content', { location: 'Chicago' });
    expect(weather.success).toBe(true);
    expect(weather.data).toMatchObject({ temperature: expect.any(Number), conditions: expect.any(String) });
  });

  it('turns a tool error (bad arguments) into success:false with the text', async () => {
    await attach('everything', stdioConfig(referenceServerEntry('server-everything'), ['stdio']));
    const result = await invoke('everything', 'get-sum', { a: 'not a number' });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/a|b|number|invalid/i);
  });
});

describe('MCP adapter: fixture server', () => {
  it('follows nextCursor across every page and maps odd names to legal capability ids', async () => {
    await attach('paged', stdioConfig(PAGED_SERVER));
    const caps = registry.get('paged')!.descriptor.capabilities;
    expect(caps).toHaveLength(8);
    const odd = caps.find((c) => c.name === 'Weather today')!;
    expect(odd.id).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(odd.id).not.toBe('weather.today/v2');
    const result = await invoke('paged', odd.id, { city: 'Oslo' });
    expect(result).toMatchObject({ success: true, text: 'sunny in Oslo' });
  });

  it('joins text parts, reports isError as a failure, and gives structuredContent as data', async () => {
    await attach('paged', stdioConfig(PAGED_SERVER));
    expect(await invoke('paged', 'greet', { name: 'Ada' })).toMatchObject({ success: true, text: 'Hello, Ada!\nNice day.' });
    const failed = await invoke('paged', 'fail', {});
    expect(failed).toMatchObject({ success: false, error: 'this tool always fails' });
    expect(await invoke('paged', 'structured', { n: 21 })).toMatchObject({ success: true, data: { doubled: 42 } });
    expect(await adapter.health(registry.get('paged')!)).toEqual({ ok: true, detail: '8 tools' });
  });

  it('re-lists on tools/list_changed and updates the registry descriptor', async () => {
    await attach('paged', stdioConfig(PAGED_SERVER));
    const updated = new Promise<string[]>((resolve) => {
      registry.events.on('plugin.updated', ({ record }) => resolve(record.descriptor.capabilities.map((c) => c.id)));
    });
    expect((await invoke('paged', 'add-tool', { name: 'brand_new' })).success).toBe(true);
    expect(await updated).toContain('brand_new');
    expect(await invoke('paged', 'brand_new', {})).toMatchObject({ success: true, text: 'ran brand_new' });
  });

  it('times out a call at the deadline with error_code timeout', async () => {
    await attach('paged', stdioConfig(PAGED_SERVER));
    const started = Date.now();
    const result = await invoke('paged', 'sleep', { ms: 5000 }, 400);
    expect(result).toMatchObject({ success: false, error_code: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('single-tool form: one capability, and the whole PluginRequest goes to the tool', async () => {
    const config = { ...stdioConfig(PAGED_SERVER), tool: 'handle_request' };
    await attach('single', config, [
      {
        id: 'handle_request',
        name: 'Handle',
        description: 'Answers anything',
        parameters: [{ name: 'question', type: 'string', required: false }],
        post_process: true,
      },
    ]);
    const caps = registry.get('single')!.descriptor.capabilities;
    expect(caps.map((c) => c.id)).toEqual(['handle_request']);
    expect(caps[0]).toMatchObject({ description: 'Answers anything', post_process: true });
    const result = await invoke('single', 'handle_request', { question: 'why?' });
    expect(result.success).toBe(true);
    const sent = JSON.parse(result.text!) as { request: { parameters: JsonObject; plugin_id: string; deadline: number } };
    expect(sent.request).toMatchObject({ plugin_id: 'single', parameters: { question: 'why?' } });
    expect(typeof sent.request.deadline).toBe('number');
  });

  it('a missing binary leaves the plugin stale with "command not found"', async () => {
    const outcome = registry.register({ descriptor: mcpDescriptor('ghost', { transport: 'stdio', command: 'no-such-binary-xyz' }), owner: 'api' });
    if (!outcome.ok) throw new Error('register failed');
    await adapter.attach(outcome.record);
    await waitFor(() => registry.get('ghost')?.state === 'stale', 5000, 'stale state');
    expect(registry.get('ghost')!.state_reason).toContain('command not found: no-such-binary-xyz');
    const result = await invoke('ghost', 'anything', {}, 300);
    expect(result.success).toBe(false);
  });

  it('an invalid config puts the plugin in error state with the reason', async () => {
    const outcome = registry.register({ descriptor: mcpDescriptor('broken', { transport: 'carrier-pigeon' }), owner: 'api' });
    if (!outcome.ok) throw new Error('register failed');
    await adapter.attach(outcome.record);
    expect(registry.get('broken')).toMatchObject({ state: 'error' });
    expect(registry.get('broken')!.state_reason).toMatch(/config\.transport/);
  });
});

describe('MCP adapter through the dispatcher', () => {
  it('a registered mcp plugin is attached, listed and invoked by Dispatcher.invoke', async () => {
    const { Dispatcher } = await import('../../src/dispatch/dispatcher.js');
    const { AdapterAttachments } = await import('../../src/adapters/adapter-attachments.js');
    const log = silentLogger();
    const dispatcher = new Dispatcher({
      registry,
      adapters: [adapter],
      config: { default_timeout_sec: 10, default_max_concurrency: 4, default_queue_limit: 16 },
      log,
    });
    const attachments = new AdapterAttachments({ registry, adapters: new Map([['mcp', adapter]]), log });
    attachments.start();
    try {
      registry.register({ descriptor: mcpDescriptor('everything', stdioConfig(referenceServerEntry('server-everything'), ['stdio'])), owner: 'api' });
      await waitFor(
        () => registry.get('everything')?.state === 'online' && registry.get('everything')!.descriptor.capabilities.length > 5,
        15_000,
        'online with tools',
      );
      const result = await dispatcher.invoke({ plugin_id: 'everything', capability_id: 'get-sum', parameters: { a: 20, b: 22 } });
      expect(result).toMatchObject({ success: true, text: 'The sum of 20 and 22 is 42.' });
      const invalid = await dispatcher.invoke({ plugin_id: 'everything', capability_id: 'get-sum', parameters: { a: 'x' } });
      expect(invalid).toMatchObject({ success: false, error_code: 'invalid_params' });
    } finally {
      attachments.stop();
    }
  });
});
