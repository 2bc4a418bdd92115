// The three adapters of this room behind the real Dispatcher and Registry: deadlines end calls exactly
// once, plugin folders carry subprocess plugins, API-registered http plugins are reached and polled.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinLoader, type BuiltinLoader } from '../../src/adapters/builtin-loader.js';
import { createHttpAdapter, type HttpAdapter } from '../../src/adapters/http.js';
import { createSubprocessAdapter, type SubprocessAdapter } from '../../src/adapters/subprocess.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import { silentLogger } from '../../src/log.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { Registry } from '../../src/registry/registry.js';
import { isAlive, waitFor } from './helpers.js';

let root: string;
let registry: Registry;
let loader: BuiltinLoader;
let http: HttpAdapter;
let subprocess: SubprocessAdapter;
let dispatcher: Dispatcher;
let server: Server;
let baseUrl: string;
const hanging: ServerResponse[] = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'hc-adapters-int-'));
  const plugins = join(root, 'plugins');
  mkdirSync(join(plugins, 'lamp'), { recursive: true });
  writeFileSync(
    join(plugins, 'lamp', 'plugin.yaml'),
    `id: lamp\nname: Lamp\ndescription: Switches the desk lamp.\ntype: subprocess\nconfig: { command: ${JSON.stringify(process.execPath)}, args: [lamp.mjs], timeout_sec: 5 }\ncapabilities:\n  - id: switch\n    name: Switch\n    description: Turns the lamp on or off.\n    parameters: [{ name: on, type: boolean, required: true }]\n  - id: stuck\n    name: Stuck\n    description: Never answers.\n    parameters: []\n`,
  );
  writeFileSync(
    join(plugins, 'lamp', 'lamp.mjs'),
    `import { writeFileSync } from 'node:fs';
let input = '';
process.stdin.on('data', (c) => (input += c));
process.stdin.on('end', () => {
  const request = JSON.parse(input);
  if (request.capability_id === 'stuck') { writeFileSync('stuck.pid', String(process.pid)); setInterval(() => {}, 1000); return; }
  console.log(JSON.stringify({ success: true, text: 'lamp ' + (request.parameters.on ? 'on' : 'off') + ' in ' + process.cwd() }));
});\n`,
  );
  server = createServer((req, res) => {
    if (req.url === '/health') return res.end('ok');
    if (req.url === '/hang') return void hanging.push(res);
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => res.end(JSON.stringify({ success: true, text: `got ${JSON.parse(body).parameters.q}` })));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  registry = new Registry({ db: new Database(':memory:'), events: new TypedEventBus(silentLogger()), log: silentLogger() });
  loader = createBuiltinLoader({ dir: plugins, data_dir: join(root, 'data'), registry, log: silentLogger(), hot_reload: false });
  // A stopped server refuses at once; the generous timeout only keeps a loaded machine from looking like one.
  http = createHttpAdapter({ registry, log: silentLogger(), liveness: { health_poll_sec: 0.05, health_failure_threshold: 2 }, health_timeout_ms: 2000 });
  subprocess = createSubprocessAdapter({ log: silentLogger(), kill_grace_ms: 200 });
  dispatcher = new Dispatcher({
    registry,
    adapters: [loader.adapter, http, subprocess],
    config: { default_timeout_sec: 5, default_max_concurrency: 2, default_queue_limit: 10 },
    log: silentLogger(),
  });
  http.start();
  await loader.start();
});

afterAll(async () => {
  await dispatcher.stop();
  await loader.stop();
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(root, { recursive: true, force: true });
});

describe('adapters behind the dispatcher', () => {
  it('runs a subprocess plugin found in a plugin folder, in that folder', async () => {
    const result = await dispatcher.invoke({ plugin_id: 'lamp', capability_id: 'switch', parameters: { on: true } });
    expect(result).toMatchObject({ success: true, text: `lamp on in ${join(root, 'plugins', 'lamp')}` });
  });

  it('times out a subprocess at its deadline and leaves no process behind', async () => {
    const pidFile = join(root, 'plugins', 'lamp', 'stuck.pid');
    const result = await dispatcher.invoke({ plugin_id: 'lamp', capability_id: 'stuck', timeout_sec: 0.5 });
    expect(result).toMatchObject({ success: false, error_code: 'timeout' });
    expect(existsSync(pidFile)).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await waitFor(() => !isAlive(pid), 3000);
    await waitFor(() => subprocess.running().length === 0, 3000);
  });

  it('invokes an API-registered http plugin, times out a hanging one, and polls its health', async () => {
    const registered = registry.register({
      descriptor: {
        id: 'search',
        name: 'Search',
        description: 'Searches.',
        capabilities: [
          { id: 'find', name: 'Find', description: 'Finds', parameters: [{ name: 'q', type: 'string', required: true }], post_process: false },
          { id: 'slow', name: 'Slow', description: 'Hangs', parameters: [], post_process: false, method: 'GET', path: '/hang' },
        ],
        source: 'external',
        type: 'http',
        health_check_url: `${baseUrl}/health`,
        config: { base_url: baseUrl },
      },
      owner: 'api',
    });
    expect(registered.ok).toBe(true);
    expect(await dispatcher.invoke({ plugin_id: 'search', capability_id: 'find', parameters: { q: 'milk' } })).toMatchObject({
      success: true,
      text: 'got milk',
    });
    const started = Date.now();
    const slow = await dispatcher.invoke({ plugin_id: 'search', capability_id: 'slow', timeout_sec: 0.3 });
    expect(slow).toMatchObject({ success: false, error_code: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2000);

    // The health server goes away: stale (not routed to), then back online when it returns.
    const port = (server.address() as AddressInfo).port;
    for (const res of hanging.splice(0)) res.destroy();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await waitFor(() => registry.get('search')!.state === 'stale', 5000);
    expect((await dispatcher.invoke({ plugin_id: 'search', capability_id: 'find', parameters: { q: 'x' } })).error_code).toBe('stale');
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    await waitFor(() => registry.get('search')!.state === 'online', 5000);
  });
});
