// Python plugins in the real Core: RAGFlow's README demo tool under embedded_plugins/ and a HomeClaw built-in
// folder, listed with their versions by /api/plugins, called over HTTP, health-checked, and every Python
// host gone once the Core stops.
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCore, type TestCore } from '../../helpers/core.js';
import { isAlive } from '../../adapters/helpers.js';
import { FIXTURES, processesUnder } from './harness.js';

let core: TestCore;

beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hc-core-python-'));
  const pluginsDir = join(dataDir, 'plugins');
  cpSync(join(FIXTURES, 'seed', 'embedded_plugins'), join(pluginsDir, 'embedded_plugins'), { recursive: true });
  cpSync(join(FIXTURES, 'folders', 'quotes'), join(pluginsDir, 'quotes'), { recursive: true });
  core = await startTestCore({ dataDir, pluginsDir });
});

afterAll(async () => {
  await core?.cleanup();
});

describe('Python plugins in the Core', () => {
  it('lists them with type python and their _version_, calls them over HTTP, and ends their hosts on stop', async () => {
    const list = await core.api<{ plugins: { id: string; type: string; version?: string; state: string }[] }>('GET', '/api/plugins');
    expect(list.body.plugins).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: 'bad_calculator', type: 'python', version: '1.0.0', state: 'online' }),
        expect.objectContaining({ id: 'quotes', type: 'python', version: '1.1.0', state: 'online' }),
      ]),
    );
    const one = await core.api<{ config: Record<string, unknown> }>('GET', '/api/plugins/bad_calculator');
    expect(one.body.config).toMatchObject({ class: 'BadCalculatorPlugin', module: 'bad_calculator.py' });

    const run = await core.api<{ success: boolean; text: string }>('POST', '/v1/plugins/bad_calculator/tools/bad_calculator/run', { a: 2, b: 3 });
    expect(run).toMatchObject({ status: 200, body: { success: true, text: '105' } });
    const quote = await core.api<{ text: string }>('POST', '/v1/plugins/quotes/tools/quote_about/run', { topic: 'courage' });
    expect(quote.body.text).toContain('Courage is grace under pressure. — HomeClaw');

    const health = await core.api<{ ok: boolean; detail: string }>('GET', '/api/plugins/health/bad_calculator');
    expect(health.body).toMatchObject({ ok: true, detail: expect.stringMatching(/^pid \d+, Python 3\.\d+/) });
    const status = await core.api<{ python: { embedded: { plugin_ids: string[]; pids: number[] }[] } }>('GET', '/api/status');
    const embedded = status.body.python.embedded;
    expect(embedded).toEqual([expect.objectContaining({ plugin_ids: ['bad_calculator'] })]);

    const pids = [...embedded[0]!.pids, Number(/pid (\d+)/.exec((await core.api<{ detail: string }>('GET', '/api/plugins/health/quotes')).body.detail)![1])];
    expect(pids.every(isAlive)).toBe(true);
    await core.stop();
    expect(pids.some(isAlive)).toBe(false);
    expect(processesUnder(core.dataDir)).toEqual([]);
  });
});
