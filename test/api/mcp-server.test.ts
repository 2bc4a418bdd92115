// The Core as an MCP server over streamable HTTP at /mcp: an SDK client lists and calls the plugin
// tools, gets list_changed after registry changes; bad tokens, sessions and idle timeouts.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { mcpToolName } from '../../src/api/mcp-tool-catalog.js';
import { TOKEN, capability, inlineDescriptor, startTestCore, type TestCore } from '../fixtures/mcp/core-harness.js';
import { waitFor } from '../fixtures/mcp/harness.js';

let core: TestCore | undefined;
const clients: Client[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await core?.close();
  core = undefined;
});

async function connect(url: string, token = TOKEN): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

describe('Core MCP server over streamable HTTP', () => {
  it('lists every routable capability as <plugin>__<capability> with its JSON Schemas', async () => {
    core = await startTestCore();
    const { client } = await connect(core.url);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['home__bad_weather', 'home__boom', 'home__echo', 'home__weather']);
    const echo = tools.find((t) => t.name === 'home__echo')!;
    expect(echo.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string', description: 'what to echo' } }, required: ['text'] });
    expect(echo.description).toContain('does echo');
    expect(tools.find((t) => t.name === 'home__weather')!.outputSchema).toMatchObject({ type: 'object', required: ['temperature'] });
    expect(echo.outputSchema).toBeUndefined();
  });

  it('calls go through the dispatcher: text, structuredContent, validation and plugin errors', async () => {
    core = await startTestCore();
    const { client } = await connect(core.url);
    const echo = await client.callTool({ name: 'home__echo', arguments: { text: 'hi' } });
    expect(echo).toMatchObject({ content: [{ type: 'text', text: 'echo: hi' }] });
    expect(echo.isError).toBeFalsy();
    expect(core.calls).toContainEqual({ plugin: 'home', capability: 'echo', parameters: { text: 'hi' } });

    const weather = await client.callTool({ name: 'home__weather', arguments: {} });
    expect(weather.structuredContent).toEqual({ temperature: 21, summary: 'mild' });

    const invalid = await client.callTool({ name: 'home__echo', arguments: { text: 42 } });
    expect(invalid.isError).toBe(true);
    expect(JSON.stringify(invalid.content)).toContain('invalid_params');

    const boom = await client.callTool({ name: 'home__boom', arguments: {} });
    expect(boom).toMatchObject({ isError: true, content: [{ type: 'text', text: 'the lamp is unplugged' }] });

    const badShape = await client.callTool({ name: 'home__bad_weather', arguments: {} });
    expect(badShape.isError).toBe(true);
    expect(JSON.stringify(badShape.content)).toContain('does not match its declared output schema');

    const unknown = await client.callTool({ name: 'nope__nothing', arguments: {} });
    expect(unknown.isError).toBe(true);
  });

  it('refuses a missing or wrong bearer token with 401', async () => {
    core = await startTestCore();
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const none = await fetch(`${core.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(init) });
    expect(none.status).toBe(401);
    const wrong = await fetch(`${core.url}/mcp`, { method: 'POST', headers: { ...headers, authorization: 'Bearer wrong' }, body: JSON.stringify(init) });
    expect(wrong.status).toBe(401);
    await expect(connect(core.url, 'wrong-token')).rejects.toThrow(/bearer token/);
    expect(core.routes.sessionCount()).toBe(0);
  });

  it('sends tools/list_changed to every live session when the registry changes', async () => {
    core = await startTestCore();
    const sessions = [await connect(core.url), await connect(core.url)];
    expect(core.routes.sessionCount()).toBe(2);
    const received = sessions.map(
      ({ client }) => new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve())),
    );
    // Let the clients open their standalone SSE streams, which carry notifications.
    await new Promise((r) => setTimeout(r, 200));
    core.registry.register({ descriptor: inlineDescriptor('lights', [capability('switch_on')]), owner: 'api' });
    await Promise.all(received);
    const { tools } = await sessions[0]!.client.listTools();
    expect(tools.map((t) => t.name)).toContain('lights__switch_on');

    // A stale plugin is not routable, so it is not offered.
    core.registry.setState('lights', 'stale', 'test');
    const after = await sessions[1]!.client.listTools();
    expect(after.tools.map((t) => t.name)).not.toContain('lights__switch_on');
  });

  it('long names are cut to 64 characters with a stable hash and still callable', async () => {
    core = await startTestCore();
    const pluginId = 'a-very-long-plugin-identifier-for-the-living-room-lights';
    const capabilityId = 'switch_every_single_lamp_on_at_once_please';
    core.registry.register({ descriptor: inlineDescriptor(pluginId, [capability(capabilityId)]), owner: 'api' });
    const name = mcpToolName(pluginId, capabilityId);
    expect(name.length).toBeLessThanOrEqual(64);
    expect(name).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(mcpToolName(pluginId, capabilityId)).toBe(name);
    expect(mcpToolName(pluginId, `${capabilityId}2`)).not.toBe(name);
    const { client } = await connect(core.url);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain(name);
    expect(await client.callTool({ name, arguments: {} })).toMatchObject({ content: [{ type: 'text', text: `${capabilityId} done` }] });
  });

  it('offers find_plugins when the retrieval room provides it', async () => {
    core = await startTestCore({
      findPlugins: {
        name: 'find_plugins',
        description: 'Search plugins by what they do',
        inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
        handler: async (args) => `results for ${String(args.query)}`,
      },
    });
    const { client } = await connect(core.url);
    const { tools } = await client.listTools();
    expect(tools[0]!.name).toBe('find_plugins');
    expect(await client.callTool({ name: 'find_plugins', arguments: { query: 'lamps' } })).toMatchObject({
      content: [{ type: 'text', text: 'results for lamps' }],
    });
  });

  it('one server per session; DELETE and idle timeout end sessions', async () => {
    core = await startTestCore({ idleMs: 400 });
    const first = await connect(core.url);
    await connect(core.url);
    expect(core.routes.sessionCount()).toBe(2);
    await first.transport.terminateSession();
    await waitFor(() => core!.routes.sessionCount() === 1, 2000, 'session closed by DELETE');
    await waitFor(() => core!.routes.sessionCount() === 0, 3000, 'idle sessions closed');
    const stale = await fetch(`${core.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${TOKEN}`,
        'mcp-session-id': 'gone',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(stale.status).toBe(404);
  });

  it("a token's sessions beyond its limit close, least recently used first; another user's are untouched", async () => {
    core = await startTestCore({ maxSessions: 2, userTokens: { 'token-of-bob': 'bob' } });
    const bob = await connect(core.url, 'token-of-bob');
    const first = await connect(core.url);
    const second = await connect(core.url);
    await second.client.listTools();
    await first.client.listTools();
    // A third admin session: the admin's least recently used one (second) is closed, not bob's.
    const third = await connect(core.url);
    await waitFor(() => core!.routes.sessionCount() === 3, 2000, 'sessions beyond the limit closed');
    await expect(second.client.listTools()).rejects.toThrow(/404|not found/i);
    expect((await first.client.listTools()).tools.length).toBeGreaterThan(0);
    expect((await third.client.listTools()).tools.length).toBeGreaterThan(0);
    expect((await bob.client.listTools()).tools.length).toBeGreaterThan(0);
  });
});
