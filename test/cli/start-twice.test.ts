// Starting a second Core on a data directory a running Core uses: it used to start (a second Chroma on
// one index, two schedulers delivering every reminder twice) and to change the folder's file modes
// first. Now it refuses before touching anything, naming the running Core's pid and the way out.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coreProcessEnv } from '../helpers/core-process-env.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { ensureBuilt, makePluginsDir, REPO_ROOT } from '../e2e/helpers.js';

const run = promisify(execFile);
let core: TestCore;
let pluginsDir: string;

beforeAll(async () => {
  await ensureBuilt();
  pluginsDir = makePluginsDir({ shipped: [] });
  core = await startTestCore({ dataDir: mkdtempSync(join(tmpdir(), 'hc-twice-')), pluginsDir });
}, 120_000);

afterAll(async () => {
  await core?.cleanup();
  rmSync(pluginsDir, { recursive: true, force: true });
});

describe('homeclaw start on a data directory another Core uses', () => {
  it("refuses with the other Core's pid and the way out, and changes nothing in the folder", async () => {
    const env = { ...process.env, ...(await coreProcessEnv(core.dataDir, pluginsDir)) };
    const modeBefore = statSync(join(core.dataDir, 'homeclaw.db')).mode;
    const outcome = await run(process.execPath, [join(REPO_ROOT, 'dist', 'src', 'cli.js'), 'start'], { env, timeout: 60_000 }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code?: number; stderr?: string }) => ({ code: error.code ?? -1, stderr: error.stderr ?? '' }),
    );
    expect(outcome.code).not.toBe(0);
    expect(outcome.stderr).toContain(`another HomeClaw Core (pid ${process.pid}) is using the data directory ${core.dataDir}`);
    expect(outcome.stderr).toContain('HOMECLAW_DATA_DIR');
    expect(statSync(join(core.dataDir, 'homeclaw.db')).mode).toBe(modeBefore);
    // The running Core is untouched.
    expect((await fetch(`${core.httpUrl}/healthz`)).status).toBe(200);
  });
});
