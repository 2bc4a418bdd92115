// MCP tools → canonical capabilities. A tool's inputSchema is kept verbatim (input_schema) because a
// parameter list cannot hold every JSON Schema; the parameter list is derived for the resolver and
// retrieval. Tool names may hold characters capability ids may not ('.', '/'), so ids are derived
// deterministically and the adapter keeps the capability id → tool name map.
import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  PARAMETER_TYPES,
  type CapabilitySpec,
  type JsonObject,
  type JsonValue,
  type ParameterSpec,
  type ParameterType,
  type PluginRequest,
} from '../protocol/types.js';
import { isPlainObject } from '../kit/plain-object.js';
import { isParameterName } from '../protocol/descriptor/name-patterns.js';

const CAPABILITY_ID = /^[A-Za-z0-9_-]{1,64}$/;

export interface ToolCatalog {
  capabilities: CapabilitySpec[];
  /** capability id → MCP tool name */
  tool_by_capability: Map<string, string>;
  /** capability id → the tool's input schema (single-tool form uses it to shape arguments) */
  input_schema_by_capability: Map<string, JsonObject>;
  /** Set in the single-tool form: the tool that receives the whole PluginRequest. */
  single_tool?: string;
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

/** Drops anything that is not plain JSON (functions, undefined, cycles are impossible from JSON-RPC). */
export function toJsonObject(value: unknown): JsonObject {
  if (!isPlainObject(value)) return {};
  return JSON.parse(JSON.stringify(value)) as JsonObject;
}

/**
 * The schema without its `$schema` tag. zod-built servers tag draft-07, which the Core's 2020-12
 * validator refuses to compile; the keywords themselves are what validation and LLMs need.
 */
export function withoutDialectTag(schema: JsonObject): JsonObject {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A capability id for a tool name: unchanged when legal, else sanitised, truncated and hash-suffixed. */
export function capabilityIdForTool(toolName: string): string {
  if (CAPABILITY_ID.test(toolName)) return toolName;
  const cleaned = toolName.replace(/[^A-Za-z0-9_-]/g, '_') || 'tool';
  const suffix = `_${shortHash(toolName)}`;
  return cleaned.slice(0, 64 - suffix.length) + suffix;
}

function parameterType(schema: JsonObject): ParameterType {
  const declared = schema.type;
  const candidates = Array.isArray(declared) ? declared : [declared];
  for (const candidate of candidates) {
    if (typeof candidate === 'string' && (PARAMETER_TYPES as readonly string[]).includes(candidate)) return candidate as ParameterType;
  }
  if (isJsonObject(schema.properties)) return 'object';
  if (schema.items !== undefined) return 'array';
  // anyOf / oneOf / no type: the verbatim input_schema does the real validation.
  return 'string';
}

/** Top-level properties of an object schema as parameters; names parameters cannot carry are skipped. */
export function schemaToParameters(inputSchema: JsonObject): ParameterSpec[] {
  const properties = isJsonObject(inputSchema.properties) ? inputSchema.properties : {};
  const required = new Set(Array.isArray(inputSchema.required) ? inputSchema.required.filter((r): r is string => typeof r === 'string') : []);
  const parameters: ParameterSpec[] = [];
  for (const [name, raw] of Object.entries(properties)) {
    if (!isParameterName(name) || !isJsonObject(raw)) continue;
    const parameter: ParameterSpec = { name, type: parameterType(raw), required: required.has(name) };
    if (raw.default !== undefined) parameter.default = raw.default;
    if (typeof raw.description === 'string' && raw.description) parameter.description = raw.description;
    if (Array.isArray(raw.enum) && raw.enum.length > 0) parameter.enum = raw.enum;
    if (isJsonObject(raw.items)) parameter.items = raw.items;
    if (isJsonObject(raw.properties)) parameter.properties = raw.properties;
    parameters.push(parameter);
  }
  return parameters;
}

function toolTitle(tool: Tool): string {
  const fromAnnotations = tool.annotations?.title;
  return tool.title || (typeof fromAnnotations === 'string' && fromAnnotations) || tool.name;
}

/**
 * One capability per tool. Fields the tool cannot know (post_process, timeout_sec, output_description)
 * are kept from the previously registered capability with the same id, so a manifest's choices survive.
 */
export function toolToCapability(tool: Tool, id: string, previous?: CapabilitySpec): CapabilitySpec {
  const inputSchema = withoutDialectTag(toJsonObject(tool.inputSchema));
  const capability: CapabilitySpec = {
    id,
    name: toolTitle(tool),
    description: tool.description?.trim() || previous?.description || toolTitle(tool),
    parameters: schemaToParameters(inputSchema),
    input_schema: inputSchema,
    post_process: previous?.post_process ?? false,
  };
  if (tool.outputSchema) capability.output_schema = withoutDialectTag(toJsonObject(tool.outputSchema));
  if (previous?.output_description) capability.output_description = previous.output_description;
  if (previous?.post_process_prompt) capability.post_process_prompt = previous.post_process_prompt;
  if (previous?.timeout_sec) capability.timeout_sec = previous.timeout_sec;
  return capability;
}

/** Every tool as a capability (multi-tool form). Later duplicates of an id get a hash suffix. */
export function catalogFromTools(tools: Tool[], previous: CapabilitySpec[]): ToolCatalog {
  const previousById = new Map(previous.map((c) => [c.id, c]));
  const catalog: ToolCatalog = { capabilities: [], tool_by_capability: new Map(), input_schema_by_capability: new Map() };
  for (const tool of tools) {
    let id = capabilityIdForTool(tool.name);
    if (catalog.tool_by_capability.has(id)) id = `${id.slice(0, 55)}_${shortHash(`dup:${tool.name}`)}`;
    catalog.capabilities.push(toolToCapability(tool, id, previousById.get(id)));
    catalog.tool_by_capability.set(id, tool.name);
    catalog.input_schema_by_capability.set(id, toJsonObject(tool.inputSchema));
  }
  return catalog;
}

/**
 * The single-tool form (config.single_tool): the plugin is one capability named after the tool, whose parameters are
 * the ones the manifest declared (the tool's own schema describes the request envelope, not them).
 */
export function catalogForSingleTool(tool: Tool, previous: CapabilitySpec[]): ToolCatalog {
  const id = capabilityIdForTool(tool.name);
  const declared = previous.find((c) => c.id === id) ?? previous[0];
  const capability: CapabilitySpec = {
    id,
    name: declared?.name ?? toolTitle(tool),
    description: declared?.description ?? (tool.description?.trim() || toolTitle(tool)),
    parameters: declared?.parameters ?? [],
    post_process: declared?.post_process ?? false,
  };
  for (const key of ['input_schema', 'output_description', 'output_schema', 'post_process_prompt', 'timeout_sec'] as const) {
    if (declared?.[key] !== undefined) Object.assign(capability, { [key]: declared[key] });
  }
  if (!capability.output_schema && tool.outputSchema) capability.output_schema = withoutDialectTag(toJsonObject(tool.outputSchema));
  return {
    capabilities: [capability],
    tool_by_capability: new Map([[id, tool.name]]),
    input_schema_by_capability: new Map([[id, toJsonObject(tool.inputSchema)]]),
    single_tool: tool.name,
  };
}

const REQUEST_FIELDS = new Set([
  'request_id',
  'plugin_id',
  'capability_id',
  'parameters',
  'deadline',
  'user_input',
  'user_id',
  'user_name',
  'channel_name',
  'channel_type',
  'app_id',
  'session_id',
  'chat_context',
  'metadata',
]);

/** The conventional name of the one tool of a single-tool server (it receives the whole PluginRequest). */
export const SINGLE_TOOL_NAME = 'handle_request';

/**
 * A tool whose arguments are the PluginRequest itself: it takes user_input, and every property it
 * declares is a PluginRequest field or `context` (the recent conversation).
 */
function takesPluginRequest(inputSchema: JsonObject): boolean {
  const properties = isJsonObject(inputSchema.properties) ? Object.keys(inputSchema.properties) : [];
  return properties.includes('user_input') && properties.every((name) => REQUEST_FIELDS.has(name) || name === 'context');
}

/**
 * The single-tool form without configuration: a server whose only tool is handle_request, or whose
 * only tool takes the PluginRequest's fields, gets the whole request rather than parameters.
 */
export function detectSingleTool(tools: readonly Tool[]): string | undefined {
  if (tools.length !== 1) return undefined;
  const tool = tools[0]!;
  if (tool.name === SINGLE_TOOL_NAME || takesPluginRequest(toJsonObject(tool.inputSchema))) return tool.name;
  return undefined;
}

/**
 * Arguments for the single tool. A tool with one property that is not a request field (e.g.
 * `request`) gets the whole PluginRequest in it (as a JSON string when it declares a string);
 * otherwise the request's fields are passed as the arguments, limited to the declared properties
 * when the schema forbids others.
 */
export function singleToolArguments(inputSchema: JsonObject, request: PluginRequest): Record<string, unknown> {
  const properties = isJsonObject(inputSchema.properties) ? inputSchema.properties : {};
  const names = Object.keys(properties);
  const first = names[0];
  if (names.length === 1 && first !== undefined && !REQUEST_FIELDS.has(first)) {
    const property = properties[first];
    const wantsString = isJsonObject(property) && property.type === 'string';
    return { [first]: wantsString ? JSON.stringify(request) : request };
  }
  const all: Record<string, unknown> = { ...request };
  // A single-tool server's tool commonly takes {user_input, context}: the context is the recent conversation.
  if ('context' in properties && request.chat_context !== undefined) all['context'] = request.chat_context;
  if (inputSchema.additionalProperties === false) {
    for (const key of Object.keys(all)) if (!(key in properties)) delete all[key];
  }
  return all;
}
