// The production path: tsc output in dist/, loaded by plain Node (no TypeScript-aware loader).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';

const root = resolve('.');
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'hc-compiled-'));
  await ensureBuilt();
}, 180_000);
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('built-in plugins compiled to dist/ and loaded by plain Node', () => {
  it('loads time, notes and weather from dist/plugins and invokes them', () => {
    const run = spawnSync(process.execPath, [join(root, 'test/fixtures/adapters/load-builtins.mjs'), root, join(root, 'plugins'), dataDir], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const outcome = JSON.parse(run.stdout.trim().split('\n').pop()!) as {
      status: { plugin_id?: string; state: string; error?: string }[];
      time: { success: boolean; data: { timezone: string } };
      saved: { success: boolean };
      found: { success: boolean; data: { notes: { text: string }[] } };
    };
    for (const id of ['time', 'notes', 'weather']) {
      expect(
        outcome.status.find((s) => s.plugin_id === id),
        id,
      ).toMatchObject({ state: 'loaded' });
    }
    expect(outcome.time).toMatchObject({ success: true, data: { timezone: 'UTC' } });
    expect(outcome.saved.success).toBe(true);
    expect(outcome.found.data.notes.map((n) => n.text)).toEqual(['compiled works']);
  });
});
