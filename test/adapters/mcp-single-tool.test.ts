// The single-tool MCP form (one tool receiving the whole PluginRequest) found without config.tool: a server whose only tool is handle_request,
// or whose only tool takes the PluginRequest's fields, gets the whole request; any other one-tool server
// is called with parameters as usual.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McpAdapter } from '../../src/adapters/mcp.js';
import { silentLogger } from '../../src/log.js';
import type { CapabilitySpec, JsonObject, PluginRequest } from '../../src/protocol/types.js';
import type { Registry } from '../../src/registry/registry.js';
import { FIXTURES, makeRegistry, mcpDescriptor, stdioConfig } from '../fixtures/mcp/harness.js';

const SERVER = join(FIXTURES, 'single-tool-server.mjs');
// What a manifest without capabilities gets: one `run` capability with an optional user_input.
const RUN: CapabilitySpec[] = [
  { id: 'run', name: 'Run', description: 'Answers', parameters: [{ name: 'user_input', type: 'string', required: false }], post_process: false },
];

let registry: Registry;
let closeDb: () => void;
let adapter: McpAdapter;

beforeEach(() => {
  ({ registry, close: closeDb } = makeRegistry());
  adapter = new McpAdapter({ registry, log: silentLogger() });
});

afterEach(async () => {
  await adapter.stop();
  closeDb();
});

async function attach(id: string, env: Record<string, string>): Promise<void> {
  const outcome = registry.register({ descriptor: mcpDescriptor(id, stdioConfig(SERVER, [], env), RUN), owner: 'api' });
  if (!outcome.ok) throw new Error('register failed');
  await adapter.attach(outcome.record);
  expect(await adapter.whenConnected(id, 15_000)).toBe(true);
}

async function call(id: string, capabilityId: string, request: Partial<PluginRequest>): Promise<JsonObject> {
  const record = registry.get(id)!;
  const capability = record.descriptor.capabilities.find((c) => c.id === capabilityId)!;
  const full: PluginRequest = { request_id: 'req-1', plugin_id: id, capability_id: capabilityId, parameters: {}, deadline: Date.now() + 10_000, ...request };
  const result = await adapter.invoke({ record, capability, request: full, signal: new AbortController().signal });
  expect(result.success, result.error).toBe(true);
  return JSON.parse(result.text ?? '{}') as JsonObject;
}

describe('MCP single-tool form without config', () => {
  it('handle_request with one object property gets {request: PluginRequest}', async () => {
    await attach('helper', { SCHEMA: 'request' });
    expect(registry.get('helper')!.descriptor.capabilities.map((c) => c.id)).toEqual(['handle_request']);
    const args = await call('helper', 'handle_request', { user_input: 'dim the lights', user_id: 'bob' });
    expect(args).toEqual({ request: expect.objectContaining({ request_id: 'req-1', user_input: 'dim the lights', user_id: 'bob' }) });
  });

  it("a {user_input, context} tool, whatever its name, gets the user's words and the recent conversation", async () => {
    await attach('asker', { SCHEMA: 'fields', TOOL_NAME: 'ask' });
    expect(registry.get('asker')!.descriptor.capabilities.map((c) => c.id)).toEqual(['ask']);
    const args = await call('asker', 'ask', { user_input: 'and tomorrow?', chat_context: 'user: weather today\nassistant: sunny' });
    expect(args).toEqual({ user_input: 'and tomorrow?', context: 'user: weather today\nassistant: sunny' });
  });

  it('a tool taking the envelope fields gets them as arguments', async () => {
    await attach('envelope', { SCHEMA: 'envelope', TOOL_NAME: 'serve' });
    const args = await call('envelope', 'serve', { user_input: 'hello', channel_name: 'kitchen' });
    expect(args).toMatchObject({ request_id: 'req-1', plugin_id: 'envelope', user_input: 'hello', channel_name: 'kitchen', parameters: {} });
  });

  it('a single ordinary tool is not the single-tool form: it gets its parameters', async () => {
    await attach('plain', { SCHEMA: 'request', TOOL_NAME: 'lookup' });
    const capability = registry.get('plain')!.descriptor.capabilities.find((c) => c.id === 'lookup')!;
    expect(capability.parameters.map((p) => p.name)).toEqual(['request']);
    const args = await call('plain', 'lookup', { parameters: { request: { q: 'x' } }, user_input: 'ignored' });
    expect(args).toEqual({ request: { q: 'x' } });
  });
});
