// Attack: homeclaw.db (profiles with addresses and phones, credential hashes, the audit log) was created
// 0644 in a 0755 data dir, so every local account could read it. Defence: the data dir is 0700 and its
// files 0600, also for an existing install whose modes were wider (fixed at start, and logged).
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestCore, type TestCore } from '../helpers/core.js';

const mode = (path: string): number => statSync(path).mode & 0o777;
let core: TestCore | undefined;
const temps: string[] = [];

afterEach(async () => {
  await core?.cleanup();
  core = undefined;
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('data directory modes', () => {
  it('a fresh data dir is 0700 and the database (with -wal and -shm) and admin.token are 0600', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'homeclaw-modes-'));
    temps.push(parent);
    const dataDir = join(parent, 'data');
    // The Core creates the data dir itself; the plugins folder lives beside it.
    core = await startTestCore({ dataDir, pluginsDir: mkdtempSync(join(parent, 'plugins-')), overrides: { http: { admin_token: null } } });
    await core.api('POST', '/api/profiles/alice', { set: { address: '12 Oak St' } });
    expect(mode(dataDir)).toBe(0o700);
    for (const file of ['homeclaw.db', 'homeclaw.db-wal', 'homeclaw.db-shm', 'admin.token']) {
      expect(mode(join(dataDir, file)), file).toBe(0o600);
    }
  });

  it('an existing install with wide modes is fixed at start', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-modes-old-'));
    temps.push(dataDir);
    core = await startTestCore({ dataDir });
    await core.cleanup({ keepData: true });
    core = undefined;
    chmodSync(dataDir, 0o755);
    for (const file of readdirSync(dataDir)) {
      const path = join(dataDir, file);
      chmodSync(path, statSync(path).isDirectory() ? 0o755 : 0o644);
    }
    writeFileSync(join(dataDir, 'notes.txt'), 'left by an older version', { mode: 0o666 });
    chmodSync(join(dataDir, 'notes.txt'), 0o666);
    mkdirSync(join(dataDir, 'chroma'), { mode: 0o777 });
    chmodSync(join(dataDir, 'chroma'), 0o777);

    core = await startTestCore({ dataDir });
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(join(dataDir, 'homeclaw.db'))).toBe(0o600);
    expect(mode(join(dataDir, 'notes.txt'))).toBe(0o600);
    expect(mode(join(dataDir, 'chroma'))).toBe(0o700);
    for (const file of readdirSync(dataDir)) {
      const stat = statSync(join(dataDir, file));
      expect(stat.mode & 0o077, file).toBe(0);
    }
  });
});
