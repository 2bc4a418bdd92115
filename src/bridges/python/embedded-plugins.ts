// RAGFlow's plugin layout: every Python file under `embedded_plugins/` (in the plugins dir and each extra
// plugin dir), at any depth (RAGFlow groups them by type: embedded_plugins/llm_tools/bad_calculator.py), is
// imported and each LLM tool class in it (LLMToolPlugin subclass, or get_metadata() + invoke()) becomes a
// built-in plugin whose id is its tool name. One Python host serves one file. Files are watched: adding,
// changing or deleting one reloads just that file. A file that fails to load leaves its plugins in state
// error with the reason (a placeholder named after the file when none loaded before).
import { existsSync, readdirSync, statSync, type Dirent } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Logger } from '../../log.js';
import { isPluginId } from '../../protocol/ids.js';
import type { PluginDescriptor } from '../../protocol/types.js';
import type { PluginRecord } from '../../registry/record.js';
import type { RegistryApi } from '../../registry/registry-api.js';
import type { PythonAdapter, PythonRoute } from './adapter.js';
import { buildChildEnvReport } from '../../adapters/child-env.js';
import { embeddedDescriptor } from './descriptor.js';
import { DEFAULT_PYTHON } from './folder-plugins.js';
import { PYTHON_HOST_PROTOCOL } from './protocol.js';
import { PythonSupervisor, type SupervisorSettings } from './supervisor.js';
import { formatIssues } from '../../kit/format-issues.js';

export const EMBEDDED_DIR = 'embedded_plugins';
const OWNER = 'builtin';

/** Records registered from embedded_plugins/ carry their file in config.embedded_file. */
export function isEmbeddedPythonRecord(record: PluginRecord): boolean {
  return typeof record.descriptor.config.embedded_file === 'string';
}

export interface EmbeddedFileStatus {
  file: string;
  plugin_ids: string[];
  pids: number[];
  errors: { plugin_id?: string; error: string }[];
}

export interface EmbeddedPythonPlugins {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Re-reads one file now. */
  reload(file: string): Promise<void>;
  /** Resolves when no reload is pending or running. */
  idle(): Promise<void>;
  status(): EmbeddedFileStatus[];
}

export interface EmbeddedPythonPluginsDeps {
  roots: string[];
  adapter: PythonAdapter;
  registry: RegistryApi;
  log: Logger;
  hot_reload: boolean;
  settings: SupervisorSettings;
  debounce_ms?: number;
  env?: NodeJS.ProcessEnv;
}

interface LoadedFile {
  supervisor: PythonSupervisor | undefined;
  routes: Map<string, PythonRoute>;
  errors: { plugin_id?: string; error: string }[];
}

function ignoredName(name: string): boolean {
  return name.startsWith('.') || name.startsWith('_') || name === 'node_modules';
}

function pythonFiles(dir: string): string[] {
  const found: string[] = [];
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (ignoredName(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...pythonFiles(path));
    else if (entry.isFile() && entry.name.endsWith('.py')) found.push(path);
  }
  return found;
}

