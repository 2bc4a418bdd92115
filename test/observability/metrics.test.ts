// GET /metrics on a real Core: invocations of a real SDK plugin in another process (an answer, a
// failure, a timeout), refusals (unknown plugin, stale plugin, invalid parameters), a chat through the
// scripted LLM with the real openai client, retrieval queries; the answer parsed by the official
// Prometheus parser and linted by promtool. Who may scrape: the admin token and the metrics token, which
// opens nothing else.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PluginResult } from '../../src/protocol/types.js';
import { topics } from '../../src/protocol/topics.js';
import { ensureBuilt, REPO_ROOT } from '../e2e/helpers.js';
import { ChildClient } from '../fixtures/bus/child-client.js';
import { startChildPlugin, type ChildPlugin } from '../fixtures/sdk/child-plugin.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { parseExposition, promtoolLint, type Exposition } from '../helpers/prometheus.js';
import { startScriptedLlm, type ScriptedLlm } from '../helpers/scripted-llm.js';

const METRICS_TOKEN = 'scraper-token-0123456789abcdef';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

let core: TestCore;
let llm: ScriptedLlm;
let greeter: ChildPlugin;
let sleepy: ChildClient;

async function scrape(token: string = METRICS_TOKEN): Promise<{ status: number; contentType: string | null; text: string }> {
  const response = await fetch(`${core.httpUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
}

async function metrics(): Promise<Exposition> {
  const answer = await scrape();
  expect(answer.status).toBe(200);
  return parseExposition(answer.text);
}

const invoke = (plugin: string, capability: string, parameters: Record<string, unknown> = {}) =>
  core.api<PluginResult>('POST', `/v1/plugins/${plugin}/tools/${capability}/run`, parameters);

const invocations = (m: Exposition, plugin: string, capability: string, outcome: string): number =>
  m.value('homeclaw_invocations_total', { plugin, capability, outcome }) ?? 0;

beforeAll(async () => {
  await ensureBuilt();
  llm = await startScriptedLlm();
  core = await startTestCore({
    overrides: {
      llm: { base_url: llm.url, model: 'scripted' },
      liveness: { grace_sec: 0.5 },
      dispatch: { default_timeout_sec: 5 },
      metrics: { token: METRICS_TOKEN },
    },
  });
  greeter = startChildPlugin(process.execPath, [join(REPO_ROOT, 'test', 'fixtures', 'observability', 'metered-plugin.mjs'), core.mqttUrl, 'greeter']);
  await greeter.registered;
}, 120_000);

afterAll(async () => {
  await sleepy?.end();
  await greeter?.stop('SIGKILL');
  await core?.cleanup();
  await llm?.close();
});

describe('GET /metrics', () => {
  it('counts invocations by plugin, capability and outcome, times those that ran, and shows plugins by state', async () => {
    const before = await metrics();

    expect((await invoke('greeter', 'greet', { name: 'Ada' })).body).toMatchObject({ success: true, text: 'Hello, Ada!' });
    expect((await invoke('greeter', 'greet', { name: 'Grace' })).body.success).toBe(true);
    expect((await invoke('greeter', 'fail')).body).toMatchObject({ success: false, error_code: 'plugin_error' });
    expect((await invoke('greeter', 'hang')).body).toMatchObject({ success: false, error_code: 'timeout' });
    expect((await invoke('greeter', 'greet', { name: 42 })).body).toMatchObject({ success: false, error_code: 'invalid_params' });
    expect((await invoke('ghost-7f3a', 'haunt')).body).toMatchObject({ success: false, error_code: 'not_found' });
    expect((await invoke('greeter', 'fly-2b9c')).body).toMatchObject({ success: false, error_code: 'not_found' });

    // A plugin in another process that registers and then stays silent: stale after its interval + grace.
    sleepy = new ChildClient({ url: core.mqttUrl, clientId: 'sleepy-client' });
    await sleepy.connected();
    await sleepy.subscribe(topics.registered('sleepy'));
    await sleepy.publish(
      topics.register(),
      JSON.stringify({
        id: 'sleepy',
        name: 'Sleepy',
        description: 'Naps',
        epoch: Date.now(),
        heartbeat_interval_sec: 0.5,
        capabilities: [{ id: 'nap', name: 'Nap', description: 'Take a nap', parameters: [] }],
      }),
    );
    await sleepy.message(topics.registered('sleepy'));
    await expect.poll(() => core.ctx.registry.get('sleepy')?.state, { timeout: 10_000 }).toBe('stale');
    expect((await invoke('sleepy', 'nap')).body).toMatchObject({ success: false, error_code: 'stale' });

    const answer = await scrape();
    expect(answer.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    const after = await parseExposition(answer.text);

    // Types as Prometheus reads them.
    expect(after.family('homeclaw_invocations').type).toBe('counter');
    expect(after.family('homeclaw_invocation_duration_seconds').type).toBe('histogram');
    expect(after.family('homeclaw_plugins').type).toBe('gauge');
    expect(after.family('homeclaw_invocations_in_flight').type).toBe('gauge');

    // One series per plugin, capability and outcome; refusals counted, unknown ids never labels.
    const delta = (plugin: string, capability: string, outcome: string): number =>
      invocations(after, plugin, capability, outcome) - invocations(before, plugin, capability, outcome);
    expect(delta('greeter', 'greet', 'ok')).toBe(2);
    expect(delta('greeter', 'fail', 'plugin_error')).toBe(1);
    expect(delta('greeter', 'hang', 'timeout')).toBe(1);
    expect(delta('greeter', 'greet', 'invalid_params')).toBe(1);
    expect(delta('_unknown', '_unknown', 'not_found')).toBe(1);
    expect(delta('greeter', '_unknown', 'not_found')).toBe(1);
    expect(delta('sleepy', 'nap', 'stale')).toBe(1);
    for (const sample of after.samples('homeclaw_invocations_total')) {
      expect(Object.keys(sample.labels).sort()).toEqual(['capability', 'outcome', 'plugin']);
    }
    expect(after.labelValues()).not.toContain('ghost-7f3a');
    expect(after.labelValues()).not.toContain('fly-2b9c');

    // Durations of the calls that ran: the timeout took its 0.5 s deadline, the answers less than 5 s.
    // Node starts a timer from the event loop's cached clock, which can lag the wall clock by a few ms, so
    // a deadline timer may end the call a little before 500 wall-clock ms have passed.
    const hang = { plugin: 'greeter', capability: 'hang' };
    expect(after.value('homeclaw_invocation_duration_seconds_count', hang)).toBe(1);
    expect(after.value('homeclaw_invocation_duration_seconds_sum', hang)).toBeGreaterThanOrEqual(0.49);
    expect(after.value('homeclaw_invocation_duration_seconds_bucket', { ...hang, le: '0.25' })).toBe(0);
    expect(after.value('homeclaw_invocation_duration_seconds_bucket', { ...hang, le: '+Inf' })).toBe(1);
    const greet = { plugin: 'greeter', capability: 'greet' };
    expect(after.value('homeclaw_invocation_duration_seconds_count', greet)).toBe(2);
    expect(after.value('homeclaw_invocation_duration_seconds_bucket', { ...greet, le: '5' })).toBe(2);
    const les = after.samples('homeclaw_invocation_duration_seconds_bucket', greet).map((s) => s.labels['le']);
    expect(les).toEqual(['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '30', '60', '+Inf']);
    // A pair that was only ever refused has no durations.
    expect(after.samples('homeclaw_invocation_duration_seconds_count', { plugin: 'sleepy' })).toEqual([]);
    expect(after.value('homeclaw_invocations_in_flight')).toBe(0);

    // Plugins by state, read from the registry at scrape time.
    expect(after.value('homeclaw_plugins', { state: 'online' })).toBe(1);
    expect(after.value('homeclaw_plugins', { state: 'stale' })).toBe(1);
    expect(after.value('homeclaw_plugins', { state: 'offline' })).toBe(0);
    expect(after.value('homeclaw_plugins', { state: 'error' })).toBe(0);

    // MQTT through the Core's bus: 4 invokes out, 3 results and a registration in at least.
    const moved = (name: string): number => (after.value(name) ?? 0) - (before.value(name) ?? 0);
    expect(moved('homeclaw_mqtt_messages_published_total')).toBeGreaterThanOrEqual(4);
    expect(moved('homeclaw_mqtt_messages_received_total')).toBeGreaterThanOrEqual(4);
    expect(moved('homeclaw_mqtt_published_bytes_total')).toBeGreaterThan(moved('homeclaw_mqtt_messages_published_total'));
    expect(moved('homeclaw_mqtt_received_bytes_total')).toBeGreaterThan(moved('homeclaw_mqtt_messages_received_total'));
    expect(after.value('homeclaw_mqtt_clients_connected')).toBe(2);
  }, 60_000);

  it('counts LLM requests, errors and tokens and retrieval queries of a chat through the scripted LLM', async () => {
    const before = await metrics();
    const asked = llm.requests.length;
    llm.push(
      {
        tool_calls: [{ name: 'route_to_plugin', arguments: { plugin_id: 'greeter', capability_id: 'greet', parameters: { name: 'Ada' } } }],
        usage: { prompt_tokens: 120, completion_tokens: 7 },
      },
      { text: 'Hello to you too.', usage: { prompt_tokens: 150, completion_tokens: 12 } },
      { status: 500, body: 'the model crashed' },
    );
    const routed = await core.api<{ text: string }>('POST', '/api/messages', { channel: 'web', user_id: 'alice', text: 'please say hello to Ada' });
    expect(routed.status).toBe(200);
    expect(routed.body.text).toBe('Hello, Ada!');
    const answered = await core.api<{ text: string }>('POST', '/api/messages', { channel: 'web', user_id: 'alice', text: 'hello yourself' });
    expect(answered.body.text).toBe('Hello to you too.');
    const down = await core.api<{ text: string }>('POST', '/api/messages', { channel: 'web', user_id: 'alice', text: 'hello again' });
    expect(down.body.text).toMatch(/unreachable/);
    expect(llm.requests.length - asked).toBe(3);
    const search = await core.api<{ mode: string }>('GET', '/api/plugins/search?q=greet%20someone');
    expect(search.body.mode).toBe('bm25');

    const after = await metrics();
    const moved = (name: string, labels: Record<string, string> = {}): number => (after.value(name, labels) ?? 0) - (before.value(name, labels) ?? 0);
    expect(after.family('homeclaw_llm_requests').type).toBe('counter');
    expect(after.family('homeclaw_llm_tokens').type).toBe('counter');
    expect(after.family('homeclaw_llm_request_duration_seconds').type).toBe('histogram');
    expect(moved('homeclaw_llm_requests_total')).toBe(3);
    expect(moved('homeclaw_llm_errors_total', { reason: 'http_5xx' })).toBe(1);
    expect(moved('homeclaw_llm_tokens_total', { kind: 'prompt' })).toBe(270);
    expect(moved('homeclaw_llm_tokens_total', { kind: 'completion' })).toBe(19);
    expect(moved('homeclaw_llm_request_duration_seconds_count')).toBe(3);
    // The model's call reached the plugin and was counted like any other.
    expect(moved('homeclaw_invocations_total', { plugin: 'greeter', capability: 'greet', outcome: 'ok' })).toBe(1);
    // Each message searched once, plus the search route; BM25 because dense search is off in tests.
    expect(after.family('homeclaw_retrieval_queries').type).toBe('counter');
    expect(moved('homeclaw_retrieval_queries_total', { mode: 'bm25' })).toBe(4);
    expect(moved('homeclaw_retrieval_query_duration_seconds_count', { mode: 'bm25' })).toBe(4);
    expect(after.value('homeclaw_retrieval_degraded')).toBe(0);
    // No user or request id ever becomes a label.
    expect(after.labelValues()).not.toContain('alice');
    expect(after.labelValues().filter((v) => UUID.test(v))).toEqual([]);
  }, 60_000);

  it('reports the build, the event-loop delay and the standard process metrics, and passes promtool', async () => {
    const answer = await scrape();
    const m = await parseExposition(answer.text);
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(m.family('homeclaw_build_info').type).toBe('gauge');
    expect(m.samples('homeclaw_build_info')).toEqual([
      { name: 'homeclaw_build_info', labels: { version: pkg.version, node_version: process.version }, value: 1 },
    ]);
    for (const name of ['homeclaw_event_loop_delay_p50_seconds', 'homeclaw_event_loop_delay_p99_seconds', 'homeclaw_event_loop_delay_max_seconds']) {
      expect(m.family(name).type).toBe('gauge');
      expect(m.value(name)).toBeGreaterThanOrEqual(0);
    }
    expect(m.value('homeclaw_event_loop_delay_max_seconds')).toBeGreaterThanOrEqual(m.value('homeclaw_event_loop_delay_p50_seconds')!);
    // prom-client's standard names, as Node.js dashboards expect them.
    expect(m.family('process_cpu_seconds').type).toBe('counter');
    expect(m.value('process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(m.family('nodejs_eventloop_lag_seconds').type).toBe('gauge');
    expect(m.family('nodejs_heap_size_used_bytes').type).toBe('gauge');
    // Every HomeClaw metric carries the prefix and a help text.
    const own = m.families.filter((f) => f.name.startsWith('homeclaw_'));
    expect(own.length).toBeGreaterThanOrEqual(20);
    for (const family of m.families.filter((f) => !/^(process|nodejs)_/.test(f.name))) expect(family.name).toMatch(/^homeclaw_/);
    for (const family of own) expect(family.help.length, family.name).toBeGreaterThan(10);
    // Prometheus' own linter finds nothing in HomeClaw's metrics (prom-client's nodejs_active_*_total
    // gauges are its own naming, reported and left alone).
    const findings = await promtoolLint(answer.text);
    expect(findings.filter((line) => !/^nodejs_active_(handles|requests|resources)_total non-counter/.test(line))).toEqual([]);
  });
});

describe('who may scrape', () => {
  it('takes the admin token and the metrics token; the metrics token opens nothing else; no token or a user token gets 401', async () => {
    const admin = await scrape(core.adminToken);
    expect(admin.status).toBe(200);
    expect(admin.text).toContain('# TYPE homeclaw_invocations_total counter');
    expect((await scrape(METRICS_TOKEN)).status).toBe(200);

    const anonymous = await fetch(`${core.httpUrl}/metrics`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
    expect(((await anonymous.json()) as { message: string }).message).toMatch(/admin token or the metrics token/);
    expect((await scrape('not-the-token-0123456789')).status).toBe(401);

    const user = await core.api<{ token: string }>('POST', '/api/users', { user_id: 'bob' });
    expect(user.status).toBe(201);
    expect((await scrape(user.body.token)).status).toBe(401);

    const before = invocations(await metrics(), 'greeter', 'greet', 'ok');
    const asScraper = { authorization: `Bearer ${METRICS_TOKEN}`, 'content-type': 'application/json' };
    expect((await fetch(`${core.httpUrl}/api/status`, { headers: asScraper })).status).toBe(401);
    expect((await fetch(`${core.httpUrl}/api/plugins`, { headers: asScraper })).status).toBe(401);
    const call = await fetch(`${core.httpUrl}/v1/plugins/greeter/tools/greet/run`, {
      method: 'POST',
      headers: asScraper,
      body: JSON.stringify({ name: 'Eve' }),
    });
    expect(call.status).toBe(401);
    const message = await fetch(`${core.httpUrl}/api/messages`, {
      method: 'POST',
      headers: asScraper,
      body: JSON.stringify({ channel: 'web', user_id: 'bob', text: 'hi' }),
    });
    expect(message.status).toBe(401);
    expect(invocations(await metrics(), 'greeter', 'greet', 'ok')).toBe(before);
  });
});
