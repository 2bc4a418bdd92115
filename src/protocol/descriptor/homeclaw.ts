// HomeClaw dialect: plugin.yaml / plugin.json manifests and the JSON body of HomeClaw's registration API.
// It is also a superset of the canonical form, so a stored descriptor normalises to itself.
import type { CapabilitySpec, PluginDescriptor, ParameterSpec } from '../types.js';
import { CAPABILITY_EXTRA_KEYS, readCapabilityExtras } from './capability-fields.js';
import { FieldReader, type IssueList, at, describe } from './issues.js';
import { explainBadCapabilityId, explainBadPluginId, isCapabilityId } from './name-patterns.js';
import { isPluginId } from '../ids.js';
import type { NormalizeOptions } from './normalize-options.js';
import { readParameter, reportDuplicates } from './parameters.js';
import { COMMON_PLUGIN_KEYS, readCommonPluginFields } from './plugin-fields.js';
import { jsonSchemaCompileError, outputSchemaFromLoose, parametersFromInputSchema, toFullObjectSchema } from './schema-forms.js';
import { isPlainObject } from '../../kit/plain-object.js';

const PLUGIN_KEYS = new Set<string>(['id', 'plugin_id', 'name', 'description', 'capabilities', ...COMMON_PLUGIN_KEYS]);
const CAPABILITY_KEYS = new Set<string>(['id', 'name', 'description', 'parameters', 'input_schema', 'output_schema', ...CAPABILITY_EXTRA_KEYS]);

/** The id a HomeClaw input claims, as given (may be invalid): 'id', else the registration JSON's 'plugin_id'. */
export function homeclawClaimedId(input: Record<string, unknown>): { value: unknown; key: 'id' | 'plugin_id' } {
  if (input['id'] !== undefined) return { value: input['id'], key: 'id' };
  return { value: input['plugin_id'], key: 'plugin_id' };
}

export function normalizeHomeClaw(input: Record<string, unknown>, options: NormalizeOptions, issues: IssueList): PluginDescriptor | undefined {
  const fields = new FieldReader(input, '', issues);
  const claimed = homeclawClaimedId(input);
  if (claimed.value === undefined || claimed.value === null) {
    issues.error('/id', 'id is required (HomeClaw manifests use "id", registration JSON "plugin_id")');
  } else if (!isPluginId(claimed.value)) {
    issues.error(`/${claimed.key}`, explainBadPluginId(claimed.value));
  }
  if (input['id'] !== undefined && input['plugin_id'] !== undefined && input['id'] !== input['plugin_id']) {
    issues.error('/plugin_id', `must equal id ("${String(input['id'])}") when both are given`);
  }
  const name = fields.requiredString('name');
  const description = fields.requiredString('description');
  const common = readCommonPluginFields(input, issues, options);
  const capabilities = readCapabilities(input, name, description, issues);
  if (input['tools'] !== undefined) issues.warn('/tools', 'ignored: HomeClaw registrations describe callables in "capabilities"');
  fields.warnUnknown(new Set([...PLUGIN_KEYS, 'tools']));
  if (issues.hasErrors || !isPluginId(claimed.value) || !name || !description || !capabilities) return undefined;
  return { id: claimed.value, name, description, ...common, capabilities, source: options.source };
}

function readCapabilities(
  input: Record<string, unknown>,
  pluginName: string | undefined,
  pluginDescription: string | undefined,
  issues: IssueList,
): CapabilitySpec[] | undefined {
  const raw = input['capabilities'];
  if (raw === undefined || raw === null) {
    // Seed 001 manifests (mail, slack-bot, subprocess weather, MCP) carry no capabilities: the plugin is
    // "a single entry point" that takes the user's request. We model that as one capability `run` with
    // a single OPTIONAL string parameter `user_input` (optional because the Core always sends the
    // user's text in PluginRequest.user_input as well), so every plugin has something to route to. It
    // takes the request itself, so it gets the request's context on every transport.
    return [
      {
        id: 'run',
        name: pluginName ?? 'run',
        description: pluginDescription ?? 'run',
        parameters: [{ name: 'user_input', type: 'string', required: false, description: "The user's request." }],
        post_process: false,
        wants_context: true,
      },
    ];
  }
  if (!Array.isArray(raw)) {
    issues.error('/capabilities', `must be a list of capabilities, not ${describe(raw)}`);
    return undefined;
  }
  if (raw.length === 0) {
    issues.error('/capabilities', 'must not be empty (omit it for a single default "run" capability)');
    return undefined;
  }
  const capabilities: CapabilitySpec[] = [];
  const ids: { id: string; path: string }[] = [];
  raw.forEach((item, index) => {
    const path = at('/capabilities', index);
    if (isPlainObject(item) && typeof item['id'] === 'string') ids.push({ id: item['id'], path: at(path, 'id') });
    const capability = readCapability(item, path, issues);
    if (capability) capabilities.push(capability);
  });
  reportDuplicates(ids, 'capability id', issues);
  return capabilities;
}

