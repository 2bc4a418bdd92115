// Hot reload of plugin folders: chokidar watches the plugin roots (and the compiled modules); a change
// re-reads the one folder it belongs to, debounced, and loads of one folder never overlap (they are
// queued per folder). Plugins' own data files and hidden folders never trigger a reload.
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Logger } from '../log.js';
import { ignoredName, isDirectory } from './builtin-manifest.js';

export interface PluginFolderWatcherOptions {
  /** The plugin roots; the first is the main plugins dir, home of compiled modules' folders. */
  roots: string[];
  /** Where compiled plugin modules live (<compiledDir>/<folder name>/index.js). */
  compiledDir: string;
  debounce_ms: number;
  log: Logger;
  /** Loads one folder; called one at a time per folder. */
  load(folder: string): Promise<void>;
}

export class PluginFolderWatcher {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private watcher: FSWatcher | undefined;
  private stopped = false;

  constructor(private readonly options: PluginFolderWatcherOptions) {}

  /** Loads a folder after any load of it already queued; never rejects. */
  enqueue(folder: string): Promise<void> {
    const previous = this.chains.get(folder) ?? Promise.resolve();
    const next = previous
      .then(() => this.options.load(folder))
      .catch((err: unknown) => this.options.log.error({ err, folder }, 'built-in plugin reload failed'));
    this.chains.set(folder, next);
    void next.finally(() => {
      if (this.chains.get(folder) === next) this.chains.delete(folder);
    });
    return next;
  }

  /** Starts watching the roots that exist; resolves once chokidar has scanned them. */
  async watch(): Promise<void> {
    this.stopped = false;
    const { roots, compiledDir } = this.options;
    const watched = [...roots.filter(isDirectory), ...(isDirectory(compiledDir) ? [compiledDir] : [])];
    if (watched.length === 0) return;
    const watcher = watch(watched, {
      ignoreInitial: true,
      depth: 4,
      ignored: (path: string) => ignoredPath(path, [...roots, compiledDir]),
    });
    this.watcher = watcher;
    const onEvent = (path: string): void => {
      const folder = this.folderOfPath(path);
      if (folder) this.schedule(folder);
    };
    watcher.on('all', (_event, path) => onEvent(path));
    watcher.on('error', (err) => this.options.log.warn({ err }, 'plugin folder watcher error'));
    await new Promise<void>((ready) => watcher.once('ready', () => ready()));
  }

  /** Stops watching, drops pending reloads and waits for running ones. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await this.watcher?.close();
    this.watcher = undefined;
    await Promise.allSettled([...this.chains.values()]);
  }

  /** Resolves when no reload is pending or running. */
  async idle(): Promise<void> {
    for (;;) {
      const pending = [...this.chains.values()];
      if (pending.length === 0 && this.timers.size === 0) return;
      if (pending.length > 0) await Promise.allSettled(pending);
      else await new Promise((r) => setTimeout(r, this.options.debounce_ms));
    }
  }

  private schedule(folder: string): void {
    if (this.stopped) return;
    const pending = this.timers.get(folder);
    if (pending) clearTimeout(pending);
    this.timers.set(
      folder,
      setTimeout(() => {
        this.timers.delete(folder);
        void this.enqueue(folder);
      }, this.options.debounce_ms),
    );
  }

  /** Maps a watched path to the plugin folder it belongs to. */
  private folderOfPath(path: string): string | undefined {
    const { roots, compiledDir } = this.options;
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
