// The bus never waits for the model, end to end: a real Core (embedded broker, HTTP API, embedding worker
// threads, a real Chroma), an MQTT plugin in its own process. While a 256-capability registration is
// being indexed, searches and invokes are answered; /api/status shows the backlog and the event-loop
// delay; a dying embedding worker never makes a call fail.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PluginResult } from '../../src/protocol/types.js';
import { FAULT_EXIT } from '../../src/retrieval/embedding-worker-protocol.js';
import type { RetrievalStatus, SearchResponse } from '../../src/retrieval/search-api.js';
import type { EventLoopDelay } from '../../src/observability/event-loop-monitor.js';
import { startChroma, type TestChroma } from '../helpers/chroma.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { startChildPlugin, type ChildPlugin } from '../fixtures/sdk/child-plugin.js';
import { ensureBuilt, REPO_ROOT } from './helpers.js';

// Test-only switch read when the Core creates its embedding pool: a marker text makes a real worker exit.
process.env.HOMECLAW_TEST_EMBEDDER_FAULTS = '1';

interface Status {
  retrieval: RetrievalStatus;
  event_loop: EventLoopDelay;
}

let chroma: TestChroma;
let core: TestCore;
let plugin: ChildPlugin;

beforeAll(async () => {
  await ensureBuilt();
  chroma = await startChroma();
  core = await startTestCore({
    overrides: {
      retrieval: { enabled: true, chroma: { url: chroma.url }, retry_interval_sec: 3600 },
      liveness: { health_poll_sec: 3600 },
    },
  });
  plugin = startChildPlugin(process.execPath, [join(REPO_ROOT, 'test', 'fixtures', 'sdk', 'plugin-process.mjs'), core.mqttUrl, 'echoer', '5']);
  await plugin.registered;
  await waitFor(async () => (await status()).retrieval.state === 'ok' && (await status()).retrieval.backlog === 0);
}, 180_000);

afterAll(async () => {
  await plugin?.stop();
  await core?.cleanup();
  await chroma?.stop();
});

async function status(): Promise<Status> {
  return (await core.api<Status>('GET', '/api/status')).body;
}

async function invoke(text: string): Promise<{ status: number; body: PluginResult }> {
  return core.api<PluginResult>('POST', '/v1/plugins/echoer/tools/echo/run', { text });
}

async function search(q: string): Promise<SearchResponse> {
  const response = await core.api<SearchResponse>('GET', `/api/plugins/search?q=${encodeURIComponent(q)}&k=3`);
  expect(response.status).toBe(200);
  return response.body;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the bus never waits for the model', () => {
  it('answers an invoke and a hybrid search while a 256-capability registration is being indexed', async () => {
    const capabilities = Array.from({ length: 256 }, (_, i) => ({
      id: `valve_${i}`,
      name: `Valve ${i}`,
      description: `Open or close sprinkler valve ${i} of the garden irrigation.`,
    }));
    const registered = await core.api('POST', '/api/plugins/register', {
      id: 'irrigation',
      name: 'Irrigation',
      description: 'Garden irrigation with 256 valves.',
      type: 'http',
      health_check_url: 'http://127.0.0.1:9/health',
      config: { base_url: 'http://127.0.0.1:9' },
      capabilities,
    });
    expect(registered.status).toBe(201);
    expect((await status()).retrieval.backlog).toBe(1);

    const invoked = await invoke('still here');
    expect(invoked.status).toBe(200);
    expect(invoked.body).toMatchObject({ success: true, text: 'echo: still here' });
    const found = await search('echo the text back');
    expect(found.mode).toBe('hybrid');
    expect(found.hits[0]?.plugin_id).toBe('echoer');
    // Both were answered while the big plugin still waited to be embedded.
    const during = await status();
    expect(during.retrieval.backlog).toBe(1);
    expect(during.retrieval.embedding?.queued_index_texts).toBeGreaterThan(0);

    await waitFor(async () => (await status()).retrieval.backlog === 0);
    expect((await search('open sprinkler valve 42 in the garden')).hits[0]?.plugin_id).toBe('irrigation');
  });

  it('reports the event-loop delay, the backlog, the embedding workers and the query cache in /api/status', async () => {
    const body = await status();
    for (const key of ['p50_ms', 'p99_ms', 'max_ms', 'window_sec'] as const) {
      expect(typeof body.event_loop[key]).toBe('number');
      expect(body.event_loop[key]).toBeGreaterThanOrEqual(0);
    }
    expect(body.event_loop.p99_ms).toBeGreaterThanOrEqual(body.event_loop.p50_ms);
    expect(body.retrieval).toMatchObject({ state: 'ok', backlog: 0, embedding: { workers: 1, ready_workers: 1, queued_queries: 0, queued_index_texts: 0 } });
    expect(body.retrieval.query_cache).toMatchObject({ capacity: 1000 });
    expect(body.retrieval.query_cache!.misses).toBeGreaterThan(0);
  });

  it('never fails a call when an embedding worker dies: search degrades to BM25, says why, and recovers', async () => {
    const invokes = Array.from({ length: 20 }, (_, i) => invoke(`call ${i}`));
    const poisoned = await search(FAULT_EXIT);
    expect(poisoned.mode).toBe('bm25');
    expect(poisoned.error).toBeUndefined();
    for (const result of await Promise.all(invokes)) expect(result.status).toBe(200);

    const after = await status();
    expect(after.retrieval.embedding?.restarts).toBe(1);
    expect(after.retrieval.embedding?.last_failure).toMatch(/embedding worker 0 exited with code 70/);
    await waitFor(async () => (await status()).retrieval.state === 'ok');
    expect((await search('echo the text back')).mode).toBe('hybrid');
    expect((await invoke('after')).body).toMatchObject({ success: true, text: 'echo: after' });
  });
});
