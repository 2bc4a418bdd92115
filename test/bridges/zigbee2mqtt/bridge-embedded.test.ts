// The Zigbee2MQTT bridge end to end on the REAL Core with its embedded broker: a stand-in Zigbee2MQTT in
// its own process logs in with a zigbee2mqtt credential and publishes a device list built from real
// zigbee-herdsman-converters definitions; the devices become plugins that are searched, set and read
// through the Core, follow availability, renames, departures and joins, survive a Core restart, and bad
// input changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChannelMessageOut, PluginResult } from '../../../src/protocol/types.js';
import { zigbee2mqttTopics } from '../../../src/protocol/topics.js';
import { startTestCore, type TestCore } from '../../helpers/core.js';
import { connectTestClient } from '../../helpers/mqtt-client.js';
import { freePort } from '../../helpers/ports.js';
import { startScriptedLlm, systemPromptOf, type ChatRequestBody, type ScriptedLlm, type ScriptedResponse } from '../../helpers/scripted-llm.js';
import { bridgeDeviceEntry, HOME, HOME_IDS, type FixtureDevice } from '../../fixtures/zigbee2mqtt/devices.js';
import { StandInZigbee2mqtt } from '../../fixtures/zigbee2mqtt/stand-in.js';
import { call, homeDevices, memoryLogger, stateOf, waitUntil, zigbeePluginIds, type LogLine } from './harness.js';

const BASE = 'zigbee2mqtt';
let core: TestCore;
let standIn: StandInZigbee2mqtt;
let lines: LogLine[];
let mqttPort: number;
let z2mPassword: string;
let dataDir: string;
let llm: ScriptedLlm;

/**
 * A model that asks a device only when retrieval put it in the prompt: it proves the question found the
 * device, then the real tool loop, dispatcher and bridge run.
 */
function scriptedModel(request: ChatRequestBody): ScriptedResponse {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { text: `From the device: ${String(last.content)}` };
  const question = String(request.messages.findLast((m) => m.role === 'user')?.content ?? '');
  if (/wet/.test(question) && systemPromptOf(request).includes(HOME_IDS.leak)) {
    return { tool_calls: [{ name: 'route_to_plugin', arguments: { plugin_id: HOME_IDS.leak, capability_id: 'get_state' } }] };
  }
  return { text: 'I found no device for that.' };
}

async function startCore(): Promise<TestCore> {
  const memory = memoryLogger();
  lines = memory.lines;
  return startTestCore({
    ...(dataDir ? { dataDir } : {}),
    log: memory.log,
    overrides: {
      broker: { port: mqttPort, allow_anonymous: false },
      zigbee2mqtt: { enabled: true, base_topic: BASE, confirm_timeout_sec: 1 },
      llm: { base_url: llm.url, model: 'scripted', max_rounds: 3 },
    },
  });
}

beforeAll(async () => {
  llm = await startScriptedLlm({ respond: scriptedModel });
  mqttPort = await freePort();
  core = await startCore();
  dataDir = core.dataDir;
  z2mPassword = (await core.ctx.credentials.add('z2m', 'zigbee2mqtt')).password;
  const { devices, states } = await homeDevices();
  standIn = await StandInZigbee2mqtt.start({ url: core.mqttUrl, username: 'z2m', password: z2mPassword, devices, states, mute: [HOME.mute.friendly_name] });
  await waitUntil(() => zigbeePluginIds(core).length === Object.keys(HOME_IDS).length, 'the devices to be registered');
});

afterAll(async () => {
  await standIn?.stop();
  await core?.cleanup();
  await llm?.close();
});

