// Listing an MCP server's tools into a catalog of capabilities: every page of tools/list (up to a
// bound), then either the single-tool form (one tool taking the whole request, configured or detected)
// or one capability per tool, keeping what the registry already holds where a tool is unchanged.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../log.js';
import type { CapabilitySpec } from '../protocol/types.js';
import { catalogForSingleTool, catalogFromTools, detectSingleTool, type ToolCatalog } from './mcp-tools.js';

const MAX_TOOL_PAGES = 100;

export interface ToolListingContext {
  plugin_id: string;
  log: Logger;
  /** Per page of tools/list. */
  timeout_ms: number;
}

/** Every tool the server lists, following cursors; a server that never stops paginating is cut off. */
export async function listAllTools(client: Client, ctx: ToolListingContext): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page += 1) {
    const result = await client.listTools(cursor ? { cursor } : undefined, { timeout: ctx.timeout_ms });
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (!cursor) return tools;
  }
  ctx.log.warn({ plugin_id: ctx.plugin_id, pages: MAX_TOOL_PAGES }, 'MCP tools/list still paginating; keeping what was listed');
  return tools;
}

export interface CatalogChoice {
  tools: Tool[];
  /** The tool configured as the single tool (settings.single_tool), if any. */
  configured_single?: string;
  /** The capabilities the registry holds now. */
  previous: CapabilitySpec[];
  /** The single tool of the last catalog, so a newly detected single-tool form is logged once. */
  previous_single?: string;
}

/** The catalog for the listed tools; throws when the configured single tool is not among them. */
export function catalogOfTools(choice: CatalogChoice, ctx: ToolListingContext): ToolCatalog {
  const { tools, configured_single, previous } = choice;
  const single = configured_single ?? detectSingleTool(tools);
  if (single && !configured_single && choice.previous_single !== single) {
    ctx.log.info({ plugin_id: ctx.plugin_id, tool: single }, 'MCP server has one tool taking the whole request: single-tool form');
  }
  if (!single) return catalogFromTools(tools, previous);
  const tool = tools.find((t) => t.name === single);
  if (!tool) throw new Error(`MCP server ${ctx.plugin_id} offers no tool named "${single}" (it has: ${tools.map((t) => t.name).join(', ') || 'none'})`);
  return catalogForSingleTool(tool, previous);
}
