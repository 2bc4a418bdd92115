// The Core as an MCP server: one low-level SDK Server per client session (the SDK requires it), whose
// tools are the routable capabilities of the registry, called through the dispatcher. Raw JSON Schemas
// are passed through as they are, which the high-level McpServer (zod-based) would not allow.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { ADMIN, type Principal } from '../access/principal.js';
import type { DispatcherApi } from '../dispatch/dispatcher-api.js';
import type { Logger } from '../log.js';
import type { CapabilitySpec, JsonObject, PluginResult } from '../protocol/types.js';
import type { PluginRecord } from '../registry/record.js';
import type { RegistryApi } from '../registry/registry-api.js';
import { readConfirmation } from './confirmation-flag.js';
import { OutputSchemaCheck } from './mcp-output-check.js';
import { portableInputSchema } from './mcp-input-schema.js';
import { buildToolCatalog, InputSchemaCache, type CatalogEntry, type CatalogScope } from './mcp-tool-catalog.js';
import { isPlainObject } from '../kit/plain-object.js';
import { packageVersion } from '../kit/package-version.js';

/** The retrieval room's search tool, offered beside the plugin tools. */
export interface FindPluginsTool {
  name: string;
  description: string;
  inputSchema: JsonObject;
  handler(args: Record<string, unknown>, scope?: { filter?: (record: PluginRecord) => boolean }): Promise<string>;
}

/** What the MCP server asks of the access rules (src/access/policy.ts implements it). */
export interface McpAccess {
  decide(userId: string | undefined, pluginId: string, capabilityId: string): { allowed: boolean };
  requiresConfirmation(pluginId: string, capability: CapabilitySpec): boolean;
}

export interface McpServerDeps {
  registry: RegistryApi;
  dispatcher: DispatcherApi;
  log: Logger;
  findPlugins?: FindPluginsTool;
  /** Shared between sessions so compiled output schemas are reused. */
  outputCheck?: OutputSchemaCheck;
  /** Shared between sessions so portable input schemas are computed once per capability. */
  inputSchemas?: InputSchemaCache;
  /** Who the session acts as (from its bearer token); default the admin. */
  principal?: Principal;
  access?: McpAccess;
}

export interface McpSessionServer {
  server: Server;
  /** Stops following the registry and closes the server (and its transport). */
  close(): Promise<void>;
}

const SERVER_INFO = { name: 'homeclaw-bus', version: packageVersion() };
const LIST_CHANGED_DEBOUNCE_MS = 50;

