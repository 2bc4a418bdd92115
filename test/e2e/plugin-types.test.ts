// Plugin types end to end on the REAL Core: one external plugin of each type (http, subprocess, mcp) registered
// through the HTTP API and the compiled CLI, listed, health-checked, invoked, seen by MCP clients of the
// Core, kept across a restart and unregistered; the shipped built-ins through the full Core; bad input
// over the HTTP API; no orphan processes once the Core stops.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import type { PluginResult } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { isAlive } from '../adapters/helpers.js';
import { REPO_ROOT, SHIPPED_PLUGINS_DIR, ensureBuilt } from './helpers.js';

const require = createRequire(import.meta.url);
const CLI = join(REPO_ROOT, 'dist', 'src', 'cli.js');
const EVERYTHING = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
const LIVENESS = { health_poll_sec: 0.2, health_failure_threshold: 2 };

// ---- helpers ------------------------------------------------------------------------------------

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(core: TestCore, ...args: string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, HOMECLAW_URL: core.httpUrl, HOMECLAW_ADMIN_TOKEN: core.adminToken }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 99) : 0;
        resolve({ code, stdout: stdout.trim(), stderr: stderr.trim() });
      },
    );
  });
}

/** Live children of this (test) process whose command line contains `needle`. */
function childPids(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid || !isAlive(Number(entry))) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const stateOf = (core: TestCore, id: string): string | undefined => core.ctx.registry.get(id)?.state;
const capabilitiesOf = (core: TestCore, id: string): string[] => core.ctx.registry.get(id)?.descriptor.capabilities.map((c) => c.id) ?? [];

// ---- the plugins --------------------------------------------------------------------------------

let root: string;
let pluginServer: Server;
let pluginPort: number;
let pluginBase: string;
const served: string[] = [];

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => resolve(body));
  });
}

/** The http plugin: POST /run takes a PluginRequest, GET /add is a REST capability, GET /health. */
function startPluginServer(port = 0): Promise<void> {
  pluginServer = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    served.push(`${req.method} ${url.pathname}`);
    if (url.pathname === '/health') return void res.end('ok');
    if (req.method === 'GET' && url.pathname === '/add') {
      return void res.end(`sum=${Number(url.searchParams.get('a')) + Number(url.searchParams.get('b'))}`);
    }
    if (req.method === 'POST' && url.pathname === '/run') {
      void readBody(req).then((text) => {
        const request = JSON.parse(text) as { capability_id: string; parameters: Record<string, unknown> };
        res.setHeader('content-type', 'application/json');
        if (request.capability_id === 'scale') return res.end(JSON.stringify({ success: true, text: `scaled ${Number(request.parameters['factor']) * 2}` }));
        res.end(JSON.stringify({ success: true, text: `Hello, ${String(request.parameters['name'])}!` }));
      });
      return;
    }
    res.statusCode = 404;
    res.end('no such route');
  });
  return new Promise((resolve) => pluginServer.listen(port, '127.0.0.1', () => resolve()));
}

async function stopPluginServer(): Promise<void> {
  pluginServer.closeAllConnections();
  await new Promise((r) => pluginServer.close(r));
}

const SHOUT_SCRIPT = `import { writeFileSync } from 'node:fs';
let input = '';
process.stdin.on('data', (c) => (input += c));
process.stdin.on('end', () => {
  const request = JSON.parse(input);
  if (request.capability_id === 'fail') { process.stderr.write('the megaphone is broken'); process.exit(3); }
  if (request.capability_id === 'linger') { writeFileSync(process.argv[2], String(process.pid)); setInterval(() => {}, 1000); return; }
  process.stdout.write(JSON.stringify({ success: true, text: String(request.parameters.text).toUpperCase() }));
});
`;

