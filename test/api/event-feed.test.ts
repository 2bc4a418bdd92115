// Invocation events with an external broker (a real Mosquitto): the Core cannot see subscribers there, so
// with events.invocations 'auto' no event is published per call; set to true, an observer gets one per
// call. Registry events are published either way.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';
import { connectTestClient, type TestClient } from '../helpers/mqtt-client.js';
import { openSse } from '../helpers/sse-client.js';
import { startChildPlugin, type ChildPlugin } from '../fixtures/sdk/child-plugin.js';
import { ensureBuilt, REPO_ROOT } from '../e2e/helpers.js';

let mosquitto: MosquittoHandle;

beforeAll(async () => {
  await ensureBuilt();
  mosquitto = await startMosquitto({ extraConfig: 'set_tcp_nodelay true' });
}, 180_000);

afterAll(async () => {
  await mosquitto?.stop();
});

async function withCore(invocations: boolean | 'auto', run: (core: TestCore, observer: TestClient, pluginId: string) => Promise<void>): Promise<void> {
  const core = await startTestCore({ overrides: { broker: { url: mosquitto.url }, events: { invocations } } });
  const observer = await connectTestClient(mosquitto.url);
  const pluginId = `observed-${String(invocations)}`;
  let plugin: ChildPlugin | undefined;
  try {
    await observer.subscribe('homeclaw/events/#');
    plugin = startChildPlugin(process.execPath, [join(REPO_ROOT, 'test', 'fixtures', 'sdk', 'plugin-process.mjs'), mosquitto.url, pluginId, '5']);
    await plugin.registered;
    await run(core, observer, pluginId);
  } finally {
    await plugin?.stop();
    await observer.end(true);
    await core.cleanup();
  }
}

describe('invocation events with an external broker', () => {
  it('are not published per call by default (auto), while registry events are', async () => {
    await withCore('auto', async (core, observer, pluginId) => {
      await observer.waitFor('homeclaw/events/registry', (m) => m.json<{ plugin_id?: string }>().plugin_id === pluginId);
      const invoked = await core.api('POST', `/v1/plugins/${pluginId}/tools/echo/run`, { text: 'hi' });
      expect(invoked.status).toBe(200);
      // The event would be published before the HTTP answer; a generous pause shows none comes.
      await new Promise((r) => setTimeout(r, 1000));
      expect(observer.received.filter((m) => m.topic === 'homeclaw/events/invocation')).toEqual([]);
    });
  });

  it("reach the dashboard's event stream in auto mode, where they cost the broker nothing", async () => {
    await withCore('auto', async (core, _observer, pluginId) => {
      const stream = await openSse(`${core.httpUrl}/api/events`, { authorization: `Bearer ${core.adminToken}` });
      try {
        await stream.waitFor((m) => m.event === 'ready');
        expect((await core.api('POST', `/v1/plugins/${pluginId}/tools/echo/run`, { text: 'hi' })).status).toBe(200);
        const finished = await stream.waitFor((m) => m.event === 'invocation' && m.data.includes('invocation.finished'));
        expect(JSON.parse(finished.data)).toMatchObject({ plugin_id: pluginId, capability_id: 'echo', success: true });
        expect((await core.api('POST', `/v1/plugins/${pluginId}/tools/echo/run`, { text: 42 })).status).toBe(400);
        const refused = await stream.waitFor((m) => m.event === 'invocation' && m.data.includes('invocation.refused'));
        expect(JSON.parse(refused.data)).toMatchObject({ plugin_id: pluginId, error_code: 'invalid_params' });
      } finally {
        stream.close();
      }
    });
  });

  it('are published for every call when events.invocations is true', async () => {
    await withCore(true, async (core, observer, pluginId) => {
      const event = observer.waitFor('homeclaw/events/invocation');
      const invoked = await core.api('POST', `/v1/plugins/${pluginId}/tools/echo/run`, { text: 'hi' });
      expect(invoked.status).toBe(200);
      expect((await event).json()).toMatchObject({ type: 'invocation.finished', plugin_id: pluginId, capability_id: 'echo', success: true });
    });
  });
});
