// The ways to ask: HTTP route, CLI rendering, MCP tool — over a real Retrieval in BM25-only mode
// (dense search is covered by retrieval.test.ts).
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerSearchRoutes } from '../../src/api/routes/search.js';
import { renderSearchResponse } from '../../src/cli/search-command.js';
import { silentLogger } from '../../src/log.js';
import { findPluginsTool } from '../../src/retrieval/mcp-find-plugins.js';
import { createRetrieval, type Retrieval } from '../../src/retrieval/retrieval.js';
import { HOME_PLUGINS, newRegistry, plugin, retrievalConfig } from './fixtures.js';

let app: FastifyInstance;
let retrieval: Retrieval;

beforeAll(async () => {
  const registry = newRegistry();
  for (const descriptor of [...HOME_PLUGINS, { ...plugin('secretive', { description: 'Unlock the front door' }), config: { api_key: 'sk-very-secret' } }]) {
    registry.register({ descriptor, owner: 'api' });
  }
  retrieval = await createRetrieval({
    config: { ...retrievalConfig({ collection: 'unused', url: '', data_dir: '' }), enabled: false },
    registry,
    log: silentLogger(),
  });
  await retrieval.start();
  app = Fastify();
  registerSearchRoutes(app, { search: retrieval });
  await app.ready();
});

afterAll(async () => {
  await app.close();
  await retrieval.stop();
});

async function get(url: string) {
  const response = await app.inject({ method: 'GET', url });
  return { status: response.statusCode, body: response.json() as Record<string, unknown> };
}

describe('GET /api/plugins/search', () => {
  it('answers plugins ranked with capabilities and no config', async () => {
    const { status, body } = await get('/api/plugins/search?q=unlock%20the%20door&k=2');
    expect(status).toBe(200);
    expect(body).toMatchObject({ k: 2, mode: 'bm25', hits: [{ plugin_id: 'secretive', reason: 'ranked', capabilities: [{ capability_id: 'run' }] }] });
    expect(JSON.stringify(body)).not.toContain('sk-very-secret');
  });

  it.each([
    ['/api/plugins/search', /missing q/],
    ['/api/plugins/search?q=', /query is empty/],
    ['/api/plugins/search?q=%20%20', /query is empty/],
    ['/api/plugins/search?q=lights&k=0', /k must be at least 1/],
    ['/api/plugins/search?q=lights&k=-4', /k must be at least 1/],
    ['/api/plugins/search?q=lights&k=abc', /k must be a whole number/],
    ['/api/plugins/search?q=lights&k=1.5', /k must be a whole number/],
    ['/api/plugins/search?q=a&q=b', /once each/],
  ])('400 for %s', async (url, message) => {
    const { status, body } = await get(url);
    expect(status).toBe(400);
    expect(body.message).toMatch(message);
  });

  it('clamps a huge k and accepts emoji', async () => {
    const { status, body } = await get(`/api/plugins/search?q=${encodeURIComponent('🎵 play jazz 🎷')}&k=100000`);
    expect(status).toBe(200);
    expect(body.k).toBe(50);
    expect(body.warnings).toEqual(['k clamped to 50']);
    expect((body.hits as { plugin_id: string }[])[0]?.plugin_id).toBe('music');
  });
});

describe('homeclaw plugins search rendering', () => {
  it('prints a table, JSON with --json, and API errors', async () => {
    const { body } = await get('/api/plugins/search?q=turn%20on%20the%20lights&k=2');
    const table = renderSearchResponse(200, body);
    expect(table.exitCode).toBe(0);
    const lines = table.text.split('\n');
    expect(lines[0]).toBe('(retrieval is degraded: bm25 ranking only)');
    expect(lines[1]).toMatch(/^#\s+PLUGIN\s+SCORE\s+WHY\s+CAPABILITIES\s+DESCRIPTION$/);
    expect(lines[2]).toMatch(/^1\s+lights\s+[-\d.]+\s+turn_on, turn_off, set_colour\s+Control the lamps/);
    expect(JSON.parse(renderSearchResponse(200, body, true).text)).toEqual(body);
    const bad = await get('/api/plugins/search?q=x&k=0');
    expect(renderSearchResponse(bad.status, bad.body)).toEqual({ text: 'search failed (400): k must be at least 1, got 0', exitCode: 1 });
    expect(renderSearchResponse(200, { query: 'x', k: 5, mode: 'hybrid', hits: [] }).text).toBe('No plugin matches.');
  });
});

describe('MCP find_plugins', () => {
  it('describes itself and answers text, with readable errors for bad arguments', async () => {
    const tool = findPluginsTool(retrieval);
    expect(tool.name).toBe('find_plugins');
    expect(tool.inputSchema).toMatchObject({ type: 'object', required: ['query'] });
    expect(await tool.handler({ query: 'add eggs to the shopping list', k: 1 })).toMatch(/^1\. shopping \(Shopping list\) — Add groceries/);
    expect(await tool.handler({})).toMatch(/^Error: find_plugins needs "query"/);
    expect(await tool.handler({ query: '  ' })).toMatch(/^Error: query is empty/);
    expect(await tool.handler({ query: 'lights', k: 'ten' })).toMatch(/^Error: "k" must be a whole number/);
    expect(await tool.handler({ query: 'lights', k: 0 })).toMatch(/^Error: k must be at least 1/);
    expect(await tool.handler({ query: 'xyzzy plugh' })).toBe('No plugin matches this request.');
  });
});
