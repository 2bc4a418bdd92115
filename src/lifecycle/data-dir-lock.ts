// One Core per data directory. Two Cores on one folder share the SQLite database, start two Chroma
// servers on one index and two schedulers that each deliver every reminder; nothing warned about it. The
// first Core writes its pid into <data_dir>/core.lock; another one finding a live pid there refuses to
// start, before it touches anything in the folder. A lock left by a Core that died is taken over.
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const LOCK_FILE = 'core.lock';

export interface DataDirLock {
  /** Removes the lock file if it is still this Core's. */
  release(): void;
}

/** Thrown when another live Core holds the data directory. */
export class DataDirInUseError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(
      `another HomeClaw Core (pid ${pid}) is using the data directory ${dir}; stop it first (kill ${pid}), ` +
        'or give this one its own directory: HOMECLAW_DATA_DIR=... (and its own ports)',
    );
    this.name = 'DataDirInUseError';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another account.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function holderOf(file: string): number | undefined {
  try {
    const pid = (JSON.parse(readFileSync(file, 'utf8')) as { pid?: unknown }).pid;
    return typeof pid === 'number' && Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Takes the data directory for this process, or throws DataDirInUseError naming the Core that has it. */
export function lockDataDir(dir: string): DataDirLock {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, LOCK_FILE);
  const content = JSON.stringify({ pid: process.pid, started_at: new Date().toISOString() });
  try {
    writeFileSync(file, content, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const holder = holderOf(file);
    // Several Cores of one process (tests, an embedding program) share it knowingly.
    if (holder !== undefined && holder !== process.pid && isAlive(holder)) throw new DataDirInUseError(dir, holder);
    writeFileSync(file, content, { mode: 0o600 });
  }
  return {
    release(): void {
      try {
        if (readFileSync(file, 'utf8') === content) unlinkSync(file);
      } catch {
        // Already gone: nothing to release.
      }
    },
  };
}