function readCapability(item: unknown, path: string, issues: IssueList): CapabilitySpec | undefined {
  if (!isPlainObject(item)) {
    issues.error(path, `capability must be an object, not ${describe(item)}`);
    return undefined;
  }
  const errorsBefore = issues.errors.length;
  const fields = new FieldReader(item, path, issues);
  const id = item['id'];
  if (id === undefined || id === null) issues.error(at(path, 'id'), 'capability id is required');
  else if (!isCapabilityId(id)) issues.error(at(path, 'id'), explainBadCapabilityId(id));
  // Lenient on the display name only: it defaults to the id.
  const name = fields.string('name', { nonEmpty: true });
  const description = fields.requiredString('description');
  let parameters = readParameterList(item['parameters'], at(path, 'parameters'), issues);
  const extras = readCapabilityExtras(item, path, issues);
  let inputSchema: CapabilitySpec['input_schema'];
  const rawInputSchema = item['input_schema'];
  if (rawInputSchema !== undefined && rawInputSchema !== null) {
    if (item['parameters'] === undefined || item['parameters'] === null) {
      // Only a schema was given (e.g. an MCP tool's inputSchema): derive the parameter list from it and
      // keep the schema only where the list cannot carry it losslessly.
      const derived = parametersFromInputSchema(rawInputSchema, at(path, 'input_schema'), issues);
      parameters = derived?.parameters;
      inputSchema = derived?.input_schema;
    } else {
      // Both given (a stored canonical descriptor): the schema is authoritative for validation.
      const full = toFullObjectSchema(rawInputSchema, at(path, 'input_schema'), issues);
      const reason = full ? jsonSchemaCompileError(full.schema) : null;
      if (reason) issues.error(at(path, 'input_schema'), `is not a valid JSON Schema: ${reason}`);
      inputSchema = full?.schema;
    }
  }
  let outputSchema: CapabilitySpec['output_schema'];
  if (item['output_schema'] !== undefined && item['output_schema'] !== null) {
    outputSchema = outputSchemaFromLoose(item['output_schema'], at(path, 'output_schema'), issues);
  }
  fields.warnUnknown(CAPABILITY_KEYS);
  if (issues.errors.length > errorsBefore || !isCapabilityId(id) || !description || !parameters) return undefined;
  const capability: CapabilitySpec = { id, name: name ?? id, description, parameters, ...extras };
  if (inputSchema) capability.input_schema = inputSchema;
  if (outputSchema) capability.output_schema = outputSchema;
  return capability;
}

function readParameterList(raw: unknown, path: string, issues: IssueList): ParameterSpec[] | undefined {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    issues.error(path, `must be a list of parameters, not ${describe(raw)}`);
    return undefined;
  }
  const parameters: ParameterSpec[] = [];
  const names: { id: string; path: string }[] = [];
  raw.forEach((spec, index) => {
    const itemPath = at(path, index);
    const name = isPlainObject(spec) ? spec['name'] : undefined;
    if (typeof name === 'string') names.push({ id: name, path: at(itemPath, 'name') });
    const parameter = readParameter(name, at(itemPath, 'name'), spec, itemPath, issues, { typeAliases: false });
    if (parameter) parameters.push(parameter);
  });
  reportDuplicates(names, 'parameter name', issues);
  return parameters;
}
