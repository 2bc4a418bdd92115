// The plugin "homeassistant" as the registry and retrieval see it. Its capabilities come from Home
// Assistant's MCP server (the Assist tools); its text also names the exposed entities and their areas,
// because retrieval only finds a plugin by words it was given: "is the garage door open" must reach
// Home Assistant, not a weather plugin. The token is never part of the descriptor.
import type { PluginDescriptor } from '../../protocol/types.js';
import type { ExposedEntity } from './live-context.js';

export const HA_PLUGIN_ID = 'homeassistant';
/** Registry owner of the plugin: only the bridge updates it; an administrator may still remove it. */
export const HA_OWNER = 'bridge:homeassistant';

/** The device list the model reads in its prompt is cut here; the rest stays searchable as keywords. */
const MAX_DEVICE_TEXT = 4_000;
const MAX_AREA_EXAMPLES = 6;
const MAX_ENTITY_EXAMPLES = 20;

const DESCRIPTION =
  'Control and check the smart home through Home Assistant: switch lights, switches and fans on or off, ' +
  'open or close covers, blinds and garage doors, lock doors, set the heating temperature, dim lights, ' +
  'and read sensors and the current state of devices in every room.';

const GENERIC_EXAMPLES = [
  'turn off all the lights in the living room',
  'is the front door locked?',
  'set the thermostat to 21 degrees',
  'what is the temperature in the bedroom?',
];

/** How people ask for a device of each domain; controllable domains first. */
const DOMAIN_PHRASES: [string, (name: string) => string][] = [
  ['light', (name) => `turn the ${name} on or off`],
  ['switch', (name) => `switch the ${name} on or off`],
  ['fan', (name) => `switch the ${name} on or off`],
  ['cover', (name) => `open or close the ${name}`],
  ['lock', (name) => `lock or unlock the ${name}`],
  ['climate', (name) => `set the temperature of the ${name}`],
  ['media_player', (name) => `play or pause the ${name}`],
  ['vacuum', (name) => `start or stop the ${name}`],
  ['scene', (name) => `activate the ${name} scene`],
  ['script', (name) => `run the ${name} script`],
  ['binary_sensor', (name) => `check the ${name}`],
  ['sensor', (name) => `read the ${name}`],
];

export function baseDescriptor(url: string): PluginDescriptor {
  return {
    id: HA_PLUGIN_ID,
    name: 'Home Assistant',
    description: DESCRIPTION,
    examples: [...GENERIC_EXAMPLES],
    // Filled from Home Assistant's tool list once connected.
    capabilities: [],
    source: 'external',
    type: 'homeassistant',
    config: { url, max_concurrency: 4 },
  };
}

function deviceLine(entity: ExposedEntity): string {
  const area = entity.areas[0] ? `, ${entity.areas[0]}` : '';
  return `${entity.names.join(' / ')} (${entity.domain}${area})`;
}

function unique(values: string[]): string[] {
  return [...new Set(values.filter((value) => value.length > 0))];
}

function examplesFor(entities: ExposedEntity[]): string[] {
  const areas = unique(entities.flatMap((entity) => entity.areas.slice(0, 1))).slice(0, MAX_AREA_EXAMPLES);
  const byArea = areas.map((area) => `what is on in the ${area}?`);
  const ranked: string[] = [];
  for (const [domain, phrase] of DOMAIN_PHRASES) {
    for (const entity of entities) if (entity.domain === domain) ranked.push(phrase(entity.names[0] as string));
  }
  return unique([...GENERIC_EXAMPLES, ...byArea, ...ranked.slice(0, MAX_ENTITY_EXAMPLES)]);
}

/**
 * The descriptor with the exposed entities in its text: a device list in description_long (the model
 * reads it; cut at MAX_DEVICE_TEXT), the areas and any names cut from that list as keywords, and example
 * requests built from the device names. Capabilities and config are kept as they are.
 */
export function withEntities(descriptor: PluginDescriptor, entities: ExposedEntity[]): PluginDescriptor {
  const lines = entities.map(deviceLine);
  let text = '';
  let listed = 0;
  for (const line of lines) {
    const next = text === '' ? line : `${text}; ${line}`;
    if (next.length > MAX_DEVICE_TEXT) break;
    text = next;
    listed += 1;
  }
  const rest = lines.length - listed;
  const { description_long: _long, keywords: _keywords, ...kept } = descriptor;
  const updated: PluginDescriptor = { ...kept, examples: examplesFor(entities) };
  if (entities.length > 0) {
    updated.description_long = `Devices exposed to Assist (name, domain, area): ${text}${rest > 0 ? `; and ${rest} more` : ''}.`;
    // Areas, and the names the device list had no room for: searchable without lengthening the prompt.
    updated.keywords = unique([...entities.flatMap((entity) => entity.areas), ...entities.slice(listed).flatMap((entity) => entity.names)]);
  }
  return updated;
}
