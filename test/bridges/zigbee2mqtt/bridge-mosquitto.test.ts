// The Zigbee2MQTT bridge with an external broker, the usual home setup: a real Mosquitto with the ACL of
// docs/external-broker-acl.md, a stand-in Zigbee2MQTT that logs in as `zigbee2mqtt` and was running
// before the Core started (its retained device list and availability reach the Core on subscribe), and
// the Core logged in as `homeclaw-core`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PluginResult } from '../../../src/protocol/types.js';
import { zigbee2mqttTopics } from '../../../src/protocol/topics.js';
import { startTestCore, type TestCore } from '../../helpers/core.js';
import { startMosquitto, type MosquittoHandle } from '../../helpers/mosquitto.js';
import { connectTestClient } from '../../helpers/mqtt-client.js';
import { HOME, HOME_IDS } from '../../fixtures/zigbee2mqtt/devices.js';
import { StandInZigbee2mqtt } from '../../fixtures/zigbee2mqtt/stand-in.js';
import { call, homeDevices, memoryLogger, stateOf, waitUntil, zigbeePluginIds, type LogLine } from './harness.js';
import { aclFromDocs } from '../../helpers/external-broker-docs.js';

let mosquitto: MosquittoHandle;
let standIn: StandInZigbee2mqtt;
let core: TestCore;
let lines: LogLine[];

beforeAll(async () => {
  mosquitto = await startMosquitto({
    users: { 'homeclaw-core': 'core-secret', zigbee2mqtt: 'z2m-secret', weather: 'weather-secret' },
    acl: aclFromDocs(),
  });
  const { devices, states } = await homeDevices();
  standIn = await StandInZigbee2mqtt.start({
    url: mosquitto.url,
    username: 'zigbee2mqtt',
    password: 'z2m-secret',
    devices,
    states,
    mute: [HOME.mute.friendly_name],
  });
  // Retained before the Core exists: the plug is offline.
  await standIn.send({ cmd: 'availability', name: HOME.plug.friendly_name, state: 'offline' });
  const memory = memoryLogger();
  lines = memory.lines;
  core = await startTestCore({
    log: memory.log,
    overrides: {
      broker: { url: mosquitto.url, username: 'homeclaw-core', password: 'core-secret' },
      zigbee2mqtt: { enabled: true, confirm_timeout_sec: 1 },
    },
  });
  await waitUntil(() => zigbeePluginIds(core).length === Object.keys(HOME_IDS).length, 'the devices to be registered from the retained list');
}, 60_000);

afterAll(async () => {
  await core?.cleanup();
  await standIn?.stop();
  await mosquitto?.stop();
});

describe('Zigbee2MQTT on Mosquitto', () => {
  it('registers the devices from the retained list, with the retained availability', async () => {
    expect(zigbeePluginIds(core)).toEqual(Object.values(HOME_IDS).sort());
    await waitUntil(() => stateOf(core, HOME_IDS.plug) === 'offline', 'the retained availability');
    expect(stateOf(core, HOME_IDS.bulb)).toBe('online');
    expect(lines.filter((l) => l.msg.startsWith('Zigbee2MQTT device skipped'))).toHaveLength(3);
  });

  it('sets and reads devices through Mosquitto', async () => {
    const set = await call(core, HOME_IDS.bulb, 'set', { state: 'OFF', color_temp: 454 });
    expect(set).toMatchObject({ success: true, data: { confirmed: { state: 'OFF', color_temp: 454 } } });
    await standIn.waitReceived('set', HOME.bulb.friendly_name, { state: 'OFF', color_temp: 454 });
    const read = await call(core, HOME_IDS.radiator, 'get_state');
    expect(read).toMatchObject({ success: true, data: { refreshed: true, state: { local_temperature: 19.5, occupied_heating_setpoint: 20 } } });
    expect(read.text).toContain('local temperature 19.5 °C');
    await standIn.waitReceived('get', HOME.radiator.friendly_name, { local_temperature: '', occupied_heating_setpoint: '' }, { partial: true });
  });

  it('fails a set the device never confirms, and refuses bad values without publishing', async () => {
    const silent = await call(core, HOME_IDS.mute, 'set', { state: 'ON' });
    expect(silent).toMatchObject({ success: false, error_code: 'timeout' });
    expect(silent.error).toMatch(/^no confirmation from the device/);
    const sets = standIn.received('set', HOME.blind.friendly_name).length;
    const bad: PluginResult = await call(core, HOME_IDS.blind, 'set', { position: 150 });
    expect(bad).toMatchObject({ success: false, error_code: 'invalid_params' });
    await call(core, HOME_IDS.blind, 'set', { state: 'OPEN' });
    expect((await standIn.receivedAtLeast('set', HOME.blind.friendly_name, sets + 1)).slice(sets).map((e) => e.payload)).toEqual([{ state: 'OPEN' }]);
  });

  it('follows legacy availability, renames and departures', async () => {
    await standIn.send({ cmd: 'availability', name: HOME.plug.friendly_name, state: 'online', legacy: true });
    await waitUntil(() => stateOf(core, HOME_IDS.plug) === 'online', 'the plug to come online');
    await standIn.send({ cmd: 'rename', from: HOME.switch.friendly_name, to: 'landing/light switch' });
    await waitUntil(() => core.ctx.registry.get('z2m-landing-light-switch') !== undefined, 'the renamed switch');
    expect(core.ctx.registry.get(HOME_IDS.switch)).toBeUndefined();
    expect(await call(core, 'z2m-landing-light-switch', 'set', { state_right: 'ON' })).toMatchObject({
      success: true,
      data: { confirmed: { state_right: 'ON' } },
    });
    await standIn.send({ cmd: 'leave', ieee_address: HOME.leak.ieee_address });
    await waitUntil(() => core.ctx.registry.get(HOME_IDS.leak) === undefined, 'the leak sensor to leave');
  });

  it('never sees a device list from another login (the ACL keeps plugins out of zigbee2mqtt/#)', async () => {
    const forger = await connectTestClient(mosquitto.url, { username: 'weather', password: 'weather-secret' });
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
      await forger.publish(zigbee2mqttTopics.bridgeDevices('zigbee2mqtt'), JSON.stringify(forged), { retain: true });
      await standIn.send({ cmd: 'report', name: HOME.plug.friendly_name, state: { marker: 3 } });
      await waitUntil(
        async () => ((await call(core, HOME_IDS.plug, 'get_state', { refresh: false })).data as { state: { marker?: number } }).state.marker === 3,
        'the marker',
      );
      expect(core.ctx.registry.get('z2m-forged')).toBeUndefined();
    } finally {
      await forger.end();
    }
  });

  it('takes the devices offline when Zigbee2MQTT stops', async () => {
    await standIn.stop();
    await waitUntil(() => stateOf(core, HOME_IDS.bulb) === 'offline', 'the devices to go offline');
    expect(core.ctx.registry.get(HOME_IDS.bulb)!.state_reason).toBe('Zigbee2MQTT is offline');
  });
});
