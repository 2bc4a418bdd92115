// What the Core offers MCP clients: one tool per capability of every routable plugin, named
// `<plugin>__<capability>` within MCP's 64-character limit, with an input schema every client can read
// (see mcp-input-schema.ts). A tool's name depends only on its plugin and capability ids, so it is the
// same on every listing and after restarts.
import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../log.js';
import { capabilityInputSchema } from '../protocol/descriptor/json-schema.js';
import { portableInputSchema } from './mcp-input-schema.js';
import type { CapabilitySpec, JsonObject } from '../protocol/types.js';
import { isRoutable } from '../registry/record.js';
import type { RegistryApi } from '../registry/registry-api.js';

export const MCP_TOOL_NAME_MAX = 64;

export interface CatalogEntry {
  tool: Tool;
  plugin_id: string;
  capability: CapabilitySpec;
  /** Set when the capability declares an output schema MCP accepts (type object). */
  output_schema?: JsonObject;
}

/**
 * `<plugin>__<capability>`; when longer than 64 characters, truncated with an 8-hex hash of the full
 * name so the result stays unique and the same on every call.
 */
export function mcpToolName(pluginId: string, capabilityId: string): string {
  const full = `${pluginId}__${capabilityId}`.replace(/[^A-Za-z0-9_-]/g, '_');
  if (full.length <= MCP_TOOL_NAME_MAX) return full;
  const hash = createHash('sha256').update(`${pluginId}__${capabilityId}`).digest('hex').slice(0, 8);
  return `${full.slice(0, MCP_TOOL_NAME_MAX - hash.length - 1)}_${hash}`;
}

/**
 * Name for two capabilities whose `<plugin>__<capability>` names coincide (plugin `a__b` with capability
 * `c`, plugin `a` with capability `b__c`): each gets a hash of its exact pair, so neither hides the other.
 */
export function disambiguatedToolName(pluginId: string, capabilityId: string): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([pluginId, capabilityId]))
    .digest('hex')
    .slice(0, 8);
  return `${mcpToolName(pluginId, capabilityId).slice(0, MCP_TOOL_NAME_MAX - hash.length - 1)}_${hash}`;
}

/**
 * Portable input schemas, computed once per capability object: the registry keeps a capability's
 * object until the plugin re-registers, and every tools/list and tools/call walks the whole catalog.
 */
export class InputSchemaCache {
  private readonly schemas = new WeakMap<CapabilitySpec, Tool['inputSchema']>();

  get(capability: CapabilitySpec, log: Logger): Tool['inputSchema'] {
    let schema = this.schemas.get(capability);
    if (!schema) {
      schema = inputSchemaFor(capability, log);
      this.schemas.set(capability, schema);
    }
    return schema;
  }
}

function inputSchemaFor(capability: CapabilitySpec, log: Logger): Tool['inputSchema'] {
  let schema: JsonObject;
  try {
    schema = capability.input_schema ?? capabilityInputSchema(capability);
  } catch (err) {
    // A capability whose schema cannot be built is still callable; the dispatcher validates anyway.
    log.warn({ err: (err as Error).message, capability_id: capability.id }, 'no JSON Schema for capability; offering an open object');
    schema = { type: 'object' };
  }
  return portableInputSchema(schema) as Tool['inputSchema'];
}

function toolDescription(pluginDescription: string, capability: CapabilitySpec): string {
  const own = capability.description.trim();
  return own === pluginDescription.trim() ? own : `${own} (plugin: ${pluginDescription.trim()})`;
}

export interface CatalogScope {
  /** Only capabilities this accepts are listed (the session user's policy). */
  visible?: (pluginId: string, capability: CapabilitySpec) => boolean;
  /** Capabilities that need "confirmed": true: marked destructive, with the argument described. */
  requiresConfirmation?: (pluginId: string, capability: CapabilitySpec) => boolean;
}

const CONFIRMED_ARGUMENT: JsonObject = {
  type: 'boolean',
  description: 'This action requires confirmation: set to true only after the user explicitly confirmed it; without it the call is refused.',
};

/** The input schema with the confirmation argument, unless the capability has a parameter of that name. */
function withConfirmedArgument(schema: Tool['inputSchema']): Tool['inputSchema'] {
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  if ('confirmed' in properties) return schema;
  return { ...schema, properties: { ...properties, confirmed: CONFIRMED_ARGUMENT } };
}

/**
 * Every routable capability the scope lets through as a tool, keyed by tool name (sorted, so listings
 * are stable). Name collisions are resolved over every routable capability, not only the visible ones,
 * so a tool's name never depends on who is asking.
 */
export function buildToolCatalog(
  registry: RegistryApi,
  log: Logger,
  scope: CatalogScope = {},
  schemas: InputSchemaCache = new InputSchemaCache(),
): Map<string, CatalogEntry> {
  const routable = registry.list().filter(isRoutable);
  const seen = new Map<string, number>();
  for (const record of routable) {
    for (const capability of record.descriptor.capabilities) {
      const name = mcpToolName(record.descriptor.id, capability.id);
      seen.set(name, (seen.get(name) ?? 0) + 1);
    }
  }
  const catalog = new Map<string, CatalogEntry>();
  for (const record of routable) {
    for (const capability of record.descriptor.capabilities) {
      if (scope.visible && !scope.visible(record.descriptor.id, capability)) continue;
      const plain = mcpToolName(record.descriptor.id, capability.id);
      const name = (seen.get(plain) ?? 0) > 1 ? disambiguatedToolName(record.descriptor.id, capability.id) : plain;
      const confirm = scope.requiresConfirmation?.(record.descriptor.id, capability) === true;
      const inputSchema = schemas.get(capability, log);
      const tool: Tool = {
        name,
        title: `${record.descriptor.name}: ${capability.name}`,
        description: toolDescription(record.descriptor.description, capability),
        inputSchema: confirm ? withConfirmedArgument(inputSchema) : inputSchema,
        ...(confirm ? { annotations: { destructiveHint: true } } : {}),
      };
      const entry: CatalogEntry = { tool, plugin_id: record.descriptor.id, capability };
      if (capability.output_schema?.type === 'object') {
        tool.outputSchema = capability.output_schema as Tool['outputSchema'];
        entry.output_schema = capability.output_schema;
      }
      catalog.set(name, entry);
    }
  }
  return new Map([...catalog].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
