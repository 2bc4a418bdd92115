// Plugin-level fields every dialect may carry beside its own id/name/capabilities: a ForgeSyte or
// RAGFlow plugin on the bus can still declare its type, config (e.g. max_concurrency) and examples.
import { PLUGIN_TYPES } from '../types.js';
import type { PluginConfig, PluginDescriptor, PluginType } from '../types.js';
import { FieldReader, type IssueList, at, describe, isJsonValue, toJsonObject } from './issues.js';
import type { NormalizeOptions } from './normalize-options.js';
import { checkVersion } from './semver.js';
import { isPlainObject } from '../../kit/plain-object.js';
import { isPluginId } from '../ids.js';
import { explainBadPluginId } from './name-patterns.js';

export type CommonPluginFields = Pick<PluginDescriptor, 'description_long' | 'examples' | 'version' | 'keywords' | 'type' | 'health_check_url' | 'config'>;

export const COMMON_PLUGIN_KEYS = [
  'description_long',
  'examples',
  'version',
  'keywords',
  'type',
  'health_check_url',
  'config',
  // Shorthand for config.base_url, so metadata that names nothing else (ForgeSyte's) can say where it runs.
  'base_url',
  // Set by the Core; ignored when a plugin sends it (reported as a warning below).
  'source',
  // Liveness envelope of a register message, read by parseRegisterMessage.
  'epoch',
  'heartbeat_interval_sec',
] as const;

/**
 * The plugin id of a dialect that names plugins by id (ForgeSyte, RAGFlow): an explicit `id` (an extension
 * for bus plugins) wins, otherwise the `name` is the id. An id that is present but invalid is reported on
 * the key it came from; the value is returned as found, for the caller's final isPluginId check.
 */
export function readIdOrName(input: Record<string, unknown>, issues: IssueList): unknown {
  const idKey = input['id'] !== undefined ? 'id' : 'name';
  const id = input[idKey];
  if (id !== undefined && !isPluginId(id)) issues.error(`/${idKey}`, explainBadPluginId(id));
  return id;
}

export function readCommonPluginFields(input: Record<string, unknown>, issues: IssueList, options: NormalizeOptions): CommonPluginFields {
  const fields = new FieldReader(input, '', issues);
  const result: CommonPluginFields = { type: options.default_type, config: {} };
  const descriptionLong = fields.string('description_long');
  if (descriptionLong !== undefined) result.description_long = descriptionLong;
  const examples = fields.stringArray('examples');
  if (examples !== undefined) result.examples = examples;
  if (typeof input['version'] === 'number') {
    issues.error('/version', 'must be a string (quote it in YAML: version: "1.0")');
  } else {
    const version = fields.string('version', { nonEmpty: true });
    const checked = version === undefined ? undefined : checkVersion(version, '/version', issues);
    if (checked !== undefined) result.version = checked;
  }
  const keywords = fields.stringArray('keywords');
  if (keywords !== undefined) result.keywords = keywords;
  if (input['type'] !== undefined) {
    const type = input['type'];
    if (typeof type === 'string' && (PLUGIN_TYPES as readonly string[]).includes(type)) result.type = type as PluginType;
    else issues.error('/type', `unknown plugin type ${describe(type)}; allowed types: ${PLUGIN_TYPES.join(', ')}`);
  }
  const healthUrl = fields.string('health_check_url', { nonEmpty: true });
  if (healthUrl !== undefined) {
    if (isAbsoluteHttpUrl(healthUrl)) result.health_check_url = healthUrl;
    else issues.error('/health_check_url', `must be an absolute http(s) URL, not ${JSON.stringify(healthUrl)}`);
  }
  if (input['config'] !== undefined && input['config'] !== null) {
    const config = readPluginConfig(input['config'], '/config', issues);
    if (config) result.config = config;
  }
  readBaseUrlShorthand(input, result, issues);
  if (input['source'] !== undefined && input['source'] !== options.source) {
    issues.warn('/source', `ignored: the Core sets source (${options.source})`);
  }
  return result;
}

/** A top-level base_url becomes config.base_url; both given, they must agree. */
function readBaseUrlShorthand(input: Record<string, unknown>, result: CommonPluginFields, issues: IssueList): void {
  const value = input['base_url'];
  if (value === undefined || value === null) return;
  if (typeof value !== 'string' || !isAbsoluteHttpUrl(value)) {
    issues.error('/base_url', `must be an absolute http(s) URL, not ${describe(value)}`);
    return;
  }
  const inConfig = result.config['base_url'];
  if (inConfig !== undefined && inConfig !== value) {
    issues.error('/base_url', `conflicts with config.base_url (${JSON.stringify(inConfig)}); give it once`);
    return;
  }
  result.config = { ...result.config, base_url: value };
}

export function isAbsoluteHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

export function readPluginConfig(value: unknown, path: string, issues: IssueList): PluginConfig | undefined {
  if (!isPlainObject(value) || !isJsonValue(value)) {
    issues.error(path, `must be a JSON object, not ${describe(value)}`);
    return undefined;
  }
  const errorsBefore = issues.errors.length;
  // Type-specific settings (base_url, command, transport...) pass through; only the keys the Core
  // itself interprets are checked here.
  const fields = new FieldReader(value, path, issues);
  fields.object('default_parameters');
  fields.boolean('use_defaults_directly');
  fields.stringArray('use_default_directly_for');
  fields.number('max_concurrency', { integer: true, min: 1 });
  fields.number('queue_limit', { integer: true, min: 0 });
  fields.number('timeout_sec', { exclusiveMin: 0 });
  const perCapability = value['capabilities'];
  if (perCapability !== undefined && perCapability !== null) {
    if (!isPlainObject(perCapability)) issues.error(at(path, 'capabilities'), 'must be an object keyed by capability id');
    else {
      for (const [capabilityId, settings] of Object.entries(perCapability)) {
        if (!isPlainObject(settings)) issues.error(at(at(path, 'capabilities'), capabilityId), 'must be an object');
      }
    }
  }
  if (issues.errors.length > errorsBefore) return undefined;
  return toJsonObject(value) as PluginConfig;
}
