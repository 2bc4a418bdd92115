// Python plugin folders, as the built-in loader meets them (plugins/<id>/ and the extra plugin dirs). A
// folder is a Python plugin when its manifest says `type: python`, or when it holds Python code and no
// JavaScript module (HomeClaw's built-ins: plugin.yaml with `type: inline`, or config.yml + plugin.py, or
// plugin.py alone). Loading starts the folder's Python host and builds the descriptor from what the host
// reports. The result is handed to the loader as a LoadedBuiltin, so the loader's own lifecycle drives the
// host: installing a newer version disposes (retires) the older host, removing the folder or failing a
// reload disposes it too. Calls reach the host through the PythonAdapter (type python).
import { existsSync, readdirSync, statSync, type Dirent } from 'node:fs';
import { basename, join, relative } from 'node:path';
import type { Logger } from '../../log.js';
import { isPluginId } from '../../protocol/ids.js';
import type { JsonObject, PluginDescriptor } from '../../protocol/types.js';
import type { RegistryApi } from '../../registry/registry-api.js';
import type { LoadedBuiltin } from '../../adapters/inline.js';
import { mergeConfig } from '../../adapters/builtin-loader.js';
import type { PythonAdapter, PythonRoute } from './adapter.js';
import { buildChildEnvReport } from '../../adapters/child-env.js';
import { folderDescriptor } from './descriptor.js';
import { PYTHON_HOST_PROTOCOL, type HostPluginInfo } from './protocol.js';
import { PythonSupervisor, type SupervisorSettings } from './supervisor.js';
import { isPlainObject } from '../../kit/plain-object.js';

export const DEFAULT_PYTHON = '/usr/bin/python3';

/** Keys of a legacy config.yml that name the plugin rather than configure it. */
const LEGACY_KEYS = ['id', 'plugin_id', 'name', 'description', 'description_long', 'version', 'keywords', 'examples', 'parameters'];

export interface PythonFolderLoadInput {
  folder: string;
  manifest?: Record<string, unknown>;
  manifest_file?: string;
  /** The folder's config file (config.config_file, else config.yml), already read. */
  file_config?: Record<string, unknown>;
}

export type PythonFolderOutcome = { ok: true; descriptor: PluginDescriptor; loaded: LoadedBuiltin } | { ok: false; error: string; plugin_id?: string };

export interface PythonFolders {
  /** A folder with plugin.py is a plugin folder even without a manifest or config file. */
  isPluginFolder(folder: string): boolean;
  /** Whether this folder is a Python plugin (decided before the loader looks for a JS module). */
  claims(input: { folder: string; manifest: Record<string, unknown> | undefined; has_js_module: boolean }): boolean;
  load(input: PythonFolderLoadInput): Promise<PythonFolderOutcome>;
}

export interface PythonFoldersDeps {
  adapter: PythonAdapter;
  registry: RegistryApi;
  log: Logger;
  settings: SupervisorSettings;
  /** The Core's environment, from which only PATH, HOME, LANG and TZ reach the host. */
  env?: NodeJS.ProcessEnv;
}

function hasPythonModule(folder: string): boolean {
  try {
    return readdirSync(folder).some((name) => name.endsWith('.py') && !name.startsWith('_') && !name.startsWith('.'));
  } catch {
    return false;
  }
}

/**
 * What a Python folder's code and settings look like on disk: every .py file (any depth, outside
 * __pycache__ and hidden folders), the manifest and the config files. Files a plugin writes for itself
 * (data, caches) are not in it, so writing them does not restart the plugin.
 */
function sourceFingerprint(folder: string, manifest: Record<string, unknown> | undefined): string {
  const declared = isPlainObject(manifest?.config) && typeof manifest.config.config_file === 'string' ? manifest.config.config_file : undefined;
  const settings = new Set([
    'plugin.yaml',
    'plugin.yml',
    'plugin.json',
    'config.yml',
    'config.yaml',
    ...(declared ? [relative(folder, join(folder, declared))] : []),
  ]);
  const parts: string[] = [];
  const walk = (dir: string, depth: number): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.') || entry.name === '__pycache__' || entry.name === 'node_modules') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (depth < 4) walk(path, depth + 1);
      } else if (entry.name.endsWith('.py') || settings.has(relative(folder, path))) {
        try {
          const stat = statSync(path);
          parts.push(`${relative(folder, path)}:${stat.size}:${stat.mtimeMs}`);
        } catch {
          // removed while we looked
        }
      }
    }
  };
  walk(folder, 0);
  return parts.sort().join('\n');
}

function idOf(value: Record<string, unknown> | undefined): string | undefined {
  const id = value?.id ?? value?.plugin_id;
  return isPluginId(id) ? id : undefined;
}

function pick(source: Record<string, unknown> | undefined, keys: string[]): JsonObject | null {
  if (!source) return null;
  const out: JsonObject = {};
  for (const key of keys) if (typeof source[key] === 'string') out[key] = source[key] as string;
  return out;
}

