// One typed event per invocation: `invocation.finished` on the Core's event bus, for a call that ran
// and for one refused before reaching a plugin; the audit log and the metrics follow that one event.
import Database from 'better-sqlite3';
import { Registry as PromRegistry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/access/audit-log.js';
import type { PluginAdapter } from '../../src/adapters/adapter.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import type { CoreEvents, InvocationFinished } from '../../src/dispatch/invocation-events.js';
import { silentLogger } from '../../src/log.js';
import { InvocationMetrics } from '../../src/observability/invocation-metrics.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { Registry } from '../../src/registry/registry.js';

let db: Database.Database;
let events: TypedEventBus<CoreEvents>;
let registry: Registry;
let dispatcher: Dispatcher;
let seen: InvocationFinished[];

beforeEach(() => {
  db = new Database(':memory:');
  const log = silentLogger();
  events = new TypedEventBus<CoreEvents>(log);
  registry = new Registry({ db, events, log });
  registry.register({
    descriptor: {
      id: 'echo',
      name: 'Echo',
      description: 'Says it back.',
      source: 'external',
      type: 'inline',
      config: {},
      capabilities: [{ id: 'say', name: 'Say', description: 'Say.', parameters: [{ name: 'text', type: 'string', required: true }], post_process: false }],
    },
    owner: 'api',
  });
  const adapter: PluginAdapter = {
    type: 'inline',
    invoke: async ({ request }) => ({ request_id: request.request_id, plugin_id: 'echo', success: true, text: String(request.parameters.text) }),
  };
  dispatcher = new Dispatcher({
    registry,
    adapters: [adapter],
    config: { default_timeout_sec: 5, default_max_concurrency: 2, default_queue_limit: 10 },
    log,
    events,
  });
  seen = [];
  events.on('invocation.finished', (event) => void seen.push(event));
});

afterEach(async () => {
  await dispatcher.stop();
  db.close();
});

describe('invocation.finished', () => {
  it("is emitted once for a call that ran, with the observers' record and the audit entry", async () => {
    const result = await dispatcher.invoke({
      plugin_id: 'echo',
      capability_id: 'say',
      parameters: { text: 'secret words' },
      context: { user_id: 'ann', channel_name: 'kitchen' },
    });
    expect(result.success).toBe(true);
    expect(seen).toHaveLength(1);
    const [event] = seen;
    expect(event?.refused).toBe(false);
    expect(event?.record).toMatchObject({ request_id: result.request_id, plugin_id: 'echo', capability_id: 'say', success: true });
    expect(event?.audit).toMatchObject({ user_id: 'ann', channel: 'kitchen', plugin_id: 'echo', capability_id: 'say', outcome: 'ok' });
    // Parameters may hold personal data: neither half carries them.
    expect(JSON.stringify(event)).not.toContain('secret words');
  });

  it('is emitted once, marked refused, for a call that never reached the plugin', async () => {
    const result = await dispatcher.invoke({ plugin_id: 'echo', capability_id: 'say', parameters: {} });
    expect(result.error_code).toBe('invalid_params');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      refused: true,
      record: { plugin_id: 'echo', capability_id: 'say', success: false, error_code: 'invalid_params', duration_ms: 0 },
      audit: { plugin_id: 'echo', capability_id: 'say', outcome: 'invalid_params', duration_ms: 0 },
    });
  });

  it('feeds the audit log and the metrics that follow the bus', async () => {
    const audit = new AuditLog({ db, log: silentLogger(), max_entries: 100, max_age_days: 1, flush_interval_ms: 60_000 });
    audit.follow(events);
    const metrics = new InvocationMetrics({ registry, log: silentLogger(), max_series: 10 });
    const prom = new PromRegistry();
    metrics.registerIn(prom);
    metrics.follow(events);
    await dispatcher.invoke({ plugin_id: 'echo', capability_id: 'say', parameters: { text: 'hi' }, context: { user_id: 'ann' } });
    await dispatcher.invoke({ plugin_id: 'echo', capability_id: 'say', parameters: {}, context: { user_id: 'bob' } });
    await audit.flush();
    expect(audit.query().map((e) => [e.user_id, e.outcome])).toEqual([
      ['bob', 'invalid_params'],
      ['ann', 'ok'],
    ]);
    const text = await prom.metrics();
    expect(text).toMatch(/outcome="ok"[^\n]*\} 1/);
    expect(text).toMatch(/outcome="invalid_params"[^\n]*\} 1/);
    // Only the call that ran has a duration.
    expect(text).toMatch(/_count\{[^}]*plugin="echo"[^}]*\} 1/);
    await audit.stop();
    metrics.stop();
    // After stop() neither follows the bus any more.
    await dispatcher.invoke({ plugin_id: 'echo', capability_id: 'say', parameters: { text: 'again' }, context: { user_id: 'cid' } });
    await audit.flush();
    expect(audit.query()).toHaveLength(2);
  });
});
