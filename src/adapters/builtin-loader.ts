// Finds built-in plugins in plugin folders (plugins/<id>/), loads their modules into the inline
// adapter and registers them (owner 'builtin', source 'built-in'). Folders may also carry http,
// subprocess or mcp manifests (seed 001 §4): those are registered too and reached by their adapters.
// Hot reload: chokidar watches the folders; a change re-reads one folder (debounced, serialised per
// folder) and re-imports its module with a cache-busting query so the new code is used. A folder that
// fails to load is logged and its id put in state 'error'; nothing here ever throws out to the Core.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { watch, type FSWatcher } from 'chokidar';
import { parse as parseYaml } from 'yaml';
import type { Logger } from '../log.js';
import { normalizeDescriptor } from '../protocol/descriptor/normalize.js';
import { isPluginId } from '../protocol/ids.js';
import type { JsonObject, PluginConfig, PluginDescriptor, PluginType } from '../protocol/types.js';
import type { RegistryApi } from '../registry/registry-api.js';
import type { PluginRecord } from '../registry/record.js';
import type { PythonFolders } from '../bridges/python/folder-plugins.js';
import { pluginConfigFile } from './plugin-config-file.js';
import type { BuiltinContext, BuiltinInitContext, RagflowToolMetadata } from './builtin-module.js';
import { createInlineAdapter, notifyFor, type InlineAdapter, type InlineAdapterOptions, type LoadedBuiltin } from './inline.js';
import { toJsonValue } from './plugin-result.js';

export const BUILTIN_OWNER = 'builtin';
const MANIFEST_FILES = ['plugin.yaml', 'plugin.yml', 'plugin.json'];
const CONFIG_FILES = ['config.yml', 'config.yaml'];
const MODULE_FILES = ['index.js', 'index.mjs'];
/** Keys of a legacy config.yml that describe the plugin rather than configure it. */
const LEGACY_DESCRIPTOR_KEYS = ['id', 'plugin_id', 'name', 'description', 'description_long', 'version', 'keywords', 'examples', 'parameters'];

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

type LoadOutcome =
  | { ok: true; descriptor: PluginDescriptor; loaded?: LoadedBuiltin }
  | { ok: false; error: string; plugin_id?: string };

class LoadError extends Error {
  constructor(
    message: string,
    readonly plugin_id?: string,
  ) {
    super(message);
  }
}

