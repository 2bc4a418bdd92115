// The zigbee2mqtt credential role: a Zigbee2MQTT installation on the embedded broker publishes and
// subscribes under its base topic and nowhere else, and nobody but it (or an admin) writes there.
import { describe, expect, it } from 'vitest';
import { authorizePublishTopic, authorizeSubscribeFilter, type AclContext, type ClientIdentity } from '../../src/bus/acl.js';
import { topics, zigbee2mqttFilters, zigbee2mqttTopics } from '../../src/protocol/topics.js';

const z2m: ClientIdentity = { clientId: 'zigbee2mqtt_1', username: 'z2m', role: 'zigbee2mqtt', pluginIds: ['z2m'], channels: ['z2m'] };
const plugin: ClientIdentity = { clientId: 'c1', username: 'weather', role: 'plugin', pluginIds: ['weather'], channels: ['weather'] };
const channel: ClientIdentity = { clientId: 'c2', username: 'telegram', role: 'channel', pluginIds: ['telegram'], channels: ['telegram'] };
const base = 'zigbee2mqtt';
const on: AclContext = { zigbee2mqttBaseTopic: base, requestTarget: () => 'z2m' };

type Row = [label: string, who: ClientIdentity, topic: string, allowed: boolean];

const publishes: Row[] = [
  ['Zigbee2MQTT device list', z2m, zigbee2mqttTopics.bridgeDevices(base), true],
  ['Zigbee2MQTT its will', z2m, zigbee2mqttTopics.bridgeState(base), true],
  ['Zigbee2MQTT a device state', z2m, zigbee2mqttTopics.deviceState(base, 'hallway/sink'), true],
  ['Zigbee2MQTT a HomeClaw register', z2m, topics.register(), false],
  ['Zigbee2MQTT a HomeClaw result', z2m, topics.result('req-1'), false],
  ['Zigbee2MQTT a channel message', z2m, topics.channelIn('cli'), false],
  ['Zigbee2MQTT the Core status', z2m, topics.coreStatus(), false],
  ['Zigbee2MQTT the base topic itself', z2m, base, false],
  ['Zigbee2MQTT a look-alike base', z2m, 'zigbee2mqttx/bridge/devices', false],
  ['Zigbee2MQTT Home Assistant discovery', z2m, 'homeassistant/light/x/config', false],
  ['a plugin forging a device list', plugin, zigbee2mqttTopics.bridgeDevices(base), false],
  ['a plugin forging a device state', plugin, zigbee2mqttTopics.deviceState(base, 'hallway/sink'), false],
  ['a channel forging availability', channel, zigbee2mqttTopics.availability(base, 'hallway/sink'), false],
];

const subscribes: Row[] = [
  ['Zigbee2MQTT its own tree', z2m, zigbee2mqttFilters.all(base), true],
  ['Zigbee2MQTT one device', z2m, zigbee2mqttTopics.set(base, 'lamp'), true],
  ['Zigbee2MQTT the Core status', z2m, topics.coreStatus(), true],
  ['Zigbee2MQTT everything', z2m, '#', false],
  ['Zigbee2MQTT HomeClaw invocations', z2m, 'homeclaw/plugins/invoke/+', false],
  ['a plugin reading Zigbee2MQTT', plugin, zigbee2mqttFilters.all(base), false],
  ['a channel reading device states', channel, zigbee2mqttTopics.deviceState(base, '+'), false],
];

describe('zigbee2mqtt role', () => {
  it.each(publishes)('publish: %s', (_label, who, topic, allowed) => {
    const decision = authorizePublishTopic(who, topic, on);
    expect(decision.allowed).toBe(allowed);
    if (!decision.allowed) expect(decision.reason.length).toBeGreaterThan(0);
  });

  it.each(subscribes)('subscribe: %s', (_label, who, filter, allowed) => {
    expect(authorizeSubscribeFilter(who, filter, on).allowed).toBe(allowed);
  });

  it('may do nothing while the bridge is off', () => {
    const decision = authorizePublishTopic(z2m, zigbee2mqttTopics.bridgeDevices(base), {});
    expect(decision).toEqual({ allowed: false, reason: 'the Zigbee2MQTT bridge is off (zigbee2mqtt.enabled: false)' });
    expect(authorizeSubscribeFilter(z2m, zigbee2mqttFilters.all(base), {}).allowed).toBe(false);
  });

  it('follows a base topic of several levels', () => {
    const nested: AclContext = { zigbee2mqttBaseTopic: 'home/zigbee' };
    expect(authorizePublishTopic(z2m, 'home/zigbee/bridge/devices', nested).allowed).toBe(true);
    expect(authorizePublishTopic(z2m, 'home/other', nested).allowed).toBe(false);
  });
});