describe('devices become plugins', () => {
  it('registers every interviewed device with a definition, online, owned by zigbee2mqtt', () => {
    expect(zigbeePluginIds(core)).toEqual(Object.values(HOME_IDS).sort());
    for (const id of Object.values(HOME_IDS)) {
      const record = core.ctx.registry.get(id)!;
      expect(record).toMatchObject({ owner: 'zigbee2mqtt', state: 'online', descriptor: { type: 'zigbee2mqtt', source: 'external' } });
    }
    expect(core.ctx.registry.get(HOME_IDS.leak)!.descriptor.name).toBe('hallway/sink');
  });

  it('skips the coordinator, the unsupported device and the one still interviewing with one log line each', async () => {
    // Zigbee2MQTT republishes its list on every change; the skip is still logged once.
    await standIn.send({ cmd: 'devices' });
    await standIn.send({ cmd: 'devices' });
    const skipped = lines.filter((l) => l.msg.startsWith('Zigbee2MQTT device skipped'));
    expect(skipped.map((l) => l['ieee_address']).sort()).toEqual(
      [HOME.unsupported.ieee_address, HOME.interviewing.ieee_address, HOME.coordinator.ieee_address].sort(),
    );
    expect(skipped.find((l) => l['ieee_address'] === HOME.coordinator.ieee_address)!.msg).toMatch(/coordinator/);
    expect(skipped.find((l) => l['ieee_address'] === HOME.unsupported.ieee_address)!.msg).toMatch(/no definition/);
    expect(skipped.find((l) => l['ieee_address'] === HOME.interviewing.ieee_address)!.msg).toMatch(/interview/);
  });

  it('finds the water-leak sensor for "is the hallway sensor wet"', async () => {
    const { status, body } = await core.api<{ hits: { plugin_id: string }[] }>(
      'GET',
      `/api/plugins/search?q=${encodeURIComponent('is the hallway sensor wet')}&k=5`,
    );
    expect(status).toBe(200);
    expect(body.hits[0]?.plugin_id).toBe(HOME_IDS.leak);
    // The other hallway sensor is found too, but after it.
    expect(body.hits.map((h) => h.plugin_id)).toContain(HOME_IDS.door);
  });

  it('finds devices by what they do', async () => {
    const top = async (q: string): Promise<string | undefined> =>
      (await core.api<{ hits: { plugin_id: string }[] }>('GET', `/api/plugins/search?q=${encodeURIComponent(q)}&k=3`)).body.hits[0]?.plugin_id;
    expect(await top('open the bedroom blind')).toBe(HOME_IDS.blind);
    expect(await top('set the bedroom radiator to 21 degrees')).toBe(HOME_IDS.radiator);
    expect(await top('is the front door open')).toBe(HOME_IDS.door);
  });
});

describe('set', () => {
  it('publishes the values and answers with the state that echoes them', async () => {
    const result = await call(core, HOME_IDS.bulb, 'set', { state: 'ON', brightness: 200, color: { hue: 240, saturation: 100 } });
    expect(result).toMatchObject({
      success: true,
      data: { friendly_name: HOME.bulb.friendly_name, confirmed: { state: 'ON', brightness: 200, color: { hue: 240, saturation: 100 } } },
    });
    expect(result.text).toContain('confirmed by the device');
    await standIn.waitReceived('set', HOME.bulb.friendly_name, { state: 'ON', brightness: 200, color: { hue: 240, saturation: 100 } });
  });

  it('reports what the device did with a toggle', async () => {
    const result = await call(core, HOME_IDS.plug, 'set', { state: 'TOGGLE' });
    expect(result).toMatchObject({ success: true, data: { confirmed: { state: 'ON' } } });
  });

  it('sets endpoint features, covers and thermostats under the names Zigbee2MQTT uses', async () => {
    expect(await call(core, HOME_IDS.switch, 'set', { state_left: 'OFF' })).toMatchObject({ success: true, data: { confirmed: { state_left: 'OFF' } } });
    await standIn.waitReceived('set', HOME.switch.friendly_name, { state_left: 'OFF' });
    expect(await call(core, HOME_IDS.blind, 'set', { position: 40 })).toMatchObject({ success: true, data: { confirmed: { position: 40 } } });
    expect(await call(core, HOME_IDS.radiator, 'set', { occupied_heating_setpoint: 21.5 })).toMatchObject({
      success: true,
      data: { confirmed: { occupied_heating_setpoint: 21.5 } },
    });
  });

  it('fails with "no confirmation from the device" when the device never answers', async () => {
    const before = standIn.received('set', HOME.mute.friendly_name).length;
    const result = await call(core, HOME_IDS.mute, 'set', { state: 'ON' });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^no confirmation from the device: "garage\/plug" did not report state within 1 s/);
    expect(result.error_code).toBe('timeout');
    // The command did go out.
    expect((await standIn.receivedAtLeast('set', HOME.mute.friendly_name, before + 1)).length).toBe(before + 1);
  });

  it('refuses unknown keys, bad values and an empty set without publishing anything', async () => {
    const before = standIn.received('set', HOME.bulb.friendly_name).length;
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ colour: 'red' }, /unknown parameter "colour"/],
      [{ state: 'SPARKLE' }, /state must be equal to one of the allowed values/],
      [{ brightness: 999 }, /brightness must be <= 254/],
      [{ color: { z: 1 } }, /z/],
      [{}, /nothing to set: give at least one of state, brightness/],
    ];
    for (const [parameters, message] of bad) {
      const result = await call(core, HOME_IDS.bulb, 'set', parameters as never);
      expect(result, JSON.stringify(parameters)).toMatchObject({ success: false, error_code: 'invalid_params' });
      expect(result.error).toMatch(message);
    }
    // A good call afterwards is the next command the device sees: none of the bad ones went out before it.
    await call(core, HOME_IDS.bulb, 'set', { brightness: 10 });
    expect((await standIn.receivedAtLeast('set', HOME.bulb.friendly_name, before + 1)).slice(before).map((e) => e.payload)).toEqual([{ brightness: 10 }]);
  });

  it('works over the HTTP API and as a chat slash command', async () => {
    const http = await core.api<PluginResult>('POST', `/v1/plugins/${HOME_IDS.plug}/tools/set/run`, { state: 'OFF' });
    expect(http).toMatchObject({ status: 200, body: { success: true, data: { confirmed: { state: 'OFF' } } } });
    const bad = await core.api<PluginResult>('POST', `/v1/plugins/${HOME_IDS.plug}/tools/set/run`, { state: 'MAYBE' });
    expect(bad).toMatchObject({ status: 400, body: { error_code: 'invalid_params' } });
    const chat = await core.api<ChannelMessageOut>('POST', '/api/messages', {
      channel: 'web',
      user_id: 'alice',
      text: `/${HOME_IDS.bulb} set state=ON brightness=80`,
    });
    expect(chat.body.text).toContain('living room/ceiling light: state ON, brightness 80 (confirmed by the device)');
  });
});

