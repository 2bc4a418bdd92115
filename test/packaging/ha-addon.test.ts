// The Home Assistant add-on folder, checked against the rules in Home Assistant's developer docs (App
// configuration, App communication) and the Supervisor's validation of config.yaml: the keys it knows
// (it silently drops unknown ones), the option schema grammar, the services and ingress keys; then
// run.mjs for real: a stand-in Supervisor serving GET /services/mqtt in its documented envelope, a
// real Mosquitto with the login it hands out, and the Core started by run.mjs in external broker mode.
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { parse as parseYaml } from 'yaml';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, REPO_ROOT } from '../e2e/helpers.js';
import { instructionsOf, parseCopy, parseDockerfile, parseExecForm } from '../helpers/dockerfile.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';
import { freePort } from '../helpers/ports.js';

const ADDON = join(REPO_ROOT, 'addon', 'homeclaw');
const config = parseYaml(readFileSync(join(ADDON, 'config.yaml'), 'utf8')) as Record<string, unknown>;
const packageVersion = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The keys of an app's config.yaml in the developer docs (required and optional tables). */
const KNOWN_KEYS = new Set(
  (
    'name version slug description arch machine url startup webui boot ports ports_description host_network host_ipc host_dbus host_pid host_uts ' +
    'devices homeassistant hassio_role hassio_api homeassistant_api docker_api privileged full_access apparmor map environment audio video gpio usb uart ' +
    'udev devicetree kernel_modules stdin legacy options schema image timeout tmpfs discovery services auth_api ingress ingress_port ingress_entry ' +
    'ingress_stream panel_icon panel_title panel_admin backup backup_pre backup_post backup_exclude stage init watchdog realtime journald ' +
    'breaking_versions ulimits advanced'
  ).split(' '),
);

/** The option types the docs list, each optionally followed by "?" (optional, no default). */
const SCHEMA_TYPE = new RegExp(
  '^(?:bool|email|url|port|str(?:\\(\\d*,\\d*\\))?|password(?:\\(\\d*,\\d*\\))?|int(?:\\(-?\\d*,-?\\d*\\))?|float(?:\\([-\\d.]*,[-\\d.]*\\))?' +
    '|device(?:\\(subsystem=[a-z]+\\))?|match\\(.*\\)|list\\(.+\\))\\??$',
);

