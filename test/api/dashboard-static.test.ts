// The dashboard's files as the Core serves them: the page without a token, with a strict content
// security policy and revalidation; the content-hashed assets with their real types and a year of
// caching; nothing outside dist/web; the API behind them still closed; a clear answer when the
// dashboard is not built, and no page at all when it is turned off.
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerDashboardRoutes } from '../../src/api/routes/dashboard.js';
import { silentLogger } from '../../src/log.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { ensureWebBuilt } from '../helpers/web-build.js';

let core: TestCore;

beforeAll(async () => {
  await ensureWebBuilt();
  core = await startTestCore();
}, 240_000);

afterAll(async () => {
  await core?.cleanup();
});

/** A plain HTTP GET (fetch adds "cache-control: no-cache" to conditional requests, which defeats them). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

async function assetsOf(): Promise<{ script: string; style: string }> {
  const html = await (await fetch(`${core.httpUrl}/`)).text();
  const script = /<script[^>]+src="(\.\/assets\/[^"]+\.js)"/.exec(html)?.[1];
  const style = /<link[^>]+href="(\.\/assets\/[^"]+\.css)"/.exec(html)?.[1];
  expect(script, html).toBeDefined();
  expect(style, html).toBeDefined();
  return { script: script!, style: style! };
}

describe('GET / and /assets/*', () => {
  it('serves the page without a token, revalidated, under a strict content security policy', async () => {
    const res = await fetch(`${core.httpUrl}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html; charset=utf-8/i);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'self'");
    const html = await res.text();
    expect(html).toContain('<div id="app"></div>');
    // Every URL in the page is relative, so it works under a path prefix (Home Assistant ingress).
    expect(html).not.toMatch(/(src|href)="\/(?!\/)/);
    const etag = res.headers.get('etag');
    expect(etag).toBeTruthy();
    const again = await rawGet(`${core.httpUrl}/`, { 'if-none-match': etag! });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
    const head = await fetch(`${core.httpUrl}/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('serves the hashed assets with their types, cached for a year', async () => {
    const { script, style } = await assetsOf();
    const js = await fetch(new URL(script, `${core.httpUrl}/`));
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^(text|application)\/javascript/);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(js.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await js.text()).length).toBeGreaterThan(1000);
    const css = await fetch(new URL(style, `${core.httpUrl}/`));
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(css.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('serves nothing outside the built dashboard and keeps the API closed', async () => {
    const missing = await fetch(`${core.httpUrl}/assets/nothing-here.js`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ statusCode: 404 });
    for (const path of ['/assets/../package.json', '/assets/%2e%2e/%2e%2e/package.json', '/assets/..%2f..%2fpackage.json']) {
      const res = await fetch(`${core.httpUrl}${path}`);
      const text = await res.text();
      expect(res.status, path).not.toBe(200);
      expect(text, path).not.toContain('"homeclaw-bus"');
    }
    expect((await fetch(`${core.httpUrl}/api/plugins`)).status).toBe(401);
    expect((await fetch(`${core.httpUrl}/index.html`)).status).toBe(401);
  });
});

describe('without a built dashboard, or with it turned off', () => {
  it('answers GET / with 503 and how to build it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'homeclaw-no-web-'));
    const app = Fastify();
    try {
      await registerDashboardRoutes(app, { root, log: silentLogger() });
      const res = await app.inject({ method: 'GET', url: '/' });
      expect(res.statusCode).toBe(503);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.body).toContain('npm run build');
      expect((await app.inject({ method: 'GET', url: '/assets/x.js' })).statusCode).toBe(404);
    } finally {
      await app.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('serves no page when dashboard.enabled is false', async () => {
    const off = await startTestCore({ overrides: { dashboard: { enabled: false } } });
    try {
      expect((await fetch(`${off.httpUrl}/`)).status).toBe(401);
      expect((await fetch(`${off.httpUrl}/`, { headers: { authorization: `Bearer ${off.adminToken}` } })).status).toBe(404);
      expect((await fetch(`${off.httpUrl}/assets/x.js`)).status).toBe(401);
    } finally {
      await off.cleanup();
    }
  });
});
