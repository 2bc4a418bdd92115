// Attack: an HTTP plugin whose base_url is the Core's own API, with the admin bearer token in its
// headers, turns every caller who may invoke plugins (a chat user) into an administrator: invoking it
// created an MQTT credential. Defences: no plugin may target the Core's own HTTP listener (under any
// alias, at registration, in manifests, at call time and through redirects), and path templates keep
// parameter values inside their path segment.
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lookup } from 'node:dns/promises';
import { hostname, networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import type { ChannelMessageOut, PluginResult } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { connectTestClient, type TestClient } from '../helpers/mqtt-client.js';
import { freePort } from '../helpers/ports.js';

const TOKEN = 'self-target-admin-token-0123456789';
let core: TestCore;
let port: number;
let user: TestClient;
let server: Server;
let serverUrl: string;
const seenPaths: string[] = [];

function evilPlugin(id: string, baseUrl: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    name: 'Credential maker',
    description: 'Makes credentials.',
    type: 'http',
    health_check_url: `${serverUrl}/health`,
    config: { base_url: baseUrl, headers: { authorization: `Bearer ${TOKEN}` } },
    capabilities: [
      {
        id: 'mk',
        name: 'Make',
        description: 'Make a credential',
        method: 'POST',
        path: '/api/credentials',
        parameters: [
          { name: 'name', type: 'string' },
          { name: 'role', type: 'string' },
        ],
      },
    ],
    ...extra,
  };
}

async function credentialNames(): Promise<string[]> {
  const { body } = await core.api<{ credentials: { name: string }[] }>('GET', '/api/credentials');
  return body.credentials.map((c) => c.name);
}

async function say(text: string): Promise<ChannelMessageOut> {
  const request_id = crypto.randomUUID();
  const reply = user.waitFor(topics.channelOut('web'), (m) => m.json<ChannelMessageOut>().request_id === request_id, 10_000);
  await user.publish(topics.channelIn('web'), { request_id, user_id: 'mallory', text });
  return (await reply).json<ChannelMessageOut>();
}

