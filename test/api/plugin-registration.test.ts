// Registration as HomeClaw and ForgeSyte write it, on the real Core: ForgeSyte's own metadata example over
// POST /api/plugins/register (refused with the missing base_url named, accepted with one), GET /v1/plugins
// in exactly ForgeSyte's shape for every plugin, versions checked as semver on every path (HTTP, MQTT,
// plugin folders), and registrations the Core could never call refused with the missing field named.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import type { PluginRequest, PluginResult } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { connectTestClient } from '../helpers/mqtt-client.js';

const FORGESYTE_EXAMPLE = JSON.parse(readFileSync(new URL('../fixtures/seeds/forgesyte-example.json', import.meta.url), 'utf8')) as Record<string, unknown>;

interface Problem {
  path: string;
  message: string;
}
interface ErrorBody {
  statusCode: number;
  message: string;
  problems: Problem[];
}

let core: TestCore;
let server: Server;
let baseUrl: string;
const received: PluginRequest[] = [];
let pluginsDir: string;

function writePluginFolder(id: string, manifest: string): void {
  const folder = join(pluginsDir, id);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'plugin.yaml'), manifest);
}

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.method === 'GET') return void res.end('ok');
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const request = JSON.parse(body) as PluginRequest;
      received.push(request);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ success: true, text: `${request.capability_id} ran`, data: { detections: [] } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  pluginsDir = mkdtempSync(join(tmpdir(), 'homeclaw-registration-plugins-'));
  // Plugin folders: a usable inline built-in with a HomeClaw short version, and manifests that cannot work.
  writePluginFolder('shortver', 'id: shortver\nname: Short version\ndescription: Says hi.\nversion: "1.0"\n');
  writeFileSync(join(pluginsDir, 'shortver', 'index.js'), 'export function run() { return "hi"; }\n');
  writePluginFolder('badver', 'id: badver\nname: Bad version\ndescription: Never loads.\nversion: abc\ntype: subprocess\nconfig: { command: "true" }\n');
  writePluginFolder('nocmd', 'id: nocmd\nname: No command\ndescription: A subprocess without a command.\ntype: subprocess\n');
  writePluginFolder(
    'nourl',
    'id: nourl\nname: No URL\ndescription: An http plugin without base_url.\ntype: http\nhealth_check_url: http://127.0.0.1:9/health\n',
  );
  writePluginFolder('nomcp', 'id: nomcp\nname: No MCP server\ndescription: An mcp plugin without command or url.\ntype: mcp\nconfig: { transport: sse }\n');
  core = await startTestCore({ pluginsDir });
}, 60_000);

afterAll(async () => {
  await core?.cleanup();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
});

