// The `find_plugins` tool of the Core's MCP server: lets an MCP client (an agent, an IDE) ask which
// plugins fit a request. Bad arguments come back as a readable error text, never as an exception.
import type { JsonObject } from '../protocol/types.js';
import type { PluginSearchApi, SearchOptions } from './search-api.js';
import { MAX_K } from './search-request.js';
import { searchView } from './search-view.js';

/** Matches FindPluginsTool of src/api/mcp-server.ts structurally. */
export interface FindPluginsTool {
  name: 'find_plugins';
  description: string;
  inputSchema: JsonObject;
  /** Resolves to the text of the MCP result; a refused request reads "Error: ...". scope.filter limits the plugins (a user's policy). */
  handler(args: Record<string, unknown>, scope?: Pick<SearchOptions, 'filter'>): Promise<string>;
}

export function findPluginsTool(search: PluginSearchApi): FindPluginsTool {
  return {
    name: 'find_plugins',
    description:
      'Find the HomeClaw plugins that can handle a request, best first, with their matching capabilities. ' +
      'Give the request in everyday words, e.g. "turn on the kitchen lights".',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'What the user wants done', minLength: 1 },
        k: { type: 'integer', minimum: 1, maximum: MAX_K, description: `How many plugins to return (1-${MAX_K})` },
      },
      required: ['query'],
      additionalProperties: false,
    },
    async handler(args: Record<string, unknown>, scope: Pick<SearchOptions, 'filter'> = {}) {
      const input: Record<string, unknown> = typeof args === 'object' && args !== null ? args : {};
      if (typeof input.query !== 'string') return 'Error: find_plugins needs "query": a string saying what the user wants done';
      if (input.k !== undefined && typeof input.k !== 'number') return `Error: "k" must be a whole number between 1 and ${MAX_K}`;
      const options: SearchOptions = { ...(input.k === undefined ? {} : { k: input.k }), ...(scope.filter ? { filter: scope.filter } : {}) };
      const response = await search.search(input.query, options);
      if (response.error) return `Error: ${response.error}`;
      const view = searchView(response);
      if (view.hits.length === 0) return 'No plugin matches this request.';
      const lines = view.hits.map((hit, i) => {
        const capabilities = hit.capabilities.map((c) => c.capability_id).join(', ');
        return `${i + 1}. ${hit.plugin_id} (${hit.name}) — ${hit.description} [capabilities: ${capabilities}; score ${hit.score}${hit.reason === 'ranked' ? '' : `; ${hit.reason}`}]`;
      });
      if (view.warnings?.length) lines.push(`Note: ${view.warnings.join('; ')}`);
      return lines.join('\n');
    },
  };
}