describe('get_state', () => {
  it('refreshes what /get can read and answers with the state', async () => {
    const result = await call(core, HOME_IDS.plug, 'get_state');
    await standIn.waitReceived('get', HOME.plug.friendly_name, { state: '', power_on_behavior: '' });
    expect(result).toMatchObject({ success: true, data: { refreshed: true, state: { state: 'OFF', power_on_behavior: 'previous' } } });
    expect(result.text).toContain('kitchen/coffee plug: state OFF, power on behavior previous');
  });

  it('answers a sleeping sensor from the last report, without asking it', async () => {
    const before = await call(core, HOME_IDS.leak, 'get_state');
    expect(before).toMatchObject({ success: true, text: 'hallway/sink has not reported its state yet.' });
    await standIn.send({ cmd: 'report', name: HOME.leak.friendly_name, state: { water_leak: true, battery: 91, linkquality: 60 } });
    await waitUntil(async () => ((await call(core, HOME_IDS.leak, 'get_state')).data as { state: unknown }).state !== null, 'the report to arrive');
    const after = await call(core, HOME_IDS.leak, 'get_state');
    expect(after).toMatchObject({ success: true, data: { state: { water_leak: true, battery: 91 }, refreshed: false } });
    expect(after.text).toContain('water leak true, battery 91 %');
    expect(standIn.received('get', HOME.leak.friendly_name)).toEqual([]);
  });

  it('answers "is the hallway sensor wet?" in a chat through the LLM tool loop', async () => {
    const reply = await core.api<ChannelMessageOut>('POST', '/api/messages', { channel: 'web', user_id: 'alice', text: 'is the hallway sensor wet?' });
    expect(reply.status).toBe(200);
    expect(reply.body.text).toContain('hallway/sink: water leak true, battery 91 %');
    expect(reply.body.plugin_id).toBe(HOME_IDS.leak);
  });

  it('says so when the device did not answer the refresh, and gives the last state', async () => {
    await standIn.send({ cmd: 'report', name: HOME.mute.friendly_name, state: { state: 'OFF' } });
    await waitUntil(async () => ((await call(core, HOME_IDS.mute, 'get_state', { refresh: false })).data as { state: unknown }).state !== null, 'the report');
    const result = await call(core, HOME_IDS.mute, 'get_state');
    expect(result).toMatchObject({ success: true, data: { refreshed: false, state: { state: 'OFF' } } });
    expect(result.text).toMatch(/the device did not answer a refresh within 1 s/);
  });

  it('skips the refresh when asked', async () => {
    const gets = standIn.received('get', HOME.plug.friendly_name).length;
    expect(await call(core, HOME_IDS.plug, 'get_state', { refresh: false })).toMatchObject({ success: true, data: { refreshed: false } });
    expect(standIn.received('get', HOME.plug.friendly_name).length).toBe(gets);
  });
});