describe('ForgeSyte metadata over POST /api/plugins/register', () => {
  it("refuses ForgeSyte's example as is, naming base_url as what is missing", async () => {
    const res = await core.api<ErrorBody>('POST', '/api/plugins/register', FORGESYTE_EXAMPLE);
    expect(res.status).toBe(400);
    expect(res.body.problems).toEqual([{ path: '/config/base_url', message: expect.stringContaining('base_url is required for http plugins') }]);
    expect(core.ctx.registry.get('yolo-tracker')).toBeUndefined();
  });

  it("accepts ForgeSyte's example with a base_url, and the Core can call its tools", async () => {
    const res = await core.api<{ plugin_id: string; dialect: string }>('POST', '/api/plugins/register', { ...FORGESYTE_EXAMPLE, base_url: baseUrl });
    expect(res).toMatchObject({ status: 201, body: { plugin_id: 'yolo-tracker', dialect: 'forgesyte', registered: true } });
    expect(core.ctx.registry.get('yolo-tracker')?.descriptor).toMatchObject({ type: 'http', version: '1.2.0', config: { base_url: baseUrl } });
    const run = await core.api<PluginResult>('POST', '/v1/plugins/yolo-tracker/tools/player_detection/run', { frame_base64: 'AAAA' });
    expect(run).toMatchObject({ status: 200, body: { success: true, text: 'player_detection ran' } });
    expect(received.at(-1)).toMatchObject({ capability_id: 'player_detection', parameters: { frame_base64: 'AAAA' } });
  });

  it("GET /v1/plugins gives back ForgeSyte's example exactly", async () => {
    const res = await core.api<{ plugins: Record<string, unknown>[] }>('GET', '/v1/plugins');
    expect(res.status).toBe(200);
    expect(res.body.plugins.find((p) => p['name'] === 'yolo-tracker')).toEqual(FORGESYTE_EXAMPLE);
  });

  it('derives both schemas in that shape for plugins of other dialects', async () => {
    const homeclaw = {
      plugin_id: 'lamp',
      name: 'Lamp',
      description: 'Switch the lamp.',
      version: '2.1.0',
      type: 'http',
      health_check_url: `${baseUrl}/health`,
      config: { base_url: baseUrl },
      capabilities: [
        {
          id: 'switch',
          name: 'Switch',
          description: 'Turn the lamp on or off.',
          output_description: 'The new state.',
          parameters: [
            { name: 'on', type: 'boolean', description: 'true = on' },
            { name: 'room', type: 'string', required: false },
            { name: 'level', type: 'integer', required: false, default: 100 },
          ],
        },
      ],
    };
    expect((await core.api('POST', '/api/plugins/register', homeclaw)).status).toBe(201);
    const listed = (await core.api<{ plugins: Record<string, unknown>[] }>('GET', '/v1/plugins')).body.plugins;
    expect(listed.find((p) => p['name'] === 'lamp')).toEqual({
      name: 'lamp',
      description: 'Switch the lamp.',
      version: '2.1.0',
      tools: {
        switch: {
          description: 'Turn the lamp on or off.',
          input_schema: {
            on: { type: 'boolean', description: 'true = on' },
            room: { type: 'string', required: false },
            level: { type: 'integer', default: 100 },
          },
          output_schema: { text: { type: 'string', description: 'The new state.' } },
        },
      },
    });
    // A built-in from a plugin folder is listed the same way (no output description: the answer's text).
    expect(listed.find((p) => p['name'] === 'shortver')).toEqual({
      name: 'shortver',
      description: 'Says hi.',
      version: '1.0.0',
      tools: {
        run: {
          description: 'Says hi.',
          input_schema: { user_input: { type: 'string', description: "The user's request.", required: false } },
          output_schema: { text: { type: 'string', description: "The plugin's answer." } },
        },
      },
    });
  });
});

describe('versions are semantic versions on every path', () => {
  it('HTTP: "abc" is refused; "1.0" is read as 1.0.0 with a warning', async () => {
    const bad = await core.api<ErrorBody>('POST', '/api/plugins/register', { ...FORGESYTE_EXAMPLE, name: 'abc-version', version: 'abc', base_url: baseUrl });
    expect(bad.status).toBe(400);
    expect(bad.body.problems).toContainEqual({ path: '/version', message: expect.stringContaining('must be a semantic version') });
    expect(core.ctx.registry.get('abc-version')).toBeUndefined();
    const short = await core.api<{ warnings: Problem[] }>('POST', '/api/plugins/register', {
      ...FORGESYTE_EXAMPLE,
      name: 'short-version',
      version: '1.0',
      base_url: baseUrl,
    });
    expect(short.status).toBe(201);
    expect(short.body.warnings).toContainEqual({ path: '/version', message: expect.stringContaining('"1.0.0"') });
    expect(core.ctx.registry.get('short-version')?.descriptor.version).toBe('1.0.0');
  });

  it('MQTT: a register with version "abc" is refused in the ack', async () => {
    const client = await connectTestClient(core.mqttUrl, { clientId: 'semver-check' });
    try {
      await client.subscribe(topics.registered('mqttver'));
      await client.publish(topics.register(), {
        id: 'mqttver',
        name: 'MQTT version',
        description: 'Registers with a bad version.',
        version: 'abc',
        capabilities: [{ id: 'go', name: 'Go', description: 'Go.', parameters: [] }],
        epoch: 1,
      });
      const ack = (await client.waitFor(topics.registered('mqttver'))).json<{ ok: boolean; errors: Problem[] }>();
      expect(ack.ok).toBe(false);
      expect(ack.errors).toContainEqual({ path: '/version', message: expect.stringContaining('must be a semantic version') });
      expect(core.ctx.registry.get('mqttver')).toBeUndefined();
    } finally {
      await client.end();
    }
  });

  it('plugin folders: a bad version is a load error; a RAGFlow _version_ is checked too', async () => {
    expect(core.ctx.registry.get('badver')).toMatchObject({ state: 'error', state_reason: expect.stringContaining('/version: must be a semantic version') });
    const ragflow = await core.api<ErrorBody>('POST', '/api/plugins/register', {
      name: 'calc',
      description: 'Adds.',
      _version_: 'one',
      parameters: { a: { type: 'number', required: true } },
      base_url: baseUrl,
    });
    expect(ragflow.status).toBe(400);
    expect(ragflow.body.problems).toContainEqual({ path: '/_version_', message: expect.stringContaining('must be a semantic version') });
  });
});

