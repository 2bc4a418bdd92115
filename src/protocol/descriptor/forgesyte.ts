// ForgeSyte dialect (ForgeSyte's plugin metadata): {name, description, version, tools{<id>: {description, input_schema,
// output_schema}}}. The plugin name is its id; each tool becomes a capability.
import { isPluginId } from '../ids.js';
import type { CapabilitySpec, PluginDescriptor } from '../types.js';
import { CAPABILITY_EXTRA_KEYS, readCapabilityExtras } from './capability-fields.js';
import { FieldReader, type IssueList, at, describe } from './issues.js';
import { explainBadCapabilityId, isCapabilityId } from './name-patterns.js';
import type { NormalizeOptions } from './normalize-options.js';
import { COMMON_PLUGIN_KEYS, readCommonPluginFields, readIdOrName } from './plugin-fields.js';
import { outputSchemaFromLoose, parametersFromInputSchema } from './schema-forms.js';
import { isPlainObject } from '../../kit/plain-object.js';

const PLUGIN_KEYS = new Set<string>(['id', 'name', 'title', 'description', 'tools', ...COMMON_PLUGIN_KEYS]);
const TOOL_KEYS = new Set<string>(['title', 'description', 'input_schema', 'output_schema', ...CAPABILITY_EXTRA_KEYS]);

export function normalizeForgeSyte(input: Record<string, unknown>, options: NormalizeOptions, issues: IssueList): PluginDescriptor | undefined {
  const fields = new FieldReader(input, '', issues);
  const name = fields.requiredString('name');
  const id = readIdOrName(input, issues);
  const description = fields.requiredString('description');
  const common = readCommonPluginFields(input, issues, options);
  // ForgeSyte: "version defaults to 1.0.0".
  common.version ??= '1.0.0';
  const title = fields.string('title', { nonEmpty: true });
  const capabilities = readTools(input['tools'], issues);
  fields.warnUnknown(PLUGIN_KEYS);
  if (issues.hasErrors || !isPluginId(id) || !name || !description || !capabilities) return undefined;
  return { id, name: title ?? name, description, ...common, capabilities, source: options.source };
}

function readTools(tools: unknown, issues: IssueList): CapabilitySpec[] | undefined {
  if (!isPlainObject(tools) || Object.keys(tools).length === 0) {
    issues.error('/tools', 'must be a non-empty object keyed by tool id');
    return undefined;
  }
  const capabilities: CapabilitySpec[] = [];
  for (const [toolId, tool] of Object.entries(tools)) {
    const path = at('/tools', toolId);
    if (!isCapabilityId(toolId)) issues.error(path, explainBadCapabilityId(toolId));
    if (!isPlainObject(tool)) {
      issues.error(path, `tool must be an object, not ${describe(tool)}`);
      continue;
    }
    const errorsBefore = issues.errors.length;
    const fields = new FieldReader(tool, path, issues);
    const description = fields.requiredString('description');
    const title = fields.string('title', { nonEmpty: true });
    // input_schema is required by ForgeSyte; a tool without one simply takes no arguments here.
    const inputs =
      tool['input_schema'] === undefined || tool['input_schema'] === null
        ? { parameters: [] }
        : parametersFromInputSchema(tool['input_schema'], at(path, 'input_schema'), issues);
    const outputSchema =
      tool['output_schema'] === undefined || tool['output_schema'] === null
        ? undefined
        : outputSchemaFromLoose(tool['output_schema'], at(path, 'output_schema'), issues);
    const extras = readCapabilityExtras(tool, path, issues);
    fields.warnUnknown(TOOL_KEYS);
    if (issues.errors.length > errorsBefore || !description || !inputs || !isCapabilityId(toolId)) continue;
    const capability: CapabilitySpec = {
      id: toolId,
      name: title ?? toolId,
      description,
      parameters: inputs.parameters,
      ...extras,
    };
    if (inputs.input_schema) capability.input_schema = inputs.input_schema;
    if (outputSchema) capability.output_schema = outputSchema;
    capabilities.push(capability);
  }
  return capabilities;
}
