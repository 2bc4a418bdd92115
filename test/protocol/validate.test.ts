import { describe, expect, it } from 'vitest';
import { parseRegisterMessage, claimedPluginId } from '../../src/protocol/descriptor/register-message.js';
import type { TopicKind } from '../../src/protocol/topics.js';
import { parseJsonPayload, validatePayload, TOPIC_SCHEMAS } from '../../src/protocol/validate.js';
import type { ValidationIssue } from '../../src/protocol/types.js';
import { fixture } from './fixtures.js';

const now = 1_760_000_000_000;

interface KindCase {
  good: unknown[];
  bad: { value: unknown; errors: ValidationIssue[] }[];
}

const PLUGIN_ID_MSG = 'must match pattern "^[a-z0-9][a-z0-9_-]{0,63}$"';
const REQUEST_ID_MSG = 'must match pattern "^[A-Za-z0-9_-]{1,128}$"';

const kinds: Record<TopicKind, KindCase> = {
  'core/status': {
    good: [
      { online: true, ts: now },
      { online: false, ts: now },
    ],
    bad: [
      {
        value: { online: 'yes' },
        errors: [
          { path: '/ts', message: 'is required' },
          { path: '/online', message: 'must be boolean' },
        ],
      },
    ],
  },
  register: {
    good: [
      { ...fixture('weather.plugin.yaml'), epoch: 3, heartbeat_interval_sec: 5 },
      { name: 'x', epoch: 0 },
    ],
    bad: [
      { value: { id: 'weather' }, errors: [{ path: '/epoch', message: 'is required' }] },
      {
        value: { epoch: -1, heartbeat_interval_sec: 0 },
        errors: [
          { path: '/epoch', message: 'must be >= 0' },
          { path: '/heartbeat_interval_sec', message: 'must be > 0' },
        ],
      },
    ],
  },
  registered: {
    good: [
      { plugin_id: 'weather', ok: true },
      { plugin_id: null, ok: false, errors: [{ path: '/id', message: 'id is required' }], client_id: 'c1' },
    ],
    bad: [
      {
        value: { plugin_id: 'x', ok: false, errors: [{ path: 1 }] },
        errors: [
          { path: '/errors/0/message', message: 'is required' },
          { path: '/errors/0/path', message: 'must be string' },
        ],
      },
    ],
  },
  unregister: {
    good: [{ plugin_id: 'weather' }],
    bad: [{ value: { plugin_id: 'a/b' }, errors: [{ path: '/plugin_id', message: PLUGIN_ID_MSG }] }],
  },
  status: {
    good: [
      { state: 'online', epoch: 1 },
      { state: 'offline', epoch: 1, ts: now },
    ],
    bad: [
      {
        value: { state: 'stale', epoch: 'one' },
        errors: [
          { path: '/state', message: 'must be one of: "online", "offline"' },
          { path: '/epoch', message: 'must be number' },
        ],
      },
    ],
  },
  heartbeat: {
    good: [{ epoch: 1, seq: 0, ts: now }],
    bad: [
      {
        value: { epoch: 1, seq: 1.5 },
        errors: [
          { path: '/ts', message: 'is required' },
          { path: '/seq', message: 'must be integer' },
        ],
      },
    ],
  },
  invoke: {
    good: [
      {
        request_id: 'r-1',
        plugin_id: 'weather',
        capability_id: 'fetch_weather',
        parameters: { city: 'Beijing' },
        deadline: now,
        user_input: 'weather?',
        metadata: {},
      },
    ],
    bad: [
      {
        value: { request_id: 'a/b', plugin_id: '#', capability_id: 'x y', parameters: [], deadline: 'soon' },
        errors: [
          { path: '/request_id', message: REQUEST_ID_MSG },
          { path: '/plugin_id', message: PLUGIN_ID_MSG },
          { path: '/capability_id', message: 'must match pattern "^[A-Za-z0-9_-]{1,64}$"' },
          { path: '/parameters', message: 'must be object' },
          { path: '/deadline', message: 'must be number' },
        ],
      },
    ],
  },
  result: {
    good: [
      { request_id: 'r-1', plugin_id: 'weather', success: true, text: 'Sunny', data: { temperature: 21 } },
      { request_id: 'r-1', plugin_id: 'weather', success: true, progress: true, text: '50%' },
      { request_id: 'r-1', plugin_id: 'weather', success: false, error: 'boom', error_code: 'plugin_error', ask_user: true, missing_parameters: ['city'] },
    ],
    bad: [
      {
        value: { request_id: '', plugin_id: 'weather', success: 'yes', error_code: 'oops' },
        errors: [
          { path: '/request_id', message: REQUEST_ID_MSG },
          { path: '/success', message: 'must be boolean' },
          {
            path: '/error_code',
            message:
              'must be one of: "not_found", "invalid_params", "offline", "stale", "busy", "timeout", "plugin_error", "adapter_error", "cancelled", "forbidden", "confirmation_required"',
          },
        ],
      },
    ],
  },
  control: {
    good: [{ cmd: 'reregister' }, { cmd: 'reregister', reason: 'unknown plugin' }],
    bad: [{ value: { cmd: 'reboot' }, errors: [{ path: '/cmd', message: 'must be one of: "reregister"' }] }],
  },
  'channel/in': {
    good: [
      { user_id: 'u1', text: 'hi' },
      { request_id: 'abc', user_id: 'u1', session_id: 's', text: 'hi', timezone: 'Europe/Berlin', metadata: { a: 1 } },
    ],
    bad: [
      {
        value: { user_id: '', request_id: 'x/y' },
        errors: [
          { path: '/text', message: 'is required' },
          { path: '/request_id', message: REQUEST_ID_MSG },
          { path: '/user_id', message: 'must NOT have fewer than 1 characters' },
        ],
      },
    ],
  },
  'channel/out': {
    good: [{ request_id: 'abc', user_id: 'u1', text: 'Which city?', kind: 'question', plugin_id: 'weather', capability_id: 'fetch_weather' }],
    bad: [
      {
        value: { request_id: 'abc', user_id: 'u1', text: 'x', kind: 'shout' },
        errors: [{ path: '/kind', message: 'must be one of: "answer", "question", "error", "notification"' }],
      },
    ],
  },
  notify: {
    good: [
      { user_id: 'alice', text: 'Time to call mom.' },
      { user_id: 'alice', text: 'x', notify_id: 'n-1' },
    ],
    bad: [
      {
        value: { user_id: '', text: '', extra: 1 },
        errors: [
          { path: '/user_id', message: 'must NOT have fewer than 1 characters' },
          { path: '/text', message: 'must NOT have fewer than 1 characters' },
          { path: '/extra', message: 'is not an allowed property' },
        ],
      },
    ],
  },
  notified: {
    good: [
      { ok: true, notify_id: 'n-1', user_id: 'alice', channel: 'telegram' },
      { ok: false, error: 'no channel', error_code: 'no_channel' },
    ],
    bad: [{ value: { ok: 'yes' }, errors: [{ path: '/ok', message: 'must be boolean' }] }],
  },
  event: {
    good: [{ type: 'plugin.registered', plugin_id: 'weather', ts: now }, {}],
    bad: [
      {
        value: { type: '', plugin_id: 'A' },
        errors: [
          { path: '/type', message: 'must NOT have fewer than 1 characters' },
          { path: '/plugin_id', message: PLUGIN_ID_MSG },
        ],
      },
    ],
  },
  call: {
    good: [{ request_id: 'ha-1' }, { request_id: 'c0ffee', parameters: { city: 'Oslo' }, user_id: 'alice' }],
    bad: [
      {
        value: { request_id: '_invalid', parameters: [], extra: 1 },
        errors: [
          { path: '/request_id', message: 'must match pattern "^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$"' },
          { path: '/parameters', message: 'must be object' },
          { path: '/extra', message: 'is not an allowed property' },
        ],
      },
    ],
  },
  'call/result': {
    good: [{ request_id: 'ha-1', plugin_id: 'weather', success: false, error: 'no plugin', error_code: 'not_found' }],
    bad: [{ value: { request_id: 'ha-1', plugin_id: 'weather' }, errors: [{ path: '/success', message: 'is required' }] }],
  },
  'call/invalid': {
    good: [{ topic: 'homeclaw/call/weather/forecast', success: false, error: 'payload is not valid JSON', error_code: 'invalid_params' }],
    bad: [
      {
        value: { topic: 't', success: true, error: 'x', error_code: 'nope' },
        errors: [
          { path: '/success', message: 'must be equal to constant' },
          {
            path: '/error_code',
            message:
              'must be one of: "not_found", "invalid_params", "offline", "stale", "busy", "timeout", "plugin_error", "adapter_error", "cancelled", "forbidden", "confirmation_required"',
          },
        ],
      },
    ],
  },
  'ha/core-state': {
    good: [{ plugins_online: 3, plugins_total: 4, calls_per_minute: 0, retrieval: 'degraded', retrieval_reason: 'chroma down', ts: now }],
    bad: [
      {
        value: { plugins_online: -1, plugins_total: 4, calls_per_minute: 1, retrieval: 'fine', ts: now },
        errors: [
          { path: '/plugins_online', message: 'must be >= 0' },
          { path: '/retrieval', message: 'must be one of: "ok", "degraded", "disabled"' },
          { path: '/retrieval_reason', message: 'is required' },
        ],
      },
    ],
  },
  'ha/plugin-state': {
    good: [
      { state: 'online', reason: null, last_outcome: null, last_latency_ms: null, ts: now },
      { state: 'stale', reason: 'no heartbeat', last_outcome: 'timeout', last_latency_ms: 30000, ts: now },
    ],
    bad: [
      {
        value: { state: 'up', reason: null, last_outcome: null, ts: now },
        errors: [
          { path: '/last_latency_ms', message: 'is required' },
          { path: '/state', message: 'must be one of: "online", "stale", "offline", "error"' },
        ],
      },
    ],
  },
  'ha/press': {
    good: ['PRESS'],
    bad: [{ value: 'press', errors: [{ path: '', message: 'must be equal to constant' }] }],
  },
  'ha/discovery': {
    good: [
      {
        dev: { ids: ['homeclaw_core'], name: 'HomeClaw Core' },
        o: { name: 'HomeClaw Bus' },
        cmps: { connectivity: { p: 'binary_sensor', unique_id: 'homeclaw_core_connectivity' } },
      },
    ],
    bad: [
      {
        value: { dev: { ids: [], name: 'x' }, o: {}, cmps: { a: { p: 'light', unique_id: 'u' } } },
        errors: [
          { path: '/dev/ids', message: 'must NOT have fewer than 1 items' },
          { path: '/o/name', message: 'is required' },
          { path: '/cmps/a/p', message: 'must be one of: "binary_sensor", "sensor", "button"' },
        ],
      },
    ],
  },
  'ha/status': {
    good: ['online', 'offline'],
    bad: [{ value: 'restarting', errors: [{ path: '', message: 'must be one of: "online", "offline"' }] }],
  },
};

