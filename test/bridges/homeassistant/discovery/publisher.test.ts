// MQTT device discovery for Home Assistant on the real Core in external broker mode, with a real
// Mosquitto as the broker Home Assistant shares and an MQTT 5 client in Home Assistant's place: every
// payload passes Home Assistant's discovery rules, the value templates render (real Jinja2) to what the
// entities should show, buttons invoke capabilities, Home Assistant's birth brings everything again,
// unregistered plugins and leftovers are removed with empty retained payloads.
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../../../src/protocol/topics.js';
import type { HaCoreState, HaPluginState } from '../../../../src/protocol/types.js';
import { validatePayload } from '../../../../src/protocol/validate.js';
import { startTestCore, type TestCore } from '../../../helpers/core.js';
import { startMosquitto, type MosquittoHandle } from '../../../helpers/mosquitto.js';
import { connectTestClient, type Received, type TestClient } from '../../../helpers/mqtt-client.js';
import { makePluginsDir } from '../../../e2e/helpers.js';
import { deviceDiscoveryProblems, expandDiscovery } from '../../../fixtures/homeassistant/discovery-rules.js';
import { renderTemplate } from '../../../fixtures/homeassistant/jinja.js';

// The version the Core reports is the package's own.
const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

type Json = Record<string, any>;

const config = (objectId: string): string => topics.haDiscovery('homeassistant', objectId);
const json = (m: Received): Json => JSON.parse(m.payload.toString()) as Json;

let mosquitto: MosquittoHandle;
let core: TestCore;
let ha: TestClient;
let pluginsDir: string;

async function latest(client: TestClient, topic: string, predicate: (m: Received) => boolean = () => true, timeoutMs = 5_000): Promise<Received> {
  await client.waitFor(topic, predicate, timeoutMs);
  return client.received.filter((m) => m.topic === topic && predicate(m)).at(-1)!;
}

beforeAll(async () => {
  mosquitto = await startMosquitto();
  // Leftovers of an earlier run: a device of a plugin that no longer exists, and a foreign one.
  const before = await connectTestClient(mosquitto.url);
  await before.publish(
    config('homeclaw_ghost'),
    { dev: { ids: ['homeclaw_ghost'], name: 'HomeClaw Ghost' }, o: { name: 'HomeClaw Bus' }, cmps: {} },
    { retain: true },
  );
  await before.publish(config('homeclaw_foreign'), { dev: { ids: ['x'], name: 'Other' }, o: { name: 'zigbee2mqtt' }, cmps: {} }, { retain: true });
  // A retained press would replay on every connect; the Core must never act on it.
  await before.publish(topics.haPress('time', 'now'), 'PRESS', { retain: true });
  await before.end();
  pluginsDir = makePluginsDir({ shipped: [{ id: 'time' }, { id: 'notes' }] });
  core = await startTestCore({ pluginsDir, overrides: { broker: { url: mosquitto.url }, homeassistant: { discovery: true } } });
  ha = await connectTestClient(mosquitto.url, { protocolVersion: 5 });
  await ha.subscribe('homeassistant/device/+/config');
  await ha.subscribe('homeclaw/ha/#');
  await ha.subscribe(topics.coreStatus());
}, 60_000);

afterAll(async () => {
  await ha?.end(true);
  await core?.cleanup(); // a second cleanup after the last test stopped it is a no-op
  await mosquitto?.stop();
  rmSync(pluginsDir, { recursive: true, force: true });
});

