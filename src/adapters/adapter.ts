// The one small interface every way of reaching a plugin implements (one adapter per plugin type);
// the dispatcher sees only this.
import type { PluginRecord } from '../registry/record.js';
import type { CapabilitySpec, PluginRequest, PluginResult, PluginType } from '../protocol/types.js';

export interface AdapterCall {
  record: PluginRecord;
  capability: CapabilitySpec;
  request: PluginRequest;
  /**
   * Aborted by the dispatcher at the deadline or when the plugin goes offline. An adapter must stop
   * its work (kill a process, abort a fetch) when it fires; the dispatcher has already answered.
   */
  signal: AbortSignal;
  /**
   * Runs `listener` once if the call is aborted, without creating the AbortSignal (the dispatcher makes
   * the signal only when an adapter reads it, which costs more than a fast call). Use whenAborted().
   */
  onAbort?(listener: () => void): void;
  /** The caller's W3C traceparent, when it gave one (InvokeOptions.traceparent). */
  traceparent?: string;
}

/** Calls `listener` once when the call is aborted, the cheapest way the caller offers. */
export function whenAborted(call: AdapterCall, listener: () => void): void {
  if (call.onAbort) call.onAbort(listener);
  else call.signal.addEventListener('abort', listener, { once: true });
}

export interface HealthReport {
  ok: boolean;
  detail?: string;
}

export interface PluginAdapter {
  readonly type: PluginType;
  /** Must resolve (never reject) with a PluginResult; rejections are turned into adapter errors. */
  invoke(call: AdapterCall): Promise<PluginResult>;
  /** Called when a plugin of this type is registered or updated (connect, start polling...). */
  attach?(record: PluginRecord): Promise<void> | void;
  /** Called when a plugin of this type is removed. */
  detach?(record: PluginRecord): Promise<void> | void;
  health?(record: PluginRecord): Promise<HealthReport>;
  stop?(): Promise<void>;
}
