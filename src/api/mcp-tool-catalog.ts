// What the Core offers MCP clients: one tool per capability of every routable plugin, named
// `<plugin>__<capability>` within MCP's 64-character limit.
import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../log.js';
import { capabilityInputSchema } from '../protocol/descriptor/json-schema.js';
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

function inputSchemaFor(capability: CapabilitySpec, log: Logger): Tool['inputSchema'] {
  let schema: JsonObject;
  try {
    schema = capability.input_schema ?? capabilityInputSchema(capability);
  } catch (err) {
    // A capability whose schema cannot be built is still callable; the dispatcher validates anyway.
    log.warn({ err: (err as Error).message, capability_id: capability.id }, 'no JSON Schema for capability; offering an open object');
    schema = { type: 'object' };
  }
  return { ...schema, type: 'object' } as Tool['inputSchema'];
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

/** Every routable capability as a tool, keyed by tool name. */
export function buildToolCatalog(registry: RegistryApi, log: Logger, scope: CatalogScope = {}): Map<string, CatalogEntry> {
  const catalog = new Map<string, CatalogEntry>();
  for (const record of registry.list()) {
    if (!isRoutable(record)) continue;
    for (const capability of record.descriptor.capabilities) {
      if (scope.visible && !scope.visible(record.descriptor.id, capability)) continue;
      const name = mcpToolName(record.descriptor.id, capability.id);
      const confirm = scope.requiresConfirmation?.(record.descriptor.id, capability) === true;
      const tool: Tool = {
        name,
        title: `${record.descriptor.name}: ${capability.name}`,
        description: toolDescription(record.descriptor.description, capability),
        inputSchema: confirm ? withConfirmedArgument(inputSchemaFor(capability, log)) : inputSchemaFor(capability, log),
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
  return catalog;
}
