import { describe, expect, it } from 'vitest';
import { assignPluginIds, classifyDevice, slugOf } from '../../../src/bridges/zigbee2mqtt/device-list.js';
import { isPluginId } from '../../../src/protocol/ids.js';
import type { Z2mDevice } from '../../../src/protocol/zigbee2mqtt.js';

const definition = { model: 'M1', vendor: 'V', description: 'Thing', exposes: [] };
const device = (extra: Partial<Z2mDevice>): Z2mDevice => ({ ieee_address: '0x1', type: 'Router', friendly_name: 'thing', definition, ...extra });

describe('classifyDevice', () => {
  it('bridges an interviewed device with a definition, in both interview formats', () => {
    expect(classifyDevice(device({ interview_state: 'SUCCESSFUL' })).bridge).toBe(true);
    expect(classifyDevice(device({ interview_completed: true, interviewing: false })).bridge).toBe(true);
    // A failed interview that still found a definition works in Zigbee2MQTT, so it is bridged.
    expect(classifyDevice(device({ interview_state: 'FAILED' })).bridge).toBe(true);
  });

  it.each([
    [{ type: 'Coordinator', definition: null }, /coordinator/],
    [{ disabled: true }, /disabled/],
    [{ interview_state: 'IN_PROGRESS', definition: null }, /interview has not finished/],
    [{ interview_state: 'PENDING' }, /interview has not finished/],
    [{ interviewing: true, interview_completed: false }, /interview has not finished/],
    [{ definition: null, supported: false }, /no definition/],
    [{ definition: undefined }, /no definition/],
    [{ friendly_name: 'lamp/#' }, /wildcard/],
    [{ friendly_name: 'kitchen+lamp' }, /wildcard/],
    [{ friendly_name: '/lamp' }, /starts or ends with \//],
    [{ friendly_name: 'lamp\u0000' }, /control character/],
    [{ friendly_name: 'bridge/devices' }, /Zigbee2MQTT's own topics/],
  ] as const)('skips %j', (extra, reason) => {
    const verdict = classifyDevice(device(extra as Partial<Z2mDevice>));
    expect(verdict.bridge).toBe(false);
    if (!verdict.bridge) expect(verdict.reason).toMatch(reason);
  });
});

describe('plugin ids from friendly names', () => {
  it.each([
    ['hallway/leak sensor', 'hallway-leak-sensor'],
    ['Living Room/Ceiling Light', 'living-room-ceiling-light'],
    ['Küche/Decke', 'kuche-decke'],
    ['0x00158d0001a2b3c4', '0x00158d0001a2b3c4'],
    ['  __weird__ // name ', 'weird-name'],
    ['😀', ''],
  ])('%s → %s', (name, slug) => {
    expect(slugOf(name)).toBe(slug);
  });

  it('cuts long names to a valid id, keeping two long names with the same start apart', () => {
    const a = slugOf(`${'very long room name '.repeat(5)}lamp one`);
    const b = slugOf(`${'very long room name '.repeat(5)}lamp two`);
    expect(a).not.toBe(b);
    expect(isPluginId(`z2m-${a}`)).toBe(true);
    expect(`z2m-${a}`.length).toBeLessThanOrEqual(64);
  });

  it('gives every device a distinct valid id, falling back to the IEEE address', () => {
    const ids = assignPluginIds([
      { ieee_address: '0x00158d0000aaaaaa', friendly_name: 'Hallway Sensor' },
      { ieee_address: '0x00158d0000bbbbbb', friendly_name: 'hallway/sensor' },
      { ieee_address: '0x00158d0000cccccc', friendly_name: 'hallway_sensor' },
      { ieee_address: '0x00158d0000dddddd', friendly_name: '😀' },
    ]);
    expect([...ids.values()]).toEqual(['z2m-hallway-sensor', 'z2m-hallway-sensor-bbbbbb', 'z2m-hallway-sensor-cccccc', 'z2m-0x00158d0000dddddd']);
    for (const id of ids.values()) expect(isPluginId(id)).toBe(true);
  });

  it('keeps the id a device already had when the list comes in another order', () => {
    const previous = new Map([
      ['0x2', { plugin_id: 'z2m-lamp-000002', friendly_name: 'lamp' }],
      ['0x1', { plugin_id: 'z2m-lamp', friendly_name: 'Lamp' }],
    ]);
    const ids = assignPluginIds(
      [
        { ieee_address: '0x2', friendly_name: 'lamp' },
        { ieee_address: '0x1', friendly_name: 'Lamp' },
      ],
      previous,
    );
    expect(ids.get('0x1')).toBe('z2m-lamp');
    expect(ids.get('0x2')).toBe('z2m-lamp-000002');
  });
});
