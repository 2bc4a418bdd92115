import type { PluginDescriptor } from '../protocol/types.js';

/**
 * online: routable. stale: kept but not routed to (missed heartbeats, failing health checks, an MCP
 * server restarting). offline: the plugin said goodbye or its will fired. error: failed to load.
 */
export type PluginState = 'online' | 'stale' | 'offline' | 'error';

export interface PluginRecord {
  descriptor: PluginDescriptor;
  /**
   * Who may update or remove this id: 'builtin', 'api', or 'mqtt:<username or client id>'.
   * Never exposed to the LLM.
   */
  owner: string;
  state: PluginState;
  state_reason?: string;
  /** Registration epoch of MQTT plugins: wills and heartbeats from older epochs are ignored. */
  epoch?: number;
  heartbeat_interval_sec?: number;
  /** sha256 of the canonical descriptor: retrieval re-embeds only when it changes. */
  content_hash: string;
  registered_at: number;
  updated_at: number;
}

export function isRoutable(record: PluginRecord): boolean {
  return record.state === 'online';
}
