// A Core slice for the Python bridge tests: an in-memory registry, the built-in loader with the Python
// folder hook, the embedded_plugins/ scanner and a dispatcher, over a temporary plugins folder filled
// with copies of the fixtures (so hot-reload tests can edit them). Hosts are real /usr/bin/python3 processes.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { createBuiltinLoader, type BuiltinLoader } from '../../../src/adapters/builtin-loader.js';
import { createPythonBridge, type PythonBridge } from '../../../src/bridges/python/bridge.js';
import type { SupervisorSettings } from '../../../src/bridges/python/supervisor.js';
import { Dispatcher } from '../../../src/dispatch/dispatcher.js';
import { silentLogger } from '../../../src/log.js';
import type { JsonObject, PluginResult } from '../../../src/protocol/types.js';
import { TypedEventBus } from '../../../src/registry/events.js';
import { Registry } from '../../../src/registry/registry.js';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'bridges', 'python');

export interface HarnessOptions {
  /** Fixture folders (under fixtures/bridges/python/folders) copied into plugins/. */
  folders?: string[];
  /** Fixture trees whose embedded_plugins/ folder is copied into plugins/. */
  embedded?: string[];
  hot_reload?: boolean;
  settings?: Partial<SupervisorSettings>;
  env?: NodeJS.ProcessEnv;
  default_timeout_sec?: number;
}

export interface Harness {
  root: string;
  pluginsDir: string;
  registry: Registry;
  bridge: PythonBridge;
  loader: BuiltinLoader;
  dispatcher: Dispatcher;
  /** Every log line so far, as JSON text. */
  logs: string[];
  invoke(plugin_id: string, capability_id: string, parameters?: JsonObject, timeout_sec?: number): Promise<PluginResult>;
  stop(): Promise<void>;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const root = mkdtempSync(join(tmpdir(), 'hc-python-'));
  const pluginsDir = join(root, 'plugins');
  mkdirSync(pluginsDir);
  for (const folder of options.folders ?? []) cpSync(join(FIXTURES, 'folders', folder), join(pluginsDir, folder), { recursive: true });
  for (const tree of options.embedded ?? []) cpSync(join(FIXTURES, tree, 'embedded_plugins'), join(pluginsDir, 'embedded_plugins'), { recursive: true });

  const logs: string[] = [];
  const log = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    }),
  );
  const registry = new Registry({ db: new Database(':memory:'), events: new TypedEventBus(silentLogger()), log: silentLogger() });
  const hot_reload = options.hot_reload ?? false;
  const bridge = createPythonBridge({
    registry,
    log,
    roots: [pluginsDir],
    hot_reload,
    debounce_ms: 50,
    settings: { restart_backoff: { initial_ms: 100, max_ms: 2000 }, hang_grace_ms: 500, ...options.settings },
    ...(options.env ? { env: options.env } : {}),
  });
  const loader = createBuiltinLoader({
    dir: pluginsDir,
    data_dir: join(root, 'data'),
    registry,
    log,
    hot_reload,
    debounce_ms: 50,
    compiled_dir: join(root, 'dist-plugins'),
    python: bridge.folders,
    keep_record: bridge.ownsRecord,
  });
  const dispatcher = new Dispatcher({
    registry,
    adapters: [loader.adapter, bridge.adapter],
    config: { default_timeout_sec: options.default_timeout_sec ?? 10, default_max_concurrency: 4, default_queue_limit: 20 },
    log: silentLogger(),
  });
  await loader.start();
  await bridge.embedded.start();
  return {
    root,
    pluginsDir,
    registry,
    bridge,
    loader,
    dispatcher,
    logs,
    invoke: (plugin_id, capability_id, parameters = {}, timeout_sec) =>
      dispatcher.invoke({
        plugin_id,
        capability_id,
        parameters,
        ...(timeout_sec ? { timeout_sec } : {}),
        context: { user_id: 'alice', user_input: 'hello there' },
      }),
    async stop() {
      await loader.stop();
      await bridge.stop();
      await dispatcher.stop();
      // No process started for this harness may outlive it (hosts run in the plugin folders under root).
      const deadline = Date.now() + 5000;
      while (processesUnder(root).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const left = processesUnder(root);
      rmSync(root, { recursive: true, force: true });
      if (left.length > 0) {
        for (const pid of left) process.kill(pid, 'SIGKILL');
        throw new Error(`processes outlived the harness: ${left.join(', ')}`);
      }
    },
  };
}

/** Live processes (not zombies) whose working directory is inside `dir`. */
export function processesUnder(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if ((cwd === dir || cwd.startsWith(`${dir}/`)) && state !== 'Z' && state !== 'X') found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** Log lines whose message contains `text`. */
export function logged(harness: Harness, text: string): Record<string, unknown>[] {
  return harness.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => String(entry.msg ?? '').includes(text));
}
