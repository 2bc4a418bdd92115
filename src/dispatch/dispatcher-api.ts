// What callers (conversation, HTTP API, MCP server, CLI) ask of the dispatcher.
import type { CapabilitySpec, JsonObject, PluginRequest, PluginResult } from '../protocol/types.js';

/**
 * What the caller knows about who asks and from where: the PluginRequest fields that describe the caller
 * (topics/schemas/plugin-request.schema.json documents each); each ends up in the PluginRequest when set.
 */
export type InvocationContext = Partial<
  Pick<PluginRequest, 'user_id' | 'user_name' | 'channel_name' | 'channel_type' | 'app_id' | 'session_id' | 'user_input' | 'chat_context' | 'metadata'>
>;

export interface InvokeOptions {
  plugin_id: string;
  /** Omitted: the plugin's default (first) capability. */
  capability_id?: string;
  parameters?: JsonObject;
  context?: InvocationContext;
  /** Overrides capability/plugin/global timeouts, e.g. for benchmarks. */
  timeout_sec?: number;
  /** The caller confirmed this very call (a capability that requires confirmation refuses without it). */
  confirmed?: boolean;
  /**
   * The caller's W3C trace context (`traceparent`), e.g. from an HTTP request's header: the invocation
   * joins that trace. Without it each invocation starts its own trace, named after its request id.
   */
  traceparent?: string;
}

/**
 * The pre-invoke check every call passes (policy and confirmation). context.user_id set means the call
 * is made for that user and the user's policy applies; unset means the admin (HTTP admin token, CLI).
 */
export interface InvocationGuard {
  check(input: { plugin_id: string; capability: CapabilitySpec; user_id?: string; confirmed: boolean }): InvocationRefusal | undefined;
}

export interface InvocationRefusal {
  code: 'forbidden' | 'confirmation_required';
  message: string;
}

/** One finished or refused invocation as the audit log keeps it: never parameter values. */
export interface InvocationAudit {
  ts: number;
  user_id?: string;
  channel?: string;
  plugin_id: string;
  capability_id: string;
  /** 'ok' or the error code ('plugin_error' when the plugin failed without one). */
  outcome: string;
  duration_ms: number;
}

export interface DispatcherApi {
  /**
   * Never rejects. Ends exactly once with a PluginResult: success, a plugin error, or a Core error
   * with error_code (not_found, invalid_params, offline, stale, busy, timeout, adapter_error).
   */
  invoke(options: InvokeOptions): Promise<PluginResult>;
  /**
   * The guard's verdict without invoking (audited when refused), for callers that must not even start a
   * dialogue for a call that would be refused. Undefined means the call may go ahead.
   */
  precheck?(options: InvokeOptions): PluginResult | undefined;
}