beforeAll(async () => {
  server = createServer((request, response) => {
    seenPaths.push(request.url ?? '');
    if (request.url === '/bounce') {
      response.writeHead(307, { location: `http://127.0.0.1:${port}/api/credentials` }).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: true, text: `path ${request.url}` }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-self-target-'));
  const pluginsDir = join(dataDir, 'manifests');
  mkdirSync(join(pluginsDir, 'selfie'), { recursive: true });
  writeFileSync(join(pluginsDir, 'selfie', 'plugin.json'), JSON.stringify(evilPlugin('selfie', `http://localhost:${port}`)));
  core = await startTestCore({ dataDir, pluginsDir, overrides: { http: { port, admin_token: TOKEN } } });
  user = await connectTestClient(core.mqttUrl);
  await user.subscribe(topics.channelOut('web'));
});

afterAll(async () => {
  await user?.end(true);
  await core?.cleanup();
  server?.close();
});

describe('a plugin that targets the Core itself', () => {
  it('is refused at registration, so a chat user cannot make a credential through it', async () => {
    const registered = await core.api<{ message: string; problems: { path: string; message: string }[] }>(
      'POST',
      '/api/plugins/register',
      evilPlugin('evil', `http://127.0.0.1:${port}`),
    );
    expect(registered.status).toBe(400);
    expect(registered.body.problems).toContainEqual({ path: '/config/base_url', message: expect.stringMatching(/the Core's own HTTP API/) });

    const reply = await say('/evil mk name=pwned role=admin');
    expect(reply.kind).toBe('error');
    expect(await credentialNames()).not.toContain('pwned');
  });

  it('is refused under every alias of this machine at the Core port', async () => {
    const aliases = [
      `http://localhost:${port}`,
      `http://LOCALHOST.:${port}`,
      `http://127.0.0.2:${port}`,
      `http://[::1]:${port}`,
      `http://0.0.0.0:${port}`,
      `http://[::]:${port}`,
      `http://[::ffff:127.0.0.1]:${port}`,
      `http://2130706433:${port}`,
    ];
    const ownAddresses = Object.values(networkInterfaces())
      .flat()
      .filter((i) => i && !i.internal)
      .map((i) => (i!.family === 'IPv6' ? `[${i!.address.split('%')[0]}]` : i!.address));
    aliases.push(...ownAddresses.map((a) => `http://${a}:${port}`));
    const resolvable = await lookup(hostname()).then(
      () => true,
      () => false,
    );
    if (resolvable) aliases.push(`http://${hostname()}:${port}`);
    for (const [i, alias] of aliases.entries()) {
      const { status, body } = await core.api<{ problems: { path: string; message: string }[] }>(
        'POST',
        '/api/plugins/register',
        evilPlugin(`alias${i}`, alias),
      );
      expect(status, alias).toBe(400);
      expect(
        body.problems.map((p) => p.path),
        alias,
      ).toContain('/config/base_url');
    }
  });

  it('is refused through health_check_url, an absolute capability URL and an MCP server URL', async () => {
    const viaHealth = await core.api<{ problems: { path: string }[] }>(
      'POST',
      '/api/plugins/register',
      evilPlugin('health', serverUrl, { health_check_url: `http://localhost:${port}/api/status` }),
    );
    expect(viaHealth.status).toBe(400);
    expect(viaHealth.body.problems.map((p) => p.path)).toEqual(['/health_check_url']);

    const absolute = evilPlugin('absolute', serverUrl);
    (absolute.capabilities as Record<string, unknown>[])[0]!.path = `http://127.0.0.1:${port}/api/credentials`;
    const viaPath = await core.api<{ problems: { path: string }[] }>('POST', '/api/plugins/register', absolute);
    expect(viaPath.status).toBe(400);
    expect(viaPath.body.problems.map((p) => p.path)).toEqual(['/capabilities/0/path']);

    const viaMcp = await core.api<{ problems: { path: string }[] }>('POST', '/api/plugins/register', {
      id: 'loopmcp',
      name: 'Loop',
      description: 'The Core as its own MCP server.',
      type: 'mcp',
      config: { transport: 'streamable-http', url: `http://localhost:${port}/mcp`, headers: { authorization: `Bearer ${TOKEN}` } },
    });
    expect(viaMcp.status).toBe(400);
    expect(viaMcp.body.problems.map((p) => p.path)).toEqual(['/config/url']);
  });

  it('is not loaded from a manifest: the plugin is in error with the reason and cannot be invoked', async () => {
    const { body } = await core.api<{ state: string; state_reason?: string }>('GET', '/api/plugins/selfie');
    expect(body.state).toBe('error');
    expect(body.state_reason).toMatch(/the Core's own HTTP API/);
    const reply = await say('/selfie mk name=pwned2 role=admin');
    expect(reply.kind).toBe('error');
    expect(await credentialNames()).not.toContain('pwned2');
  });

  it('cannot reach the Core through a redirect at call time', async () => {
    const bouncer = evilPlugin('bouncer', serverUrl);
    (bouncer.capabilities as Record<string, unknown>[])[0]!.path = '/bounce';
    expect((await core.api('POST', '/api/plugins/register', bouncer)).status).toBe(201);
    const { body } = await core.api<PluginResult>('POST', '/v1/plugins/bouncer/tools/mk/run', { name: 'pwned3', role: 'admin' });
    expect(body.success).toBe(false);
    expect(body.error).toMatch(/redirect.*the Core's own HTTP API/);
    expect(await credentialNames()).not.toContain('pwned3');
  });

  it('a plugin on another port of this machine is fine', async () => {
    const fine = evilPlugin('fine', serverUrl);
    expect((await core.api('POST', '/api/plugins/register', fine)).status).toBe(201);
    const { body } = await core.api<PluginResult>('POST', '/v1/plugins/fine/tools/mk/run', { name: 'x', role: 'plugin' });
    expect(body).toMatchObject({ success: true, text: 'path /api/credentials' });
  });
});

describe('path templates', () => {
  beforeAll(async () => {
    const files = {
      id: 'files',
      name: 'Files',
      description: 'Reads files.',
      type: 'http',
      health_check_url: `${serverUrl}/health`,
      config: { base_url: `${serverUrl}/api/v1` },
      capabilities: [
        { id: 'read', name: 'Read', description: 'Read a file', method: 'GET', path: '/files/{name}', parameters: [{ name: 'name', type: 'string' }] },
      ],
    };
    expect((await core.api('POST', '/api/plugins/register', files)).status).toBe(201);
  });

  it('refuses "." and ".." as a path value, so a parameter cannot climb out of its segment', async () => {
    for (const name of ['..', '.']) {
      const before = seenPaths.length;
      const { status, body } = await core.api<PluginResult>('POST', '/v1/plugins/files/tools/read/run', { name });
      expect(status, name).toBe(400);
      expect(body).toMatchObject({ success: false, error_code: 'invalid_params' });
      expect(body.error).toMatch(/parameter "name"/);
      expect(
        seenPaths.slice(before).filter((p) => p !== '/health'),
        name,
      ).toEqual([]);
    }
  });

  it('encodes "/", "%" and "?" so the value stays one segment', async () => {
    for (const [name, path] of [
      ['../../admin', '/api/v1/files/..%2F..%2Fadmin'],
      ['%2e%2e', '/api/v1/files/%252e%252e'],
      ['a?b=c', '/api/v1/files/a%3Fb%3Dc'],
    ] as const) {
      const { body } = await core.api<PluginResult>('POST', '/v1/plugins/files/tools/read/run', { name });
      expect(body, name).toMatchObject({ success: true, text: `path ${path}` });
    }
  });
});
