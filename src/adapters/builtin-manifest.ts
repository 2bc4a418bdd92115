// Reading a plugin folder: which files make it a plugin folder, its manifest (plugin.yaml, plugin.json
// or a legacy config.yml), its config file, and the module that implements it. Errors name the file.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { isPluginId } from '../protocol/ids.js';
import { toJsonValue } from './plugin-result.js';
import { errorMessage } from '../kit/error-message.js';
import { isPlainObject } from '../kit/plain-object.js';

export const MANIFEST_FILES = ['plugin.yaml', 'plugin.yml', 'plugin.json'];
const CONFIG_FILES = ['config.yml', 'config.yaml'];
export const MODULE_FILES = ['index.js', 'index.mjs'];
/** Keys of a legacy config.yml that describe the plugin rather than configure it. */
const LEGACY_DESCRIPTOR_KEYS = ['id', 'plugin_id', 'name', 'description', 'description_long', 'version', 'keywords', 'examples', 'parameters'];

/** A folder that cannot be loaded; plugin_id names the plugin when the folder told it. */
export class LoadError extends Error {
  constructor(
    message: string,
    readonly plugin_id?: string,
  ) {
    super(message);
  }
}

export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export function ignoredName(name: string): boolean {
  return name.startsWith('.') || name.startsWith('_') || name === 'node_modules';
}

export function looksLikePluginFolder(folder: string, compiledDir: string): boolean {
  return (
    firstExisting(folder, [...MANIFEST_FILES, ...CONFIG_FILES, ...MODULE_FILES, 'index.ts']) !== undefined ||
    existsSync(join(compiledDir, basename(folder), 'index.js'))
  );
}

export function firstExisting(folder: string, names: string[]): string | undefined {
  for (const name of names) {
    const path = join(folder, name);
    if (existsSync(path)) return path;
  }
  return undefined;
}

export function guessIdFromFolder(folder: string): string | undefined {
  const name = basename(folder);
  return isPluginId(name) ? name : undefined;
}

export function idOf(value: Record<string, unknown> | undefined): string | undefined {
  if (!value) return undefined;
  const id = value.id ?? value.plugin_id;
  return typeof id === 'string' && isPluginId(id) ? id : undefined;
}

/** Reads YAML or JSON that must hold a mapping; errors name the file and the line. */
export function readObjectFile(path: string): Record<string, unknown> {
  const text = readFileSync(path, 'utf8');
  let value: unknown;
  try {
    value = path.endsWith('.json') ? (JSON.parse(text) as unknown) : parseYaml(text);
  } catch (err) {
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new LoadError(`${basename(path)} is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${message}`);
  }
  if (value === null || value === undefined) return {};
  if (!isPlainObject(value)) throw new LoadError(`${basename(path)} must hold a mapping (key: value pairs)`);
  return value;
}

/** A legacy config.yml (id, description, default parameters) becomes a one-capability manifest. */
export function legacyManifest(fileConfig: Record<string, unknown>): { raw: Record<string, unknown>; runtimeConfig: Record<string, unknown> } {
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
  if (isPlainObject(fileConfig.parameters)) {
    runtimeConfig.default_parameters = {
      ...fileConfig.parameters,
      ...(isPlainObject(runtimeConfig.default_parameters) ? runtimeConfig.default_parameters : {}),
    };
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
    if ((key === 'capabilities' || key === 'default_parameters') && isPlainObject(current) && isPlainObject(value)) {
      const inner: Record<string, unknown> = { ...current };
      for (const [k, v] of Object.entries(value)) inner[k] = isPlainObject(inner[k]) && isPlainObject(v) ? { ...inner[k], ...v } : v;
      merged[key] = inner;
    } else {
      merged[key] = value;
    }
  }
  return (toJsonValue(merged) ?? {}) as Record<string, unknown>;
}

export function resolveModuleFile(folder: string, declared: string | undefined, compiledDir: string): string {
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

/** Imports a plugin module; the mtime query makes a reload use the new code rather than the cached module. */
export async function importModule(
  folder: string,
  declared: string | undefined,
  compiledDir: string,
  importTimeoutMs: number,
): Promise<Record<string, unknown>> {
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
    throw new Error(`importing ${file} failed: ${errorMessage(err)}`);
  } finally {
    clearTimeout(timer);
  }
}
