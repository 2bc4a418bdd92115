// Every launcher of the Core (npm start, the Docker image, the Home Assistant add-on) starts Node with
// one V8 helper thread, so a garbage collection leaves a core to the event loop; /api/status shows the
// count in effect, and `homeclaw start` without the flag on a small machine logs a warning saying how to start it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CORE_V8_POOL_FLAG } from '../../src/lifecycle/v8-helper-threads.js';
import { REPO_ROOT } from '../e2e/helpers.js';
import { ensureBuilt } from '../helpers/build.js';
import { coreProcessEnv } from '../helpers/core-process-env.js';
import { api, startCoreProcess, type CoreProcess } from '../helpers/core-process.js';
import { instructionsOf, parseDockerfile, parseExecForm } from '../helpers/dockerfile.js';

const NOTE = 'garbage-collection helper threads beside the event loop';

/** The Node options npm start passes before the CLI script. */
function npmStartNodeArgs(): string[] {
  const scripts = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const words = scripts['start']!.split(/\s+/);
  expect(words[0]).toBe('node');
  return words.slice(1, words.indexOf('dist/src/cli.js'));
}

describe('the V8 helper threads of the Core', () => {
  let core: CoreProcess | undefined;
  const dirs: string[] = [];
  const dir = (): string => {
    const made = mkdtempSync(join(tmpdir(), 'homeclaw-v8-threads-'));
    dirs.push(made);
    return made;
  };

  afterEach(async () => {
    await core?.stop();
    core = undefined;
    for (const made of dirs.splice(0)) rmSync(made, { recursive: true, force: true });
  });

  const helperThreads = async (env: NodeJS.ProcessEnv): Promise<unknown> => {
    const token = readFileSync(join(env['HOMECLAW_DATA_DIR']!, 'admin.token'), 'utf8').trim();
    const status = await api<{ event_loop: { v8_helper_threads: unknown } }>(env['HOMECLAW_URL']!, token, 'GET', '/api/status');
    expect(status.status).toBe(200);
    return status.body.event_loop.v8_helper_threads;
  };

  it('npm start, the Docker image and the add-on all pass the flag', () => {
    expect(npmStartNodeArgs()).toContain(CORE_V8_POOL_FLAG);
    const runtime = parseDockerfile(readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8')).stages.at(-1)!;
    const entrypoint = parseExecForm(instructionsOf(runtime, 'ENTRYPOINT')[0]!.args);
    expect(entrypoint.slice(0, entrypoint.indexOf('/app/dist/src/cli.js'))).toEqual(['node', CORE_V8_POOL_FLAG]);
    expect(readFileSync(join(REPO_ROOT, 'addon', 'homeclaw', 'run.mjs'), 'utf8')).toContain(`spawn(process.execPath, ['${CORE_V8_POOL_FLAG}', cli, 'start']`);
  });

  it('started as npm start starts it: one helper thread in /api/status, and no warning', async () => {
    await ensureBuilt();
    const env = await coreProcessEnv(dir(), dir(), { NODE_OPTIONS: '' });
    core = await startCoreProcess(env, { nodeArgs: npmStartNodeArgs() });
    expect(await helperThreads(env)).toBe(1);
    expect(core.output()).not.toContain(NOTE);
  });

  it("started without the flag: Node's 4 in /api/status, and on a machine of 2 cores or fewer a warning naming the flag", async () => {
    await ensureBuilt();
    const env = await coreProcessEnv(dir(), dir(), { NODE_OPTIONS: '' });
    core = await startCoreProcess(env);
    expect(await helperThreads(env)).toBe(4);
    if (availableParallelism() <= 2) expect(core.output()).toContain(`this machine has ${availableParallelism()} core`);
    else expect(core.output()).not.toContain(NOTE);
    if (availableParallelism() <= 2) expect(core.output()).toContain(CORE_V8_POOL_FLAG);
  });

  it('NODE_OPTIONS counts too', async () => {
    await ensureBuilt();
    const env = await coreProcessEnv(dir(), dir(), { NODE_OPTIONS: '--v8-pool-size=2' });
    core = await startCoreProcess(env);
    expect(await helperThreads(env)).toBe(2);
  });
});
