// Which file holds a plugin folder's runtime config (API keys, default parameters, schedules): the file
// its manifest names in `config.config_file` (a path inside the folder), else config.yml or config.yaml.
import { existsSync, statSync } from 'node:fs';
import { join, relative, resolve, isAbsolute } from 'node:path';
import { isPlainObject } from '../kit/plain-object.js';

export const DEFAULT_CONFIG_FILES = ['config.yml', 'config.yaml'];

export type ConfigFileChoice = { ok: true; path: string | undefined } | { ok: false; error: string };

export function pluginConfigFile(folder: string, manifest: Record<string, unknown> | undefined): ConfigFileChoice {
  const config = manifest?.config;
  const declared = isPlainObject(config) ? config.config_file : undefined;
  if (declared === undefined || declared === null) {
    return { ok: true, path: DEFAULT_CONFIG_FILES.map((name) => join(folder, name)).find((path) => existsSync(path)) };
  }
  if (typeof declared !== 'string' || declared.trim() === '') return { ok: false, error: 'config.config_file must be a file name' };
  const path = resolve(folder, declared);
  const rel = relative(folder, path);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return { ok: false, error: `config.config_file "${declared}" points outside the plugin folder` };
  if (!existsSync(path) || !statSync(path).isFile()) return { ok: false, error: `config.config_file "${declared}" does not exist` };
  return { ok: true, path };
}
