// Starts a real Core for end-to-end tests: embedded broker and HTTP API on ephemeral ports, a fresh
// data directory, no retrieval server unless asked for.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import type { CoreConfig } from '../../src/config/types.js';
import { silentLogger, type Logger } from '../../src/log.js';
import { startCore, type RunningCore } from '../../src/main.js';

export interface TestCore extends RunningCore {
  dataDir: string;
  mqttUrl: string;
  /** fetch against the Core's HTTP API with the admin token. */
  api<T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** Stops the Core and removes the data directory (unless keepData). */
  cleanup(options?: { keepData?: boolean }): Promise<void>;
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

export interface TestCoreOptions {
  dataDir?: string;
  /** Default: an empty temp folder, so tests see only the plugins they register. */
  pluginsDir?: string;
  overrides?: DeepPartial<CoreConfig> & Record<string, unknown>;
  log?: Logger;
}

export function testConfig(dataDir: string, options: TestCoreOptions = {}): CoreConfig {
  // Inside the data dir, so cleanup() removes it with everything else.
  const pluginsDir = options.pluginsDir ?? mkdtempSync(join(dataDir, 'plugins-'));
  const overrides = options.overrides ?? {};
  const loaded = loadConfig({
    env: {},
    overrides: {
      ...overrides,
      data_dir: dataDir,
      log_level: 'silent',
      broker: { port: 0, ws_port: 0, ...(overrides.broker ?? {}) },
      http: { port: 0, admin_token: 'test-admin-token-0123456789', ...(overrides.http ?? {}) },
      plugins: { dir: pluginsDir, hot_reload: false, ...(overrides.plugins ?? {}) },
      retrieval: { enabled: false, ...(overrides.retrieval ?? {}) },
    },
  });
  if (!loaded.ok) throw new Error(`test config invalid: ${JSON.stringify(loaded.errors)}`);
  return loaded.config;
}

export async function startTestCore(options: TestCoreOptions = {}): Promise<TestCore> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'homeclaw-core-'));
  const config = testConfig(dataDir, options);
  const core = await startCore({ config, log: options.log ?? silentLogger() });
  return {
    ...core,
    dataDir,
    mqttUrl: `mqtt://127.0.0.1:${core.mqttPort ?? 0}`,
    async api<T>(method: string, path: string, body?: unknown) {
      const res = await fetch(`${core.httpUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${core.adminToken}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
    },
    async cleanup(cleanupOptions = {}) {
      await core.stop();
      if (!cleanupOptions.keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
