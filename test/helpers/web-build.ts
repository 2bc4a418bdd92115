// The built dashboard (dist/web) for tests that serve it. `npm test` builds first (pretest), so this
// normally finds it fresh and does nothing; running one test file alone still works. A lock directory
// keeps two test files from building at once.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const WEB_DIST = join(ROOT, 'dist', 'web');

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

export async function ensureWebBuilt(): Promise<void> {
  const index = join(WEB_DIST, 'index.html');
  const fresh = (): boolean => existsSync(index) && statSync(index).mtimeMs >= newestMtime(join(ROOT, 'web'));
  if (fresh()) return;
  const lock = join(ROOT, 'dist', '.test-web-build-lock');
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`build lock ${lock} held for 3 minutes`);
      await new Promise((r) => setTimeout(r, 250));
      if (fresh()) return;
    }
  }
  try {
    if (fresh()) return;
    await new Promise<void>((resolve, reject) => {
      execFile(
        process.execPath,
        [join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', join(ROOT, 'web', 'vite.config.ts'), '--logLevel', 'warn'],
        { cwd: ROOT },
        (error, _stdout, stderr) => (error ? reject(new Error(`the dashboard did not build:\n${stderr}`)) : resolve()),
      );
    });
  } finally {
    rmdirSync(lock);
  }
}
