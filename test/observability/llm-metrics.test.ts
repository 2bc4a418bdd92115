// LLM metrics around the real openai client talking to the scripted OpenAI-compatible server: tokens from
// the response's usage, and each way a request fails under its own reason.
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLlmClient, LlmError, type LlmClient } from '../../src/conversation/llm-client.js';
import { LlmMetrics } from '../../src/observability/llm-metrics.js';
import { parseExposition, type Exposition } from '../helpers/prometheus.js';
import { freePort } from '../helpers/ports.js';
import { startScriptedLlm, type ScriptedLlm } from '../helpers/scripted-llm.js';

let llm: ScriptedLlm;
beforeAll(async () => {
  llm = await startScriptedLlm();
});
afterAll(async () => {
  await llm?.close();
});

function metered(baseUrl: string): { client: LlmClient; scrape: () => Promise<Exposition> } {
  const prom = new Registry();
  const metrics = new LlmMetrics(prom);
  const raw = createLlmClient({ base_url: baseUrl, model: 'scripted', api_key: null, max_rounds: 3, timeout_sec: 1, temperature: 0 });
  if (!raw) throw new Error('no client');
  return { client: metrics.meter(raw), scrape: async () => parseExposition(await prom.metrics()) };
}

const user = [{ role: 'user' as const, content: 'hello' }];

describe('LLM metrics', () => {
  it('counts requests, tokens from usage and the duration of each request', async () => {
    const { client, scrape } = metered(llm.url);
    llm.push({ text: 'hi', usage: { prompt_tokens: 31, completion_tokens: 4 } }, { text: 'hi again', usage: { prompt_tokens: 40, completion_tokens: 6 } });
    expect((await client.complete(user)).usage).toEqual({ prompt_tokens: 31, completion_tokens: 4 });
    await client.complete(user);
    const m = await scrape();
    expect(m.value('homeclaw_llm_requests_total')).toBe(2);
    expect(m.value('homeclaw_llm_tokens_total', { kind: 'prompt' })).toBe(71);
    expect(m.value('homeclaw_llm_tokens_total', { kind: 'completion' })).toBe(10);
    expect(m.value('homeclaw_llm_request_duration_seconds_count')).toBe(2);
    expect(m.samples('homeclaw_llm_errors_total')).toEqual([]);
  });

  it('labels failures: http_5xx, http_4xx, invalid_response, timeout, connection', async () => {
    const { client, scrape } = metered(llm.url);
    llm.push({ status: 503 }, { status: 400, body: 'bad request' }, { status: 200, body: 'not a completion' }, { hang: true });
    for (let i = 0; i < 4; i++) await expect(client.complete(user)).rejects.toBeInstanceOf(LlmError);
    const closedPort = await freePort();
    const refused = metered(`http://127.0.0.1:${closedPort}/v1`);
    await expect(refused.client.complete(user)).rejects.toMatchObject({ failure: 'connection' });
    const m = await scrape();
    expect(m.value('homeclaw_llm_requests_total')).toBe(4);
    for (const reason of ['http_5xx', 'http_4xx', 'invalid_response', 'timeout']) expect(m.value('homeclaw_llm_errors_total', { reason }), reason).toBe(1);
    expect(m.value('homeclaw_llm_request_duration_seconds_count')).toBe(4);
    expect(m.value('homeclaw_llm_tokens_total', { kind: 'prompt' })).toBe(0);
    expect((await refused.scrape()).value('homeclaw_llm_errors_total', { reason: 'connection' })).toBe(1);
  }, 20_000);
});
