// One build for every test that runs compiled code (child processes import dist/). `npm test` builds
// first (pretest), so this normally finds dist/ fresh and does nothing; running one test file alone
// still works. Tests must never compile unconditionally: a child process of another test file could
// import a half-written file.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return path.endsWith('.ts') ? stat.mtimeMs : 0;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

function builtAt(file: string): number {
  return existsSync(file) ? statSync(file).mtimeMs : 0;
}

/**
 * Compiles the project when dist/ is missing or older than the sources. Test files run in parallel, so
 * a lock directory keeps two compilers from writing the same files; type errors in files other people
 * are editing do not stop tsc from emitting, so the exit code is not trusted, the outputs are.
 */
export async function ensureBuilt(): Promise<void> {
  const outputs = [
    join(ROOT, 'dist', 'plugins', 'buy', 'index.js'),
    join(ROOT, 'dist', 'src', 'cli.js'),
    join(ROOT, 'dist', 'src', 'sdk', 'index.js'),
    join(ROOT, 'dist', 'src', 'api', 'mcp-stdio-main.js'),
  ];
  const sources = Math.max(newestMtime(join(ROOT, 'src')), newestMtime(join(ROOT, 'plugins')), newestMtime(join(ROOT, 'scripts')));
  const fresh = (): boolean => outputs.every((file) => builtAt(file) >= sources);
  if (fresh()) return;
  const lock = join(ROOT, 'dist', '.test-build-lock');
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`build lock ${lock} held for 2 minutes`);
      await new Promise((r) => setTimeout(r, 250));
      if (fresh()) return;
    }
  }
  try {
    if (fresh()) return;
    await new Promise<void>((resolve) => {
      execFile(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.json')], { cwd: ROOT }, () => resolve());
    });
    // As `npm run build` does: the homeclaw command is the compiled cli.js, run through its #! line.
    await new Promise<void>((resolve) => {
      execFile(process.execPath, [join(ROOT, 'scripts', 'mark-cli-executable.mjs')], { cwd: ROOT }, () => resolve());
    });
    const missing = outputs.filter((file) => !existsSync(file));
    if (missing.length > 0) throw new Error(`build did not produce ${missing.join(', ')}`);
  } finally {
    rmdirSync(lock);
  }
}
