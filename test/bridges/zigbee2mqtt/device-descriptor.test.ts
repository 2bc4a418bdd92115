// Real definitions from zigbee-herdsman-converters, serialised as Zigbee2MQTT publishes them, turned into
// descriptors: every settable property is a parameter with the definition's own range, values and
// structure; sensors get only get_state; the descriptors pass the canonical schema.
import { beforeAll, describe, expect, it } from 'vitest';
import { deviceDescriptor, deviceConfigOf } from '../../../src/bridges/zigbee2mqtt/device-descriptor.js';
import { classifyDevice } from '../../../src/bridges/zigbee2mqtt/device-list.js';
import { ParamValidator } from '../../../src/dispatch/param-validator.js';
import { validateCanonicalDescriptor } from '../../../src/protocol/descriptor/canonical.js';
import type { CapabilitySpec, JsonObject, PluginDescriptor } from '../../../src/protocol/types.js';
import type { Z2mDevice, Z2mExpose } from '../../../src/protocol/zigbee2mqtt.js';
import { bridgeDeviceEntry, HOME, type FixtureDevice } from '../../fixtures/zigbee2mqtt/devices.js';

const entries = new Map<string, Z2mDevice>();
const built = new Map<string, PluginDescriptor>();

async function build(key: keyof typeof HOME): Promise<PluginDescriptor> {
  const entry = await bridgeDeviceEntry(HOME[key] as FixtureDevice);
  const verdict = classifyDevice(entry);
  if (!verdict.bridge) throw new Error(`${key} skipped: ${verdict.reason}`);
  entries.set(key, entry);
  return deviceDescriptor(verdict.device, `z2m-${key}`, { confirm_timeout_sec: 5 }).descriptor;
}

beforeAll(async () => {
  for (const key of ['bulb', 'plug', 'leak', 'door', 'radiator', 'blind', 'switch'] as const) built.set(key, await build(key));
});

/** The test's own reading of the docs: every property with access bit 2, composites as one property. */
function settableProperties(exposes: Z2mExpose[]): Set<string> {
  const found = new Set<string>();
  const visit = (expose: Z2mExpose): void => {
    if (expose.type === 'composite' && expose.property) {
      const bits = expose.access ?? (expose.features ?? []).reduce((b, f) => b | (f.access ?? 0), 0);
      if (bits & 2) found.add(expose.property);
      return;
    }
    if (expose.features) expose.features.forEach(visit);
    else if (expose.property && (expose.access ?? 0) & 2) found.add(expose.property);
  };
  exposes.forEach(visit);
  return found;
}

function find(exposes: Z2mExpose[], property: string): Z2mExpose | undefined {
  for (const expose of exposes) {
    if (expose.property === property && expose.type !== 'composite') return expose;
    const inner = expose.features ? find(expose.features, property) : undefined;
    if (inner) return inner;
  }
  return undefined;
}

const capability = (descriptor: PluginDescriptor, id: string): CapabilitySpec | undefined => descriptor.capabilities.find((c) => c.id === id);
const setSchema = (key: string): JsonObject => (capability(built.get(key)!, 'set')!.input_schema as JsonObject)['properties'] as JsonObject;

