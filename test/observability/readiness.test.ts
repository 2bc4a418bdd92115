// Readiness: named checks, each up or down, with deadlines, a short cache and one log line per change;
// the Core's own probes against real parts (an embedded broker, SQLite, HTTP servers).
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmbeddedBroker } from '../../src/bus/broker.js';
import type { CoreBus } from '../../src/bus/core-bus.js';
import { DEFAULT_CONFIG } from '../../src/config/defaults.js';
import type { CoreConfig } from '../../src/config/types.js';
import { createLogger, silentLogger } from '../../src/log.js';
import { brokerProbe, registryProbe, retrievalProbe } from '../../src/observability/core-probes.js';
import { homeAssistantTarget, probeHomeAssistant, probeLlm } from '../../src/observability/endpoint-probes.js';
import { Readiness, type ProbeOutcome } from '../../src/observability/readiness.js';
import { startScriptedLlm } from '../helpers/scripted-llm.js';
import { freePort } from '../helpers/ports.js';
import { startFakeHomeAssistant } from '../helpers/fake-home-assistant.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function capturedLog(): { log: ReturnType<typeof createLogger>; lines: () => Record<string, unknown>[] } {
  const out: string[] = [];
  const log = createLogger({ level: 'debug', destination: { write: (line: string) => void out.push(line) } });
  return { log, lines: () => out.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

const signal = (): AbortSignal => AbortSignal.timeout(3000);

async function fakeHomeAssistant(token: string): Promise<string> {
  const ha = await startFakeHomeAssistant(token);
  cleanups.push(() => ha.close());
  return ha.url;
}

describe('Readiness', () => {
  it('is ready when every check is up, and names each part up or down', async () => {
    const readiness = new Readiness({ log: silentLogger(), cacheMs: 0 });
    let dbUp = true;
    readiness.add('broker', () => true);
    readiness.add('registry', async () => ({ up: dbUp, reason: 'closed' }));
    expect(await readiness.check()).toEqual({ ready: true, checks: { broker: 'up', registry: 'up' } });
    dbUp = false;
    expect(await readiness.check()).toEqual({ ready: false, checks: { broker: 'up', registry: 'down' } });
    expect(readiness.names()).toEqual(['broker', 'registry']);
  });

  it('counts a throwing, rejecting or silent probe as down', async () => {
    const readiness = new Readiness({ log: silentLogger(), cacheMs: 0, timeoutMs: 100 });
    let aborted = false;
    readiness.add('throws', () => {
      throw new Error('boom');
    });
    readiness.add('rejects', async () => Promise.reject(new Error('nope')));
    readiness.add('hangs', (s) => new Promise<boolean>(() => s.addEventListener('abort', () => (aborted = true))));
    readiness.add('fine', () => true);
    expect(await readiness.check()).toEqual({ ready: false, checks: { throws: 'down', rejects: 'down', hangs: 'down', fine: 'up' } });
    expect(aborted).toBe(true);
  });

  it('logs why a part went down once per change, and when it is back', async () => {
    const { log, lines } = capturedLog();
    const readiness = new Readiness({ log, cacheMs: 0 });
    let outcome: ProbeOutcome = { up: true };
    readiness.add('llm', () => outcome);
    await readiness.check();
    outcome = { up: false, reason: 'GET http://127.0.0.1:1/v1/models: ECONNREFUSED' };
    await readiness.check();
    await readiness.check();
    outcome = { up: true };
    await readiness.check();
    const messages = lines().map((l) => [l['level'], l['msg'], l['reason']]);
    expect(messages).toEqual([
      [40, 'readiness: llm is down', 'GET http://127.0.0.1:1/v1/models: ECONNREFUSED'],
      [30, 'readiness: llm is up again', undefined],
    ]);
  });

  it('shares one evaluation between concurrent requests and serves a fresh report from its cache', async () => {
    const readiness = new Readiness({ log: silentLogger(), cacheMs: 60_000 });
    let calls = 0;
    readiness.add('slow', async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 50));
      return true;
    });
    await Promise.all([readiness.check(), readiness.check(), readiness.check()]);
    expect(calls).toBe(1);
    await readiness.check();
    expect(calls).toBe(1);
  });

  it('refuses a second check with the same name and names that are not identifiers', () => {
    const readiness = new Readiness({ log: silentLogger() });
    readiness.add('broker', () => true);
    expect(() => readiness.add('broker', () => true)).toThrow(/already registered/);
    expect(() => readiness.add('Bad Name', () => true)).toThrow(/must match/);
  });
});

