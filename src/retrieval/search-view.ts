// The outward shape of a search answer (HTTP, CLI, MCP): ids, names, descriptions and scores only,
// never the plugin config (which may hold secrets) nor the owner.
import type { PluginHit, SearchResponse } from './search-api.js';

export interface CapabilityView {
  capability_id: string;
  name: string;
  description: string;
  score: number;
}

export interface HitView {
  plugin_id: string;
  name: string;
  description: string;
  state: string;
  reason: PluginHit['reason'];
  score: number;
  bm25_score?: number;
  dense_score?: number;
  capabilities: CapabilityView[];
}

export interface SearchView {
  query: string;
  k: number;
  mode: SearchResponse['mode'];
  hits: HitView[];
  warnings?: string[];
}

const round = (n: number): number => Math.round(n * 10_000) / 10_000;

export function searchView(response: SearchResponse): SearchView {
  const view: SearchView = {
    query: response.query,
    k: response.k,
    mode: response.mode,
    hits: response.hits.map((hit) => {
      const d = hit.record.descriptor;
      const out: HitView = {
        plugin_id: hit.plugin_id,
        name: d.name,
        description: d.description,
        state: hit.record.state,
        reason: hit.reason,
        score: round(hit.score),
        capabilities: hit.capabilities.map((m) => {
          const c = d.capabilities.find((x) => x.id === m.capability_id);
          return { capability_id: m.capability_id, name: c?.name ?? m.capability_id, description: c?.description ?? '', score: round(m.score) };
        }),
      };
      if (hit.bm25_score !== undefined) out.bm25_score = round(hit.bm25_score);
      if (hit.dense_score !== undefined) out.dense_score = round(hit.dense_score);
      return out;
    }),
  };
  if (response.warnings?.length) view.warnings = response.warnings;
  return view;
}