describe('descriptors from real Zigbee2MQTT device entries', () => {
  it('are valid canonical descriptors of type zigbee2mqtt with the device in their config', () => {
    for (const [key, descriptor] of built) {
      const valid = validateCanonicalDescriptor(descriptor);
      expect(valid.ok, `${key}: ${JSON.stringify(valid.ok ? [] : valid.errors)}`).toBe(true);
      expect(descriptor.type).toBe('zigbee2mqtt');
      expect(descriptor.name).toBe(HOME[key as keyof typeof HOME].friendly_name);
      expect(deviceConfigOf(descriptor.config)).toMatchObject({
        friendly_name: HOME[key as keyof typeof HOME].friendly_name,
        ieee_address: HOME[key as keyof typeof HOME].ieee_address,
      });
    }
  });

  it('describe the device by its definition: vendor, model and description', () => {
    for (const [key, descriptor] of built) {
      const { definition } = entries.get(key)!;
      expect(descriptor.description).toContain(definition!.description);
      expect(descriptor.description).toContain(definition!.vendor);
      expect(descriptor.description).toContain(definition!.model);
    }
    expect(built.get('leak')!.description).toMatch(/water leak sensor/i);
  });

  it('have exactly one set parameter per property with access bit 2', () => {
    for (const [key, descriptor] of built) {
      const expected = settableProperties(entries.get(key)!.definition!.exposes);
      const set = capability(descriptor, 'set');
      expect(new Set(set?.parameters.map((p) => p.name) ?? []), key).toEqual(expected);
      for (const parameter of set?.parameters ?? []) expect(parameter.required, `${key}.${parameter.name}`).toBe(false);
    }
  });

  it("map numeric features to numbers with the definition's min, max and unit", () => {
    const exposes = entries.get('bulb')!.definition!.exposes;
    const brightness = find(exposes, 'brightness')!;
    expect(setSchema('bulb')['brightness']).toEqual({ type: 'number', minimum: brightness.value_min, maximum: brightness.value_max });
    expect(brightness.value_max).toBe(254);
    const setpoint = find(entries.get('radiator')!.definition!.exposes, 'occupied_heating_setpoint')!;
    expect(setSchema('radiator')['occupied_heating_setpoint']).toEqual({ type: 'number', minimum: 5, maximum: 35 });
    expect(setpoint.unit).toBe('°C');
    const parameter = capability(built.get('radiator')!, 'set')!.parameters.find((p) => p.name === 'occupied_heating_setpoint')!;
    expect(parameter.type).toBe('number');
    expect(parameter.description).toContain('5 to 35 °C');
  });

  it('keep presets outside the range (color_temp_startup "previous")', () => {
    expect(setSchema('bulb')['color_temp_startup']).toEqual({ anyOf: [{ type: 'number', minimum: 153, maximum: 500 }, { enum: [65535] }] });
  });

  it('map enums to their values and binaries to value_on / value_off / value_toggle', () => {
    expect(setSchema('bulb')['state']).toEqual({ type: 'string', enum: ['ON', 'OFF', 'TOGGLE'] });
    expect(setSchema('blind')['state']).toEqual({ type: 'string', enum: ['OPEN', 'CLOSE', 'STOP'] });
    expect(setSchema('blind')['position']).toEqual({ type: 'number', minimum: 0, maximum: 100 });
    expect(setSchema('radiator')['system_mode']).toEqual({ type: 'string', enum: ['heat'] });
    // A binary whose values are true/false is a boolean.
    const keypad = find(entries.get('radiator')!.definition!.exposes, 'radiator_covered')!;
    expect([keypad.value_on, keypad.value_off]).toEqual([true, false]);
    expect(setSchema('radiator')['radiator_covered']).toEqual({ type: 'boolean' });
  });

  it('make a composite one object parameter, merging color_xy and color_hs', () => {
    expect(setSchema('bulb')['color']).toEqual({
      type: 'object',
      properties: { x: { type: 'number' }, y: { type: 'number' }, hue: { type: 'number' }, saturation: { type: 'number' } },
      additionalProperties: false,
    });
  });

  it('name the features of a two-endpoint switch as Zigbee2MQTT does (state_left, state_right)', () => {
    const schema = setSchema('switch');
    expect(schema['state_left']).toEqual({ type: 'string', enum: ['ON', 'OFF', 'TOGGLE'] });
    expect(schema['state_right']).toEqual({ type: 'string', enum: ['ON', 'OFF', 'TOGGLE'] });
    expect(schema['operation_mode_left']).toEqual({ type: 'string', enum: ['control_left_relay', 'control_right_relay', 'decoupled'] });
  });

  it('give sensors no set capability and get_state without refresh (they cannot be asked)', () => {
    const leak = built.get('leak')!;
    expect(leak.capabilities.map((c) => c.id)).toEqual(['get_state']);
    expect(capability(leak, 'get_state')!.parameters).toEqual([]);
    expect(deviceConfigOf(leak.config)!.readable_by_get).toEqual([]);
  });

  it('refresh through /get exactly the properties with access bit 4', () => {
    const plug = deviceConfigOf(built.get('plug')!.config)!;
    expect(plug.readable_by_get).toEqual(['state', 'power_on_behavior']);
    expect(deviceConfigOf(built.get('radiator')!.config)!.readable_by_get).toEqual(
      expect.arrayContaining(['local_temperature', 'occupied_heating_setpoint', 'system_mode']),
    );
    expect(capability(built.get('plug')!, 'get_state')!.parameters).toEqual([
      expect.objectContaining({ name: 'refresh', type: 'boolean', required: false, default: true }),
    ]);
  });

  it('describe sensors in everyday words and with example questions', () => {
    const leak = built.get('leak')!;
    expect(leak.keywords).toEqual(expect.arrayContaining(['wet', 'water', 'leak', 'hallway']));
    expect(leak.examples).toContain('is there a leak at the hallway sink');
    expect(built.get('bulb')!.examples).toContain('turn on the living room ceiling light');
    // Radio and supply diagnostics are not what a device is for.
    expect(leak.keywords).not.toContain('linkquality');
    expect(leak.keywords).not.toContain('device temperature');
  });
});

describe('the set schema checks values before anything is sent', () => {
  const validator = new ParamValidator();
  const check = (key: string, parameters: JsonObject): string[] =>
    validator.validate(`test-${key}`, capability(built.get(key)!, 'set')!, parameters).map((p) => p.message);

  it('accepts values inside the definition', () => {
    expect(check('bulb', { state: 'ON', brightness: 200, color: { x: 0.3, y: 0.3 } })).toEqual([]);
    expect(check('bulb', { color_temp_startup: 65535 })).toEqual([]);
    expect(check('switch', { state_left: 'OFF' })).toEqual([]);
  });

  it.each([
    ['bulb', { brightness: 300 }, /brightness must be <= 254/],
    ['bulb', { state: 'on' }, /state must be equal to one of the allowed values/],
    ['bulb', { color: { z: 1 } }, /unknown parameter "z"|must NOT have additional properties/],
    ['bulb', { colour: 'red' }, /unknown parameter "colour"/],
    ['blind', { position: -1 }, /position must be >= 0/],
    ['radiator', { occupied_heating_setpoint: 'warm' }, /occupied_heating_setpoint must be number/],
    ['switch', { state: 'ON' }, /unknown parameter "state"/],
  ] as const)('%s %j is refused', (key, parameters, message) => {
    expect(check(key, parameters as JsonObject).join('; ')).toMatch(message);
  });
});
