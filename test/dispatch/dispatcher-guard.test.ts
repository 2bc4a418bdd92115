// The dispatcher's pre-invoke check and its invocation.finished event (the audit log's source): a refused call never reaches the adapter, every
// ending (run or refused) is audited once with the resolved capability and no parameter values.
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AccessPolicy } from '../../src/access/policy.js';
import type { AdapterCall, PluginAdapter } from '../../src/adapters/adapter.js';
import type { InvocationAudit } from '../../src/dispatch/dispatcher-api.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import type { InvocationEventBus } from '../../src/dispatch/invocation-events.js';
import { silentLogger } from '../../src/log.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { Registry } from '../../src/registry/registry.js';

let db: Database.Database;
let calls: AdapterCall[];
let audited: InvocationAudit[];
let dispatcher: Dispatcher;
let sinkThrows = false;

beforeEach(() => {
  db = new Database(':memory:');
  const log = silentLogger();
  const registry = new Registry({ db, events: new TypedEventBus(log), log });
  registry.register({
    descriptor: {
      id: 'lock',
      name: 'Lock',
      description: 'Door lock.',
      source: 'external',
      type: 'inline',
      config: {},
      capabilities: [
        { id: 'status', name: 'Status', description: 'Status.', parameters: [], post_process: false },
        {
          id: 'unlock',
          name: 'Unlock',
          description: 'Unlock.',
          parameters: [{ name: 'code', type: 'string', required: true }],
          post_process: false,
          requires_confirmation: true,
        },
      ],
    },
    owner: 'api',
  });
  calls = [];
  audited = [];
  const events: InvocationEventBus = new TypedEventBus(log);
  events.on('invocation.finished', ({ audit }) => {
    if (sinkThrows) throw new Error('audit store gone');
    audited.push(audit);
  });
  sinkThrows = false;
  const adapter: PluginAdapter = {
    type: 'inline',
    invoke: async (call) => {
      calls.push(call);
      return { request_id: call.request.request_id, plugin_id: 'lock', success: true, text: 'done' };
    },
  };
  dispatcher = new Dispatcher({
    registry,
    adapters: [adapter],
    config: { default_timeout_sec: 5, default_max_concurrency: 2, default_queue_limit: 10 },
    log,
    guard: new AccessPolicy({ users: { kid: { deny: ['lock.unlock'] } }, require_confirmation: [] }),
    events,
  });
});
afterEach(async () => {
  await dispatcher.stop();
  db.close();
});

describe('dispatcher guard and audit', () => {
  it('a forbidden call never reaches the adapter and is audited as forbidden', async () => {
    const result = await dispatcher.invoke({
      plugin_id: 'lock',
      capability_id: 'unlock',
      parameters: { code: '1234' },
      context: { user_id: 'kid', channel_name: 'home' },
      confirmed: true,
    });
    expect(result).toMatchObject({ success: false, error_code: 'forbidden' });
    expect(result.error).toContain('policy.users.kid.deny: lock.unlock');
    expect(calls).toEqual([]);
    expect(audited).toEqual([
      { ts: expect.any(Number), user_id: 'kid', channel: 'home', plugin_id: 'lock', capability_id: 'unlock', outcome: 'forbidden', duration_ms: 0 },
    ]);
    expect(JSON.stringify(audited)).not.toContain('1234');
  });

  it('confirmation_required without "confirmed", runs with it', async () => {
    const refused = await dispatcher.invoke({ plugin_id: 'lock', capability_id: 'unlock', parameters: { code: '1' } });
    expect(refused).toMatchObject({ success: false, error_code: 'confirmation_required' });
    expect(calls).toEqual([]);
    const ran = await dispatcher.invoke({ plugin_id: 'lock', capability_id: 'unlock', parameters: { code: '1' }, confirmed: true });
    expect(ran.success).toBe(true);
    expect(calls).toHaveLength(1);
    expect(audited.map((a) => [a.user_id, a.outcome])).toEqual([
      [undefined, 'confirmation_required'],
      [undefined, 'ok'],
    ]);
  });

  it('audits the resolved default capability, and refusals before the guard too', async () => {
    await dispatcher.invoke({ plugin_id: 'lock', context: { user_id: 'kid' } });
    await dispatcher.invoke({ plugin_id: 'nosuch', capability_id: 'x' });
    await dispatcher.invoke({ plugin_id: 'lock', capability_id: 'unlock', parameters: {}, confirmed: true });
    expect(audited.map((a) => `${a.plugin_id}.${a.capability_id}:${a.outcome}`)).toEqual([
      'lock.status:ok',
      'nosuch.x:not_found',
      'lock.unlock:invalid_params',
    ]);
  });

  it('precheck answers the guard without invoking; a throwing audit sink breaks nothing', async () => {
    expect(dispatcher.precheck({ plugin_id: 'lock', capability_id: 'unlock', context: { user_id: 'kid' }, confirmed: true })).toMatchObject({
      error_code: 'forbidden',
    });
    expect(dispatcher.precheck({ plugin_id: 'lock', capability_id: 'status', context: { user_id: 'kid' } })).toBeUndefined();
    expect(dispatcher.precheck({ plugin_id: 'nosuch' })).toBeUndefined();
    expect(calls).toEqual([]);
    expect(dispatcher.getStats()).toMatchObject({ invoked: 1, failed: 1 });
    sinkThrows = true;
    expect(await dispatcher.invoke({ plugin_id: 'lock', capability_id: 'status' })).toMatchObject({ success: true, text: 'done' });
    expect(await dispatcher.invoke({ plugin_id: 'lock', capability_id: 'unlock', parameters: { code: '1' } })).toMatchObject({
      error_code: 'confirmation_required',
    });
  });
});