function httpDescriptor(): Record<string, unknown> {
  return {
    id: 'greeter',
    name: 'Greeter',
    description: 'Greets people and adds numbers over HTTP.',
    version: '1.2.0',
    type: 'http',
    health_check_url: `${pluginBase}/health`,
    config: { base_url: pluginBase, api_key: 'super-secret-key' },
    capabilities: [
      {
        id: 'hello',
        name: 'Hello',
        description: 'Says hello to someone.',
        parameters: [{ name: 'name', type: 'string', required: true, description: 'who to greet' }],
      },
      {
        id: 'add',
        name: 'Add',
        description: 'Adds two numbers.',
        method: 'GET',
        path: '/add',
        parameters: [
          { name: 'a', type: 'number', required: true },
          { name: 'b', type: 'number', required: true },
        ],
      },
    ],
  };
}

function subprocessDescriptor(): Record<string, unknown> {
  return {
    id: 'shout',
    name: 'Shout',
    description: 'Repeats text in capitals from a small script.',
    type: 'subprocess',
    config: { command: process.execPath, args: [join(root, 'shout.mjs'), join(root, 'linger.pid')], timeout_sec: 30 },
    capabilities: [
      { id: 'say', name: 'Say', description: 'Shouts the text.', parameters: [{ name: 'text', type: 'string', required: true }] },
      { id: 'fail', name: 'Fail', description: 'Always fails.', parameters: [] },
      { id: 'linger', name: 'Linger', description: 'Never answers.', parameters: [] },
    ],
  };
}

function mcpDescriptor(): Record<string, unknown> {
  return {
    id: 'everything',
    name: 'Everything',
    description: 'The MCP reference server with every feature.',
    type: 'mcp',
    config: { transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] },
  };
}

/** ForgeSyte dialect with a draft-07 tagged input schema the Core must keep (minimum) but read as 2020-12. */
function forgeSyteDescriptor(): Record<string, unknown> {
  return {
    name: 'scaler',
    description: 'Scales numbers.',
    version: '0.3.0',
    type: 'http',
    health_check_url: `${pluginBase}/health`,
    config: { base_url: pluginBase },
    tools: {
      scale: {
        description: 'Doubles a non-negative factor.',
        input_schema: {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          properties: { factor: { type: 'number', minimum: 0 } },
          required: ['factor'],
        },
        output_schema: {},
      },
    },
  };
}

// ---- external plugins ---------------------------------------------------------------------------

