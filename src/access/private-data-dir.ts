// The data directory holds profiles (addresses, phones), credential hashes, tokens and the audit log:
// nobody but the Core's own account may read it. The directory is 0700 and its files 0600; an existing
// install with wider modes is tightened at start (and the log says so).
import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../log.js';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Removes group and other bits; returns the old mode when it changed something. */
function tighten(path: string): number | undefined {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return undefined; // chmod would follow it out of the data dir
  const mode = stat.mode & 0o777;
  if ((mode & 0o077) === 0) return undefined;
  chmodSync(path, mode & 0o700);
  return mode;
}

/** Creates the data dir 0700 (or tightens it) and tightens every entry directly inside it. */
export function preparePrivateDataDir(dir: string, log: Logger): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const fixed: { path: string; was: string }[] = [];
  const note = (path: string, was: number | undefined): void => {
    if (was !== undefined) fixed.push({ path, was: was.toString(8).padStart(4, '0') });
  };
  note(dir, tighten(dir));
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    try {
      note(path, tighten(path));
    } catch (err) {
      log.warn({ err, path }, 'could not restrict the mode of a data file');
    }
  }
  if (fixed.length > 0) log.warn({ data_dir: dir, fixed }, 'data directory was readable by other accounts; modes restricted to 0700/0600');
}

/**
 * Creates an empty file with mode 0600 unless it exists. SQLite gives its -wal and -shm files the mode
 * of the database file, so creating homeclaw.db this way keeps all three private.
 */
export function ensurePrivateFile(path: string): void {
  try {
    closeSync(openSync(path, 'wx', PRIVATE_FILE_MODE));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  tighten(path);
}
