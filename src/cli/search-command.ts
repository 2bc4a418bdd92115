// `homeclaw plugins search "<text>" [-k N] [--json]`: asks the running Core and prints a table
// (or the raw JSON answer with --json).
import type { CoreClient } from './core-client.js';
import { describeApiError } from './core-client.js';
import { textTable } from './table.js';
import type { HitView, SearchView } from '../retrieval/search-view.js';

export interface SearchCommandOptions {
  k?: string | number;
  json?: boolean;
}

export interface CommandOutput {
  /** Text for stdout (the table or JSON) or stderr (an error). */
  text: string;
  exitCode: number;
}

/** Renders the JSON body of GET /api/plugins/search (or its error body) for a terminal. */
export function renderSearchResponse(status: number, body: unknown, json = false): CommandOutput {
  if (status !== 200) return { text: `search failed (${status}): ${describeApiError(body)}`, exitCode: 1 };
  if (json) return { text: JSON.stringify(body, null, 2), exitCode: 0 };
  if (!isSearchView(body)) return { text: 'search failed: the Core answered an unexpected body', exitCode: 1 };
  const lines: string[] = [];
  if (body.mode !== 'hybrid') lines.push(`(retrieval is degraded: ${body.mode} ranking only)`);
  for (const warning of body.warnings ?? []) lines.push(`note: ${warning}`);
  if (body.hits.length === 0) {
    lines.push('No plugin matches.');
    return { text: lines.join('\n'), exitCode: 0 };
  }
  const rows = body.hits.map((hit, i) => [
    String(i + 1),
    hit.plugin_id,
    hit.score.toFixed(3),
    reasonLabel(hit),
    capabilitiesLabel(hit),
    truncate(hit.description, 60),
  ]);
  lines.push(textTable(['#', 'PLUGIN', 'SCORE', 'WHY', 'CAPABILITIES', 'DESCRIPTION'], rows));
  return { text: lines.join('\n'), exitCode: 0 };
}

export async function runSearchCommand(client: CoreClient, text: string, options: SearchCommandOptions = {}): Promise<CommandOutput> {
  const params = new URLSearchParams({ q: text });
  if (options.k !== undefined) params.set('k', String(options.k));
  const response = await client.request<unknown>('GET', `/api/plugins/search?${params.toString()}`);
  return renderSearchResponse(response.status, response.body, options.json ?? false);
}

function reasonLabel(hit: HitView): string {
  return hit.reason === 'ranked' ? (hit.state === 'online' ? '' : hit.state) : hit.reason;
}

function capabilitiesLabel(hit: HitView): string {
  return truncate(hit.capabilities.map((c) => c.capability_id).join(', '), 40);
}

function truncate(text: string, max: number): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

function isSearchView(body: unknown): body is SearchView {
  return typeof body === 'object' && body !== null && Array.isArray((body as { hits?: unknown }).hits) && typeof (body as { mode?: unknown }).mode === 'string';
}
