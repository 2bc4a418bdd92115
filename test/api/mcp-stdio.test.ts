// `homeclaw mcp`: the compiled stdio entry proxies to a running Core's /mcp over streamable HTTP.
// Also the real MCP Inspector CLI against it and against /mcp directly.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { proxySettingsFromEnv } from '../../src/api/mcp-stdio.js';
import { TOKEN, capability, ensureBuilt, inlineDescriptor, startTestCore, type TestCore } from '../fixtures/mcp/core-harness.js';
import { isAlive, waitFor } from '../fixtures/mcp/harness.js';

const run = promisify(execFile);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
let entry: string;
let core: TestCore | undefined;
const clients: Client[] = [];

beforeAll(async () => {
  entry = await ensureBuilt();
}, 120_000);

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  await core?.close();
  core = undefined;
});

async function startProxy(url: string, token = TOKEN): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [entry],
    env: { HOMECLAW_URL: url, HOMECLAW_ADMIN_TOKEN: token, HOMECLAW_LOG_LEVEL: 'warn' },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'desktop-client', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

describe('homeclaw mcp (stdio proxy to the Core)', () => {
  it('lists and calls the Core tools, forwards list_changed, and exits when stdin closes', async () => {
    core = await startTestCore();
    const { client, transport } = await startProxy(core.url);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('home__echo');
    expect(tools.find((t) => t.name === 'home__weather')!.outputSchema).toMatchObject({ type: 'object' });
    expect(await client.callTool({ name: 'home__echo', arguments: { text: 'via stdio' } })).toMatchObject({
      content: [{ type: 'text', text: 'echo: via stdio' }],
    });
    expect((await client.callTool({ name: 'home__weather', arguments: {} })).structuredContent).toEqual({ temperature: 21, summary: 'mild' });
    expect(await client.callTool({ name: 'home__boom', arguments: {} })).toMatchObject({ isError: true });
    expect(core.routes.sessionCount()).toBe(1);

    const changed = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
    await new Promise((r) => setTimeout(r, 200));
    core.registry.register({ descriptor: inlineDescriptor('garden', [capability('water')]), owner: 'api' });
    await changed;
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('garden__water');

    const pid = transport.pid!;
    await client.close();
    await waitFor(() => !isAlive(pid), 5000, 'proxy exit');
    // The proxy ended its Core session on the way out.
    await waitFor(() => core!.routes.sessionCount() === 0, 3000, 'upstream session closed');
  });

  it('survives a Core restart: the next call reconnects and the client is told to re-list', async () => {
    core = await startTestCore();
    const port = Number(new URL(core.url).port);
    const { client } = await startProxy(core.url);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await core.close();
    core = await startTestCore({ port });
    core.registry.register({ descriptor: inlineDescriptor('after', [capability('restart')]), owner: 'api' });
    const changed = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
    expect(await client.callTool({ name: 'after__restart', arguments: {} })).toMatchObject({ content: [{ type: 'text', text: 'restart done' }] });
    await changed;
  });

  it('a wrong token gives the client a clear error instead of tools', async () => {
    core = await startTestCore();
    const { client } = await startProxy(core.url, 'wrong-token-wrong-token');
    await expect(client.listTools()).rejects.toThrow(/bearer token|401/);
  });

  it('reads the token from <data dir>/admin.token when HOMECLAW_ADMIN_TOKEN is not set', () => {
    const dir = mkdtempSync(join(tmpdir(), 'homeclaw-token-'));
    try {
      writeFileSync(join(dir, 'admin.token'), 'token-from-file-123456\n');
      expect(proxySettingsFromEnv({ HOMECLAW_DATA_DIR: dir, HOMECLAW_URL: 'http://127.0.0.1:1' }, '/')).toEqual({
        url: 'http://127.0.0.1:1',
        token: 'token-from-file-123456',
      });
      expect(proxySettingsFromEnv({ HOMECLAW_DATA_DIR: join(dir, 'missing') }, '/')).toMatchObject({ error: expect.stringContaining('HOMECLAW_ADMIN_TOKEN') });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// The real MCP Inspector CLI. MCP_INSPECTOR_BIN may point at an install outside the project.
const inspectorBin = process.env.MCP_INSPECTOR_BIN ?? join(ROOT, 'node_modules', '.bin', 'mcp-inspector');
const haveInspector = existsSync(inspectorBin);
if (!haveInspector) {
  console.warn(`SKIPPED: MCP Inspector CLI tests: ${inspectorBin} not found (add @modelcontextprotocol/inspector as a devDependency)`);
}

describe.skipIf(!haveInspector)('MCP Inspector CLI', () => {
  const inspect = async (args: string[]): Promise<unknown> => {
    const { stdout } = await run(inspectorBin, ['--cli', ...args], { timeout: 60_000 });
    return JSON.parse(stdout.slice(stdout.indexOf('{')));
  };

  it('lists and calls tools through `homeclaw mcp` (stdio)', async () => {
    core = await startTestCore();
    // -e: newer Inspector versions do not pass their own environment to the server they start.
    const server = ['-e', `HOMECLAW_URL=${core.url}`, '-e', `HOMECLAW_ADMIN_TOKEN=${TOKEN}`, process.execPath, entry];
    const listed = (await inspect([...server, '--method', 'tools/list'])) as { tools: { name: string }[] };
    expect(listed.tools.map((t) => t.name)).toContain('home__echo');
    const called = await inspect([...server, '--method', 'tools/call', '--tool-name', 'home__echo', '--tool-arg', 'text=inspected']);
    expect(called).toMatchObject({ content: [{ type: 'text', text: 'echo: inspected' }] });
  });

  it('lists and calls tools on /mcp over streamable HTTP with the bearer header', async () => {
    core = await startTestCore();
    const base = [`${core.url}/mcp`, '--transport', 'http', '--header', `Authorization: Bearer ${TOKEN}`];
    const listed = (await inspect([...base, '--method', 'tools/list'])) as { tools: { name: string }[] };
    expect(listed.tools.map((t) => t.name)).toContain('home__weather');
    const called = await inspect([...base, '--method', 'tools/call', '--tool-name', 'home__echo', '--tool-arg', 'text=direct']);
    expect(called).toMatchObject({ content: [{ type: 'text', text: 'echo: direct' }] });
  });
});
