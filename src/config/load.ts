// Config = YAML file ← environment, then every missing key from the schema's defaults. Every problem is
// reported at once, each with its path, so a user fixes the file in one go.
import { readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { findPackageRoot } from '../kit/package-root.js';
import type { ValidationIssue } from '../protocol/types.js';
import type { CoreConfig } from './types.js';
import { validateConfigTree } from './validate.js';
import { isPlainObject } from '../kit/plain-object.js';

export type ConfigOutcome = { ok: true; config: CoreConfig; file: string | null } | { ok: false; errors: ValidationIssue[] };

type Env = Record<string, string | undefined>;
type Tree = Record<string, unknown>;

/** Environment variable → config path and how to read it. */
const ENV_OVERRIDES: { name: string; path: string[]; kind: 'string' | 'port' | 'bool' | 'int' | 'number' | 'mqtt_version' }[] = [
  { name: 'HOMECLAW_DATA_DIR', path: ['data_dir'], kind: 'string' },
  { name: 'HOMECLAW_LOG_LEVEL', path: ['log_level'], kind: 'string' },
  { name: 'HOMECLAW_LOG_FORMAT', path: ['log_format'], kind: 'string' },
  { name: 'HOMECLAW_MQTT_HOST', path: ['broker', 'host'], kind: 'string' },
  { name: 'HOMECLAW_MQTT_PORT', path: ['broker', 'port'], kind: 'port' },
  { name: 'HOMECLAW_WS_PORT', path: ['broker', 'ws_port'], kind: 'port' },
  { name: 'HOMECLAW_BROKER_URL', path: ['broker', 'url'], kind: 'string' },
  { name: 'HOMECLAW_BROKER_USERNAME', path: ['broker', 'username'], kind: 'string' },
  { name: 'HOMECLAW_BROKER_PASSWORD', path: ['broker', 'password'], kind: 'string' },
  { name: 'HOMECLAW_BROKER_PROTOCOL_VERSION', path: ['broker', 'protocol_version'], kind: 'mqtt_version' },
  { name: 'HOMECLAW_HTTP_HOST', path: ['http', 'host'], kind: 'string' },
  { name: 'HOMECLAW_HTTP_PORT', path: ['http', 'port'], kind: 'port' },
  { name: 'HOMECLAW_ADMIN_TOKEN', path: ['http', 'admin_token'], kind: 'string' },
  { name: 'HOMECLAW_DASHBOARD_ENABLED', path: ['dashboard', 'enabled'], kind: 'bool' },
  { name: 'HOMECLAW_INGRESS_PROXY', path: ['dashboard', 'ingress_proxy'], kind: 'string' },
  { name: 'HOMECLAW_PUBLIC_URL', path: ['http', 'public_url'], kind: 'string' },
  { name: 'HOMECLAW_OPENAI_DEFAULT_USER', path: ['openai_endpoint', 'default_user'], kind: 'string' },
  { name: 'HOMECLAW_OPENAI_USER_FIELD', path: ['openai_endpoint', 'user_field'], kind: 'string' },
  { name: 'HOMECLAW_OAUTH_ENABLED', path: ['oauth', 'enabled'], kind: 'bool' },
  { name: 'HOMECLAW_OAUTH_DYNAMIC_REGISTRATION', path: ['oauth', 'dynamic_registration'], kind: 'bool' },
  { name: 'HOMECLAW_PLUGINS_DIR', path: ['plugins', 'dir'], kind: 'string' },
  { name: 'HOMECLAW_HOT_RELOAD', path: ['plugins', 'hot_reload'], kind: 'bool' },
  { name: 'HOMECLAW_RETRIEVAL_ENABLED', path: ['retrieval', 'enabled'], kind: 'bool' },
  { name: 'HOMECLAW_CHROMA_URL', path: ['retrieval', 'chroma', 'url'], kind: 'string' },
  { name: 'HOMECLAW_CHROMA_PORT', path: ['retrieval', 'chroma', 'port'], kind: 'port' },
  { name: 'HOMECLAW_LLM_BASE_URL', path: ['llm', 'base_url'], kind: 'string' },
  { name: 'HOMECLAW_LLM_MODEL', path: ['llm', 'model'], kind: 'string' },
  { name: 'HOMECLAW_LLM_API_KEY', path: ['llm', 'api_key'], kind: 'string' },
  { name: 'HOMECLAW_WYOMING_HOST', path: ['wyoming', 'host'], kind: 'string' },
  { name: 'HOMECLAW_WYOMING_PORT', path: ['wyoming', 'port'], kind: 'port' },
  { name: 'HOMECLAW_Z2M_ENABLED', path: ['zigbee2mqtt', 'enabled'], kind: 'bool' },
  { name: 'HOMECLAW_Z2M_BASE_TOPIC', path: ['zigbee2mqtt', 'base_topic'], kind: 'string' },
  { name: 'HOMECLAW_Z2M_CONFIRM_TIMEOUT_SEC', path: ['zigbee2mqtt', 'confirm_timeout_sec'], kind: 'number' },
  { name: 'HOMECLAW_HA_URL', path: ['homeassistant', 'url'], kind: 'string' },
  { name: 'HOMECLAW_HA_TOKEN', path: ['homeassistant', 'token'], kind: 'string' },
  { name: 'HOMECLAW_HA_DISCOVERY', path: ['homeassistant', 'discovery'], kind: 'bool' },
  { name: 'HOMECLAW_HA_DISCOVERY_PREFIX', path: ['homeassistant', 'discovery_prefix'], kind: 'string' },
  { name: 'HOMECLAW_HA_REFRESH_SEC', path: ['homeassistant', 'refresh_sec'], kind: 'int' },
  { name: 'HOMECLAW_METRICS_ENABLED', path: ['metrics', 'enabled'], kind: 'bool' },
  { name: 'HOMECLAW_METRICS_TOKEN', path: ['metrics', 'token'], kind: 'string' },
];

function merge(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isPlainObject(current) && isPlainObject(value) ? merge(current, value) : value;
  }
  return out;
}

