// The shapes the dashboard reads from the Core's HTTP API (see GET /api/openapi.json).
import type { JsonValue } from './schema-form/fields.js';

export type PluginState = 'online' | 'stale' | 'offline' | 'error';

export type Whoami =
  | { kind: 'admin'; via: 'token' }
  | { kind: 'admin'; via: 'ingress'; ingress_path: string; ingress_user?: string; ingress_display_name?: string }
  | { kind: 'user'; via: 'token'; user_id: string };

export interface PluginSummary {
  id: string;
  name: string;
  type: string;
  source: string;
  state: PluginState;
  state_reason?: string;
  version?: string;
  capabilities: string[];
}

export interface PluginView {
  id: string;
  name: string;
  description: string;
  description_long?: string;
  type: string;
  source: string;
  version?: string;
  keywords?: string[];
  examples?: string[];
  state: PluginState;
  state_reason?: string;
  registered_at: string;
  updated_at: string;
  capabilities: { id: string; name: string; description: string }[];
}

export interface CapabilityInfo {
  id: string;
  name: string;
  description: string;
  input_schema: Record<string, JsonValue>;
  output_schema?: Record<string, JsonValue>;
  output_description?: string;
  requires_confirmation: boolean;
}

export interface PluginResult {
  request_id?: string;
  plugin_id?: string;
  success: boolean;
  text?: string;
  data?: JsonValue;
  error?: string;
  error_code?: string;
  metadata?: { problems?: { path: string; message: string }[] } & Record<string, JsonValue | undefined>;
}

export interface AuditEntry {
  id: number;
  ts: number;
  user_id: string | null;
  channel: string | null;
  plugin_id: string;
  capability_id: string;
  outcome: string;
  duration_ms: number;
}

export interface SearchHit {
  plugin_id: string;
  name: string;
  description: string;
  state: PluginState;
  reason: 'ranked' | 'pinned' | 'forced';
  score: number;
  bm25_score?: number;
  dense_score?: number;
  capabilities: { capability_id: string; name: string; description: string; score: number }[];
}

export interface SearchAnswer {
  query: string;
  k: number;
  mode: 'hybrid' | 'bm25' | 'dense';
  hits: SearchHit[];
  warnings?: string[];
}

export interface ChannelReply {
  request_id: string;
  user_id: string;
  text: string;
  kind: 'answer' | 'question' | 'error';
  plugin_id?: string;
  capability_id?: string;
}

/** What the event stream carries (the JSON of homeclaw/events/<kind>). */
export interface FeedEvent {
  type: string;
  ts?: number;
  plugin_id?: string;
  state?: PluginState;
  previous_state?: PluginState;
  reason?: string;
  capability_id?: string;
  success?: boolean;
  error_code?: string;
  duration_ms?: number;
}
