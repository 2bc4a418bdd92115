// The production path: tsc output in dist/, loaded by plain Node (no TypeScript-aware loader).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve('.');
let dataDir: string;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'hc-compiled-'));
  // tsc emits even when files of other rooms have type errors; our outputs are what matter here.
  try {
    execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: root, stdio: 'pipe' });
  } catch {
    /* type errors elsewhere do not stop the emit */
  }
}, 120_000);
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('built-in plugins compiled to dist/ and loaded by plain Node', () => {
  it('loads time, notes and weather from dist/plugins and invokes them', () => {
    const run = spawnSync(process.execPath, [join(root, 'test/fixtures/adapters/load-builtins.mjs'), root, join(root, 'plugins'), dataDir], { encoding: 'utf8', timeout: 30_000 });
    expect(run.status, run.stderr).toBe(0);
    const outcome = JSON.parse(run.stdout.trim().split('\n').pop()!) as {
      status: { plugin_id?: string; state: string; error?: string }[];
      time: { success: boolean; data: { timezone: string } };
      saved: { success: boolean };
      found: { success: boolean; data: { notes: { text: string }[] } };
    };
    for (const id of ['time', 'notes', 'weather']) {
      expect(outcome.status.find((s) => s.plugin_id === id), id).toMatchObject({ state: 'loaded' });
    }
    expect(outcome.time).toMatchObject({ success: true, data: { timezone: 'UTC' } });
    expect(outcome.saved.success).toBe(true);
    expect(outcome.found.data.notes.map((n) => n.text)).toEqual(['compiled works']);
  });
});
