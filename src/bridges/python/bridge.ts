// The Python plugin bridge as the Core composes it: the `python` adapter, the hook the built-in loader
// uses for Python plugin folders, and the embedded_plugins/ scanner, all sharing one set of supervisors.
import type { Logger } from '../../log.js';
import type { PluginRecord } from '../../registry/record.js';
import type { RegistryApi } from '../../registry/registry-api.js';
import { PythonAdapter } from './adapter.js';
import { createEmbeddedPythonPlugins, isEmbeddedPythonRecord, type EmbeddedFileStatus, type EmbeddedPythonPlugins } from './embedded-plugins.js';
import { createPythonFolders, type PythonFolders } from './folder-plugins.js';
import { DEFAULT_SUPERVISOR_SETTINGS, type SupervisorSettings } from './supervisor.js';

export interface PythonBridgeOptions {
  registry: RegistryApi;
  log: Logger;
  /** The plugins dir and the extra plugin dirs: each may hold an embedded_plugins/ folder. */
  roots: string[];
  hot_reload: boolean;
  settings?: Partial<SupervisorSettings>;
  debounce_ms?: number;
  /** The environment hosts inherit PATH, HOME, LANG and TZ from (default: the Core's). */
  env?: NodeJS.ProcessEnv;
}

export interface PythonBridge {
  adapter: PythonAdapter;
  folders: PythonFolders;
  embedded: EmbeddedPythonPlugins;
  /** Records the embedded scanner manages (the folder loader must not prune them). */
  ownsRecord(record: PluginRecord): boolean;
  status(): { embedded: EmbeddedFileStatus[] };
  stop(): Promise<void>;
}

export function createPythonBridge(options: PythonBridgeOptions): PythonBridge {
  const settings: SupervisorSettings = {
    ...DEFAULT_SUPERVISOR_SETTINGS,
    ...options.settings,
    restart_backoff: { ...DEFAULT_SUPERVISOR_SETTINGS.restart_backoff, ...options.settings?.restart_backoff },
  };
  const adapter = new PythonAdapter();
  const common = { adapter, registry: options.registry, settings, ...(options.env ? { env: options.env } : {}) };
  const folders = createPythonFolders({ ...common, log: options.log });
  const embedded = createEmbeddedPythonPlugins({
    ...common,
    log: options.log,
    roots: options.roots,
    hot_reload: options.hot_reload,
    ...(options.debounce_ms !== undefined ? { debounce_ms: options.debounce_ms } : {}),
  });
  return {
    adapter,
    folders,
    embedded,
    ownsRecord: isEmbeddedPythonRecord,
    status: () => ({ embedded: embedded.status() }),
    async stop() {
      await embedded.stop();
      await adapter.stop();
    },
  };
}
