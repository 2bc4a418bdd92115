// What callers (conversation, HTTP API, MCP server, CLI) ask of the dispatcher.
import type { JsonObject, PluginResult } from '../protocol/types.js';

export interface InvocationContext {
  user_id?: string;
  user_name?: string;
  channel_name?: string;
  session_id?: string;
  user_input?: string;
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