export function createBuiltinLoader(options: BuiltinLoaderOptions): BuiltinLoader {
  const log = options.log;
  const registry = options.registry;
  const adapter = options.adapter ?? createInlineAdapter({ log, ...(options.notify ? { notify: options.notify } : {}) });
  const roots = [options.dir, ...(options.extra_dirs ?? [])].map((d) => resolve(d));
  const compiledDir = resolve(options.compiled_dir ?? join(dirname(resolve(options.dir)), 'dist', 'plugins'));
  const debounceMs = options.debounce_ms ?? 200;
  const importTimeoutMs = options.import_timeout_ms ?? 10_000;

  const folders = new Map<string, BuiltinFolderStatus>();
  const chains = new Map<string, Promise<void>>();
  const timers = new Map<string, NodeJS.Timeout>();
  let watcher: FSWatcher | undefined;
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
      const message = err instanceof Error ? err.message : String(err);
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
      const detail = result.errors.map((e) => `${e.path || '/'}: ${e.message}`).join('; ');
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
      return options.python.load({ folder, manifest, ...(manifestFile ? { manifest_file: manifestFile } : {}), ...(fileConfig ? { file_config: fileConfig } : {}) });
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
      moduleExports = await importModule(folder, undefined);
      const ragflow = findRagflowClass(moduleExports);
      if (!ragflow) {
        throw new LoadError('no plugin.yaml, plugin.json or config.yml with an id, and the module exports no class with getMetadata()');
      }
      raw = ragflowMetadata(ragflow);
      runtimeConfig = fileConfig ?? {};
    }

    const declaredConfig = isObject(raw.config) ? raw.config : {};
    const config = mergeConfig(mergeConfig(declaredConfig, runtimeConfig), { plugin_dir: folder });
    const normalized = normalizeDescriptor({ ...raw, config }, { source: 'built-in', default_type: 'inline' });
    if (!normalized.ok) {
      const detail = normalized.errors.map((e) => `${e.path || '/'}: ${e.message}`).join('; ');
      throw new LoadError(`${manifestFile ? basename(manifestFile) : 'plugin metadata'} is invalid: ${detail}`, manifestId);
    }
    const descriptor: PluginDescriptor = {
      ...normalized.descriptor,
      source: 'built-in',
      config: mergeConfig(normalized.descriptor.config as Record<string, unknown>, config) as PluginConfig,
    };
    if (descriptor.type !== 'inline') {
      const problems = (await options.check_targets?.(descriptor)) ?? [];
      if (problems.length > 0) throw new LoadError(problems.map((p) => `${p.path}: ${p.message}`).join('; '), descriptor.id);
      return { ok: true, descriptor };
    }

    const dataDir = join(resolve(options.data_dir), 'plugins', descriptor.id);
    mkdirSync(dataDir, { recursive: true });
    try {
      moduleExports ??= await importModule(folder, typeof config.module === 'string' ? config.module : undefined);
      const loaded = bindHandlers(moduleExports, descriptor, {
        plugin_id: descriptor.id,
        data_dir: dataDir,
        log: log.child({ plugin_id: descriptor.id }),
        config: descriptor.config,
        notify: notifyFor(options, descriptor.id),
      });
      return { ok: true, descriptor, loaded };
    } catch (err) {
      throw new LoadError(err instanceof Error ? err.message : String(err), descriptor.id);
    }
  }

  async function importModule(folder: string, declared: string | undefined): Promise<Record<string, unknown>> {
    const file = resolveModuleFile(folder, declared, compiledDir);
    // Why not "?v=": vite (vitest) strips that query as its own version hash, so reloads would be cached.
    const url = `${pathToFileURL(file).href}?mtime=${Math.floor(statSync(file).mtimeMs)}`;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`importing ${file} did not finish within ${importTimeoutMs} ms`)), importTimeoutMs);
    });
    try {
      return (await Promise.race([import(url), timeout])) as Record<string, unknown>;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code === 'ERR_UNKNOWN_FILE_EXTENSION' && file.endsWith('.ts')) {
        throw new Error(`${file} is TypeScript and has not been compiled: run "npm run build" (expected ${join(compiledDir, basename(folder), 'index.js')})`);
      }
      throw new Error(`importing ${file} failed: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  function schedule(folder: string): void {
    if (stopped) return;
    const pending = timers.get(folder);
    if (pending) clearTimeout(pending);
    timers.set(
      folder,
      setTimeout(() => {
        timers.delete(folder);
        void enqueue(folder);
      }, debounceMs),
    );
  }

  function enqueue(folder: string): Promise<void> {
    const previous = chains.get(folder) ?? Promise.resolve();
    const next = previous
      .then(() => loadFolder(folder))
      .catch((err: unknown) => log.error({ err, folder }, 'built-in plugin reload failed'));
    chains.set(folder, next);
    void next.finally(() => {
      if (chains.get(folder) === next) chains.delete(folder);
    });
    return next;
  }

  /** Maps a watched path to the plugin folder it belongs to. */
  function folderOfPath(path: string): string | undefined {
    const absolute = resolve(path);
    for (const root of [...roots, compiledDir]) {
      const rel = relative(root, absolute);
      if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) continue;
      const name = rel.split(sep)[0]!;
      // Compiled modules belong to the folder of the same name in the main plugins dir.
      return root === compiledDir ? join(roots[0]!, name) : join(root, name);
    }
    return undefined;
  }

  function pruneVanished(): void {
    const present = new Set([...folders.values()].map((s) => s.plugin_id).filter((id): id is string => !!id));
    for (const record of registry.list()) {
      if (record.owner !== BUILTIN_OWNER || present.has(record.descriptor.id) || options.keep_record?.(record)) continue;
      const outcome = registry.unregister(record.descriptor.id, BUILTIN_OWNER);
      if (outcome.ok) log.info({ plugin_id: record.descriptor.id }, `Removed built-in plugin ${record.descriptor.id}: its folder is gone`);
    }
  }

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
          await enqueue(join(root, entry.name));
        }
      }
      pruneVanished();
      if (!options.hot_reload) return;
      const watched = [...roots.filter(isDirectory), ...(isDirectory(compiledDir) ? [compiledDir] : [])];
      if (watched.length === 0) return;
      watcher = watch(watched, {
        ignoreInitial: true,
        depth: 4,
        ignored: (path: string) => ignoredPath(path, [...roots, compiledDir]),
      });
      const onEvent = (path: string): void => {
        const folder = folderOfPath(path);
        if (folder) schedule(folder);
      };
      watcher.on('all', (_event, path) => onEvent(path));
      watcher.on('error', (err) => log.warn({ err }, 'plugin folder watcher error'));
      await new Promise<void>((ready) => watcher!.once('ready', () => ready()));
    },
    async stop() {
      stopped = true;
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      await watcher?.close();
      watcher = undefined;
      await Promise.allSettled([...chains.values()]);
      await adapter.stop?.();
    },
    reload(folder) {
      const absolute = isAbsolute(folder) ? folder : join(roots[0]!, folder);
      return enqueue(absolute);
    },
    async idle() {
      for (;;) {
        const pending = [...chains.values()];
        if (pending.length === 0 && timers.size === 0) return;
        if (pending.length > 0) await Promise.allSettled(pending);
        else await new Promise((r) => setTimeout(r, debounceMs));
      }
    },
    status() {
      return [...folders.values()].map((s) => ({ ...s }));
    },
  };
}

// ---- reading folders -------------------------------------------------------------------------

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function ignoredName(name: string): boolean {
  return name.startsWith('.') || name.startsWith('_') || name === 'node_modules';
}

function ignoredPath(path: string, roots: string[]): boolean {
  const absolute = resolve(path);
  for (const root of roots) {
    const rel = relative(root, absolute);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) continue;
    const parts = rel.split(sep);
    if (parts.some(ignoredName)) return true;
    // Plugins' own data files (SQLite journals...) must not trigger reloads.
    return /\.(db|sqlite|sqlite3|log)(-journal|-wal|-shm)?$/.test(absolute);
  }
  return false;
}

function looksLikePluginFolder(folder: string, compiledDir: string): boolean {
  return (
    firstExisting(folder, [...MANIFEST_FILES, ...CONFIG_FILES, ...MODULE_FILES, 'index.ts']) !== undefined ||
    existsSync(join(compiledDir, basename(folder), 'index.js'))
  );
}

function firstExisting(folder: string, names: string[]): string | undefined {
  for (const name of names) {
    const path = join(folder, name);
    if (existsSync(path)) return path;
  }
  return undefined;
}

function guessIdFromFolder(folder: string): string | undefined {
  const name = basename(folder);
  return isPluginId(name) ? name : undefined;
}

function idOf(value: Record<string, unknown> | undefined): string | undefined {
  if (!value) return undefined;
  const id = value.id ?? value.plugin_id;
  return typeof id === 'string' && isPluginId(id) ? id : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads YAML or JSON that must hold a mapping; errors name the file and the line. */
function readObjectFile(path: string): Record<string, unknown> {
  const text = readFileSync(path, 'utf8');
  let value: unknown;
  try {
    value = path.endsWith('.json') ? (JSON.parse(text) as unknown) : parseYaml(text);
  } catch (err) {
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new LoadError(`${basename(path)} is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${message}`);
  }
  if (value === null || value === undefined) return {};
  if (!isObject(value)) throw new LoadError(`${basename(path)} must hold a mapping (key: value pairs)`);
  return value;
}

/** A legacy config.yml (id, description, default parameters) becomes a one-capability manifest. */
function legacyManifest(fileConfig: Record<string, unknown>): { raw: Record<string, unknown>; runtimeConfig: Record<string, unknown> } {
  const id = fileConfig.id ?? fileConfig.plugin_id;
  const description = fileConfig.description;
  const raw: Record<string, unknown> = { id, name: fileConfig.name ?? id, description };
  for (const key of ['description_long', 'version', 'keywords', 'examples']) {
    if (fileConfig[key] !== undefined) raw[key] = fileConfig[key];
  }
  const runtimeConfig: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fileConfig)) {
    if (!LEGACY_DESCRIPTOR_KEYS.includes(key)) runtimeConfig[key] = value;
  }
  // Legacy `parameters` are either parameter specs (a list) or default values (a mapping).
  const parameters = Array.isArray(fileConfig.parameters) ? fileConfig.parameters : [];
  if (isObject(fileConfig.parameters)) {
    runtimeConfig.default_parameters = { ...fileConfig.parameters, ...(isObject(runtimeConfig.default_parameters) ? runtimeConfig.default_parameters : {}) };
  }
  // Without a parameter list the normaliser's single-entry-point capability "run" (user_input) fits.
  if (parameters.length > 0) raw.capabilities = [{ id: 'run', name: String(fileConfig.name ?? id), description, parameters }];
  return { raw, runtimeConfig };
}

/** Merges plugin config objects; per-capability defaults merge by capability id. */
export function mergeConfig(base: Record<string, unknown>, overlay: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    const current = merged[key];
    if ((key === 'capabilities' || key === 'default_parameters') && isObject(current) && isObject(value)) {
      const inner: Record<string, unknown> = { ...current };
      for (const [k, v] of Object.entries(value)) inner[k] = isObject(inner[k]) && isObject(v) ? { ...inner[k], ...v } : v;
      merged[key] = inner;
    } else {
      merged[key] = value;
    }
  }
  return (toJsonValue(merged) ?? {}) as Record<string, unknown>;
}

function resolveModuleFile(folder: string, declared: string | undefined, compiledDir: string): string {
  if (declared) {
    const path = resolve(folder, declared);
    if (!path.startsWith(folder + sep)) throw new Error(`config.module "${declared}" points outside the plugin folder`);
    if (!existsSync(path)) throw new Error(`config.module "${declared}" does not exist`);
    return path;
  }
  const local = firstExisting(folder, MODULE_FILES);
  if (local) return local;
  const compiled = join(compiledDir, basename(folder), 'index.js');
  if (existsSync(compiled)) return compiled;
  // Only loadable by a TypeScript-aware runtime (vitest, tsx); importModule explains otherwise.
  const source = join(folder, 'index.ts');
  if (existsSync(source)) return source;
  throw new Error(`no module found: expected index.js or index.mjs in the folder, or ${compiled}`);
}

// ---- binding module exports to capabilities --------------------------------------------------

type AnyFunction = (...args: unknown[]) => unknown;
type Constructor = new (...args: unknown[]) => Record<string, unknown>;

function isClass(value: unknown): value is Constructor {
  return typeof value === 'function' && /^class[\s{]/.test(Function.prototype.toString.call(value));
}

function isPlainFunction(value: unknown): value is AnyFunction {
  return typeof value === 'function' && !isClass(value);
}

function exportedClasses(mod: Record<string, unknown>): Constructor[] {
  const classes: Constructor[] = [];
  if (isClass(mod.default)) classes.push(mod.default);
  for (const [key, value] of Object.entries(mod)) if (key !== 'default' && isClass(value) && !classes.includes(value)) classes.push(value);
  return classes;
}

function findRagflowClass(mod: Record<string, unknown>): Constructor | undefined {
  return exportedClasses(mod).find((cls) => {
    const proto = cls.prototype as Record<string, unknown>;
    const hasMetadata = typeof (cls as unknown as Record<string, unknown>).getMetadata === 'function' || typeof proto.getMetadata === 'function';
    return hasMetadata && typeof proto.invoke === 'function';
  });
}

function ragflowMetadata(cls: Constructor): Record<string, unknown> {
  const statics = cls as unknown as Record<string, unknown>;
  const getMetadata = typeof statics.getMetadata === 'function' ? (statics.getMetadata as () => unknown).bind(cls) : () => (new cls() as { getMetadata(): unknown }).getMetadata();
  let metadata: unknown;
  try {
    metadata = getMetadata();
  } catch (err) {
    throw new LoadError(`getMetadata() threw: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!isObject(metadata)) throw new LoadError('getMetadata() must return an object');
  const version = metadata.version ?? statics._version_ ?? statics.version;
  return { ...(metadata as RagflowToolMetadata), ...(typeof version === 'string' ? { version } : {}) };
}

