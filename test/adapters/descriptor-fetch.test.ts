// The descriptor fetch of registrations by reference, against a real HTTP server: what is accepted,
// every way it refuses (each with a sentence for the nack), and what it never sends.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescriptorFetcher } from '../../src/adapters/descriptor-fetch.js';
import { SelfTargetGuard } from '../../src/adapters/self-target.js';

const DESCRIPTOR = { id: 'lamp', name: 'Lamp', description: 'A lamp', capabilities: [{ id: 'status', description: 'Is it on?' }] };
const seen: http.IncomingHttpHeaders[] = [];
let server: http.Server;
let base: string;
let port: number;

const routes: Record<string, (res: http.ServerResponse) => void> = {
  '/lamp.json': (res) => res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(DESCRIPTOR)),
  '/lamp.yaml': (res) =>
    res
      .writeHead(200, { 'content-type': 'application/yaml' })
      .end('id: lamp\nname: Lamp\ndescription: A lamp\ncapabilities:\n  - id: status\n    description: Is it on?\n'),
  '/raw.json': (res) => res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(JSON.stringify(DESCRIPTOR)),
  '/untyped': (res) => {
    res.removeHeader('content-type');
    res.writeHead(200).end(JSON.stringify(DESCRIPTOR));
  },
  '/missing': (res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('no'),
  '/login': (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>router admin secret-token-123</body></html>'),
  '/broken.json': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"id": "lamp", secret-token-123'),
  '/list.json': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('[1, 2]'),
  '/proto.json': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"id": "lamp", "config": {"__proto__": {"timeout_sec": 1}}}'),
  '/proto.yaml': (res) => res.writeHead(200, { 'content-type': 'application/yaml' }).end('id: lamp\nconfig:\n  __proto__:\n    timeout_sec: 1\n'),
  '/binary': (res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.from([0, 1, 2])),
  '/latin1.json': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x7d])),
  '/declared-big.json': (res) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': '5000' }).end('x'.repeat(5000)),
  '/streamed-big.json': (res) => {
    // No content-length: the cap must hold while reading.
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    for (let i = 0; i < 10; i++) res.write('x'.repeat(1000));
    res.end();
  },
  '/big.yaml': (res) => res.writeHead(200, { 'content-type': 'text/yaml' }).end(`# ${'x'.repeat(3000)}\nid: lamp\n`),
  '/slow': () => undefined,
  '/to-self': (res) => res.writeHead(302, { location: `http://localhost:${port}/lamp.json` }).end(),
};

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push(req.headers);
    const route = routes[req.url ?? ''];
    if (route) route(res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const fetcher = new DescriptorFetcher(undefined, { timeout_ms: 500, max_bytes: 4096, max_yaml_bytes: 2048 });

describe('fetching a descriptor by reference', () => {
  it.each(['/lamp.json', '/lamp.yaml', '/raw.json', '/untyped'])('reads %s', async (path) => {
    expect(await fetcher.fetch(`${base}${path}`)).toEqual({ ok: true, document: expect.objectContaining({ id: 'lamp', name: 'Lamp' }) });
  });

  it.each([
    ['/missing', /answered HTTP 404$/],
    ['/login', /answered with content type text\/html; a descriptor is JSON \(application\/json\) or YAML/],
    ['/binary', /content type application\/octet-stream/],
    ['/broken.json', /is not valid JSON \(at character \d+\)$/],
    ['/list.json', /holds a list, not a descriptor object/],
    ['/proto.json', /has a "__proto__" key at \/config\/__proto__ is refused/],
    ['/proto.yaml', /has a "__proto__" key at \/config\/__proto__ is refused/],
    ['/latin1.json', /not UTF-8 text/],
    ['/declared-big.json', /the descriptor is 5000 bytes, more than the 4096 allowed/],
    ['/streamed-big.json', /the descriptor is more than the 4096 bytes allowed/],
    ['/big.yaml', /more than the 2048 bytes allowed/],
    ['/slow', /took longer than 0.5 s$/],
  ])('refuses %s with a clear reason', async (path, reason) => {
    const outcome = await fetcher.fetch(`${base}${path}`);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.error).toMatch(reason);
      // Nothing of what the URL pointed at travels back in the nack.
      expect(outcome.error).not.toMatch(/secret-token|router admin/);
    }
  });

  it.each([
    ['ftp://127.0.0.1/lamp.json', 'descriptor_url must be http or https, not ftp:'],
    ['not a url', 'descriptor_url "not a url" is not a URL'],
    ['http://user:pw@127.0.0.1/lamp.json', 'descriptor_url must not carry a user name or password: the Core sends no credentials'],
  ])('refuses the URL %s', async (url, error) => {
    expect(await fetcher.fetch(url)).toEqual({ ok: false, error });
  });

  it("never fetches the Core's own HTTP API, directly or through a redirect", async () => {
    // The guard believes the test server is the Core's API.
    const guarded = new DescriptorFetcher(new SelfTargetGuard({ port: () => port }), { timeout_ms: 2000, max_bytes: 4096, max_yaml_bytes: 2048 });
    const before = seen.length;
    const direct = await guarded.fetch(`${base}/lamp.json`);
    expect(direct).toEqual({
      ok: false,
      error: expect.stringMatching(/is the Core's own HTTP API \(this machine, port \d+\); a plugin may not call the Core itself/),
    });
    expect(seen.length).toBe(before); // refused before connecting

    const other = http.createServer((_req, res) => res.writeHead(302, { location: `http://localhost:${port}/lamp.json` }).end());
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const redirected = await guarded.fetch(`http://127.0.0.1:${(other.address() as AddressInfo).port}/lamp.json`);
      expect(redirected).toEqual({
        ok: false,
        error: expect.stringMatching(/^descriptor_url was redirected to http:\/\/localhost:\d+\/lamp.json, .*own HTTP API/),
      });
      expect(seen.length).toBe(before);
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it('sends no credentials: no Authorization, no cookie, only an Accept header of its own', async () => {
    const before = seen.length;
    await fetcher.fetch(`${base}/lamp.json`);
    const headers = seen[before]!;
    expect(headers['authorization']).toBeUndefined();
    expect(headers['cookie']).toBeUndefined();
    expect(headers['accept']).toMatch(/application\/json/);
  });
});
