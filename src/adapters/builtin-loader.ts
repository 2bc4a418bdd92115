// Finds built-in plugins in plugin folders (plugins/<id>/), loads their modules into the inline
// adapter and registers them (owner 'builtin', source 'built-in'). Folders may also carry http,
// subprocess or mcp manifests: those are registered too and reached by their adapters.
// Hot reload (builtin-watcher.ts): a change re-reads one folder and re-imports its module so the new
// code is used. A folder that fails to load is logged and its id put in state 'error'; nothing here
// ever throws out to the Core. Reading a folder is builtin-manifest.ts, binding its module builtin-binder.ts.
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import type { Logger } from '../log.js';
import { normalizeDescriptor } from '../protocol/descriptor/normalize.js';
import { isPluginId } from '../protocol/ids.js';
import type { PluginConfig, PluginDescriptor, PluginType } from '../protocol/types.js';
import type { RegistryApi } from '../registry/registry-api.js';
import type { PluginRecord } from '../registry/record.js';
import type { PythonFolders } from '../bridges/python/folder-plugins.js';
import { pluginConfigFile } from './plugin-config-file.js';
import { bindHandlers, findRagflowClass, ragflowMetadata } from './builtin-binder.js';
import {
  firstExisting,
  guessIdFromFolder,
  idOf,
  ignoredName,
  importModule,
  isDirectory,
  legacyManifest,
  LoadError,
  looksLikePluginFolder,
  MANIFEST_FILES,
  mergeConfig,
  MODULE_FILES,
  readObjectFile,
} from './builtin-manifest.js';
import { PluginFolderWatcher } from './builtin-watcher.js';
import { createInlineAdapter, notifyFor, type InlineAdapter, type InlineAdapterOptions, type LoadedBuiltin } from './inline.js';
import { errorMessage } from '../kit/error-message.js';
import { isPlainObject } from '../kit/plain-object.js';
import { formatIssues } from '../kit/format-issues.js';

export { mergeConfig } from './builtin-manifest.js';

export const BUILTIN_OWNER = 'builtin';

export interface BuiltinLoaderOptions {
  /** The built-in plugins folder (config plugins.dir). */
  dir: string;
  /** More folders scanned the same way (config plugins.extra_dirs). */
  extra_dirs?: string[];
  /** The Core's data dir; each plugin gets <data_dir>/plugins/<id>/. */
  data_dir: string;
  registry: RegistryApi;
  log: Logger;
  hot_reload: boolean;
  /** Where tsc puts compiled plugin modules; default <dir>/../dist/plugins (the package's dist). */
  compiled_dir?: string;
  /** Reuse an inline adapter (otherwise one is created and exposed as `adapter`). */
  adapter?: InlineAdapter;
  debounce_ms?: number;
  /** A module whose import does not settle in time (top-level await that hangs) is an error. */
  import_timeout_ms?: number;
  /** Runs folders that hold a Python plugin (type: python, or plugin.py without a JS module) in a Python host. */
  python?: PythonFolders;
  /** Built-in records another loader manages (embedded Python plugins): never pruned as vanished here. */
  keep_record?: (record: PluginRecord) => boolean;
  /** Delivers built-ins' messages for users (ctx.notify, init.notify). */
  notify?: InlineAdapterOptions['notify'];
  /** Problems with where a manifest's plugin points (e.g. the Core's own HTTP API); any makes it an error. */
  check_targets?: (descriptor: PluginDescriptor) => Promise<{ path: string; message: string }[]>;
}

export interface BuiltinFolderStatus {
  folder: string;
  plugin_id?: string;
  type?: PluginType;
  state: 'loaded' | 'error';
  error?: string;
}

export interface BuiltinLoader {
  readonly adapter: InlineAdapter;
  /** Scans every folder, registers what it finds, prunes built-ins whose folder is gone, starts watching. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Re-reads one plugin folder now (absolute path or a folder name under `dir`). */
  reload(folder: string): Promise<void>;
  /** Resolves when no reload is pending or running (tests, CLI). */
  idle(): Promise<void>;
  status(): BuiltinFolderStatus[];
}

type LoadOutcome = { ok: true; descriptor: PluginDescriptor; loaded?: LoadedBuiltin } | { ok: false; error: string; plugin_id?: string };