function setPath(tree: Tree, path: string[], value: unknown): void {
  let node = tree;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (!isPlainObject(next)) node[key] = {};
    node = node[key] as Tree;
  }
  node[path[path.length - 1] as string] = value;
}

function envLayer(env: Env, errors: ValidationIssue[]): Tree {
  const layer: Tree = {};
  for (const { name, path, kind } of ENV_OVERRIDES) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    if (kind === 'string') setPath(layer, path, raw);
    else if (kind === 'mqtt_version') {
      // "5" is the number 5 in the file's terms; 3.1.1 stays a string (it is no number).
      if (raw.trim() === '5') setPath(layer, path, 5);
      else if (raw.trim() === '3.1.1') setPath(layer, path, '3.1.1');
      else errors.push({ path: `env:${name}`, message: `must be 5 or 3.1.1, got "${raw}"` });
    } else if (kind === 'bool') {
      if (!/^(true|false|1|0|yes|no)$/i.test(raw)) errors.push({ path: `env:${name}`, message: `must be true or false, got "${raw}"` });
      else setPath(layer, path, /^(true|1|yes)$/i.test(raw));
    } else if (kind === 'number') {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n)) errors.push({ path: `env:${name}`, message: `must be a number, got "${raw}"` });
      else setPath(layer, path, n);
    } else {
      const n = Number(raw);
      if (!Number.isInteger(n) || (kind === 'port' && (n < 0 || n > 65535))) {
        errors.push({ path: `env:${name}`, message: `must be ${kind === 'port' ? 'a port number (0-65535)' : 'an integer'}, got "${raw}"` });
      } else setPath(layer, path, n);
    }
  }
  return layer;
}

export interface LoadConfigOptions {
  /** Explicit config file; when absent, config/homeclaw.yaml in the working directory is used if present. */
  file?: string;
  env?: Env;
  cwd?: string;
  /** Extra values applied last (tests: ephemeral ports, temp data dirs). */
  overrides?: Tree;
}

export function loadConfig(options: LoadConfigOptions = {}): ConfigOutcome {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const errors: ValidationIssue[] = [];
  let fileLayer: Tree = {};
  let file: string | null = null;
  const candidate = options.file ?? env.HOMECLAW_CONFIG;
  if (candidate) {
    file = resolve(cwd, candidate);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      return { ok: false, errors: [{ path: file, message: `cannot read the config file: ${(err as Error).message}` }] };
    }
    try {
      const parsed: unknown = parseYaml(text);
      if (parsed === null || parsed === undefined) fileLayer = {};
      else if (!isPlainObject(parsed)) errors.push({ path: file, message: 'the config file must contain a YAML mapping' });
      else fileLayer = parsed;
    } catch (err) {
      return { ok: false, errors: [{ path: file, message: `YAML syntax error: ${(err as Error).message}` }] };
    }
  }
  // A copy: filling in defaults must not touch the file's own tree (read below for plugins.dir).
  const merged = structuredClone(merge(merge(fileLayer, envLayer(env, errors)), options.overrides ?? {}));
  for (const e of validateConfigTree(merged)) {
    if (e.keyword === 'propertyNames') continue; // its nested error below names the key
    // A key that fails a propertyNames rule (a user id or channel name used as a key) is named in the path.
    const badKey = (e as { propertyName?: string }).propertyName;
    const extra =
      e.keyword === 'additionalProperties'
        ? `/${String((e.params as { additionalProperty?: string }).additionalProperty)}`
        : badKey !== undefined
          ? `/${badKey}`
          : '';
    const message = e.keyword === 'additionalProperties' ? 'unknown setting' : `${badKey !== undefined ? 'invalid name: ' : ''}${e.message ?? 'invalid'}`;
    errors.push({ path: `${e.instancePath}${extra}` || '/', message });
  }
  if (errors.length > 0) return { ok: false, errors };
  const config = merged as unknown as CoreConfig;
  config.data_dir = resolve(cwd, config.data_dir);
  // Built-in plugins ship with the package: the default folder is the package's own, wherever the Core runs from.
  const pluginsDirSet = isPlainObject(fileLayer.plugins) && 'dir' in fileLayer.plugins;
  const pluginsFromEnvOrOverride = env.HOMECLAW_PLUGINS_DIR || (isPlainObject(options.overrides?.plugins) && 'dir' in options.overrides.plugins);
  config.plugins.dir =
    !pluginsDirSet && !pluginsFromEnvOrOverride
      ? join(findPackageRoot(), 'plugins')
      : isAbsolute(config.plugins.dir)
        ? config.plugins.dir
        : resolve(cwd, config.plugins.dir);
  return { ok: true, config, file };
}

export function formatConfigErrors(errors: ValidationIssue[]): string {
  return errors.map((e) => `  ${e.path}: ${e.message}`).join('\n');
}
