// Zigbee devices among other plugins, ranked by the real hybrid retrieval (Chroma + the offline USE-lite
// embeddings + BM25): a question in everyday words finds the right device.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceDescriptor } from '../../../src/bridges/zigbee2mqtt/device-descriptor.js';
import { assignPluginIds, classifyDevice } from '../../../src/bridges/zigbee2mqtt/device-list.js';
import { silentLogger } from '../../../src/log.js';
import { createRetrieval, type Retrieval } from '../../../src/retrieval/retrieval.js';
import { UseLiteEmbedder } from '../../../src/retrieval/use-lite-embedder.js';
import { startChroma, type TestChroma } from '../../helpers/chroma.js';
import { HOME_PLUGINS, newRegistry, retrievalConfig } from '../../retrieval/fixtures.js';
import { bridgeDevices, HOME, HOME_IDS, type FixtureDevice } from '../../fixtures/zigbee2mqtt/devices.js';

let chroma: TestChroma;
let dataDir: string;
let retrieval: Retrieval;

beforeAll(async () => {
  chroma = await startChroma();
  dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-z2m-retrieval-'));
  const registry = newRegistry();
  for (const descriptor of HOME_PLUGINS) registry.register({ descriptor, owner: 'api' });
  const devices = (await bridgeDevices(Object.values(HOME) as FixtureDevice[])).map(classifyDevice).flatMap((v) => (v.bridge ? [v.device] : []));
  const ids = assignPluginIds(devices);
  for (const device of devices) {
    registry.register({ descriptor: deviceDescriptor(device, ids.get(device.ieee_address)!, { confirm_timeout_sec: 5 }).descriptor, owner: 'zigbee2mqtt' });
  }
  retrieval = await createRetrieval({
    config: retrievalConfig({ collection: `z2m_${process.pid}`, url: chroma.url, data_dir: dataDir }),
    registry,
    log: silentLogger(),
    embedder: new UseLiteEmbedder(),
  });
  await retrieval.start();
}, 120_000);

afterAll(async () => {
  await retrieval?.stop();
  await chroma?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('hybrid retrieval over Zigbee devices and other plugins', () => {
  it.each([
    ['is the hallway sensor wet', HOME_IDS.leak],
    ['is there water on the floor under the hallway sink', HOME_IDS.leak],
    ['is the front door open', HOME_IDS.door],
    ['turn on the ceiling light in the living room', HOME_IDS.bulb],
    ['close the bedroom blind', HOME_IDS.blind],
    ['set the bedroom radiator to 21 degrees', HOME_IDS.radiator],
    ['switch off the coffee plug', HOME_IDS.plug],
    ['will it rain tomorrow', 'weather'],
  ])('"%s" → %s', async (query, expected) => {
    const response = await retrieval.search(query, { k: 5 });
    expect(response.mode).toBe('hybrid');
    expect(response.hits.map((h) => h.plugin_id).slice(0, 3), JSON.stringify(response.hits.map((h) => [h.plugin_id, h.score]))).toContain(expected);
    expect(response.hits[0]?.plugin_id).toBe(expected);
  });
});