export function createBuiltinLoader(options: BuiltinLoaderOptions): BuiltinLoader {
  const log = options.log;
  const registry = options.registry;
  const adapter = options.adapter ?? createInlineAdapter({ log, ...(options.notify ? { notify: options.notify } : {}) });
  const roots = [options.dir, ...(options.extra_dirs ?? [])].map((d) => resolve(d));
  const compiledDir = resolve(options.compiled_dir ?? join(dirname(resolve(options.dir)), 'dist', 'plugins'));
  const debounceMs = options.debounce_ms ?? 200;
  const importTimeoutMs = options.import_timeout_ms ?? 10_000;

  const folders = new Map<string, BuiltinFolderStatus>();
  let stopped = false;

  function folderOwning(pluginId: string, except: string): string | undefined {
    for (const [folder, status] of folders) {
      if (folder !== except && status.plugin_id === pluginId && status.state === 'loaded') return folder;
    }
    return undefined;
  }

  function forget(folder: string): void {
    const previous = folders.get(folder);
    folders.delete(folder);
    if (!previous?.plugin_id || folderOwning(previous.plugin_id, folder)) return;
    adapter.uninstall(previous.plugin_id);
    const record = registry.get(previous.plugin_id);
    if (record && record.owner === BUILTIN_OWNER) {
      const outcome = registry.unregister(previous.plugin_id, BUILTIN_OWNER);
      if (outcome.ok) log.info({ plugin_id: previous.plugin_id, folder }, `Unloaded built-in plugin ${previous.plugin_id}`);
    }
  }

  function markError(folder: string, error: string, pluginId: string | undefined): void {
    const previous = folders.get(folder);
    if (previous?.plugin_id && previous.plugin_id !== pluginId) forget(folder);
    const id = pluginId && isPluginId(pluginId) ? pluginId : undefined;
    folders.set(folder, { folder, state: 'error', error, ...(id ? { plugin_id: id } : {}) });
    log.error({ folder, plugin_id: id, reason: error }, `Failed to load built-in plugin ${id ?? basename(folder)}: ${error}`);
    if (!id) return;
    if (folderOwning(id, folder)) return; // another folder serves this id; do not break it
    adapter.uninstall(id);
    const existing = registry.get(id);
    if (existing) {
      if (existing.owner === BUILTIN_OWNER) registry.setState(id, 'error', error);
      return;
    }
    // Why register a placeholder: the failure must be visible in the registry (listing, status),
    // and state 'error' keeps it from being routed to.
    const placeholder: PluginDescriptor = {
      id,
      name: id,
      description: `Built-in plugin ${id} failed to load: ${error}`,
      capabilities: [],
      source: 'built-in',
      type: 'inline',
      config: { plugin_dir: folder },
    };
    const outcome = registry.register({ descriptor: placeholder, owner: BUILTIN_OWNER, state: 'error', state_reason: error });
    if (!outcome.ok) log.warn({ plugin_id: id, errors: outcome.errors }, 'could not record the failed built-in plugin in the registry');
  }

  async function loadFolder(folder: string): Promise<void> {
    if (stopped) return;
    if (!isDirectory(folder) || !(looksLikePluginFolder(folder, compiledDir) || options.python?.isPluginFolder(folder))) {
      if (folders.has(folder)) forget(folder);
      return;
    }
    let outcome: LoadOutcome;
    try {
      outcome = await readPluginFolder(folder);
    } catch (err) {
      const message = errorMessage(err);
      outcome = { ok: false, error: message, ...(err instanceof LoadError && err.plugin_id ? { plugin_id: err.plugin_id } : {}) };
    }
    if (stopped) {
      if (outcome.ok) await outcome.loaded?.dispose?.();
      return;
    }
    if (!outcome.ok) {
      markError(folder, outcome.error, outcome.plugin_id ?? guessIdFromFolder(folder));
      return;
    }
    const { descriptor, loaded } = outcome;
    const other = folderOwning(descriptor.id, folder);
    if (other) {
      await loaded?.dispose?.();
      markError(folder, `plugin id "${descriptor.id}" is already used by the plugin folder ${other}`, undefined);
      return;
    }
    const previous = folders.get(folder);
    if (previous?.plugin_id && previous.plugin_id !== descriptor.id) forget(folder);

    if (loaded) adapter.install(loaded);
    else adapter.uninstall(descriptor.id);
    const result = registry.register({ descriptor, owner: BUILTIN_OWNER, state: 'online' });
    if (!result.ok) {
      if (loaded) adapter.uninstall(descriptor.id);
      const detail = formatIssues(result.errors);
      folders.set(folder, { folder, state: 'error', error: detail, plugin_id: descriptor.id, type: descriptor.type });
      log.error({ folder, plugin_id: descriptor.id, errors: result.errors }, `Failed to register built-in plugin ${descriptor.id}: ${detail}`);
      return;
    }
    // A record left in 'error' by an earlier broken version must come back once the folder is fixed.
    if (result.record.state !== 'online') registry.setState(descriptor.id, 'online', 'loaded');
    folders.set(folder, { folder, state: 'loaded', plugin_id: descriptor.id, type: descriptor.type });
    log.info(
      { plugin_id: descriptor.id, version: descriptor.version, type: descriptor.type, folder },
      `Loaded built-in plugin ${descriptor.id} ${descriptor.version ?? 'unversioned'}`,
    );
  }

  async function readPluginFolder(folder: string): Promise<LoadOutcome> {
    const manifestFile = firstExisting(folder, MANIFEST_FILES);
    const manifest = manifestFile ? readObjectFile(manifestFile) : undefined;
    const configChoice = pluginConfigFile(folder, manifest);
    if (!configChoice.ok) throw new LoadError(configChoice.error, idOf(manifest));
    const configFile = configChoice.path;
    const fileConfig = configFile ? readObjectFile(configFile) : undefined;
    const manifestId = idOf(manifest) ?? (manifest ? undefined : idOf(fileConfig));
    const hasJsModule = firstExisting(folder, [...MODULE_FILES, 'index.ts']) !== undefined || existsSync(join(compiledDir, basename(folder), 'index.js'));
    if (options.python?.claims({ folder, manifest, has_js_module: hasJsModule })) {
      return options.python.load({
        folder,
        manifest,
        ...(manifestFile ? { manifest_file: manifestFile } : {}),
        ...(fileConfig ? { file_config: fileConfig } : {}),
      });
    }

    let raw: Record<string, unknown>;
    let runtimeConfig: Record<string, unknown>;
    let moduleExports: Record<string, unknown> | undefined;
    if (manifest) {
      raw = manifest;
      runtimeConfig = fileConfig ?? {};
    } else if (fileConfig && (fileConfig.id !== undefined || fileConfig.plugin_id !== undefined)) {
      ({ raw, runtimeConfig } = legacyManifest(fileConfig));
    } else {
      // No manifest: the module may describe itself (RAGFlow getMetadata()).
      moduleExports = await importModule(folder, undefined, compiledDir, importTimeoutMs);
      const ragflow = findRagflowClass(moduleExports);
      if (!ragflow) {
        throw new LoadError('no plugin.yaml, plugin.json or config.yml with an id, and the module exports no class with getMetadata()');
      }
      raw = ragflowMetadata(ragflow);
      runtimeConfig = fileConfig ?? {};
    }

    const declaredConfig = isPlainObject(raw.config) ? raw.config : {};
    const config = mergeConfig(mergeConfig(declaredConfig, runtimeConfig), { plugin_dir: folder });
    const normalized = normalizeDescriptor({ ...raw, config }, { source: 'built-in', default_type: 'inline' });
    if (!normalized.ok) {
      const detail = formatIssues(normalized.errors);
      throw new LoadError(`${manifestFile ? basename(manifestFile) : 'plugin metadata'} is invalid: ${detail}`, manifestId);
    }
    const descriptor: PluginDescriptor = {
      ...normalized.descriptor,
      source: 'built-in',
      config: mergeConfig(normalized.descriptor.config as Record<string, unknown>, config) as PluginConfig,
    };
    if (descriptor.type !== 'inline') {
      const problems = (await options.check_targets?.(descriptor)) ?? [];
      if (problems.length > 0) throw new LoadError(formatIssues(problems), descriptor.id);
      return { ok: true, descriptor };
    }

    const dataDir = join(resolve(options.data_dir), 'plugins', descriptor.id);
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    try {
      moduleExports ??= await importModule(folder, typeof config.module === 'string' ? config.module : undefined, compiledDir, importTimeoutMs);
      const loaded = bindHandlers(moduleExports, descriptor, {
        plugin_id: descriptor.id,
        data_dir: dataDir,
        log: log.child({ plugin_id: descriptor.id }),
        config: descriptor.config,
        notify: notifyFor(options, descriptor.id),
      });
      return { ok: true, descriptor, loaded };
    } catch (err) {
      throw new LoadError(errorMessage(err), descriptor.id);
    }
  }

  function pruneVanished(): void {
    const present = new Set([...folders.values()].map((s) => s.plugin_id).filter((id): id is string => !!id));
    for (const record of registry.list()) {
      if (record.owner !== BUILTIN_OWNER || present.has(record.descriptor.id) || options.keep_record?.(record)) continue;
      const outcome = registry.unregister(record.descriptor.id, BUILTIN_OWNER);
      if (outcome.ok) log.info({ plugin_id: record.descriptor.id }, `Removed built-in plugin ${record.descriptor.id}: its folder is gone`);
    }
  }

  const watcher = new PluginFolderWatcher({ roots, compiledDir, debounce_ms: debounceMs, log, load: loadFolder });

  return {
    adapter,
    async start() {
      stopped = false;
      for (const root of roots) {
        if (!isDirectory(root)) {
          log.warn({ dir: root }, 'built-in plugins folder does not exist');
          continue;
        }
        for (const entry of readdirSync(root, { withFileTypes: true })) {
          if (!entry.isDirectory() || ignoredName(entry.name)) continue;
          await watcher.enqueue(join(root, entry.name));
        }
      }
      pruneVanished();
      if (!options.hot_reload) return;
      await watcher.watch();
    },
    async stop() {
      stopped = true;
      await watcher.stop();
      await adapter.stop?.();
    },
    reload(folder) {
      const absolute = isAbsolute(folder) ? folder : join(roots[0]!, folder);
      return watcher.enqueue(absolute);
    },
    idle() {
      return watcher.idle();
    },
    status() {
      return [...folders.values()].map((s) => ({ ...s }));
    },
  };
}
