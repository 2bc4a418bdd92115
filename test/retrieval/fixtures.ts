// Shared pieces of the retrieval tests: a real registry on in-memory SQLite, home plugin descriptors,
// and a config builder.
import Database from 'better-sqlite3';
import { silentLogger } from '../../src/log.js';
import type { RetrievalConfig } from '../../src/config/types.js';
import type { CapabilitySpec, PluginDescriptor } from '../../src/protocol/types.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { Registry } from '../../src/registry/registry.js';
import type { CreateRetrievalOptions } from '../../src/retrieval/retrieval.js';

export function newRegistry(): Registry {
  const log = silentLogger();
  return new Registry({ db: new Database(':memory:'), events: new TypedEventBus(log), log });
}

function capability(id: string, description: string, parameters: string[] = []): CapabilitySpec {
  return {
    id,
    name: id.replace(/_/g, ' '),
    description,
    parameters: parameters.map((name) => ({ name, type: 'string', required: true })),
    post_process: false,
  };
}

export function plugin(id: string, fields: Partial<PluginDescriptor> & { description: string }): PluginDescriptor {
  return {
    id,
    name: fields.name ?? id,
    capabilities: fields.capabilities ?? [capability('run', fields.description)],
    source: 'external',
    type: 'http',
    config: {},
    ...fields,
  };
}

export const HOME_PLUGINS: PluginDescriptor[] = [
  plugin('lights', {
    name: 'Lights',
    description: 'Control the lamps and lights in each room of the house.',
    examples: ['turn on the kitchen lights', 'switch off the lamp in the bedroom', 'make the living room light blue'],
    capabilities: [
      capability('turn_on', 'Switch a light on', ['room']),
      capability('turn_off', 'Switch a light off', ['room']),
      capability('set_colour', 'Change the colour of a light', ['room', 'colour']),
    ],
  }),
  plugin('weather', {
    name: 'Weather',
    description: 'Current weather and the forecast for a city.',
    examples: ['will it rain tomorrow', 'how cold is it outside', 'do I need an umbrella today'],
    capabilities: [capability('forecast', 'Weather forecast for a place and day', ['city', 'date'])],
  }),
  plugin('timer', {
    name: 'Timer',
    description: 'Set kitchen timers and alarms that ring after a delay.',
    examples: ['set a timer for ten minutes', 'wake me up at seven', 'remind me in an hour'],
  }),
  plugin('shopping', {
    name: 'Shopping list',
    description: 'Add groceries to the shared shopping list and read it back.',
    examples: ['buy me some milk', 'add eggs to the list', 'what is on my shopping list'],
  }),
  plugin('music', {
    name: 'Music',
    description: 'Play songs, albums and radio stations on the speakers.',
    examples: ['play some jazz', 'put on the radio', 'skip this song'],
  }),
];

export function retrievalConfig(
  overrides: Partial<CreateRetrievalOptions['config']> & { collection: string; url: string; data_dir: string },
): CreateRetrievalOptions['config'] {
  const { collection, url, ...rest } = overrides;
  const base: RetrievalConfig & { data_dir: string; retry_interval_sec: number } = {
    enabled: true,
    top_k: 5,
    chroma: { url, port: 0, collection },
    embedder: { kind: 'use-lite', base_url: null, model: null, api_key: null },
    weights: { bm25: 0.3, dense: 0.7 },
    pinned: [],
    force_include: [],
    data_dir: '',
    retry_interval_sec: 0.3,
  };
  return { ...base, ...rest };
}
