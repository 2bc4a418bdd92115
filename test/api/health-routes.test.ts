// GET /healthz and /readyz on a real Core: no token, nothing beyond up/down per part, 503 when a part
// is down (an LLM that stops answering, an external Mosquitto that goes away), and room for other parts.
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';
import { startScriptedLlm, type ScriptedLlm } from '../helpers/scripted-llm.js';
import { startTestCore, type TestCore } from '../helpers/core.js';

let core: TestCore | undefined;
let llm: ScriptedLlm | undefined;
let mosquitto: MosquittoHandle | undefined;
afterEach(async () => {
  await core?.cleanup();
  await llm?.close();
  await mosquitto?.stop();
  core = llm = mosquitto = undefined;
});

interface ReadyBody {
  status: string;
  checks: Record<string, string>;
}

async function get(url: string): Promise<{ status: number; body: ReadyBody; headers: Headers }> {
  const response = await fetch(url);
  return { status: response.status, body: (await response.json()) as ReadyBody, headers: response.headers };
}

/** Polls /readyz until it answers the expected status (the Core reuses a report for up to a second). */
async function readyzUntil(core: TestCore, status: number, timeoutMs = 20_000): Promise<ReadyBody> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await get(`${core.httpUrl}/readyz`);
    if (answer.status === status) return answer.body;
    if (Date.now() > deadline) throw new Error(`/readyz stayed ${answer.status}: ${JSON.stringify(answer.body)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('health routes', () => {
  it('/healthz and /readyz answer without a token and say only up or down per part', async () => {
    core = await startTestCore();
    const live = await get(`${core.httpUrl}/healthz`);
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: 'ok' });
    expect(live.headers.get('cache-control')).toBe('no-store');
    const ready = await get(`${core.httpUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { broker: 'up', registry: 'up', retrieval: 'up' } });
    expect((await fetch(`${core.httpUrl}/healthz`, { method: 'HEAD' })).status).toBe(200);
    // Everything else still needs the token.
    expect((await fetch(`${core.httpUrl}/api/status`)).status).toBe(401);
    expect((await fetch(`${core.httpUrl}/readyz/../api/status`)).status).toBe(401);
  });

  it('a configured LLM that stops answering makes the Core not ready: 503, the reason only in the log', async () => {
    llm = await startScriptedLlm();
    const lines: string[] = [];
    const log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    core = await startTestCore({ overrides: { llm: { base_url: llm.url, model: 'scripted', api_key: 'sk-secret-key-123' } }, log });
    expect(await readyzUntil(core, 200)).toEqual({ status: 'ready', checks: { broker: 'up', registry: 'up', retrieval: 'up', llm: 'up' } });
    const url = llm.url;
    await llm.close();
    llm = undefined;
    const body = await readyzUntil(core, 503);
    expect(body).toEqual({ status: 'not ready', checks: { broker: 'up', registry: 'up', retrieval: 'up', llm: 'down' } });
    expect(JSON.stringify(body)).not.toContain('127.0.0.1');
    const warning = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((l) => l['msg'] === 'readiness: llm is down');
    expect(warning?.['reason']).toContain(`${url}/models`);
    expect(lines.join('\n')).not.toContain('sk-secret-key-123');
    // Liveness is unaffected: a Docker healthcheck must not restart a Core whose LLM is away.
    expect((await get(`${core.httpUrl}/healthz`)).status).toBe(200);
  });

  it('another part adds its own check through the Core context', async () => {
    core = await startTestCore();
    let up = false;
    core.ctx.readiness.add('homeassistant', () => up);
    expect(await readyzUntil(core, 503)).toEqual({ status: 'not ready', checks: { broker: 'up', registry: 'up', retrieval: 'up', homeassistant: 'down' } });
    up = true;
    expect((await readyzUntil(core, 200)).checks['homeassistant']).toBe('up');
  });

  it('external broker mode: down while Mosquitto is away, up again after it is back', async () => {
    mosquitto = await startMosquitto();
    core = await startTestCore({ overrides: { broker: { url: mosquitto.url } } });
    expect((await readyzUntil(core, 200)).checks['broker']).toBe('up');
    await mosquitto.kill();
    expect(await readyzUntil(core, 503)).toEqual({ status: 'not ready', checks: { broker: 'down', registry: 'up', retrieval: 'up' } });
    await mosquitto.start();
    expect((await readyzUntil(core, 200)).checks['broker']).toBe('up');
  });
});