const byPath = (a: ValidationIssue, b: ValidationIssue): number => (a.path === b.path ? a.message.localeCompare(b.message) : a.path.localeCompare(b.path));

describe('validatePayload', () => {
  it('has a schema and cases for every topic kind', () => {
    expect(Object.keys(kinds).sort()).toEqual(Object.keys(TOPIC_SCHEMAS).sort());
  });

  for (const [kind, { good, bad }] of Object.entries(kinds) as [TopicKind, KindCase][]) {
    it(`${kind}: accepts good payloads`, () => {
      for (const value of good) {
        const outcome = validatePayload(kind, value);
        expect(outcome, JSON.stringify(value)).toEqual({ ok: true, value });
      }
    });
    it(`${kind}: rejects bad payloads with every error and its path`, () => {
      for (const { value, errors } of bad) {
        const outcome = validatePayload(kind, value);
        expect(outcome.ok).toBe(false);
        if (outcome.ok) continue;
        expect([...outcome.errors].sort(byPath)).toEqual([...errors].sort(byPath));
      }
      for (const notObject of [null, 'text', 3, [1]]) expect(validatePayload(kind, notObject).ok).toBe(false);
    });
  }
});

describe('parseJsonPayload', () => {
  it('parses a JSON object from a Buffer or a string', () => {
    expect(parseJsonPayload(Buffer.from('{"a":1}'), 100)).toEqual({ ok: true, value: { a: 1 } });
    expect(parseJsonPayload('{"b":[true]}', 100)).toEqual({ ok: true, value: { b: [true] } });
  });

  it('refuses oversized payloads before parsing, counting bytes not characters', () => {
    expect(parseJsonPayload(Buffer.alloc(300000, 0x20), 262144)).toEqual({
      ok: false,
      errors: [{ path: '', message: 'payload is 300000 bytes; the limit is 262144' }],
    });
    // 'é' is two bytes in UTF-8: 10 characters, 20 bytes.
    expect(parseJsonPayload(`"${'é'.repeat(9)}"`, 19)).toEqual({ ok: false, errors: [{ path: '', message: 'payload is 20 bytes; the limit is 19' }] });
  });

  it('refuses malformed JSON and non-objects with clear messages', () => {
    const malformed = parseJsonPayload('{"a":', 100);
    expect(malformed.ok).toBe(false);
    if (!malformed.ok) expect(malformed.errors[0]?.message).toMatch(/^payload is not valid JSON: /);
    for (const text of ['[1,2]', '"x"', '42', 'null']) {
      expect(parseJsonPayload(text, 100)).toEqual({ ok: false, errors: [{ path: '', message: 'payload must be a JSON object' }] });
    }
  });

  it('refuses a "__proto__" key at any depth, written plainly or escaped, and names where it is', () => {
    for (const text of ['{"a":[{"__proto__":{}}]}', '{"a":[{"\\u005f\\u005fproto__":{}}]}']) {
      expect(parseJsonPayload(text, 1000)).toEqual({
        ok: false,
        errors: [{ path: '/a/0/__proto__', message: expect.stringMatching(/^payload has a "__proto__" key at \/a\/0\/__proto__ is refused/) }],
      });
    }
    expect(parseJsonPayload('{"text":"__proto__","\\u0041":1}', 1000)).toEqual({ ok: true, value: { text: '__proto__', A: 1 } });
  });
});

