// GET /api/events: the observer feed of homeclaw/events/<kind> as server-sent events, for browsers. An
// MQTT observer and an HTTP client see the same events with the same JSON; only the admin may listen; a
// refused call is reported as well as a finished one; the server ends open streams when it stops.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { connectTestClient, type TestClient } from '../helpers/mqtt-client.js';
import { openSse } from '../helpers/sse-client.js';

let core: TestCore;
let observer: TestClient;

const LAMP = {
  id: 'lamp',
  name: 'Lamp',
  description: 'Switches the lamp.',
  type: 'subprocess',
  config: { command: process.execPath, args: ['-e', 'process.stdout.write(JSON.stringify({success:true,text:"on"}))'] },
  capabilities: [{ id: 'switch', name: 'Switch', description: 'Turns it on.', parameters: [{ name: 'on', type: 'boolean' }] }],
};

const admin = (): Record<string, string> => ({ authorization: `Bearer ${core.adminToken}` });
const data = (m: { data: string }): Record<string, unknown> => JSON.parse(m.data) as Record<string, unknown>;

beforeAll(async () => {
  core = await startTestCore();
  observer = await connectTestClient(core.mqttUrl);
  await observer.subscribe('homeclaw/events/#');
});

afterAll(async () => {
  await observer?.end(true);
  await core?.cleanup();
});

describe('GET /api/events', () => {
  it('needs the admin token', async () => {
    expect((await fetch(`${core.httpUrl}/api/events`)).status).toBe(401);
    const { token } = (await core.api<{ token: string }>('POST', '/api/users', { user_id: 'alice' })).body;
    const refused = await fetch(`${core.httpUrl}/api/events`, { headers: { authorization: `Bearer ${token}` } });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toContain('needs the admin token');
    expect((await fetch(`${core.httpUrl}/api/events`, { method: 'HEAD', headers: admin() })).status).toBe(404);
  });

  it('streams registry and invocation events, the same JSON as on MQTT, after a ready event', async () => {
    const stream = await openSse(`${core.httpUrl}/api/events`, admin());
    try {
      expect(stream.status).toBe(200);
      await stream.waitFor((m) => m.event === 'ready');

      expect((await core.api('POST', '/api/plugins/register', LAMP)).status).toBe(201);
      const registered = await stream.waitFor((m) => m.event === 'registry' && data(m)['type'] === 'plugin.registered');
      expect(data(registered)).toMatchObject({ type: 'plugin.registered', plugin_id: 'lamp', state: 'online', ts: expect.any(Number) });
      const onMqtt = await observer.waitFor(topics.events('registry'), (m) => m.json()['type'] === 'plugin.registered');
      expect(onMqtt.payload.toString()).toBe(registered.data);

      expect((await core.api('POST', '/v1/plugins/lamp/tools/switch/run', { on: true })).status).toBe(200);
      const finished = await stream.waitFor((m) => m.event === 'invocation' && data(m)['type'] === 'invocation.finished');
      expect(data(finished)).toMatchObject({ plugin_id: 'lamp', capability_id: 'switch', success: true, duration_ms: expect.any(Number) });
      const finishedOnMqtt = await observer.waitFor(topics.events('invocation'), (m) => m.json()['type'] === 'invocation.finished');
      expect(finishedOnMqtt.payload.toString()).toBe(finished.data);

      // Refused before the plugin got it: invalid parameters.
      expect((await core.api('POST', '/v1/plugins/lamp/tools/switch/run', { on: 'yes please' })).status).toBe(400);
      const refused = await stream.waitFor((m) => m.event === 'invocation' && data(m)['type'] === 'invocation.refused');
      expect(data(refused)).toMatchObject({ plugin_id: 'lamp', capability_id: 'switch', success: false, error_code: 'invalid_params' });
      expect((await observer.waitFor(topics.events('invocation'), (m) => m.json()['type'] === 'invocation.refused')).payload.toString()).toBe(refused.data);

      expect((await core.api('POST', '/api/plugins/unregister', { plugin_id: 'lamp' })).status).toBe(200);
      const removed = await stream.waitFor((m) => m.event === 'registry' && data(m)['type'] === 'plugin.removed');
      expect(data(removed)).toMatchObject({ plugin_id: 'lamp' });
    } finally {
      stream.close();
    }
  });

  it('gives every open client the events, and none to a closed one', async () => {
    const first = await openSse(`${core.httpUrl}/api/events`, admin());
    const second = await openSse(`${core.httpUrl}/api/events`, admin());
    await Promise.all([first.waitFor((m) => m.event === 'ready'), second.waitFor((m) => m.event === 'ready')]);
    first.close();
    await first.ended;
    expect((await core.api('POST', '/api/plugins/register', { ...LAMP, id: 'lamp2' })).status).toBe(201);
    await second.waitFor((m) => m.event === 'registry' && data(m)['plugin_id'] === 'lamp2');
    expect(first.messages.some((m) => m.data.includes('lamp2'))).toBe(false);
    second.close();
  });

  it('ends open streams when the Core stops', async () => {
    const other = await startTestCore();
    const stream = await openSse(`${other.httpUrl}/api/events`, { authorization: `Bearer ${other.adminToken}` });
    await stream.waitFor((m) => m.event === 'ready');
    await other.cleanup();
    await stream.ended;
  });
});