describe('devices in Home Assistant', () => {
  it('the Core and every plugin are retained devices that pass every rule Home Assistant applies', async () => {
    for (const objectId of ['homeclaw_core', 'homeclaw_time', 'homeclaw_notes']) {
      const message = await latest(ha, config(objectId), (m) => m.payload.length > 0);
      expect(message.retain, objectId).toBe(true);
      const payload = json(message);
      expect(deviceDiscoveryProblems(payload), objectId).toEqual([]);
      expect(validatePayload('ha/discovery', payload).ok, objectId).toBe(true);
      expect(Object.keys(payload)).toEqual(expect.arrayContaining(['dev', 'o', 'cmps']));
      expect(payload.o).toEqual({ name: 'HomeClaw Bus', sw: PACKAGE_VERSION });
    }
  });

  it('the rules are not a rubber stamp: what Home Assistant refuses is caught', async () => {
    const good = json(await latest(ha, config('homeclaw_time')));
    const broken = structuredClone(good);
    delete broken.cmps.connectivity.unique_id;
    delete broken.cmps.call_now.command_topic;
    broken.dev.ids = [];
    delete broken.o;
    expect(deviceDiscoveryProblems(broken).sort()).toEqual(
      [
        'components.call_now: command_topic is required for button',
        'components.connectivity: unique_id is required',
        'device needs at least one identifier or connection',
        'origin with a name is required',
      ].sort(),
    );
  });

  it('the Core device: connectivity from core/status, plugins online, calls per minute, retrieval state', async () => {
    const payload = expandDiscovery(json(await latest(ha, config('homeclaw_core'))));
    expect(payload.device).toMatchObject({ identifiers: ['homeclaw_core'], name: 'HomeClaw Core' });
    const c = payload.components as Json;
    expect(Object.keys(c).sort()).toEqual(['calls_per_minute', 'connectivity', 'plugins_online', 'retrieval']);
    expect(c.connectivity).toMatchObject({ platform: 'binary_sensor', device_class: 'connectivity', state_topic: 'homeclaw/core/status' });
    const status = (await latest(ha, topics.coreStatus())).payload.toString();
    expect(renderTemplate(c.connectivity.value_template, status)).toBe('ON');
    expect(renderTemplate(c.connectivity.value_template, JSON.stringify({ online: false, ts: 1 }))).toBe('OFF');
    const stateMessage = await latest(ha, topics.haCoreState());
    expect(stateMessage.retain || ha.received.includes(stateMessage)).toBe(true);
    const state = json(stateMessage) as HaCoreState;
    expect(validatePayload('ha/core-state', state).ok).toBe(true);
    expect(state).toMatchObject({ plugins_online: 2, plugins_total: 2, retrieval: 'disabled' });
    const raw = stateMessage.payload.toString();
    expect(renderTemplate(c.plugins_online.value_template, raw)).toBe('2');
    expect(renderTemplate(c.retrieval.value_template, raw)).toBe('disabled');
    expect(c.retrieval.options).toContain('disabled');
    expect(renderTemplate(c.retrieval.json_attributes_template, raw)).toBe('{"reason": null}');
    // Availability follows the Core's birth and will.
    const availability = c.plugins_online.availability[0];
    expect(availability.topic).toBe('homeclaw/core/status');
    expect(renderTemplate(availability.value_template, status)).toBe('online');
    expect(renderTemplate(availability.value_template, JSON.stringify({ online: false, ts: 1 }))).toBe('offline');
  });

  it('a plugin device: connectivity, last outcome, last latency, and a button per capability without required parameters', async () => {
    const notes = expandDiscovery(json(await latest(ha, config('homeclaw_notes'))));
    expect(notes.device).toMatchObject({ identifiers: ['homeclaw_notes'], name: 'HomeClaw Notes', via_device: 'homeclaw_core' });
    const c = notes.components as Json;
    // save_note and search_notes need parameters; list_notes does not.
    expect(Object.keys(c).sort()).toEqual(['call_list_notes', 'connectivity', 'last_latency', 'last_outcome']);
    expect(c.call_list_notes).toMatchObject({ platform: 'button', command_topic: topics.haPress('notes', 'list_notes'), payload_press: 'PRESS' });
    expect((notes.availability as Json[])[0]!.topic).toBe('homeclaw/core/status');
    const state = await latest(ha, topics.haPluginState('notes'));
    expect(validatePayload('ha/plugin-state', json(state)).ok).toBe(true);
    const raw = state.payload.toString();
    expect(renderTemplate(c.connectivity.value_template, raw)).toBe('ON');
    expect(renderTemplate(c.last_outcome.value_template, raw)).toBe('None'); // Home Assistant's "unknown"
    expect(renderTemplate(c.connectivity.json_attributes_template, raw)).toBe('{"reason": null, "state": "online"}');
    // The retained press replayed to the Core at start did not run the capability.
    expect((json(await latest(ha, topics.haPluginState('time'))) as HaPluginState).last_outcome).toBeNull();
    expect(core.ctx.dispatcher.getStats().invoked).toBe(0);
  });

  it('pressing a button invokes the capability; the outcome and latency show on the plugin device and the Core counts the call', async () => {
    const mark = ha.received.length;
    const stats = core.ctx.dispatcher.getStats();
    await ha.publish(topics.haPress('time', 'now'), 'PRESS');
    const state = await ha.waitFor(topics.haPluginState('time'), (m) => ha.received.indexOf(m) >= mark && json(m).last_outcome === 'success');
    const time = expandDiscovery(json(await latest(ha, config('homeclaw_time'))));
    const latency = renderTemplate((time.components as Json).last_latency.value_template, state.payload.toString());
    expect(Number(latency)).toBeGreaterThanOrEqual(0);
    expect(core.ctx.dispatcher.getStats().succeeded).toBe(stats.succeeded + 1);
    const coreState = await ha.waitFor(topics.haCoreState(), (m) => ha.received.indexOf(m) >= mark && (json(m) as HaCoreState).calls_per_minute >= 1);
    expect(json(coreState).calls_per_minute).toBeGreaterThanOrEqual(1);
  });

  it('presses that are not "PRESS", for a capability without a button or for no plugin invoke nothing', async () => {
    const before = core.ctx.dispatcher.getStats().invoked;
    await ha.publish(topics.haPress('time', 'now'), 'press please');
    await ha.publish(topics.haPress('notes', 'save_note'), 'PRESS');
    await ha.publish(topics.haPress('nosuch', 'run'), 'PRESS');
    await new Promise((r) => setTimeout(r, 500));
    expect(core.ctx.dispatcher.getStats().invoked).toBe(before);
  });

  it("Home Assistant's birth (homeassistant/status online) brings every device and state again", async () => {
    const mark = ha.received.length;
    await ha.publish(topics.haStatus('homeassistant'), 'online');
    for (const objectId of ['homeclaw_core', 'homeclaw_time', 'homeclaw_notes']) {
      await ha.waitFor(config(objectId), (m) => ha.received.indexOf(m) >= mark && m.payload.length > 0);
    }
    await ha.waitFor(topics.haPluginState('time'), (m) => ha.received.indexOf(m) >= mark);
    await ha.waitFor(topics.haCoreState(), (m) => ha.received.indexOf(m) >= mark);
    // "offline" (its will) and noise change nothing.
    const after = ha.received.length;
    await ha.publish(topics.haStatus('homeassistant'), 'offline');
    await ha.publish(topics.haStatus('homeassistant'), 'rebooting');
    expect(await ha.quiet('homeassistant/device/+/config', 400, (m) => ha.received.indexOf(m) >= after)).toBe(true);
  });

  it('a registered plugin appears; unregistered, its device and state are removed with empty retained payloads', async () => {
    const registered = await core.api('POST', '/api/plugins/register', {
      id: 'doorbell',
      name: 'Doorbell',
      description: 'Rings the doorbell chime.',
      type: 'http',
      config: { base_url: 'http://127.0.0.1:9' },
      health_check_url: 'http://127.0.0.1:9/health',
      capabilities: [{ id: 'ring', name: 'Ring', description: 'Ring the chime.', parameters: [] }],
    });
    expect(registered.status).toBe(201);
    const device = json(await latest(ha, config('homeclaw_doorbell'), (m) => m.payload.length > 0));
    expect(deviceDiscoveryProblems(device)).toEqual([]);
    expect(Object.keys(device.cmps)).toContain('call_ring');
    expect((await core.api('POST', '/api/plugins/unregister', { plugin_id: 'doorbell' })).status).toBe(200);
    await ha.waitFor(config('homeclaw_doorbell'), (m) => m.payload.length === 0);
    await ha.waitFor(topics.haPluginState('doorbell'), (m) => m.payload.length === 0);
    // A client connecting now (as Home Assistant after a restart) finds no retained device for it.
    const late = await connectTestClient(mosquitto.url, { protocolVersion: 5 });
    try {
      await late.subscribe('homeassistant/device/+/config');
      await late.waitFor(config('homeclaw_time'));
      expect(late.received.some((m) => m.topic === config('homeclaw_doorbell'))).toBe(false);
      expect(late.received.every((m) => m.retain)).toBe(true);
    } finally {
      await late.end(true);
    }
  });

  it("at start, a retained device of this origin whose plugin is gone is cleared; other origins' devices are left alone", async () => {
    const late = await connectTestClient(mosquitto.url);
    try {
      await late.subscribe('homeassistant/device/+/config');
      await late.waitFor(config('homeclaw_foreign'));
      await late.waitFor(config('homeclaw_time'));
      expect(late.received.some((m) => m.topic === config('homeclaw_ghost'))).toBe(false);
    } finally {
      await late.end(true);
    }
  });

  it('when the Core stops, its retained status says offline, so Home Assistant marks the devices unavailable', async () => {
    const device = expandDiscovery(json(await latest(ha, config('homeclaw_core'))));
    const availability = ((device.components as Json).plugins_online.availability as Json[])[0]!;
    const mark = ha.received.length;
    await core.cleanup();
    const status = await ha.waitFor(topics.coreStatus(), (m) => ha.received.indexOf(m) >= mark);
    expect(renderTemplate(availability.value_template, status.payload.toString())).toBe('offline');
    expect(renderTemplate((device.components as Json).connectivity.value_template, status.payload.toString())).toBe('OFF');
    // The devices stay (retained): Home Assistant shows them unavailable until the Core is back.
    const late = await connectTestClient(mosquitto.url);
    try {
      await late.subscribe(config('homeclaw_core'));
      expect((await late.waitFor(config('homeclaw_core'))).payload.length).toBeGreaterThan(0);
    } finally {
      await late.end(true);
    }
  });
});
