// What callers (conversation, HTTP API, MCP server, CLI) ask of the dispatcher.
import type { JsonObject, PluginResult } from '../protocol/types.js';

/** What the caller knows about who asks and from where; each field ends up in the PluginRequest when set. */
export interface InvocationContext {
  user_id?: string;
  user_name?: string;
  channel_name?: string;
  /** The kind of front door: mqtt, http, wyoming, mcp, schedule... or what the channel message said (e.g. IM). */
  channel_type?: string;
  /** The assistant instance the request belongs to; the Core's app_id when absent. */
  app_id?: string;
  session_id?: string;
  user_input?: string;
  /** Recent messages of the conversation, oldest first. */
  chat_context?: string;
  metadata?: JsonObject;
}

export interface InvokeOptions {
  plugin_id: string;
  /** Omitted: the plugin's default (first) capability. */
  capability_id?: string;
  parameters?: JsonObject;
  context?: InvocationContext;
  /** Overrides capability/plugin/global timeouts, e.g. for benchmarks. */
  timeout_sec?: number;
}

export interface DispatcherApi {
  /**
   * Never rejects. Ends exactly once with a PluginResult: success, a plugin error, or a Core error
   * with error_code (not_found, invalid_params, offline, stale, busy, timeout, adapter_error).
   */
  invoke(options: InvokeOptions): Promise<PluginResult>;
}
