import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHttpAdapter, type HttpAdapter } from '../../src/adapters/http.js';
import { silentLogger } from '../../src/log.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { Registry } from '../../src/registry/registry.js';
import { call, capability, descriptor, record, waitFor } from './helpers.js';

interface Seen {
  method: string;
  url: string;
  body: string;
  headers: IncomingMessage['headers'];
}

let server: Server;
let baseUrl: string;
const seen: Seen[] = [];
let healthStatus = 200;
const hanging = new Set<ServerResponse>();

function reply(res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  res.writeHead(status, { 'content-type': type });
  res.end(body);
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body, headers: req.headers });
      const path = (req.url ?? '').split('?')[0];
      switch (path) {
        case '/run': {
          const request = JSON.parse(body) as { request_id: string; parameters: { name?: string } };
          return reply(res, 200, JSON.stringify({ request_id: request.request_id, plugin_id: 'forged', success: true, text: `hi ${request.parameters.name}` }));
        }
        case '/api/v2/run':
          return reply(res, 200, JSON.stringify({ success: true, text: 'prefixed' }));
        case '/broken':
          return reply(res, 500, JSON.stringify({ success: false, error: 'database exploded' }));
        case '/teapot':
          return reply(res, 418, 'I am a teapot and this body is plain text', 'text/plain');
        case '/plain':
          return reply(res, 200, 'sunny and 21 degrees', 'text/plain');
        case '/hang':
          hanging.add(res);
          return;
        case '/items':
          return reply(res, 200, JSON.stringify({ items: ['milk'], query: req.url }));
        case '/items/42':
          return reply(res, 200, JSON.stringify({ success: true, text: `updated with ${body}` }));
        case '/health':
          return reply(res, healthStatus, healthStatus === 200 ? '{"ok":true}' : '{"ok":false}');
        default:
          return reply(res, 404, 'not found', 'text/plain');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
  return port;
}

function newAdapter(registry = new Registry({ db: new Database(':memory:'), events: new TypedEventBus(silentLogger()), log: silentLogger() })) {
  // Failures here are refusals and error statuses, which come at once; the generous timeout only keeps a
  // loaded machine from looking like a silent server.
  const adapter = createHttpAdapter({
    registry,
    log: silentLogger(),
    liveness: { health_poll_sec: 0.05, health_failure_threshold: 3 },
    health_timeout_ms: 2000,
  });
  return { adapter, registry };
}

const adapters: HttpAdapter[] = [];
afterEach(async () => {
  for (const a of adapters.splice(0)) await a.stop?.();
});