function camelCase(id: string): string {
  return id.replace(/[_-]([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function bindHandlers(mod: Record<string, unknown>, descriptor: PluginDescriptor, init: BuiltinInitContext): LoadedBuiltin {
  const instances: Record<string, unknown>[] = [];
  const instantiate = (cls: Constructor): Record<string, unknown> => {
    try {
      const instance = new cls(init);
      instances.push(instance);
      return instance;
    } catch (err) {
      throw new Error(`constructing ${cls.name || 'the plugin class'} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  const dispose = async (): Promise<void> => {
    for (const instance of instances) if (typeof instance.dispose === 'function') await (instance.dispose as () => unknown)();
  };
  const base = { plugin_id: descriptor.id, data_dir: init.data_dir, dispose };

  const ragflow = findRagflowClass(mod);
  if (ragflow) {
    const instance = instantiate(ragflow);
    return {
      ...base,
      async call(capabilityId: string, params: JsonObject, ctx: BuiltinContext) {
        const own = instance[capabilityId];
        if (typeof own === 'function' && capabilityId !== 'getMetadata') return (own as AnyFunction).call(instance, params, ctx);
        return (instance.invoke as AnyFunction).call(instance, params, ctx);
      },
    };
  }

  const defaultObject = isObject(mod.default) ? mod.default : undefined;
  const handlers = new Map<string, AnyFunction>();
  const missing: string[] = [];
  let classInstance: Record<string, unknown> | undefined;
  const classes = exportedClasses(mod);
  for (const capability of descriptor.capabilities) {
    const names = [...new Set([capability.id, camelCase(capability.id)])];
    let handler: AnyFunction | undefined;
    for (const name of names) {
      const named = mod[name];
      if (isPlainFunction(named)) handler = named;
      else if (defaultObject && isPlainFunction(defaultObject[name])) handler = (defaultObject[name] as AnyFunction).bind(defaultObject);
      if (handler) break;
    }
    if (!handler) {
      const cls = classes.find((c) => names.some((n) => typeof (c.prototype as Record<string, unknown>)[n] === 'function'));
      if (cls) {
        classInstance ??= instantiate(cls);
        const name = names.find((n) => typeof classInstance![n] === 'function');
        if (name) handler = (classInstance[name] as AnyFunction).bind(classInstance);
      }
    }
    if (handler) handlers.set(capability.id, handler);
    else missing.push(capability.id);
  }
  if (missing.length > 0) {
    throw new Error(`the module exports no function or class method for capability ${missing.map((m) => `"${m}"`).join(', ')}`);
  }
  return {
    ...base,
    async call(capabilityId: string, params: JsonObject, ctx: BuiltinContext) {
      const handler = handlers.get(capabilityId);
      if (!handler) throw new Error(`unknown capability ${capabilityId}`);
      return handler(params, ctx);
    },
  };
}
