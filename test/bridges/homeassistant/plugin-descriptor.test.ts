// The plugin's text built from the exposed entities: a device list for the model, keywords, examples.
import { describe, expect, it } from 'vitest';
import { baseDescriptor, withEntities } from '../../../src/bridges/homeassistant/plugin-descriptor.js';
import type { ExposedEntity } from '../../../src/bridges/homeassistant/live-context.js';

const entity = (name: string, domain: string, area?: string): ExposedEntity => ({ names: [name], domain, areas: area ? [area] : [] });

describe('withEntities', () => {
  it('lists every device with its domain and area, and keeps capabilities and config', () => {
    const base = {
      ...baseDescriptor('http://ha.local:8123'),
      capabilities: [{ id: 'HassTurnOn', name: 'HassTurnOn', description: 'on', parameters: [], post_process: false }],
    };
    const described = withEntities(base, [
      { names: ['Kitchen Light', 'Kitchen Lamp'], domain: 'light', areas: ['Kitchen'] },
      entity('Garage Door', 'cover', 'Garage'),
    ]);
    expect(described.description_long).toBe(
      'Devices exposed to Assist (name, domain, area): Kitchen Light / Kitchen Lamp (light, Kitchen); Garage Door (cover, Garage).',
    );
    expect(described.keywords).toEqual(['Kitchen', 'Garage']);
    expect(described.examples).toEqual(
      expect.arrayContaining(['turn the Kitchen Light on or off', 'open or close the Garage Door', 'what is on in the Kitchen?']),
    );
    expect(described.capabilities).toEqual(base.capabilities);
    expect(described.config).toEqual({ url: 'http://ha.local:8123', max_concurrency: 4 });
  });

  it('cuts the prompt list of a big home but keeps every name searchable, and bounds the examples', () => {
    const many = Array.from({ length: 400 }, (_, i) => entity(`Lamp number ${i}`, 'light', `Room ${i % 7}`));
    const described = withEntities(baseDescriptor('http://ha'), many);
    expect(described.description_long!.length).toBeLessThan(4_200);
    expect(described.description_long).toMatch(/; and \d+ more\.$/);
    const listed = new Set([...described.description_long!.matchAll(/Lamp number (\d+)/g)].map((m) => m[1]));
    for (let i = 0; i < 400; i++) expect(listed.has(String(i)) || described.keywords!.includes(`Lamp number ${i}`), `lamp ${i}`).toBe(true);
    expect(described.examples!.length).toBeLessThanOrEqual(32);
  });

  it('an empty home drops the device text again', () => {
    const described = withEntities(withEntities(baseDescriptor('http://ha'), [entity('A', 'light')]), []);
    expect(described.description_long).toBeUndefined();
    expect(described.keywords).toBeUndefined();
  });
});