describe('http adapter: invoke', () => {
  const { adapter } = newAdapter();

  it('POSTs the PluginRequest to base_url + /run and parses the PluginResult', async () => {
    const rec = record(descriptor('greeter', 'http', { base_url: baseUrl }));
    const c = call(rec, { name: 'Bob' });
    const result = await adapter.invoke(c);
    expect(result).toMatchObject({ success: true, text: 'hi Bob', request_id: c.request.request_id, plugin_id: 'greeter' });
    const last = seen[seen.length - 1]!;
    expect(last.method).toBe('POST');
    expect(JSON.parse(last.body)).toMatchObject({ request_id: c.request.request_id, capability_id: 'run', parameters: { name: 'Bob' } });
    expect(last.headers['content-type']).toBe('application/json');
  });

  it('joins base_url with a path prefix and a configured path', async () => {
    const rec = record(descriptor('pre', 'http', { base_url: `${baseUrl}/api/`, path: 'v2/run' }));
    expect(await adapter.invoke(call(rec))).toMatchObject({ success: true, text: 'prefixed' });
  });

  it('reports a non-2xx status with its code and the start of the body', async () => {
    const rec = record(descriptor('b', 'http', { base_url: baseUrl, path: '/broken' }));
    const result = await adapter.invoke(call(rec));
    expect(result.success).toBe(false);
    expect(result.error).toContain('HTTP 500');
    expect(result.error).toContain('database exploded');
    const teapot = await adapter.invoke(call(record(descriptor('t', 'http', { base_url: baseUrl, path: '/teapot' }))));
    expect(teapot.error).toContain('HTTP 418');
    expect(teapot.error).toContain('I am a teapot');
  });

  it('takes a non-JSON body as text', async () => {
    const rec = record(descriptor('p', 'http', { base_url: baseUrl, path: '/plain' }));
    expect(await adapter.invoke(call(rec))).toMatchObject({ success: true, text: 'sunny and 21 degrees' });
  });

  it('says the plugin is not running when the connection is refused', async () => {
    const port = await closedPort();
    const rec = record(descriptor('gone', 'http', { base_url: `http://127.0.0.1:${port}` }));
    const result = await adapter.invoke(call(rec));
    expect(result.success).toBe(false);
    expect(result.error).toBe(`plugin gone is not running (connection refused at http://127.0.0.1:${port}/run)`);
  });

  it('shows no password or query value of the URL in an error, which reaches whoever made the call', async () => {
    const port = await closedPort();
    const keyed = descriptor('keyed', 'http', { base_url: `http://127.0.0.1:${port}/owm?appid=OWM_KEY_123` });
    const refused = await adapter.invoke(call(record(keyed)));
    expect(refused.error).not.toContain('OWM_KEY_123');
    expect(refused.error).toContain(`connection refused at http://127.0.0.1:${port}/owm?appid=***`);
    // fetch refuses a URL with a password, quoting it: the quote is redacted too.
    const withPassword = descriptor('login', 'http', { base_url: `http://user:pa55@127.0.0.1:${port}/owm?appid=OWM_KEY_123` });
    const failed = await adapter.invoke(call(record(withPassword)));
    expect(failed.error).not.toMatch(/OWM_KEY_123|pa55/);
    expect(failed.error).toContain(`http://user:***@127.0.0.1:${port}/owm?appid=***`);
  });

  it('aborts the fetch when the signal fires at the deadline', async () => {
    const before = hanging.size;
    const controller = new AbortController();
    const rec = record(descriptor('slow', 'http', { base_url: baseUrl, path: '/hang' }));
    const pending = adapter.invoke(call(rec, {}, { signal: controller.signal }));
    await waitFor(() => hanging.size > before);
    const res = [...hanging][hanging.size - 1]!;
    const closed = new Promise<void>((r) => res.once('close', () => r()));
    controller.abort(new Error('plugin "slow" did not answer within 1 s (run)'));
    const result = await pending;
    expect(result).toMatchObject({ success: false, error_code: 'timeout' });
    // The server sees the socket go: the request was really cancelled, not just ignored.
    await closed;
  });

  it('calls a REST GET capability with the parameters as a query string', async () => {
    const cap = capability('list_items', { method: 'GET', path: '/items' });
    const rec = record(descriptor('rest', 'http', { base_url: baseUrl }, { capabilities: [cap] }));
    const result = await adapter.invoke(call(rec, { q: 'milk & eggs', tags: ['a', 'b'], limit: 2 }, { capability: cap }));
    expect(result.success).toBe(true);
    const last = seen[seen.length - 1]!;
    expect(last.method).toBe('GET');
    expect(last.url).toBe('/items?q=milk+%26+eggs&tags=a&tags=b&limit=2');
    // JSON that is not a PluginResult is kept as data.
    expect(result.data).toEqual({ items: ['milk'], query: last.url });
  });

  it('calls a REST PUT capability with a JSON body and fills path templates', async () => {
    const cap = capability('update_item', { method: 'PUT', path: '/items/{id}' });
    const rec = record(descriptor('rest', 'http', { base_url: baseUrl }, { capabilities: [cap] }));
    const result = await adapter.invoke(call(rec, { id: 42, name: 'oat milk' }, { capability: cap }));
    expect(result).toMatchObject({ success: true, text: 'updated with {"name":"oat milk"}' });
    expect(seen[seen.length - 1]!.method).toBe('PUT');
  });

  it('explains a missing base_url', async () => {
    const result = await adapter.invoke(call(record(descriptor('nobase', 'http', {}))));
    expect(result).toMatchObject({ success: false, error_code: 'adapter_error', error: 'plugin nobase has no config.base_url' });
  });
});

describe('http adapter: health', () => {
  it('health() does a live check of health_check_url', async () => {
    const { adapter } = newAdapter();
    healthStatus = 200;
    const rec = record(descriptor('h', 'http', { base_url: baseUrl }, { health_check_url: `${baseUrl}/health` }));
    expect(await adapter.health!(rec)).toMatchObject({ ok: true });
    healthStatus = 503;
    expect(await adapter.health!(rec)).toMatchObject({ ok: false, detail: expect.stringContaining('503') });
    healthStatus = 200;
    const port = await closedPort();
    const refused = record(descriptor('r', 'http', { base_url: `http://127.0.0.1:${port}` }, { health_check_url: `http://127.0.0.1:${port}/health` }));
    expect(await adapter.health!(refused)).toMatchObject({ ok: false, detail: expect.stringContaining('connection refused') });
  });

  it('marks a plugin stale after the failure threshold and brings it back online', async () => {
    const { adapter, registry } = newAdapter();
    adapters.push(adapter);
    healthStatus = 200;
    adapter.start();
    const d = descriptor('polled', 'http', { base_url: baseUrl }, { health_check_url: `${baseUrl}/health` });
    expect(registry.register({ descriptor: d, owner: 'api' }).ok).toBe(true);
    const states: string[] = [];
    registry.events.on('plugin.health', ({ record: r }) => void states.push(r.state));
    await new Promise((r) => setTimeout(r, 150));
    expect(registry.get('polled')!.state).toBe('online');
    healthStatus = 500;
    await waitFor(() => registry.get('polled')!.state === 'stale');
    expect(registry.get('polled')!.state_reason).toContain('3 times');
    healthStatus = 200;
    await waitFor(() => registry.get('polled')!.state === 'online');
    expect(states).toEqual(['stale', 'online']);
    // Removing the plugin stops its polling.
    const before = seen.filter((s) => s.url === '/health').length;
    registry.unregister('polled');
    await new Promise((r) => setTimeout(r, 200));
    expect(seen.filter((s) => s.url === '/health').length).toBeLessThanOrEqual(before + 1);
  });
});