describe('availability and the bridge state', () => {
  it('follows availability in JSON and in the legacy text form', async () => {
    await standIn.send({ cmd: 'availability', name: HOME.plug.friendly_name, state: 'offline' });
    await waitUntil(() => stateOf(core, HOME_IDS.plug) === 'offline', 'the plug to go offline');
    const refused = await call(core, HOME_IDS.plug, 'set', { state: 'ON' });
    expect(refused).toMatchObject({ success: false, error_code: 'offline' });
    expect(refused.error).toContain('Zigbee2MQTT reports the device offline');
    await standIn.send({ cmd: 'availability', name: HOME.plug.friendly_name, state: 'online', legacy: true });
    await waitUntil(() => stateOf(core, HOME_IDS.plug) === 'online', 'the plug to come back (legacy payload)');
  });

  it('takes every device offline while Zigbee2MQTT is offline, keeping a device that is itself offline so', async () => {
    await standIn.send({ cmd: 'availability', name: HOME.blind.friendly_name, state: 'offline' });
    await standIn.send({ cmd: 'bridge_state', state: 'offline' });
    await waitUntil(() => Object.values(HOME_IDS).every((id) => stateOf(core, id) === 'offline'), 'every device to go offline');
    expect(core.ctx.registry.get(HOME_IDS.bulb)!.state_reason).toBe('Zigbee2MQTT is offline');
    await standIn.send({ cmd: 'bridge_state', state: 'online' });
    await waitUntil(() => stateOf(core, HOME_IDS.bulb) === 'online', 'the devices to come back');
    expect(core.ctx.registry.get(HOME_IDS.blind)).toMatchObject({ state: 'offline', state_reason: 'Zigbee2MQTT reports the device offline' });
    await standIn.send({ cmd: 'availability', name: HOME.blind.friendly_name, state: 'online' });
    await waitUntil(() => stateOf(core, HOME_IDS.blind) === 'online', 'the blind to come back');
  });
});

describe('the device list changes', () => {
  it('re-registers a renamed device under its new id, with its state', async () => {
    await standIn.send({ cmd: 'rename', from: HOME.bulb.friendly_name, to: 'living room/main light' });
    await waitUntil(() => core.ctx.registry.get('z2m-living-room-main-light') !== undefined, 'the new id');
    expect(core.ctx.registry.get(HOME_IDS.bulb)).toBeUndefined();
    const renamed = core.ctx.registry.get('z2m-living-room-main-light');
    expect(renamed).toMatchObject({ state: 'online', descriptor: { name: 'living room/main light' } });
    expect(await call(core, 'z2m-living-room-main-light', 'get_state', { refresh: false })).toMatchObject({ data: { state: { brightness: 80 } } });
    expect(await call(core, 'z2m-living-room-main-light', 'set', { state: 'OFF' })).toMatchObject({ success: true });
    await standIn.waitReceived('set', 'living room/main light', { state: 'OFF' });
    expect(await call(core, HOME_IDS.bulb, 'set', { state: 'ON' })).toMatchObject({ success: false, error_code: 'not_found' });
    expect(lines.some((l) => l.msg === 'Zigbee2MQTT device renamed' && l['to'] === 'living room/main light')).toBe(true);
  });

  it('unregisters a device that leaves, and search no longer finds it', async () => {
    await standIn.send({ cmd: 'leave', ieee_address: HOME.door.ieee_address });
    await waitUntil(() => core.ctx.registry.get(HOME_IDS.door) === undefined, 'the door sensor to be unregistered');
    const { body } = await core.api<{ hits: { plugin_id: string }[] }>('GET', `/api/plugins/search?q=${encodeURIComponent('is the front door open')}&k=10`);
    expect(body.hits.map((h) => h.plugin_id)).not.toContain(HOME_IDS.door);
  });

  it('registers a device that joins once its interview is done', async () => {
    const fresh: FixtureDevice = { ieee_address: '0x00158d00000000ff', friendly_name: 'attic/leak', model_id: 'lumi.sensor_wleak.aq1', type: 'EndDevice' };
    await standIn.send({ cmd: 'join', device: await bridgeDeviceEntry({ ...fresh, friendly_name: fresh.ieee_address, interview_state: 'IN_PROGRESS' }) });
    await waitUntil(
      () => lines.some((l) => l['ieee_address'] === fresh.ieee_address && /interview has not finished/.test(l.msg)),
      'the joined device to be skipped',
    );
    expect(zigbeePluginIds(core)).not.toContain('z2m-0x00158d00000000ff');
    await standIn.send({ cmd: 'interviewed', device: await bridgeDeviceEntry(fresh) });
    await waitUntil(() => core.ctx.registry.get('z2m-attic-leak') !== undefined, 'the interviewed device');
    expect(core.ctx.registry.get('z2m-attic-leak')).toMatchObject({ state: 'online', descriptor: { name: 'attic/leak' } });
  });
});