describe('add-on config.yaml', () => {
  it('has the required keys, supported architectures, the package version and only keys the Supervisor knows', () => {
    for (const key of ['name', 'version', 'slug', 'description', 'arch']) expect(config[key], key).toBeTruthy();
    expect(config['slug']).toMatch(/^[-_.A-Za-z0-9]+$/);
    expect(config['arch']).toEqual(expect.arrayContaining(['aarch64', 'amd64']));
    for (const arch of config['arch'] as string[]) expect(['aarch64', 'amd64']).toContain(arch);
    expect(config['version']).toBe(packageVersion);
    expect(Object.keys(config).filter((key) => !KNOWN_KEYS.has(key))).toEqual([]);
  });

  it('needs the MQTT service, and reaches Home Assistant through the Supervisor', () => {
    const services = config['services'] as string[];
    expect(services).toContain('mqtt:need');
    for (const service of services) expect(service).toMatch(/^(mqtt|mysql):(provide|want|need)$/);
    expect(config['homeassistant_api']).toBe(true);
  });

  it('serves the dashboard through ingress on the port the Core listens on, watched on /healthz', () => {
    expect(config['ingress']).toBe(true);
    expect(config['ingress_port']).toBe(8765);
    // Ingress requests act as the Core's admin: only Home Assistant administrators get the panel.
    expect(config['panel_admin']).toBe(true);
    expect(config['watchdog']).toMatch(/^(?:https?|\[PROTO:\w+\]|tcp):\/\/\[HOST\]:(\[PORT:\d+\]|\d+).*$/);
    expect(config['watchdog']).toBe(`http://[HOST]:[PORT:${String(config['ingress_port'])}]/healthz`);
    expect(config['panel_icon']).toMatch(/^mdi:[a-z0-9-]+$/);
    const ports = config['ports'] as Record<string, number | null>;
    for (const [key, hostPort] of Object.entries(ports)) {
      expect(key).toMatch(/^\d+(?:\/tcp|\/udp)?$/);
      expect(hostPort === null || (Number.isInteger(hostPort) && hostPort > 0 && hostPort < 65536)).toBe(true);
    }
    expect(Object.keys(config['ports_description'] as object)).toEqual(Object.keys(ports));
  });

  it('options and schema agree: every type is one the Supervisor accepts, every default fits its type', () => {
    const schema = config['schema'] as Record<string, string>;
    const options = config['options'] as Record<string, unknown>;
    for (const [key, type] of Object.entries(schema)) expect(type, key).toMatch(SCHEMA_TYPE);
    for (const [key, value] of Object.entries(options)) {
      const type = schema[key];
      expect(type, `option ${key} has a schema`).toBeDefined();
      // An option with a default is required; "?" types must have none (the docs' rule for optional options).
      expect(type!.endsWith('?'), `${key}: an optional type with a default`).toBe(false);
      const list = /^list\((.+)\)$/.exec(type!);
      if (list) expect(list[1]!.split('|')).toContain(value);
      else if (type === 'bool') expect(typeof value).toBe('boolean');
      else expect(typeof value).toBe('string');
    }
    // The Core's own names for the same values.
    expect(schema['log_level']).toBe('list(fatal|error|warn|info|debug|trace)');
    expect(schema['log_format']).toBe('list(pretty|json)');
  });

  it('translations name every option and every port, and nothing else', () => {
    const translations = parseYaml(readFileSync(join(ADDON, 'translations', 'en.yaml'), 'utf8')) as {
      configuration: Record<string, { name: string; description: string }>;
      network: Record<string, string>;
    };
    expect(Object.keys(translations.configuration).sort()).toEqual(Object.keys(config['schema'] as object).sort());
    for (const entry of Object.values(translations.configuration)) expect(entry).toEqual({ name: expect.any(String), description: expect.any(String) });
    expect(Object.keys(translations.network)).toEqual(Object.keys(config['ports'] as object));
  });

  it('ships its documentation and a Dockerfile whose files exist, on the repository image of the same version', () => {
    for (const file of ['README.md', 'DOCS.md', 'Dockerfile', 'run.mjs']) expect(existsSync(join(ADDON, file)), file).toBe(true);
    const dockerfile = parseDockerfile(readFileSync(join(ADDON, 'Dockerfile'), 'utf8'));
    expect(dockerfile.stages).toHaveLength(1);
    const [stage] = dockerfile.stages;
    expect(stage!.image).toBe(`homeclaw-bus:${packageVersion}`);
    expect(readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8')).toContain(`docker build -t homeclaw-bus:${packageVersion} .`);
    const copies = instructionsOf(stage!, 'COPY').map((i) => parseCopy(i.args));
    for (const copy of copies) for (const source of copy.sources) expect(existsSync(join(ADDON, source)), source).toBe(true);
    const entrypoint = parseExecForm(instructionsOf(stage!, 'ENTRYPOINT')[0]!.args);
    expect(entrypoint).toEqual(['node', '/addon/run.mjs']);
    expect(copies.some((copy) => copy.destination === '/addon/run.mjs')).toBe(true);
    const labels = instructionsOf(stage!, 'LABEL')
      .map((i) => i.args)
      .join(' ');
    expect(labels).toContain(`io.hass.version="${packageVersion}"`);
    expect(labels).toContain('io.hass.arch="aarch64|amd64"');
    // run.mjs starts the Core where the repository image puts it.
    expect(readFileSync(join(ADDON, 'run.mjs'), 'utf8')).toContain("'/app/dist/src/cli.js'");
  });
});

// ---- run.mjs -------------------------------------------------------------------------------------------

interface FakeSupervisor {
  url: string;
  requests: { path: string; authorization: string | undefined }[];
  close(): Promise<void>;
}

/** GET /services/mqtt and GET /core/api/ as the Supervisor answers them: {result, data} / {result, message}. */
async function startFakeSupervisor(token: string, mqttService: Record<string, unknown> | null): Promise<FakeSupervisor> {
  const requests: FakeSupervisor['requests'] = [];
  const server = http.createServer((req, res) => {
    requests.push({ path: req.url ?? '', authorization: req.headers.authorization });
    const json = (status: number, body: unknown): void => void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.headers.authorization !== `Bearer ${token}`) return json(401, { result: 'error', message: 'Unauthorized' });
    if (req.url === '/services/mqtt')
      return mqttService ? json(200, { result: 'ok', data: mqttService }) : json(400, { result: 'error', message: 'Service not enabled' });
    if (req.url === '/core/api/') return json(200, { message: 'API running.' });
    json(404, { result: 'error', message: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
beforeAll(async () => {
  await ensureBuilt();
}, 120_000);

function runAddon(env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string } {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('HOMECLAW_') && key !== 'SUPERVISOR_TOKEN'));
  const child = spawn(process.execPath, [join(ADDON, 'run.mjs')], {
    env: { ...clean, HOMECLAW_CLI: join(REPO_ROOT, 'dist', 'src', 'cli.js'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      }),
  );
  return { child, output: () => output };
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));
}

describe('add-on run.mjs', () => {
  let mosquitto: MosquittoHandle | undefined;
  afterEach(async () => {
    await mosquitto?.stop();
    mosquitto = undefined;
  });

  it('starts the Core on the broker the Supervisor names, with its login, reaching Home Assistant through the Supervisor', async () => {
    const password = 'addons-pw-0123456789';
    mosquitto = await startMosquitto({ users: { addons: password } });
    const supervisorToken = 'supervisor-token-abcdef';
    // The port as a string, as in the docs' example (the Supervisor itself stores an integer).
    const supervisor = await startFakeSupervisor(supervisorToken, {
      addon: 'core_mosquitto',
      host: '127.0.0.1',
      port: String(mosquitto.port),
      ssl: false,
      username: 'addons',
      password,
      protocol: '3.1.1',
    });
    cleanups.push(() => supervisor.close());
    const dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-addon-data-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const optionsFile = join(dataDir, 'options.json');
    writeFileSync(optionsFile, JSON.stringify({ log_level: 'info', log_format: 'json', retrieval_enabled: false }));
    const httpPort = await freePort();
    const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
    const addon = runAddon({
      SUPERVISOR_TOKEN: supervisorToken,
      HOMECLAW_SUPERVISOR_URL: supervisor.url,
      HOMECLAW_ADDON_OPTIONS: optionsFile,
      HOMECLAW_DATA_DIR: dataDir,
      HOMECLAW_HTTP_PORT: String(httpPort),
      // The Supervisor's ingress address (172.30.32.2 by default) stands in as a loopback address here.
      HOMECLAW_INGRESS_PROXY: '127.0.0.2',
      // As root the script hands the data folder to this user and runs the Core as it, as in the image.
      ...(asRoot ? { HOMECLAW_ADDON_USER: '1000:1000' } : {}),
    });

    const deadline = Date.now() + 60_000;
    let ready: { status: number; body: unknown } = { status: 0, body: null };
    while (Date.now() < deadline) {
      const response = await fetch(`http://127.0.0.1:${httpPort}/readyz`).catch(() => null);
      if (response) ready = { status: response.status, body: await response.json() };
      if (ready.status === 200 || addon.child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(ready, addon.output()).toEqual({
      status: 200,
      body: { status: 'ready', checks: { broker: 'up', registry: 'up', retrieval: 'up', homeassistant: 'up' } },
    });
    expect(supervisor.requests).toEqual(
      expect.arrayContaining([
        { path: '/services/mqtt', authorization: `Bearer ${supervisorToken}` },
        { path: '/core/api/', authorization: `Bearer ${supervisorToken}` },
      ]),
    );

    // The Core announced itself on that broker (retained birth), as any plugin will see it.
    const client = await mqtt.connectAsync(mosquitto.url, { username: 'addons', password, reconnectPeriod: 0 });
    cleanups.push(() => client.endAsync());
    const birth = new Promise<Record<string, unknown>>((resolve) =>
      client.on('message', (_t, payload) => resolve(JSON.parse(payload.toString()) as Record<string, unknown>)),
    );
    await client.subscribeAsync('homeclaw/core/status');
    expect(await birth).toMatchObject({ online: true });

    expect(addon.output()).toContain(`MQTT service from the Supervisor: 127.0.0.1:${mosquitto.port} as addons`);
    expect(addon.output()).not.toContain(password);
    expect(addon.output()).not.toContain(supervisorToken);
    // options.json's log_format: json lines.
    expect(
      addon
        .output()
        .split('\n')
        .some((line) => line.startsWith('{') && (JSON.parse(line) as { msg?: string }).msg === 'HomeClaw Core started'),
    ).toBe(true);
    if (asRoot) expect(statSync(join(dataDir, 'homeclaw.db')).uid).toBe(1000);

    // The sidebar panel: the Supervisor's requests (its address, X-Ingress-Path) act as the admin; the same
    // headers from anywhere else do not.
    const ingressGet = (localAddress: string, path: string): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        http
          .request({ host: '127.0.0.1', port: httpPort, path, localAddress, headers: { 'x-ingress-path': '/api/hassio_ingress/tok' } }, (res) => {
            let body = '';
            res.on('data', (chunk: Buffer) => (body += chunk.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          })
          .on('error', reject)
          .end();
      });
    const viaSupervisor = await ingressGet('127.0.0.2', '/api/whoami');
    expect(viaSupervisor.status).toBe(200);
    expect(JSON.parse(viaSupervisor.body)).toMatchObject({ kind: 'admin', via: 'ingress' });
    expect((await ingressGet('127.0.0.1', '/api/whoami')).status).toBe(401);
    // The add-on starts the Core with one V8 helper thread, as every launcher does.
    const status = await ingressGet('127.0.0.2', '/api/status');
    expect((JSON.parse(status.body) as { event_loop: { v8_helper_threads: number } }).event_loop.v8_helper_threads).toBe(1);
    expect(readFileSync(join(ADDON, 'run.mjs'), 'utf8')).toContain("'172.30.32.2'");

    addon.child.kill('SIGTERM');
    expect(await exited(addon.child)).toBe(0);
  }, 120_000);

  it('without an MQTT service it stops with what to install; outside an add-on it says so', async () => {
    const supervisor = await startFakeSupervisor('t0ken', null);
    cleanups.push(() => supervisor.close());
    const noService = runAddon({
      SUPERVISOR_TOKEN: 't0ken',
      HOMECLAW_SUPERVISOR_URL: supervisor.url,
      HOMECLAW_ADDON_OPTIONS: '/nonexistent/options.json',
      HOMECLAW_ADDON_WAIT_SEC: '0',
    });
    expect(await exited(noService.child)).toBe(1);
    expect(noService.output()).toMatch(/no MQTT service \(the Supervisor answered 400: Service not enabled\)\. Install and start the Mosquitto broker add-on/);
    const outside = runAddon({});
    expect(await exited(outside.child)).toBe(1);
    expect(outside.output()).toContain('SUPERVISOR_TOKEN is not set');
  }, 60_000);
});