export function createEmbeddedPythonPlugins(deps: EmbeddedPythonPluginsDeps): EmbeddedPythonPlugins {
  const { adapter, registry, settings } = deps;
  const log = deps.log.child({ component: 'embedded-python-plugins' });
  const dirs = deps.roots.map((root) => join(resolve(root), EMBEDDED_DIR));
  const debounceMs = deps.debounce_ms ?? 200;
  const files = new Map<string, LoadedFile>();
  const chains = new Map<string, Promise<void>>();
  const timers = new Map<string, NodeJS.Timeout>();
  let watcher: FSWatcher | undefined;
  let stopped = false;

  function inEmbeddedDir(path: string): boolean {
    return dirs.some((dir) => {
      const rel = relative(dir, path);
      return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) && !rel.split(sep).some(ignoredName);
    });
  }

  /** The file that registered this id, if it is one of ours. */
  function fileOwning(pluginId: string): string | undefined {
    for (const [file, loaded] of files) if (loaded.routes.has(pluginId)) return file;
    return undefined;
  }

  function idFree(pluginId: string, file: string): boolean {
    const record = registry.get(pluginId);
    if (!record) return true;
    if (record.owner !== OWNER || !isEmbeddedPythonRecord(record)) return false;
    const owner = fileOwning(pluginId);
    return owner === undefined ? record.descriptor.config.embedded_file === file : owner === file;
  }

  function recordError(file: string, pluginId: string | undefined, error: string): void {
    log.error({ file, plugin_id: pluginId, reason: error }, `Failed to load embedded Python plugin ${pluginId ?? basename(file)}: ${error}`);
    if (!pluginId || !isPluginId(pluginId)) return;
    if (!idFree(pluginId, file)) return;
    const existing = registry.get(pluginId);
    if (existing) {
      registry.setState(pluginId, 'error', error);
      return;
    }
    // Registered so the failure shows in listings and status; state error keeps it from being routed to.
    const placeholder: PluginDescriptor = {
      id: pluginId,
      name: pluginId,
      description: `Python plugin ${pluginId} failed to load: ${error}`,
      capabilities: [],
      source: 'built-in',
      type: 'python',
      config: { embedded_file: file, plugin_dir: dirname(file) },
    };
    registry.register({ descriptor: placeholder, owner: OWNER, state: 'error', state_reason: error });
  }

  /** Lets go of a file's previous load: routes, its host, and the ids the new load does not keep. */
  function release(file: string, previous: LoadedFile | undefined, keep: Set<string>): void {
    if (!previous) return;
    const ours = (id: string): boolean =>
      !keep.has(id) && fileOwning(id) === undefined && registry.get(id)?.owner === OWNER && registry.get(id)?.descriptor.config.embedded_file === file;
    for (const [id, route] of previous.routes) {
      adapter.unbind(id, route);
      if (ours(id) && registry.unregister(id, OWNER).ok) log.info({ plugin_id: id, file }, `Unloaded embedded Python plugin ${id}`);
    }
    for (const { plugin_id } of previous.errors) if (plugin_id && ours(plugin_id)) registry.unregister(plugin_id, OWNER);
    previous.supervisor?.retire();
  }

  async function loadFile(file: string): Promise<void> {
    if (stopped) return;
    const previous = files.get(file);
    if (!existsSync(file)) {
      files.delete(file);
      release(file, previous, new Set());
      return;
    }
    const stem = basename(file, '.py');
    const loaded: LoadedFile = { supervisor: undefined, routes: new Map(), errors: [] };
    const { env } = buildChildEnvReport(undefined, deps.env ?? process.env);
    const supervisor = new PythonSupervisor({
      label: `python file ${basename(dirname(file))}/${basename(file)}`,
      launch: {
        python: DEFAULT_PYTHON,
        cwd: dirname(file),
        env,
        init: { type: 'init', protocol: PYTHON_HOST_PROTOCOL, mode: 'file', plugin_dir: dirname(file), module: file, class: null, config: {}, manifest: null },
      },
      registry,
      pluginIds: () => [...loaded.routes.keys()],
      log: log.child({ file }),
      settings,
    });
    adapter.track(supervisor);
    const started = await supervisor.start();
    if (stopped) return void (await supervisor.stop());
    if (!started.ok) {
      // The file's old code is gone from disk, so its host ends too; its plugins stay listed, in state error.
      const ids = previous && previous.routes.size > 0 ? [...previous.routes.keys()] : [stem];
      files.set(file, { supervisor: undefined, routes: new Map(), errors: ids.map((id) => ({ plugin_id: id, error: started.error })) });
      release(file, previous, new Set(ids));
      for (const id of ids) recordError(file, id, started.error);
      return;
    }
    loaded.supervisor = supervisor;
    for (const skipped of started.hello.skipped) log.info({ file, class: skipped.class }, `skipped ${skipped.class}: ${skipped.reason}`);
    for (const plugin of started.hello.plugins) {
      const outcome = embeddedDescriptor(plugin, { embedded_file: file, plugin_dir: dirname(file), module: basename(file), class: plugin.class });
      if (!outcome.ok) {
        loaded.errors.push({ plugin_id: outcome.plugin_id ?? stem, error: outcome.error });
        continue;
      }
      const descriptor = outcome.descriptor;
      if (loaded.routes.has(descriptor.id) || !idFree(descriptor.id, file)) {
        loaded.errors.push({ error: `plugin id "${descriptor.id}" of ${plugin.class} is already used by another plugin` });
        continue;
      }
      const result = registry.register({ descriptor, owner: OWNER, state: 'online' });
      if (!result.ok) {
        loaded.errors.push({ plugin_id: descriptor.id, error: formatIssues(result.errors) });
        continue;
      }
      if (result.record.state !== 'online') registry.setState(descriptor.id, 'online', 'loaded');
      const route: PythonRoute = { supervisor, target: plugin.class };
      adapter.bind(descriptor.id, route);
      loaded.routes.set(descriptor.id, route);
      if (!plugin.has_version_attribute) log.warn({ file }, `${plugin.class} has no _version_ (RAGFlow requires one)`);
      log.info(
        { plugin_id: descriptor.id, version: descriptor.version, file },
        `Loaded built-in plugin ${descriptor.id} ${descriptor.version ?? 'unversioned'}`,
      );
    }
    files.set(file, loaded);
    release(file, previous, new Set(loaded.routes.keys()));
    for (const error of loaded.errors) recordError(file, error.plugin_id, error.error);
    if (loaded.routes.size === 0) {
      if (started.hello.plugins.length === 0) log.warn({ file }, `no LLM tool plugin class in ${file}`);
      loaded.supervisor = undefined;
      await supervisor.stop();
    }
  }

  function enqueue(file: string): Promise<void> {
    const next = (chains.get(file) ?? Promise.resolve())
      .then(() => loadFile(file))
      .catch((err: unknown) => log.error({ err, file }, 'embedded Python plugin reload failed'));
    chains.set(file, next);
    void next.finally(() => {
      if (chains.get(file) === next) chains.delete(file);
    });
    return next;
  }

  function schedule(file: string): void {
    if (stopped) return;
    clearTimeout(timers.get(file));
    timers.set(
      file,
      setTimeout(() => {
        timers.delete(file);
        void enqueue(file);
      }, debounceMs),
    );
  }

  function prune(found: Set<string>): void {
    for (const record of registry.list()) {
      const file = record.descriptor.config.embedded_file;
      if (record.owner !== OWNER || typeof file !== 'string' || found.has(file) || !dirs.some((d) => file.startsWith(d + sep))) continue;
      if (registry.unregister(record.descriptor.id, OWNER).ok)
        log.info({ plugin_id: record.descriptor.id }, `Removed embedded Python plugin ${record.descriptor.id}: its file is gone`);
    }
  }

  return {
    async start() {
      stopped = false;
      const found = new Set<string>();
      for (const dir of dirs) {
        if (!existsSync(dir) || !statSync(dir).isDirectory()) continue;
        log.info({ dir }, `Recursively importing plugins from path \`${dir}\``);
        for (const file of pythonFiles(dir)) {
          found.add(file);
          await enqueue(file);
        }
      }
      prune(found);
      if (!deps.hot_reload) return;
      const roots = deps.roots.map((r) => resolve(r)).filter((r) => existsSync(r));
      if (roots.length === 0) return;
      watcher = watch(roots, {
        ignoreInitial: true,
        // Only embedded_plugins/ matters here; the built-in loader watches the plugin folders.
        ignored: (path: string) => !roots.includes(resolve(path)) && !dirs.includes(resolve(path)) && !inEmbeddedDir(resolve(path)),
      });
      watcher.on('all', (event, path) => {
        const absolute = resolve(path);
        if (event === 'unlinkDir') {
          for (const file of files.keys()) if (file.startsWith(absolute + sep)) schedule(file);
        } else if (absolute.endsWith('.py') && inEmbeddedDir(absolute)) {
          schedule(absolute);
        }
      });
      watcher.on('error', (err) => log.warn({ err }, 'embedded_plugins watcher error'));
      await new Promise<void>((ready) => watcher!.once('ready', () => ready()));
    },
    async stop() {
      stopped = true;
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      await watcher?.close();
      watcher = undefined;
      await Promise.allSettled([...chains.values()]);
      await Promise.all([...files.values()].map((f) => f.supervisor?.stop()));
    },
    reload: (file) => enqueue(resolve(file)),
    async idle() {
      for (;;) {
        const pending = [...chains.values()];
        if (pending.length === 0 && timers.size === 0) return;
        if (pending.length > 0) await Promise.allSettled(pending);
        else await new Promise((r) => setTimeout(r, debounceMs));
      }
    },
    status() {
      return [...files].map(([file, f]) => ({ file, plugin_ids: [...f.routes.keys()], pids: f.supervisor?.pids() ?? [], errors: f.errors }));
    },
  };
}
