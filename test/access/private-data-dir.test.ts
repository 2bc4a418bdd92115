// The data directory's modes: created private, tightened when an older install left them wide, symlinks
// left alone (chmod would follow them out of the data dir).
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensurePrivateFile, preparePrivateDataDir } from '../../src/access/private-data-dir.js';
import { silentLogger } from '../../src/log.js';

const temps: string[] = [];
const mode = (path: string): number => statSync(path).mode & 0o777;
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('private data dir', () => {
  it('creates missing directories 0700', () => {
    const parent = mkdtempSync(join(tmpdir(), 'hc-private-'));
    temps.push(parent);
    preparePrivateDataDir(join(parent, 'a', 'data'), silentLogger());
    expect(mode(join(parent, 'a', 'data'))).toBe(0o700);
  });

  it('tightens wide modes of the dir and its direct entries, keeping owner bits; leaves symlink targets alone', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hc-private-'));
    const outside = mkdtempSync(join(tmpdir(), 'hc-outside-'));
    temps.push(dir, outside);
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'db'), 'x');
    chmodSync(join(dir, 'db'), 0o644);
    writeFileSync(join(dir, 'run.sh'), 'x');
    chmodSync(join(dir, 'run.sh'), 0o755);
    mkdirSync(join(dir, 'sub'));
    chmodSync(join(dir, 'sub'), 0o775);
    writeFileSync(join(outside, 'shared'), 'x');
    chmodSync(join(outside, 'shared'), 0o644);
    symlinkSync(join(outside, 'shared'), join(dir, 'link'));
    preparePrivateDataDir(dir, silentLogger());
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, 'db'))).toBe(0o600);
    expect(mode(join(dir, 'run.sh'))).toBe(0o700);
    expect(mode(join(dir, 'sub'))).toBe(0o700);
    expect(lstatSync(join(dir, 'link')).isSymbolicLink()).toBe(true);
    expect(mode(join(outside, 'shared'))).toBe(0o644);
  });

  it('ensurePrivateFile creates 0600 and tightens an existing file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hc-private-'));
    temps.push(dir);
    ensurePrivateFile(join(dir, 'new.db'));
    expect(mode(join(dir, 'new.db'))).toBe(0o600);
    writeFileSync(join(dir, 'old.db'), 'data');
    chmodSync(join(dir, 'old.db'), 0o666);
    ensurePrivateFile(join(dir, 'old.db'));
    expect(mode(join(dir, 'old.db'))).toBe(0o600);
  });
});