describe('registrations the Core could never call are refused with the missing field named', () => {
  const base = { name: 'Ghost', description: 'Cannot be reached.' };

  it('over HTTP: http without base_url, subprocess without command, mcp without command or url', async () => {
    const cases: { body: Record<string, unknown>; path: string; says: string }[] = [
      { body: { ...base, id: 'g-http', type: 'http', health_check_url: `${baseUrl}/health` }, path: '/config/base_url', says: 'base_url is required' },
      {
        body: {
          ...base,
          id: 'g-rel',
          type: 'http',
          health_check_url: `${baseUrl}/health`,
          capabilities: [{ id: 'x', name: 'X', description: 'X.', parameters: [], method: 'GET', path: '/x' }],
        },
        path: '/config/base_url',
        says: 'base_url is required',
      },
      { body: { ...base, id: 'g-sub', type: 'subprocess' }, path: '/config/command', says: 'command is required' },
      { body: { ...base, id: 'g-mcp', type: 'mcp' }, path: '/config/command', says: 'config.command' },
      { body: { ...base, id: 'g-stdio', type: 'mcp', config: { transport: 'stdio' } }, path: '/config/command', says: 'command is required' },
      { body: { ...base, id: 'g-sse', type: 'mcp', config: { transport: 'sse' } }, path: '/config/url', says: 'url is required' },
      {
        body: { ...base, id: 'g-pigeon', type: 'mcp', config: { transport: 'pigeon' } },
        path: '/config/transport',
        says: 'must be stdio, sse or streamable-http',
      },
    ];
    for (const { body, path, says } of cases) {
      const res = await core.api<ErrorBody>('POST', '/api/plugins/register', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.problems).toContainEqual({ path, message: expect.stringContaining(says) });
      expect(core.ctx.registry.get(body['id'] as string)).toBeUndefined();
    }
  });

  it('absolute capability URLs make base_url unnecessary', async () => {
    const res = await core.api('POST', '/api/plugins/register', {
      ...base,
      id: 'g-abs',
      type: 'http',
      health_check_url: `${baseUrl}/health`,
      capabilities: [{ id: 'x', name: 'X', description: 'X.', parameters: [], method: 'POST', path: `${baseUrl}/x` }],
    });
    expect(res.status).toBe(201);
  });

  it('in plugin folders: each is in state error with the missing field in the reason, never online', () => {
    expect(core.ctx.registry.get('nocmd')).toMatchObject({ state: 'error', state_reason: expect.stringContaining('/config/command: command is required') });
    expect(core.ctx.registry.get('nourl')).toMatchObject({ state: 'error', state_reason: expect.stringContaining('/config/base_url: base_url is required') });
    expect(core.ctx.registry.get('nomcp')).toMatchObject({ state: 'error', state_reason: expect.stringContaining('/config/url: url is required') });
    expect(core.ctx.registry.get('shortver')).toMatchObject({ state: 'online' });
  });
});
