// RAGFlow dialect (a RAGFlow plugin class's metadata): one LLM tool per plugin, {name, description, parameters{<name>: {type,
// description, required}}}. display* fields are frontend i18n keys ("$t:...") and are ignored.
import { isPluginId } from '../ids.js';
import type { CapabilitySpec, ParameterSpec, PluginDescriptor } from '../types.js';
import { CAPABILITY_EXTRA_KEYS, readCapabilityExtras } from './capability-fields.js';
import { FieldReader, type IssueList, at } from './issues.js';
import { isCapabilityId } from './name-patterns.js';
import type { NormalizeOptions } from './normalize-options.js';
import { readParameter } from './parameters.js';
import { checkVersion } from './semver.js';
import { COMMON_PLUGIN_KEYS, readCommonPluginFields, readIdOrName } from './plugin-fields.js';
import { isPlainObject } from '../../kit/plain-object.js';

const PLUGIN_KEYS = new Set<string>(['id', 'name', 'description', 'parameters', '_version_', ...COMMON_PLUGIN_KEYS, ...CAPABILITY_EXTRA_KEYS]);

export function normalizeRagFlow(input: Record<string, unknown>, options: NormalizeOptions, issues: IssueList): PluginDescriptor | undefined {
  const fields = new FieldReader(input, '', issues);
  const name = fields.requiredString('name');
  const id = readIdOrName(input, issues);
  const description = fields.requiredString('description');
  const common = readCommonPluginFields(input, issues, options);
  // The Python class attribute _version_ may travel as is.
  const classVersion = fields.string('_version_', { nonEmpty: true });
  if (common.version === undefined && classVersion !== undefined) {
    const checked = checkVersion(classVersion, '/_version_', issues);
    if (checked !== undefined) common.version = checked;
  }
  const parameters: ParameterSpec[] = [];
  const raw = isPlainObject(input['parameters']) ? input['parameters'] : {};
  for (const [parameterName, spec] of Object.entries(raw)) {
    const path = at('/parameters', parameterName);
    const parameter = readParameter(parameterName, path, spec, path, issues, { typeAliases: true, ignoredPrefix: 'display' });
    if (parameter) parameters.push(parameter);
  }
  const extras = readCapabilityExtras(input, '', issues);
  for (const key of Object.keys(input)) {
    if (!PLUGIN_KEYS.has(key) && !key.startsWith('display') && input[key] !== undefined) {
      issues.warn(at('', key), 'unknown field ignored');
    }
  }
  if (issues.hasErrors || !isPluginId(id) || !name || !description) return undefined;
  // The single tool keeps the name the LLM knew it by as its capability id; 'invoke' (RAGFlow's method)
  // when an explicit plugin id freed the name to be a display name that is no valid capability id.
  const capabilityId = isCapabilityId(name) ? name : 'invoke';
  const capability: CapabilitySpec = { id: capabilityId, name, description, parameters, ...extras };
  return { id, name, description, ...common, capabilities: [capability], source: options.source };
}
