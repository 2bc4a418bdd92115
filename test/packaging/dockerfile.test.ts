// The Dockerfile, checked as far as this machine allows: there is no Docker daemon here (and no network
// for base images), so `docker build` cannot run. Instead the test reads the Dockerfile, checks what it
// must declare (stages, a non-root user, the /data volume, the health check on /healthz, the ports),
// then replays its COPY and build steps into temporary folders (npm ci replaced by the repository's
// installed node_modules) and runs the resulting /app tree the way the image's ENTRYPOINT would, with
// the image's environment: the build stage's inputs suffice, the runtime tree is complete, the
// health check command works, and the 0.0.0.0 listeners demand credentials.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../e2e/helpers.js';
import { instructionsOf, parseCopy, parseDockerfile, parseEnv, parseExecForm, type Stage } from '../helpers/dockerfile.js';
import { freePort } from '../helpers/ports.js';

const dockerfile = parseDockerfile(readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8'));
const ignored = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));
const build = dockerfile.stages.find((stage) => stage.name === 'build') as Stage;
const runtime = dockerfile.stages.at(-1) as Stage;
const temp: string[] = [];
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of temp) rmSync(dir, { recursive: true, force: true });
});

function excludedByDockerignore(path: string): boolean {
  const clean = path.replace(/^\.\//, '').replace(/\/$/, '');
  return ignored.some((pattern) => {
    if (pattern.includes('*')) return new RegExp(`^${pattern.replace(/\./g, '\\.').replace(/\*/g, '[^/]*')}$`).test(clean.split('/').pop() ?? '');
    return clean === pattern || clean.startsWith(`${pattern}/`);
  });
}

function env(stage: Stage): Record<string, string> {
  return Object.assign({}, ...instructionsOf(stage, 'ENV').map((i) => parseEnv(i.args)));
}

/** Where a path inside the image (under WORKDIR /app) lands in a temporary stand-in folder. */
function inStage(root: string, path: string): string {
  return join(root, path.replace(/^\/app\/?/, '').replace(/^\.\//, ''));
}

describe('Dockerfile', () => {
  it('builds in a named stage and runs from a second one, based on Node 20', () => {
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(2);
    expect(build).toBeDefined();
    expect(runtime).not.toBe(build);
    for (const stage of dockerfile.stages) expect(stage.image).toMatch(/^node:20[.-]/);
    expect(
      instructionsOf(build, 'RUN')
        .map((i) => i.args)
        .join('\n'),
    ).toMatch(/npm run build/);
  });

  it('runs as a non-root user that owns the /data volume, with a health check on /healthz and the ports exposed', () => {
    const users = instructionsOf(runtime, 'USER');
    expect(users).toHaveLength(1);
    expect(users[0]!.args).not.toMatch(/^(root|0)(:|$)/);
    const chown = instructionsOf(runtime, 'RUN').find((i) => i.args.includes('chown'));
    expect(chown?.args).toMatch(new RegExp(`chown ${users[0]!.args}:${users[0]!.args} /data`));
    expect(chown!.line).toBeLessThan(users[0]!.line);
    expect(
      instructionsOf(runtime, 'VOLUME')
        .map((i) => i.args)
        .join(' '),
    ).toContain('"/data"');
    expect(env(runtime)['HOMECLAW_DATA_DIR']).toBe('/data');
    const exposed = instructionsOf(runtime, 'EXPOSE').flatMap((i) => i.args.split(/\s+/));
    expect(exposed).toEqual(expect.arrayContaining(['1883', '9001', '8765']));
    const healthcheck = instructionsOf(runtime, 'HEALTHCHECK');
    expect(healthcheck).toHaveLength(1);
    expect(healthcheck[0]!.args).toMatch(/^--interval=\S+\s+--timeout=\S+\s+--start-period=\S+\s+--retries=\d+\s+CMD \[/);
    expect(healthcheck[0]!.args).toContain('/healthz');
  });

  it('listens on every interface inside the container through settings the Core knows', async () => {
    const { loadConfig } = await import('../../src/config/load.js');
    const imageEnv = env(runtime);
    for (const key of Object.keys(imageEnv).filter((k) => k.startsWith('HOMECLAW_'))) {
      // Each variable must change the config: a misspelt one would be silently ignored.
      const without = loadConfig({ env: {} });
      const withIt = loadConfig({ env: { [key]: imageEnv[key] } });
      expect(withIt.ok && without.ok && JSON.stringify(withIt.config) !== JSON.stringify(without.config), key).toBe(true);
    }
    const loaded = loadConfig({ env: imageEnv });
    expect(loaded).toMatchObject({ ok: true, config: { http: { host: '0.0.0.0', port: 8765 }, broker: { host: '0.0.0.0' }, data_dir: '/data' } });
  });

  it('copies only files that exist in the build context and are not excluded by .dockerignore', () => {
    for (const stage of dockerfile.stages) {
      for (const copy of instructionsOf(stage, 'COPY').map((i) => parseCopy(i.args))) {
        if (copy.from) {
          expect(
            dockerfile.stages.some((s) => s.name === copy.from),
            `stage ${copy.from}`,
          ).toBe(true);
          continue;
        }
        for (const source of copy.sources) {
          expect(existsSync(join(REPO_ROOT, source)), `${source} exists`).toBe(true);
          expect(excludedByDockerignore(source), `${source} is in the build context`).toBe(false);
        }
      }
    }
    // What must stay out of the context really is out.
    for (const heavy of ['node_modules', 'dist', 'data', '.git']) expect(excludedByDockerignore(heavy), heavy).toBe(true);
  });

  it('replayed into folders, the build stage compiles and the runtime tree starts the Core, healthy and closed to anonymous clients', async () => {
    // ---- build stage: its COPYs, npm ci (the repository's node_modules stands in), npm run build (tsc)
    const buildRoot = mkdtempSync(join(tmpdir(), 'homeclaw-docker-build-'));
    temp.push(buildRoot);
    for (const instruction of build.instructions) {
      if (instruction.keyword === 'COPY') {
        const copy = parseCopy(instruction.args);
        for (const source of copy.sources) {
          const target = copy.destination.endsWith('/') ? join(inStage(buildRoot, copy.destination), source) : inStage(buildRoot, copy.destination);
          mkdirSync(join(target, '..'), { recursive: true });
          cpSync(join(REPO_ROOT, source), target, { recursive: true });
        }
      } else if (instruction.keyword === 'RUN') {
        if (/\bnpm ci\b/.test(instruction.args)) symlinkSync(join(REPO_ROOT, 'node_modules'), join(buildRoot, 'node_modules'), 'dir');
        if (/\bnpm run build\b/.test(instruction.args)) {
          await new Promise<void>((resolve, reject) =>
            execFile(
              process.execPath,
              [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
              { cwd: buildRoot },
              (error, stdout) => (error ? reject(new Error(`tsc failed in the build stage:\n${stdout}`)) : resolve()),
            ),
          );
          // npm run build also builds the web dashboard (build:web) from the copied web/ folder.
          await new Promise<void>((resolve, reject) =>
            execFile(
              process.execPath,
              [join(REPO_ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn'],
              { cwd: buildRoot },
              (error, _stdout, stderr) => (error ? reject(new Error(`the dashboard build failed in the build stage:\n${stderr}`)) : resolve()),
            ),
          );
        }
        // apt-get: build tools for better-sqlite3, already present wherever node_modules was installed.
      }
    }
    expect(existsSync(join(buildRoot, 'dist', 'src', 'cli.js'))).toBe(true);
    expect(existsSync(join(buildRoot, 'dist', 'plugins', 'time', 'index.js'))).toBe(true);
    expect(existsSync(join(buildRoot, 'dist', 'web', 'index.html'))).toBe(true);

    // ---- runtime stage: COPY --from=build and COPY from the context, into a stand-in for /app
    const app = mkdtempSync(join(tmpdir(), 'homeclaw-docker-app-'));
    temp.push(app);
    for (const copy of instructionsOf(runtime, 'COPY').map((i) => parseCopy(i.args))) {
      for (const source of copy.sources) {
        const from = copy.from === 'build' ? inStage(buildRoot, source) : join(REPO_ROOT, source);
        expect(existsSync(from), `${source} (from ${copy.from ?? 'the context'})`).toBe(true);
        cpSync(from, inStage(app, copy.destination), { recursive: true, verbatimSymlinks: true });
      }
    }

    // ---- ENTRYPOINT + CMD with the image's environment; ports and the data folder moved for this machine
    const entrypoint = parseExecForm(instructionsOf(runtime, 'ENTRYPOINT')[0]!.args);
    const cmd = parseExecForm(instructionsOf(runtime, 'CMD')[0]!.args);
    expect(entrypoint[0]).toBe('node');
    // Node's own options come before the script: they are passed as the image passes them.
    const scriptAt = entrypoint.findIndex((word, i) => i > 0 && !word.startsWith('-'));
    const nodeOptions = entrypoint.slice(1, scriptAt);
    const script = inStage(app, entrypoint[scriptAt]!);
    const dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-docker-data-'));
    temp.push(dataDir);
    const [mqttPort, httpPort] = [await freePort('0.0.0.0'), await freePort('0.0.0.0')];
    const containerEnv: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      ...env(runtime),
      HOMECLAW_DATA_DIR: dataDir,
      HOMECLAW_MQTT_PORT: String(mqttPort),
      HOMECLAW_WS_PORT: '0',
      HOMECLAW_HTTP_PORT: String(httpPort),
      HOMECLAW_RETRIEVAL_ENABLED: 'false',
    };
    const core = spawn(process.execPath, [...nodeOptions, script, ...entrypoint.slice(scriptAt + 1), ...cmd], {
      cwd: app,
      env: containerEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(core);
    let output = '';
    core.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    core.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 60_000;
    while (!output.includes('HomeClaw Core running')) {
      if (core.exitCode !== null || Date.now() > deadline) throw new Error(`the image's Core did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(output).toContain(`HTTP http://0.0.0.0:${httpPort}`);

    // The HEALTHCHECK command, run as Docker would run it (exec form, the container's environment).
    const healthcheck = parseExecForm(instructionsOf(runtime, 'HEALTHCHECK')[0]!.args.replace(/^.*?CMD\s+/, ''));
    const runHealthcheck = (): Promise<number> =>
      new Promise((resolve) => {
        const [command, ...args] = healthcheck;
        execFile(command === 'node' ? process.execPath : (command as string), args, { env: containerEnv, timeout: 10_000 }, (error) =>
          resolve(error ? Number((error as { code?: number }).code ?? 1) : 0),
        );
      });
    expect(await runHealthcheck()).toBe(0);

    // The built-ins load from the runtime tree (plugins/ manifests + dist/plugins modules + topics/ schemas).
    const token = readFileSync(join(dataDir, 'admin.token'), 'utf8').trim();
    const plugins = (await (await fetch(`http://127.0.0.1:${httpPort}/api/plugins`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      plugins: { id: string; state: string }[];
    };
    expect(plugins.plugins.map((p) => p.id).sort()).toEqual(['buy', 'notes', 'reminders', 'time', 'weather']);
    expect((await fetch(`http://127.0.0.1:${httpPort}/api/plugins`)).status).toBe(401);
    // The image starts Node with one V8 helper thread, and the Core reports it.
    const status = (await (await fetch(`http://127.0.0.1:${httpPort}/api/status`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      event_loop: { v8_helper_threads: number };
    };
    expect(status.event_loop.v8_helper_threads).toBe(1);
    // The dashboard, built in the build stage, is served from the runtime tree.
    const dashboard = await fetch(`http://127.0.0.1:${httpPort}/`);
    expect(dashboard.status).toBe(200);
    expect(await dashboard.text()).toContain('<div id="app"></div>');

    // 0.0.0.0 is not loopback: an anonymous MQTT client is refused.
    const refusal = await mqtt
      .connectAsync(`mqtt://127.0.0.1:${mqttPort}`, { reconnectPeriod: 0, connectTimeout: 5000 })
      .then(async (client) => {
        await client.endAsync();
        return 'connected';
      })
      .catch((error: Error) => error.message);
    expect(refusal).toMatch(/Not authorized|Bad username or password/i);

    core.kill('SIGTERM');
    await new Promise<void>((resolve) => (core.exitCode !== null ? resolve() : core.once('exit', () => resolve())));
    expect(await runHealthcheck()).toBe(1);
  }, 180_000);
});