describe('external plugins (http, subprocess, mcp) on the real Core', () => {
  let core: TestCore;
  let dataDir: string;
  let mcpPidsBeforeRestart: number[] = [];

  beforeAll(async () => {
    await ensureBuilt();
    root = mkdtempSync(join(tmpdir(), 'homeclaw-e2e-types-'));
    await startPluginServer();
    pluginPort = (pluginServer.address() as AddressInfo).port;
    pluginBase = `http://127.0.0.1:${pluginPort}`;
    writeFileSync(join(root, 'shout.mjs'), SHOUT_SCRIPT);
    writeFileSync(join(root, 'greeter.yaml'), toYaml(httpDescriptor()));
    writeFileSync(join(root, 'shout.json'), JSON.stringify(subprocessDescriptor(), null, 2));
    writeFileSync(join(root, 'everything.yaml'), toYaml(mcpDescriptor()));
    core = await startTestCore({ overrides: { liveness: LIVENESS } });
    dataDir = core.dataDir;
  }, 180_000);

  afterAll(async () => {
    await core?.cleanup();
    await stopPluginServer().catch(() => undefined);
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('registers each type through the CLI and through POST /api/plugins/register', async () => {
    const http = await cli(core, 'plugins', 'register', join(root, 'greeter.yaml'));
    expect(http).toMatchObject({ code: 0, stdout: 'registered greeter (created)' });
    const subprocess = await cli(core, 'plugins', 'register', join(root, 'shout.json'));
    expect(subprocess).toMatchObject({ code: 0, stdout: 'registered shout (created)' });
    const mcp = await core.api<{ plugin_id: string; change: string }>('POST', '/api/plugins/register', mcpDescriptor());
    expect(mcp).toMatchObject({ status: 201, body: { plugin_id: 'everything', registered: true, change: 'created' } });

    // The other path for each type: the same descriptors again, nothing changes.
    for (const descriptor of [httpDescriptor(), subprocessDescriptor()]) {
      const again = await core.api('POST', '/api/plugins/register', descriptor);
      expect(again).toMatchObject({ status: 200, body: { registered: true } });
    }
    const mcpAgain = await cli(core, 'plugins', 'register', join(root, 'everything.yaml'));
    expect(mcpAgain.code).toBe(0);
    expect(mcpAgain.stdout).toMatch(/^registered everything \((unchanged|updated)\)$/);

    // MCP: the server is started and its tools become the capabilities.
    await waitFor(
      () => stateOf(core, 'everything') === 'online' && capabilitiesOf(core, 'everything').includes('echo'),
      'the MCP plugin online with its tools',
      20_000,
    );
    await waitFor(() => stateOf(core, 'greeter') === 'online', 'greeter online');
    mcpPidsBeforeRestart = childPids(EVERYTHING);
    expect(mcpPidsBeforeRestart).toHaveLength(1);

    const list = await cli(core, 'plugins', 'list', '--json');
    expect(list.code).toBe(0);
    const plugins = JSON.parse(list.stdout) as { id: string; type: string; source: string; state: string; capabilities: string[] }[];
    expect(plugins.map((p) => p.id).sort()).toEqual(['everything', 'greeter', 'shout']);
    expect(plugins.find((p) => p.id === 'greeter')).toMatchObject({ type: 'http', source: 'external', state: 'online', capabilities: ['hello', 'add'] });
    expect(plugins.find((p) => p.id === 'shout')).toMatchObject({ type: 'subprocess', source: 'external', capabilities: ['say', 'fail', 'linger'] });
    expect(plugins.find((p) => p.id === 'everything')).toMatchObject({ type: 'mcp', source: 'external', state: 'online' });
    expect(plugins.find((p) => p.id === 'everything')!.capabilities).toEqual(expect.arrayContaining(['echo', 'get-sum']));
  });

  it('checks health live through each adapter (plugins health)', async () => {
    for (const id of ['greeter', 'shout', 'everything']) {
      const run = await cli(core, 'plugins', 'health', id);
      expect(run, id).toMatchObject({ code: 0 });
      expect(run.stdout).toMatch(new RegExp(`^${id}: healthy \\(state online\\)`));
    }
    const before = served.filter((s) => s === 'GET /health').length;
    const json = await cli(core, 'plugins', 'health', 'greeter', '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({ plugin_id: 'greeter', ok: true, state: 'online' });
    expect(served.filter((s) => s === 'GET /health').length).toBeGreaterThan(before);
    const unknown = await cli(core, 'plugins', 'health', 'nobody');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no plugin with id "nobody"');
  });

  it('invokes every type with homeclaw invoke: exit 0 with the text, non-zero on failure', async () => {
    expect(await cli(core, 'invoke', 'greeter', 'hello', 'name=Ada')).toMatchObject({ code: 0, stdout: 'Hello, Ada!' });
    expect(await cli(core, 'invoke', 'greeter', 'add', 'a=2', 'b=3.5')).toMatchObject({ code: 0, stdout: 'sum=5.5' });
    expect(served).toContain('GET /add');
    expect(await cli(core, 'invoke', 'shout', 'say', 'text=quiet please')).toMatchObject({ code: 0, stdout: 'QUIET PLEASE' });
    expect(await cli(core, 'invoke', 'everything', 'echo', 'message=over stdio')).toMatchObject({ code: 0, stdout: 'Echo: over stdio' });

    const failed = await cli(core, 'invoke', 'shout', 'fail');
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('the megaphone is broken');
    const missing = await cli(core, 'invoke', 'greeter', 'hello');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/invalid_params.*name/);
    const unknown = await cli(core, 'invoke', 'greeter', 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('not_found');
  });

  it('GET /v1/plugins gives the ForgeSyte shape and GET /api/plugins/:id the canonical form with secrets redacted', async () => {
    const forge = await core.api<{
      plugins: { name: string; description: string; version: string; tools: Record<string, { description: string; input_schema: Record<string, unknown> }> }[];
    }>('GET', '/v1/plugins');
    expect(forge.status).toBe(200);
    const greeter = forge.body.plugins.find((p) => p.name === 'greeter')!;
    expect(greeter).toMatchObject({ description: 'Greets people and adds numbers over HTTP.', version: '1.2.0' });
    // ForgeSyte's shape: the parameters as a map, required unless they have a default or say otherwise.
    expect(greeter.tools['hello']).toMatchObject({
      description: 'Says hello to someone.',
      input_schema: { name: { type: 'string', description: 'who to greet' } },
    });
    expect(greeter.tools['add']!.input_schema).toEqual({ a: { type: 'number' }, b: { type: 'number' } });
    const everything = forge.body.plugins.find((p) => p.name === 'everything')!;
    expect(everything.tools['echo']!.input_schema).toMatchObject({ message: { type: 'string' } });
    expect(everything.tools['echo']!.input_schema['$schema']).toBeUndefined();

    const canonical = await core.api<Record<string, unknown> & { config: Record<string, unknown> }>('GET', '/api/plugins/greeter');
    expect(canonical.status).toBe(200);
    expect(canonical.body).toMatchObject({ id: 'greeter', type: 'http', source: 'external', state: 'online', health_check_url: `${pluginBase}/health` });
    expect(canonical.body.config).toEqual({ base_url: pluginBase, api_key: '[redacted]' });
    expect(JSON.stringify(canonical.body)).not.toContain('super-secret-key');
    expect((await core.api('GET', '/api/plugins/nobody')).status).toBe(404);
  });

  it('a ForgeSyte input_schema tagged draft-07 registers over HTTP and is validated as JSON Schema', async () => {
    const registered = await core.api('POST', '/api/plugins/register', forgeSyteDescriptor());
    expect(registered).toMatchObject({ status: 201, body: { plugin_id: 'scaler', dialect: 'forgesyte' } });
    await waitFor(() => stateOf(core, 'scaler') === 'online', 'scaler online');
    const ok = await core.api<PluginResult>('POST', '/v1/plugins/scaler/tools/scale/run', { factor: 2 });
    expect(ok).toMatchObject({ status: 200, body: { success: true, text: 'scaled 4' } });
    // minimum is only in the kept input_schema: refusing -1 shows that schema is the one in use.
    const negative = await core.api<PluginResult>('POST', '/v1/plugins/scaler/tools/scale/run', { factor: -1 });
    expect(negative).toMatchObject({ status: 400, body: { success: false, error_code: 'invalid_params' } });
    const forge = await core.api<{ plugins: { name: string; tools: Record<string, { input_schema: Record<string, unknown> }> }[] }>('GET', '/v1/plugins');
    const schema = forge.body.plugins.find((p) => p.name === 'scaler')!.tools['scale']!.input_schema;
    expect(schema).toEqual({ factor: { type: 'number', minimum: 0 } });
  });

  it('serves every capability to MCP clients at /mcp as <plugin>__<capability> and calls through the dispatcher', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${core.httpUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${core.adminToken}` } },
    });
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(transport);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['greeter__hello', 'greeter__add', 'shout__say', 'everything__echo', 'scaler__scale']));
      const hello = await client.callTool({ name: 'greeter__hello', arguments: { name: 'Grace' } });
      expect(hello).toMatchObject({ content: [{ type: 'text', text: 'Hello, Grace!' }] });
      expect(hello.isError).toBeFalsy();
      const echo = await client.callTool({ name: 'everything__echo', arguments: { message: 'round trip' } });
      expect(echo).toMatchObject({ content: [{ type: 'text', text: 'Echo: round trip' }] });
    } finally {
      await client.close();
    }
    const refused = await fetch(`${core.httpUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(refused.status).toBe(401);
  });

  it('refuses bad registrations with every problem listed and changes nothing', async () => {
    const before = (await core.api<{ plugins: unknown[] }>('GET', '/api/plugins')).body.plugins;
    const cases: { body: unknown; path: string }[] = [
      { body: '"just a string"', path: '' },
      { body: [1, 2], path: '' },
      { body: { id: 'ghost', name: 'Ghost', description: 'Boo.', type: 'carrier-pigeon' }, path: '/type' },
      { body: { id: 'ghost', name: 'Ghost', description: 'Boo.', type: 'http', config: { base_url: pluginBase } }, path: '/health_check_url' },
      { body: { id: 'Bad Id!', name: 'Ghost', description: 'Boo.', type: 'subprocess', config: { command: 'true' } }, path: '/id' },
    ];
    for (const { body, path } of cases) {
      const res = await core.api<{ statusCode: number; message: string; problems: { path: string; message: string }[] }>('POST', '/api/plugins/register', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.statusCode).toBe(400);
      expect(res.body.problems.map((p) => p.path)).toContain(path);
    }
    const broken = await fetch(`${core.httpUrl}/api/plugins/register`, {
      method: 'POST',
      headers: { authorization: `Bearer ${core.adminToken}`, 'content-type': 'application/json' },
      body: '{"id": ',
    });
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ statusCode: 400, problems: [expect.objectContaining({ message: expect.any(String) })] });
    const cliBad = await cli(core, 'plugins', 'register', join(root, 'shout.mjs'));
    expect(cliBad.code).not.toBe(0);
    expect((await core.api<{ plugins: unknown[] }>('GET', '/api/plugins')).body.plugins).toEqual(before);
  });

  it('stopping the Core ends the MCP server and a running subprocess', async () => {
    const pidFile = join(root, 'linger.pid');
    const pending = core.ctx.dispatcher.invoke({ plugin_id: 'shout', capability_id: 'linger', parameters: {} });
    await waitFor(() => existsSync(pidFile), 'the lingering subprocess to start');
    const lingerPid = Number(readFileSync(pidFile, 'utf8'));
    expect(isAlive(lingerPid)).toBe(true);
    await core.stop();
    expect(await pending).toMatchObject({ success: false, error_code: 'cancelled' });
    await waitFor(() => !isAlive(lingerPid) && mcpPidsBeforeRestart.every((pid) => !isAlive(pid)), 'no orphan processes', 5000);
    expect(childPids(EVERYTHING)).toEqual([]);
  });

  it('registrations survive a restart: the new Core reconnects MCP and polls http health', async () => {
    core = await startTestCore({ dataDir, overrides: { liveness: LIVENESS } });
    const ids = core.ctx.registry
      .list()
      .map((r) => r.descriptor.id)
      .sort();
    expect(ids).toEqual(['everything', 'greeter', 'scaler', 'shout']);
    await waitFor(() => stateOf(core, 'everything') === 'online' && capabilitiesOf(core, 'everything').includes('echo'), 'MCP reconnect', 20_000);
    const newPids = childPids(EVERYTHING);
    expect(newPids).toHaveLength(1);
    expect(newPids[0]).not.toBe(mcpPidsBeforeRestart[0]);
    expect(await cli(core, 'invoke', 'everything', 'echo', 'message=again')).toMatchObject({ code: 0, stdout: 'Echo: again' });
    await waitFor(() => stateOf(core, 'greeter') === 'online', 'greeter online after restart');
    expect(await cli(core, 'invoke', 'greeter', 'hello', 'name=Linus')).toMatchObject({ code: 0, stdout: 'Hello, Linus!' });

    // Health polling runs in the restarted Core: the plugin server goes away (stale, not routed to) and comes back.
    await stopPluginServer();
    await waitFor(() => stateOf(core, 'greeter') === 'stale', 'greeter stale');
    const stale = await cli(core, 'invoke', 'greeter', 'hello', 'name=Nobody');
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('stale');
    await startPluginServer(pluginPort);
    await waitFor(() => stateOf(core, 'greeter') === 'online', 'greeter back online');

    expect(await cli(core, 'plugins', 'unregister', 'shout')).toMatchObject({ code: 0, stdout: 'unregistered shout' });
    const list = JSON.parse((await cli(core, 'plugins', 'list', '--json')).stdout) as { id: string }[];
    expect(list.map((p) => p.id).sort()).toEqual(['everything', 'greeter', 'scaler']);
    const gone = await cli(core, 'invoke', 'shout', 'say', 'text=x');
    expect(gone.code).toBe(1);
    expect((await cli(core, 'plugins', 'unregister', 'shout')).code).toBe(1);

    await core.stop();
    await waitFor(() => newPids.every((pid) => !isAlive(pid)), 'the MCP server to end with the Core', 5000);
  }, 60_000);
});

// ---- built-ins ----------------------------------------------------------------------------------

describe('shipped built-ins through the full Core', () => {
  let core: TestCore;

  beforeAll(async () => {
    await ensureBuilt();
    core = await startTestCore({ pluginsDir: SHIPPED_PLUGINS_DIR });
  }, 180_000);

  afterAll(async () => {
    await core?.cleanup();
  });

  it('lists time, notes, weather and buy as built-in and invokes time from the CLI', async () => {
    const list = await cli(core, 'plugins', 'list', '--json');
    expect(list.code).toBe(0);
    const plugins = JSON.parse(list.stdout) as { id: string; source: string; type: string; state: string }[];
    for (const id of ['time', 'notes', 'weather', 'buy']) {
      expect(
        plugins.find((p) => p.id === id),
        id,
      ).toMatchObject({ source: 'built-in', type: 'inline', state: 'online' });
    }
    const now = await cli(core, 'invoke', 'time', 'now', 'timezone=Asia/Tokyo');
    expect(now.code).toBe(0);
    expect(now.stdout).toMatch(/Asia\/Tokyo/);
    expect(now.stdout).toContain('UTC+09:00');
    const bad = await cli(core, 'invoke', 'time', 'now', 'timezone=Mars/Olympus');
    expect(bad.code).toBe(1);
  });

  it('refuses an external registration of a built-in id (409) and unregistering a built-in (403)', async () => {
    const before = core.ctx.registry.get('time')!;
    const taken = await core.api<{ statusCode: number; message: string }>('POST', '/api/plugins/register', {
      id: 'time',
      name: 'Fake time',
      description: 'Pretends to tell the time.',
      type: 'http',
      health_check_url: 'http://127.0.0.1:9/health',
      config: { base_url: 'http://127.0.0.1:9' },
    });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ statusCode: 409, message: expect.stringContaining('time') });
    const unregister = await core.api<{ statusCode: number }>('POST', '/api/plugins/unregister', { plugin_id: 'time' });
    expect(unregister.status).toBe(403);
    expect(unregister.body.statusCode).toBe(403);
    const cliUnregister = await cli(core, 'plugins', 'unregister', 'time');
    expect(cliUnregister.code).toBe(1);
    const after = core.ctx.registry.get('time')!;
    expect(after).toMatchObject({ state: 'online', content_hash: before.content_hash });
    expect(after.descriptor.source).toBe('built-in');
    expect(await cli(core, 'invoke', 'time', 'now', 'timezone=UTC')).toMatchObject({ code: 0 });
  });
});