export function createPythonFolders(deps: PythonFoldersDeps): PythonFolders {
  const { adapter, registry, settings } = deps;
  const current = new Map<string, { fingerprint: string; supervisor: PythonSupervisor; outcome: PythonFolderOutcome }>();

  /** Reuses the running host when it is healthy and nothing it was loaded from has changed (a data file was written). */
  async function load(input: PythonFolderLoadInput): Promise<PythonFolderOutcome> {
    const fingerprint = sourceFingerprint(input.folder, input.manifest);
    const previous = current.get(input.folder);
    if (previous && previous.fingerprint === fingerprint && previous.supervisor.active && previous.supervisor.health().ok) return previous.outcome;
    const loaded = await start(input);
    if (loaded.outcome.ok && loaded.supervisor) current.set(input.folder, { fingerprint, supervisor: loaded.supervisor, outcome: loaded.outcome });
    else current.delete(input.folder);
    return loaded.outcome;
  }

  async function start(input: PythonFolderLoadInput): Promise<{ outcome: PythonFolderOutcome; supervisor?: PythonSupervisor }> {
    const { folder, manifest } = input;
    const legacy = !manifest && idOf(input.file_config) ? input.file_config : undefined;
    const runtime = legacy ? Object.fromEntries(Object.entries(legacy).filter(([k]) => !LEGACY_KEYS.includes(k))) : (input.file_config ?? {});
    const declared = isPlainObject(manifest?.config) ? manifest.config : {};
    const config = mergeConfig(mergeConfig(declared, runtime), { plugin_dir: folder });
    const claimed = idOf(manifest) ?? idOf(legacy) ?? (isPluginId(basename(folder)) ? basename(folder) : undefined);
    const log = deps.log.child({ plugin_id: claimed, folder });
    const { env, ignored } = buildChildEnvReport(config.env as JsonObject | undefined, deps.env ?? process.env);
    for (const problem of ignored) log.warn(`config.env entry ignored: ${problem}`);

    let ids: string[] = [];
    const supervisor = new PythonSupervisor({
      label: `python plugin ${claimed ?? basename(folder)}`,
      launch: {
        python: typeof config.python === 'string' && config.python ? config.python : DEFAULT_PYTHON,
        cwd: folder,
        env,
        init: {
          type: 'init',
          protocol: PYTHON_HOST_PROTOCOL,
          mode: 'folder',
          plugin_dir: folder,
          module: typeof config.module === 'string' ? config.module : null,
          class: typeof config.class === 'string' ? config.class : null,
          config: config as JsonObject,
          manifest: pick(manifest ?? legacy, ['id', 'name', 'description', 'description_long']),
        },
      },
      registry,
      pluginIds: () => ids,
      log,
      settings,
    });
    adapter.track(supervisor);
    const started = await supervisor.start();
    if (!started.ok) return { outcome: { ok: false, error: started.error, ...(claimed ? { plugin_id: claimed } : {}) } };
    const plugin = started.hello.plugins[0] as HostPluginInfo | undefined;
    if (!plugin) {
      await supervisor.stop();
      return { outcome: { ok: false, error: 'the Python host found no plugin class', ...(claimed ? { plugin_id: claimed } : {}) } };
    }
    const outcome = folderDescriptor({
      folder,
      ...(manifest ? { manifest, manifest_name: basename(input.manifest_file ?? 'plugin.yaml') } : {}),
      ...(legacy ? { legacy } : {}),
      plugin,
      config: { ...config, module: plugin.module, class: plugin.class },
    });
    if (!outcome.ok) {
      await supervisor.stop();
      return { outcome: { ok: false, error: outcome.error, ...((outcome.plugin_id ?? claimed) ? { plugin_id: outcome.plugin_id ?? claimed } : {}) } };
    }
    const descriptor = outcome.descriptor;
    ids = [descriptor.id];
    if (plugin.kind === 'ragflow' && !plugin.has_version_attribute) {
      log.warn(`${plugin.class} has no _version_ (RAGFlow requires one); the plugin is listed without a version`);
    }
    const route: PythonRoute = { supervisor, target: plugin.class };
    adapter.bind(descriptor.id, route);
    const loaded: LoadedBuiltin = {
      plugin_id: descriptor.id,
      data_dir: folder,
      call: (capabilityId, parameters, ctx) =>
        supervisor.invoke({ target: plugin.class, capability_id: capabilityId, parameters, request: ctx.request, signal: ctx.signal }),
      dispose: () => {
        adapter.unbind(descriptor.id, route);
        supervisor.retire();
      },
    };
    return { outcome: { ok: true, descriptor, loaded }, supervisor };
  }

  return {
    isPluginFolder: (folder) => existsSync(join(folder, 'plugin.py')),
    claims({ folder, manifest, has_js_module }) {
      const type = manifest?.type;
      if (type === 'python') return true;
      if (type !== undefined && type !== 'inline') return false;
      const module = isPlainObject(manifest?.config) ? manifest.config.module : undefined;
      if (typeof module === 'string') return module.endsWith('.py');
      return !has_js_module && hasPythonModule(folder);
    },
    load,
  };
}
