// Home Assistant ingress: with dashboard.ingress_proxy set, a request from that TCP peer carrying
// X-Ingress-Path and no Authorization header acts as the admin. Anything else is refused as before: the
// same headers from another address, the proxy's requests without the header, a wrong token through
// the proxy; a user token through the proxy still acts only as its user. Off by default.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { startIngressProxy, type IngressProxy } from '../helpers/ingress-proxy.js';

const PROXY_ADDRESS = '127.0.0.2';
let core: TestCore;
let proxy: IngressProxy;
let aliceToken: string;

function from(localAddress: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const url = new URL(path, core.httpUrl);
  return new Promise((resolve, reject) => {
    request({ host: url.hostname, port: url.port, path: url.pathname + url.search, headers, localAddress }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

const INGRESS = { 'x-ingress-path': '/api/hassio_ingress/abc123' };

beforeAll(async () => {
  core = await startTestCore({ overrides: { dashboard: { ingress_proxy: PROXY_ADDRESS } } });
  aliceToken = (await core.api<{ token: string }>('POST', '/api/users', { user_id: 'alice' })).body.token;
  proxy = await startIngressProxy({
    target: core.httpUrl,
    sourceAddress: PROXY_ADDRESS,
    token: 'abc123',
    user: { id: 'f00d', name: 'pat', display_name: 'Pat Doe' },
  });
});

afterAll(async () => {
  await proxy?.close();
  await core?.cleanup();
});

describe('ingress requests from the trusted proxy', () => {
  it('act as the admin and say so', async () => {
    const plugins = await from(PROXY_ADDRESS, '/api/plugins', INGRESS);
    expect(plugins.status).toBe(200);
    expect(JSON.parse(plugins.body)).toHaveProperty('plugins');
    const who = await from(PROXY_ADDRESS, '/api/whoami', { ...INGRESS, 'x-remote-user-name': 'pat', 'x-remote-user-display-name': 'Pat Doe' });
    expect(JSON.parse(who.body)).toEqual({
      kind: 'admin',
      via: 'ingress',
      ingress_path: '/api/hassio_ingress/abc123',
      ingress_user: 'pat',
      ingress_display_name: 'Pat Doe',
    });
  });

  it('work through a proxy that strips the prefix, the event stream included', async () => {
    const who = await fetch(`${proxy.entry}api/whoami`);
    expect(await who.json()).toMatchObject({ kind: 'admin', via: 'ingress', ingress_user: 'pat' });
    const page = await fetch(proxy.entry);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="app">');
    const controller = new AbortController();
    const events = await fetch(`${proxy.entry}api/events`, { signal: controller.signal });
    expect(events.status).toBe(200);
    const reader = events.body!.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toContain('event: ready');
    controller.abort();
  });

  it('are refused without X-Ingress-Path, or with a malformed one', async () => {
    expect((await from(PROXY_ADDRESS, '/api/plugins')).status).toBe(401);
    expect((await from(PROXY_ADDRESS, '/api/plugins', { 'x-ingress-path': 'not a path' })).status).toBe(401);
  });

  it('with a token act as that token: a wrong one is refused, a user token stays a user', async () => {
    expect((await from(PROXY_ADDRESS, '/api/plugins', { ...INGRESS, authorization: 'Bearer wrong-token' })).status).toBe(401);
    const asAlice = await from(PROXY_ADDRESS, '/api/whoami', { ...INGRESS, authorization: `Bearer ${aliceToken}` });
    expect(JSON.parse(asAlice.body)).toEqual({ kind: 'user', via: 'token', user_id: 'alice' });
    expect((await from(PROXY_ADDRESS, '/api/plugins', { ...INGRESS, authorization: `Bearer ${aliceToken}` })).status).toBe(403);
  });
});

describe('requests from anywhere else', () => {
  it('are refused whatever headers they carry', async () => {
    const forged = { ...INGRESS, 'x-forwarded-for': PROXY_ADDRESS, 'x-real-ip': PROXY_ADDRESS, 'x-remote-user-name': 'pat' };
    expect((await from('127.0.0.1', '/api/plugins', forged)).status).toBe(401);
    expect((await from('127.0.0.1', '/api/whoami', forged)).status).toBe(401);
  });

  it('are refused when no ingress proxy is configured (the default)', async () => {
    const plain = await startTestCore();
    try {
      const url = new URL('/api/plugins', plain.httpUrl);
      const status = await new Promise<number>((resolve, reject) => {
        request({ host: url.hostname, port: url.port, path: url.pathname, headers: INGRESS, localAddress: PROXY_ADDRESS }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
          .on('error', reject)
          .end();
      });
      expect(status).toBe(401);
    } finally {
      await plain.cleanup();
    }
  });
});
