// A big Zigbee network: Zigbee2MQTT's device list grows by about 5 KB per device and outgrows the
// embedded broker's usual cap (4 × broker.max_payload_bytes); the bridge's own topic gets a larger cap,
// so a few hundred devices still arrive, while other topics keep the usual one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HARD_CAP_FACTOR } from '../../../src/bus/broker.js';
import { startTestCore, type TestCore } from '../../helpers/core.js';
import { bridgeDevices, HOME, type FixtureDevice } from '../../fixtures/zigbee2mqtt/devices.js';
import { StandInZigbee2mqtt } from '../../fixtures/zigbee2mqtt/stand-in.js';
import { memoryLogger, waitUntil, zigbeePluginIds, type LogLine } from './harness.js';

const KINDS = [HOME.bulb, HOME.plug, HOME.leak, HOME.door, HOME.radiator, HOME.blind, HOME.switch] as FixtureDevice[];
const COUNT = 280;
const MAX_PAYLOAD = 262_144;

let core: TestCore;
let standIn: StandInZigbee2mqtt;
let lines: LogLine[];
let listBytes: number;

beforeAll(async () => {
  const memory = memoryLogger();
  lines = memory.lines;
  core = await startTestCore({ log: memory.log, overrides: { broker: { max_payload_bytes: MAX_PAYLOAD }, zigbee2mqtt: { enabled: true } } });
  const fixtures = Array.from({ length: COUNT }, (_, i) => {
    const kind = KINDS[i % KINDS.length]!;
    return {
      ...kind,
      ieee_address: `0x00158d${i.toString(16).padStart(10, '0')}`,
      friendly_name: `room ${Math.floor(i / KINDS.length)}/${kind.friendly_name.split('/')[1]}`,
    };
  });
  const devices = await bridgeDevices(fixtures);
  listBytes = Buffer.byteLength(JSON.stringify(devices));
  standIn = await StandInZigbee2mqtt.start({ url: core.mqttUrl, devices });
}, 120_000);

afterAll(async () => {
  await standIn?.stop();
  await core?.cleanup();
});

describe('a large Zigbee network on the embedded broker', () => {
  it('registers every device although the list is larger than the usual payload cap', async () => {
    expect(listBytes).toBeGreaterThan(MAX_PAYLOAD * HARD_CAP_FACTOR);
    await waitUntil(() => zigbeePluginIds(core).length === COUNT, `${COUNT} devices to be registered`, 60_000);
    expect(lines.some((l) => l.msg === 'oversized publish dropped')).toBe(false);
  });

  it('keeps the usual cap on every other Zigbee2MQTT topic', async () => {
    await standIn.send({ cmd: 'raw', topic: 'room 0/ceiling light', payload: JSON.stringify({ junk: 'x'.repeat(MAX_PAYLOAD * HARD_CAP_FACTOR) }) });
    await waitUntil(() => lines.some((l) => l.msg === 'oversized publish dropped'), 'the oversized state to be dropped');
  });
});