function errorResult(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

function toJsonObject(value: unknown): JsonObject {
  if (!isPlainObject(value)) return {};
  return JSON.parse(JSON.stringify(value)) as JsonObject;
}

function resultText(result: PluginResult): string {
  if (result.text !== undefined && result.text !== '') return result.text;
  if (result.data !== undefined) return JSON.stringify(result.data);
  return '';
}

/** A plugin result as an MCP tool result: failures are isError, data is structuredContent only when it fits the declared schema. */
export function toCallToolResult(result: PluginResult, entry: Pick<CatalogEntry, 'output_schema' | 'tool'>, check: OutputSchemaCheck): CallToolResult {
  if (!result.success) {
    const code = result.error_code ? `[${result.error_code}] ` : '';
    return errorResult(`${code}${result.error || resultText(result) || 'the plugin failed'}`);
  }
  let text = resultText(result);
  if (result.ask_user && result.missing_parameters?.length) text = `${text}\n(missing parameters: ${result.missing_parameters.join(', ')})`.trim();
  const content: CallToolResult['content'] = [{ type: 'text', text }];
  if (!entry.output_schema) return { content };
  const problem = check.problem(entry.output_schema, result.data);
  if (problem) {
    // The client would reject structured content that does not match, and MUST get it when a schema is declared.
    return errorResult(`the result of ${entry.tool.name} does not match its declared output schema (${problem}): ${text}`);
  }
  return { content, structuredContent: result.data as Record<string, unknown> };
}

export function createMcpSessionServer(deps: McpServerDeps, sessionId?: string): McpSessionServer {
  const log = deps.log.child({ room: 'api', mcp_session: sessionId });
  const check = deps.outputCheck ?? new OutputSchemaCheck();
  const inputSchemas = deps.inputSchemas ?? new InputSchemaCache();
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: true } },
    instructions:
      'Tools are HomeClaw plugin capabilities named <plugin>__<capability>.' +
      (deps.findPlugins ? ` Use ${deps.findPlugins.name} to search for plugins by what they do.` : ''),
  });

  const principal = deps.principal ?? ADMIN;
  const userId = principal.kind === 'user' ? principal.user_id : undefined;
  const access = deps.access;
  // A user's session lists only what the user's policy lets them reach; calls are checked again by the dispatcher.
  const scope: CatalogScope = {
    ...(access && userId !== undefined
      ? { visible: (pluginId: string, capability: CapabilitySpec) => access.decide(userId, pluginId, capability.id).allowed }
      : {}),
    ...(access ? { requiresConfirmation: (pluginId: string, capability: CapabilitySpec) => access.requiresConfirmation(pluginId, capability) } : {}),
  };
  const searchScope =
    access && userId !== undefined
      ? { filter: (record: PluginRecord) => record.descriptor.capabilities.some((c) => access.decide(userId, record.descriptor.id, c.id).allowed) }
      : {};

  const findPluginsTool: Tool | undefined = deps.findPlugins
    ? {
        name: deps.findPlugins.name,
        description: deps.findPlugins.description,
        inputSchema: portableInputSchema(deps.findPlugins.inputSchema) as Tool['inputSchema'],
      }
    : undefined;

  server.setRequestHandler(ListToolsRequestSchema, () => {
    const tools = [...buildToolCatalog(deps.registry, log, scope, inputSchemas).values()].map((entry) => entry.tool);
    return { tools: findPluginsTool ? [findPluginsTool, ...tools] : tools };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name } = request.params;
    // Over streamable HTTP the session id is known only once the transport has assigned it.
    const mcpSession = sessionId ?? extra.sessionId;
    const args = toJsonObject(request.params.arguments);
    if (deps.findPlugins && name === deps.findPlugins.name) {
      try {
        return { content: [{ type: 'text', text: await deps.findPlugins.handler(args, searchScope) }] };
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'find_plugins failed');
        return errorResult(`${name} failed: ${(err as Error).message}`);
      }
    }
    // Not scoped: a hidden tool is still called through the dispatcher, whose policy check answers forbidden.
    const entry = buildToolCatalog(
      deps.registry,
      log,
      { ...(scope.requiresConfirmation ? { requiresConfirmation: scope.requiresConfirmation } : {}) },
      inputSchemas,
    ).get(name);
    if (!entry) return errorResult(`unknown tool "${name}" (it may belong to a plugin that is not online; list the tools again)`);
    const flag = readConfirmation(args, {}, entry.capability);
    if (!flag.ok) return errorResult(`[invalid_params] ${flag.error}`);
    const result = await deps.dispatcher.invoke({
      plugin_id: entry.plugin_id,
      capability_id: entry.capability.id,
      parameters: flag.parameters,
      context: {
        channel_name: 'mcp',
        channel_type: 'mcp',
        ...(userId !== undefined ? { user_id: userId } : {}),
        ...(mcpSession ? { session_id: mcpSession } : {}),
      },
      confirmed: flag.confirmed,
    });
    return toCallToolResult(result, entry, check);
  });

  // Any registry change may change the tool list; clients re-list on the notification.
  let pending: NodeJS.Timeout | undefined;
  const announce = (): void => {
    if (pending) return;
    pending = setTimeout(() => {
      pending = undefined;
      server.sendToolListChanged().catch((err: unknown) => log.debug({ err: (err as Error).message }, 'tools/list_changed not delivered'));
    }, LIST_CHANGED_DEBOUNCE_MS);
    pending.unref();
  };
  const offs = [
    deps.registry.events.on('plugin.registered', announce),
    deps.registry.events.on('plugin.updated', announce),
    deps.registry.events.on('plugin.removed', announce),
    deps.registry.events.on('plugin.health', announce),
  ];
  let closed = false;
  const detach = (): void => {
    if (closed) return;
    closed = true;
    if (pending) clearTimeout(pending);
    for (const off of offs) off();
  };
  server.onclose = detach;

  return {
    server,
    async close() {
      detach();
      await server.close().catch(() => undefined);
    },
  };
}
