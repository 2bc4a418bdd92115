// A Zigbee2MQTT device as a canonical plugin descriptor: named by its friendly name, described by its
// definition (vendor, model, description) and by what it reports in everyday words, so retrieval finds
// "the hallway sensor" when someone asks whether the hallway is wet.
import type { CapabilitySpec, JsonObject, PluginDescriptor } from '../../protocol/types.js';
import { ACCESS, type Z2mDefinition, type Z2mDevice } from '../../protocol/zigbee2mqtt.js';
import { deviceControls, type DeviceControls, type Feature } from './expose-parameters.js';
import { commandsFor, groupWords, questionsFor, spokenName, wordsFor } from './feature-words.js';
import { isPlainObject } from '../../kit/plain-object.js';

/** What the adapter needs at call time, kept in the descriptor's config (never shown to the LLM). */
export interface DeviceConfig {
  friendly_name: string;
  ieee_address: string;
  readable_by_get: string[];
  units: Record<string, string>;
}

export interface DeviceDescriptorOptions {
  confirm_timeout_sec: number;
}

export interface BuiltDescriptor {
  descriptor: PluginDescriptor;
  controls: DeviceControls;
}

const MAX_EXAMPLES = 8;
const MAX_LONG_DESCRIPTION = 1_500;
const MAX_FEATURE_NOTE = 140;
/** Diagnostic features that still answer a user's question. */
const USEFUL_DIAGNOSTICS = new Set(['battery', 'battery_low']);

/** A feature that tells what the device is for (not its radio, supply or configuration). */
function isPrimary(feature: Feature): boolean {
  if (feature.name === 'linkquality') return false;
  if (feature.category === 'diagnostic') return USEFUL_DIAGNOSTICS.has(feature.name);
  return feature.category !== 'config';
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function unique<T>(values: T[]): T[] {
  return [...new Set(values)];
}

function listFeatures(features: Feature[]): string {
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const feature of features) {
    if (seen.has(feature.property)) continue;
    seen.add(feature.property);
    const where = feature.endpoint ? ` (${feature.endpoint})` : '';
    parts.push(`${feature.label.toLowerCase()}${where}${feature.unit ? ` in ${feature.unit}` : ''}`);
  }
  return parts.join(', ');
}

function describeDevice(device: Z2mDevice, definition: Z2mDefinition, controls: DeviceControls): { short: string; long: string } {
  const short = `${definition.description} by ${definition.vendor} (model ${definition.model}), a Zigbee device in Zigbee2MQTT.`;
  const reported = controls.features.filter((f) => f.access & ACCESS.STATE && isPrimary(f));
  const settable = controls.features.filter((f) => f.access & ACCESS.SET && isPrimary(f));
  const long = [
    device.description ? `Note: ${device.description}.` : '',
    reported.length ? `Reports ${listFeatures(reported)}.` : '',
    settable.length ? `Can be set: ${listFeatures(settable)}.` : '',
    ...reported.filter((f) => f.description).map((f) => `${f.label}: ${clip(f.description ?? '', MAX_FEATURE_NOTE).replace(/\.?$/, '.')}`),
  ];
  return { short, long: clip(long.filter(Boolean).join(' '), MAX_LONG_DESCRIPTION) };
}

function examplesFor(friendlyName: string, controls: DeviceControls): string[] {
  const device = spokenName(friendlyName);
  const settableByGroup = new Map<string, Set<string>>();
  const questions: string[] = [];
  for (const feature of controls.features) {
    if (feature.group && feature.access & ACCESS.SET) {
      const names = settableByGroup.get(feature.group) ?? new Set<string>();
      names.add(feature.name);
      settableByGroup.set(feature.group, names);
    }
    if (feature.access & ACCESS.STATE) questions.push(...questionsFor(feature.name, device));
  }
  const commands = [...settableByGroup].flatMap(([group, names]) => commandsFor(group, device, names));
  return unique([...commands, ...questions]).slice(0, MAX_EXAMPLES);
}

function capabilities(name: string, controls: DeviceControls, options: DeviceDescriptorOptions): CapabilitySpec[] {
  const timeout_sec = options.confirm_timeout_sec + 5;
  const caps: CapabilitySpec[] = [];
  if (controls.setParameters.length > 0) {
    caps.push({
      id: 'set',
      name: 'Set',
      description: `Change ${name}: ${controls.setParameters.map((p) => p.name).join(', ')}. Give only what should change; the answer comes once the device reports the new values.`,
      parameters: controls.setParameters,
      input_schema: controls.setSchema,
      output_description: 'The values the device confirmed, and its whole state.',
      post_process: false,
      timeout_sec,
    });
  }
  const readable = controls.readableByGet;
  caps.push({
    id: 'get_state',
    name: 'Get state',
    description: `Read the current state of ${name}${readable.length ? ', asking the device for fresh values' : ' (the last values it reported)'}.`,
    parameters: readable.length
      ? [
          {
            name: 'refresh',
            type: 'boolean',
            required: false,
            default: true,
            description: `Ask the device first for ${readable.join(', ')} (false: only the last reported state)`,
          },
        ]
      : [],
    output_description: 'The device state: one value per reported property.',
    post_process: false,
    timeout_sec,
  });
  return caps;
}

/** The descriptor of a bridged device under the given plugin id. */
export function deviceDescriptor(device: Z2mDevice & { definition: Z2mDefinition }, pluginId: string, options: DeviceDescriptorOptions): BuiltDescriptor {
  const { definition } = device;
  const controls = deviceControls(definition.exposes);
  const { short, long } = describeDevice(device, definition, controls);
  const spoken = spokenName(device.friendly_name);
  const primary = controls.features.filter(isPrimary);
  const keywords = unique(
    [
      'zigbee',
      definition.vendor,
      definition.model,
      ...spoken.split(' '),
      ...primary.flatMap((f) => [f.label.toLowerCase(), ...wordsFor(f.name), ...(f.group ? groupWords(f.group) : [])]),
    ].filter((k) => k.trim() !== ''),
  );
  const config: DeviceConfig & JsonObject = {
    friendly_name: device.friendly_name,
    ieee_address: device.ieee_address,
    readable_by_get: controls.readableByGet,
    units: controls.units,
  };
  const descriptor: PluginDescriptor = {
    id: pluginId,
    name: device.friendly_name,
    description: short,
    ...(long ? { description_long: long } : {}),
    examples: examplesFor(device.friendly_name, controls),
    keywords,
    version: definition.version ?? '0.0.0',
    capabilities: capabilities(device.friendly_name, controls, options),
    source: 'external',
    type: 'zigbee2mqtt',
    config: {
      ...config,
      // A Zigbee device handles one command at a time; a short queue keeps a flood of calls bounded.
      max_concurrency: 1,
      queue_limit: 20,
    },
  };
  return { descriptor, controls };
}

/** Reads the adapter's view of a device back from a stored descriptor's config. */
export function deviceConfigOf(config: PluginDescriptor['config']): DeviceConfig | undefined {
  const { friendly_name, ieee_address, readable_by_get, units } = config;
  if (typeof friendly_name !== 'string' || typeof ieee_address !== 'string') return undefined;
  const readable = Array.isArray(readable_by_get) ? readable_by_get.filter((p): p is string => typeof p === 'string') : [];
  const unitMap: Record<string, string> = {};
  if (isPlainObject(units)) {
    for (const [key, value] of Object.entries(units)) if (typeof value === 'string') unitMap[key] = value;
  }
  return { friendly_name, ieee_address, readable_by_get: readable, units: unitMap };
}
