// Which URLs reach the Core's own HTTP listener, and how calls to plugins follow redirects.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedFetch, TargetRefusedError } from '../../src/adapters/guarded-fetch.js';
import { SelfTargetGuard } from '../../src/adapters/self-target.js';

const names: Record<string, string[]> = { 'core.lan': ['192.168.1.10'], 'nas.lan': ['192.168.1.20'], 'both.lan': ['192.168.1.20', '::1'] };
let lookups = 0;
const guard = (port: number | undefined): SelfTargetGuard =>
  new SelfTargetGuard({
    port: () => port,
    ownAddresses: () => ['192.168.1.10', 'fe80::1'],
    resolve: async (host) => {
      lookups++;
      const found = names[host];
      if (!found) throw new Error('ENOTFOUND');
      return found;
    },
  });

describe('SelfTargetGuard', () => {
  it('refuses this machine at the Core port under any name, and nothing else', async () => {
    const g = guard(8765);
    for (const url of [
      'http://127.0.0.1:8765',
      'http://127.9.9.9:8765/x',
      'http://[::1]:8765',
      'http://0.0.0.0:8765',
      'http://[::]:8765',
      'https://localhost:8765',
      'http://app.localhost:8765',
      'http://192.168.1.10:8765',
      'http://[fe80::1]:8765',
      'http://core.lan:8765',
      'http://both.lan:8765',
      'http://127.0.0.1:008765/',
    ]) {
      expect(await g.check(url), url).toMatch(/the Core's own HTTP API \(this machine, port 8765\)/);
    }
    for (const url of [
      'http://127.0.0.1:8766',
      'http://192.168.1.20:8765',
      'http://nas.lan:8765',
      'http://unknown.lan:8765',
      'http://localhost',
      'not a url',
      'mqtt://127.0.0.1:8765',
    ]) {
      expect(await g.check(url), url).toBeUndefined();
    }
  });

  it('uses the scheme default port, and refuses nothing while the Core port is unknown', async () => {
    expect(await guard(80).check('http://localhost/api')).toBeDefined();
    expect(await guard(443).check('https://127.0.0.1/api')).toBeDefined();
    expect(await guard(undefined).check('http://127.0.0.1:8765')).toBeUndefined();
  });

  it('answers without a lookup for another port and caches resolutions', async () => {
    const g = guard(8765);
    const before = lookups;
    expect(g.check('http://nas.lan:9000')).toBeUndefined();
    await g.check('http://nas.lan:8765');
    await g.check('http://nas.lan:8765/other');
    expect(lookups - before).toBe(1);
  });

  it('lists every field of a descriptor that points at the Core', async () => {
    const problems = await guard(8765).descriptorProblems({
      type: 'http',
      health_check_url: 'http://localhost:8765/api/status',
      config: { base_url: 'http://127.0.0.1:8765', path: 'http://nas.lan:8765/run' },
      capabilities: [{ id: 'a', name: 'a', description: 'a', parameters: [], post_process: false, path: 'http://[::1]:8765/api' }],
    });
    expect(problems.map((p) => p.path)).toEqual(['/health_check_url', '/config/base_url', '/capabilities/0/path']);
  });
});

describe('guardedFetch', () => {
  let server: Server;
  let base: string;
  const seen: { url: string; method: string; headers: IncomingHttpHeaders; body: string }[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        seen.push({ url: request.url ?? '', method: request.method ?? '', headers: request.headers, body });
        const [, status, target] = /^\/redirect\/(\d+)\/(.*)$/.exec(request.url ?? '') ?? [];
        if (status) response.writeHead(Number(status), { location: decodeURIComponent(target ?? '') }).end();
        else response.end('ok');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => void server.close());

  it('follows redirects by the fetch rules: 303 and POST-302 become GET, 307 keeps the method and body', async () => {
    const post = { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer x' }, body: '{"a":1}' };
    seen.length = 0;
    await guardedFetch(`${base}/redirect/303/${encodeURIComponent('/end')}`, post, undefined);
    expect(seen[1]).toMatchObject({ url: '/end', method: 'GET', body: '' });
    expect(seen[1]!.headers['content-type']).toBeUndefined();
    seen.length = 0;
    await guardedFetch(`${base}/redirect/307/${encodeURIComponent('/end')}`, post, undefined);
    expect(seen[1]).toMatchObject({ url: '/end', method: 'POST', body: '{"a":1}' });
    expect(seen[1]!.headers.authorization).toBe('Bearer x');
  });

  it('drops credentials on a redirect to another origin', async () => {
    seen.length = 0;
    const other = base.replace('127.0.0.1', 'localhost');
    await guardedFetch(
      `${base}/redirect/307/${encodeURIComponent(`${other}/end`)}`,
      { method: 'GET', headers: { authorization: 'Bearer x', 'x-kept': '1' } },
      undefined,
    );
    expect(seen[1]!.headers.authorization).toBeUndefined();
    expect(seen[1]!.headers['x-kept']).toBe('1');
  });

  it('refuses a redirect to the Core and stops after five redirects', async () => {
    const corePort = Number(new URL(base).port) + 1;
    const g = new SelfTargetGuard({ port: () => corePort });
    const toCore = `${base}/redirect/302/${encodeURIComponent(`http://localhost:${corePort}/api/credentials`)}`;
    const refused = await guardedFetch(toCore, { method: 'GET', headers: {} }, g).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TargetRefusedError);
    expect((refused as TargetRefusedError).redirected).toBe(true);
    expect((refused as Error).message).toMatch(/was redirected to http:\/\/localhost:\d+\/api\/credentials, .*the Core's own HTTP API/);

    let url = `${base}/end`;
    for (let i = 0; i < 6; i++) url = `${base}/redirect/302/${encodeURIComponent(url)}`;
    await expect(guardedFetch(url, { method: 'GET', headers: {} }, undefined)).rejects.toThrow(/more than 5 redirects/);
  });
});
