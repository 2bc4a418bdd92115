import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirInUseError, LOCK_FILE, lockDataDir } from '../../src/lifecycle/data-dir-lock.js';

const dirs: string[] = [];
const fresh = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'hc-lock-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('lockDataDir', () => {
  it('writes the pid, and removes the file on release', () => {
    const dir = fresh();
    const lock = lockDataDir(dir);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
    lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('refuses a directory whose lock holds a live process, naming it', async () => {
    const dir = fresh();
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: other.pid }));
      expect(() => lockDataDir(dir)).toThrow(DataDirInUseError);
      expect(() => lockDataDir(dir)).toThrow(`another HomeClaw Core (pid ${other.pid}) is using the data directory ${dir}`);
    } finally {
      other.kill();
      await new Promise((resolve) => other.once('exit', resolve));
    }
    // Its holder is gone: the lock is taken over.
    const lock = lockDataDir(dir);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid });
    lock.release();
  });

  it('takes over an unreadable lock, and release leaves a lock that is no longer its own', () => {
    const dir = fresh();
    writeFileSync(join(dir, LOCK_FILE), 'not json');
    const lock = lockDataDir(dir);
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: 1 }));
    lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
  });
});