describe('bad input from the bus', () => {
  it('ignores malformed lists, events, states and availability, and keeps working', async () => {
    const before = zigbeePluginIds(core);
    await standIn.send({ cmd: 'raw', topic: 'bridge/devices', payload: 'not json' });
    await standIn.send({ cmd: 'raw', topic: 'bridge/devices', payload: JSON.stringify({ not: 'a list' }) });
    await standIn.send({ cmd: 'raw', topic: 'bridge/event', payload: JSON.stringify({ type: 7 }) });
    await standIn.send({ cmd: 'raw', topic: HOME.plug.friendly_name, payload: '[1,2' });
    await standIn.send({ cmd: 'raw', topic: `${HOME.plug.friendly_name}/availability`, payload: 'maybe' });
    // Messages from one client reach the Core in order: once this report is in, so is all of the above.
    await standIn.send({ cmd: 'report', name: HOME.plug.friendly_name, state: { marker: 1 } });
    await waitUntil(
      async () => ((await call(core, HOME_IDS.plug, 'get_state', { refresh: false })).data as { state: { marker?: number } }).state.marker === 1,
      'the marker',
    );
    expect(zigbeePluginIds(core)).toEqual(before);
    expect(stateOf(core, HOME_IDS.plug)).toBe('online');
    expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual(
      expect.arrayContaining([
        'Zigbee2MQTT device list ignored',
        'Zigbee2MQTT bridge event ignored: not a valid event',
        'Zigbee2MQTT state ignored: not a JSON object',
        'Zigbee2MQTT availability ignored: expected online or offline',
      ]),
    );
    expect(await call(core, HOME_IDS.plug, 'set', { state: 'ON' })).toMatchObject({ success: true });
  });

  it('drops a device list forged by a plugin login (ACL)', async () => {
    const weather = await core.ctx.credentials.add('weather', 'plugin');
    const forger = await connectTestClient(core.mqttUrl, { username: 'weather', password: weather.password });
    try {
      const forged = [
        {
          ieee_address: '0xdead',
          type: 'Router',
          friendly_name: 'forged',
          interview_state: 'SUCCESSFUL',
          definition: { model: 'x', vendor: 'x', description: 'x', exposes: [] },
        },
      ];
      await forger.publish(zigbee2mqttTopics.bridgeDevices(BASE), JSON.stringify(forged), { retain: true });
      // The broker acknowledged the forged list before this report was sent, logged the denial and delivered
      // the list to nobody.
      await standIn.send({ cmd: 'report', name: HOME.plug.friendly_name, state: { marker: 2 } });
      await waitUntil(
        async () => ((await call(core, HOME_IDS.plug, 'get_state', { refresh: false })).data as { state: { marker?: number } }).state.marker === 2,
        'the marker',
      );
      await waitUntil(() => lines.some((l) => l.msg === 'publish denied' && l['username'] === 'weather'), 'the denial in the log');
      expect(core.ctx.registry.get('z2m-forged')).toBeUndefined();
    } finally {
      await forger.end();
    }
  });
});

describe('restarts', () => {
  it('keeps the devices across a Core restart, offline until Zigbee2MQTT is back, then usable', async () => {
    await core.cleanup({ keepData: true });
    core = await startCore();
    // The stand-in reconnects by itself and says online, like Zigbee2MQTT; it does not republish its list.
    await waitUntil(() => stateOf(core, 'z2m-living-room-main-light') === 'online', 'the restored devices to come online', 15_000);
    // Restored from the database, they waited for Zigbee2MQTT before being routed to.
    expect(
      lines.some(
        (l) => l.msg === 'plugin state changed' && l['plugin_id'] === HOME_IDS.leak && l['reason'] === 'waiting for Zigbee2MQTT to report its devices',
      ),
    ).toBe(true);
    expect(zigbeePluginIds(core)).toContain(HOME_IDS.leak);
    expect(await call(core, HOME_IDS.plug, 'set', { state: 'OFF' })).toMatchObject({ success: true });
  });

  it('takes every device offline when Zigbee2MQTT dies (its will)', async () => {
    await standIn.crash();
    await waitUntil(() => stateOf(core, HOME_IDS.plug) === 'offline', 'the will to take the devices offline');
    expect(core.ctx.registry.get(HOME_IDS.radiator)).toMatchObject({ state: 'offline', state_reason: 'Zigbee2MQTT is offline' });
  });
});