describe('parseRegisterMessage', () => {
  const options = { source: 'external', default_type: 'mqtt' } as const;

  it('returns the canonical descriptor, dialect, epoch and heartbeat interval', () => {
    const outcome = parseRegisterMessage({ ...fixture('yolo-tracker.forgesyte.json'), epoch: 7, heartbeat_interval_sec: 10 }, options);
    expect(outcome).toMatchObject({ ok: true, dialect: 'forgesyte', epoch: 7, heartbeat_interval_sec: 10, descriptor: { id: 'yolo-tracker', type: 'mqtt' } });
    if (outcome.ok) expect(outcome.descriptor).not.toHaveProperty('epoch');
  });

  it('lists envelope and descriptor errors together, with the claimed id for the ack topic', () => {
    const outcome = parseRegisterMessage({ id: 'a/b', name: 'X', description: 'Y' }, options);
    expect(outcome).toEqual({
      ok: false,
      claimed_id: 'a/b',
      errors: [
        { path: '/epoch', message: 'is required' },
        { path: '/id', message: 'plugin id "a/b" must match ^[a-z0-9][a-z0-9_-]{0,63}$ (lowercase letters, digits, _ and -; no /, + or #)' },
      ],
    });
    expect(claimedPluginId({ plugin_id: 'slack-bot' })).toBe('slack-bot');
    expect(claimedPluginId({ name: 'bad_calculator', parameters: {} })).toBe('bad_calculator');
    expect(claimedPluginId({ description: 'no id' })).toBeNull();
    expect(claimedPluginId('nope')).toBeNull();
  });
});