describe('the Core probes', () => {
  it('registry: up while SQLite answers, down once the database is closed', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE plugins (id TEXT PRIMARY KEY)');
    const probe = registryProbe(db);
    expect(await probe(signal())).toEqual({ up: true });
    db.close();
    expect(await probe(signal())).toMatchObject({ up: false });
  });

  it('broker (embedded): up while the MQTT listener accepts connections, down after it closed', async () => {
    const broker = await startEmbeddedBroker({ host: '127.0.0.1', port: 0, wsPort: null, allowAnonymous: true, maxPayloadBytes: 65536, log: silentLogger() });
    const probe = brokerProbe({} as CoreBus, broker);
    expect(await probe(signal())).toEqual({ up: true });
    await broker.close();
    expect(await Promise.resolve(probe(signal())).catch((e: Error) => ({ up: false, reason: e.message }))).toMatchObject({ up: false });
  });

  it('broker (external): follows the MQTT session state', () => {
    const bus = { connected: true } as unknown as CoreBus;
    const probe = brokerProbe(bus, undefined);
    expect(probe(signal())).toEqual({ up: true });
    (bus as unknown as { connected: boolean }).connected = false;
    expect(probe(signal())).toMatchObject({ up: false, reason: 'not connected to the external MQTT broker' });
  });

  it('retrieval: up when every registered plugin is indexed, whatever the dense state', () => {
    let status = { state: 'degraded' as const, embedder: 'use-lite-512', indexed: 4, reason: 'Chroma down' };
    let registered = 4;
    const probe = retrievalProbe({ status: () => status }, () => registered);
    expect(probe(signal())).toEqual({ up: true });
    registered = 5;
    expect(probe(signal())).toEqual({ up: false, reason: '4 of 5 registered plugins are indexed' });
    status = { ...status, indexed: 5 };
    expect(probe(signal())).toEqual({ up: true });
  });

  it('llm: GET <base_url>/models answers 2xx; a base URL without /v1 or a closed port is down, with the reason', async () => {
    const llm = await startScriptedLlm();
    cleanups.push(() => llm.close());
    expect(await probeLlm({ base_url: llm.url, api_key: 'k' }, signal())).toMatchObject({ up: true, status: 200 });
    const withoutV1 = llm.url.replace(/\/v1$/, '');
    expect(await probeLlm({ base_url: withoutV1, api_key: null }, signal())).toMatchObject({ up: false, problem: 'not_found', status: 404 });
    const closed = `http://127.0.0.1:${await freePort()}/v1`;
    const down = await probeLlm({ base_url: closed, api_key: null }, signal());
    expect(down).toMatchObject({ up: false, problem: 'unreachable' });
    expect(down.reason).toContain('ECONNREFUSED');
    expect(await probeLlm({ base_url: 'not a url', api_key: null }, signal())).toMatchObject({ up: false, problem: 'bad_url' });
  });

  it('homeassistant: GET /api/ with the token; a refused token is unauthorized', async () => {
    const url = await fakeHomeAssistant('long-lived-token');
    expect(await probeHomeAssistant({ url, token: 'long-lived-token' }, signal())).toMatchObject({ up: true });
    expect(await probeHomeAssistant({ url: `${url}/`, token: 'wrong' }, signal())).toMatchObject({ up: false, problem: 'unauthorized', status: 401 });
    expect(await probeHomeAssistant({ url, token: null }, signal())).toMatchObject({ up: false, problem: 'unauthorized' });
  });

  it('finds Home Assistant in the homeassistant config section (where HOMECLAW_HA_URL / _TOKEN land)', () => {
    const base = DEFAULT_CONFIG as CoreConfig;
    expect(homeAssistantTarget(base)).toBeNull();
    const withSection = { ...base, homeassistant: { ...base.homeassistant, url: 'http://config:8123', token: 'from-config' } };
    expect(homeAssistantTarget(withSection)).toEqual({ url: 'http://config:8123', token: 'from-config' });
  });
});
