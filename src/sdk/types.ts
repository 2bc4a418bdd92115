// The public types of the plugin SDK: what a plugin author passes to connectPlugin and gets back.
// Their wire parts derive from the protocol types (generated from topics/schemas).
import type { CapabilitySpec, JsonObject, PluginConfig, PluginDescriptor, PluginRequest, PluginResult, ValidationIssue } from '../protocol/types.js';

/**
 * A parameter as a plugin author writes it: the canonical form with `required` optional (default true:
 * a parameter is required unless it says otherwise).
 */
export type ParameterInput = Omit<CapabilitySpec['parameters'][number], 'required'> & { required?: boolean };

/** A capability as a plugin author writes it: post_process and name default sensibly. */
export type CapabilityInput = Omit<CapabilitySpec, 'parameters' | 'post_process' | 'name'> & {
  name?: string;
  parameters?: ParameterInput[];
  post_process?: boolean;
};

/**
 * The descriptor a plugin author passes: the canonical HomeClaw form without the fields the Core sets
 * itself (`source`, and `type`: 'mqtt' for a plugin connected through the SDK).
 */
export type PluginDescriptorInput = Omit<PluginDescriptor, 'capabilities' | 'source' | 'type' | 'config'> & {
  capabilities: CapabilityInput[];
  config?: PluginConfig;
};

/** What a handler may return: plain text, or text and/or structured data. */
export type HandlerOutput =
  | string
  // biome-ignore lint/suspicious/noConfusingVoidType: a handler that returns nothing succeeds with no text; `undefined` would force authors to return it.
  | void
  /** ask_user: the plugin needs more input from the user (missing_parameters names it). */
  | Pick<PluginResult, 'text' | 'data' | 'metadata' | 'ask_user' | 'missing_parameters'>;

export interface HandlerContext {
  request: PluginRequest;
  /**
   * When the answer is due, in this machine's clock (ms since the Unix epoch). request.deadline as a rule;
   * over MQTT 5 also bounded by the message's remaining expiry, which needs no synchronised clock.
   */
  deadline: number;
  /** The W3C traceparent of the invocation (MQTT 5 user property), to continue the trace in your own spans. */
  traceparent?: string;
  /** Aborted when the request's deadline passes or the plugin closes. */
  signal: AbortSignal;
  /** Publishes an intermediate progress event for this request; never throws. */
  progress(message: string): Promise<void>;
  log: SdkLogger;
}

export type CapabilityHandler = (parameters: JsonObject, context: HandlerContext) => HandlerOutput | Promise<HandlerOutput>;

/** Handlers keyed by capability id: every capability of the descriptor needs exactly one. */
export type CapabilityHandlers = Record<string, CapabilityHandler>;

/** Pino-compatible: a pino logger can be passed as is. */
export interface SdkLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface ConnectPluginOptions {
  /** Broker URL, e.g. mqtt://127.0.0.1:1883 (mqtt:, tcp:, mqtts:, ws:, wss:). */
  url: string;
  credentials?: { username: string; password: string };
  descriptor: PluginDescriptorInput;
  handlers: CapabilityHandlers;
  /** Declared to the Core, which marks the plugin stale after interval + grace without a heartbeat. Default 30. */
  heartbeat_interval_sec?: number;
  /** Default `homeclaw-plugin-<id>`: stable, so the broker's ACL and the Core's ownership check recognise us. */
  clientId?: string;
  log?: SdkLogger;
  /** MQTT keepalive in seconds. Default 30. */
  keepalive_sec?: number;
  /** How long connectPlugin waits for the broker and the registration ack together. Default 30 000 ms. */
  startup_timeout_ms?: number;
  /** How long a later registration (reconnect, Core restart, control) waits for its ack before retrying. Default 10 000 ms. */
  register_timeout_ms?: number;
  /** First reconnect delay; it doubles on every failed attempt up to reconnect_max_ms. Default 1000. */
  reconnect_period_ms?: number;
  /** Default 30 000. */
  reconnect_max_ms?: number;
  /** Incoming payloads larger than this are refused. Default 1 MiB. */
  max_payload_bytes?: number;
  /**
   * MQTT version: '3.1.1' (default; the embedded broker speaks only that) or 5. With 5 the handler's
   * deadline also honours the request's message expiry and context.traceparent carries the Core's trace
   * context; a broker that refuses 5 is connected to with 3.1.1 instead (logged once).
   */
  protocol_version?: 5 | '3.1.1';
}

export interface PluginStats {
  connects: number;
  registrations: number;
  heartbeats: number;
  invocations: number;
  succeeded: number;
  failed: number;
  /** Requests refused before a handler ran (invalid request, unknown capability, invalid parameters). */
  refused: number;
  /** Requests dropped without a reply (past deadline, unreadable, duplicates). */
  dropped: number;
  /** Handlers that finished after the deadline: their result was not sent. */
  late: number;
}

export interface PluginEvents {
  registered: [];
  registration_failed: [errors: ValidationIssue[]];
  reconnecting: [];
  offline: [];
  error: [error: Error];
}

export interface CloseOptions {
  /** Also remove the plugin from the Core's registry. Default false: the Core keeps it, offline. */
  unregister?: boolean;
}

export interface ConnectedPlugin {
  readonly pluginId: string;
  /** New per connectPlugin call; lets the Core ignore a will from an older connection. */
  readonly epoch: number;
  readonly clientId: string;
  /** True while connected to the broker. */
  readonly connected: boolean;
  stats(): PluginStats;
  on<E extends keyof PluginEvents>(event: E, listener: (...args: PluginEvents[E]) => void): this;
  off<E extends keyof PluginEvents>(event: E, listener: (...args: PluginEvents[E]) => void): this;
  /** Sends a fresh registration and waits for its ack. */
  reregister(): Promise<void>;
  /**
   * Sends a user a message outside any request (a reminder, an alert): the Core delivers it on the
   * user's last channel. Resolves with that channel; rejects with PluginNotifyError (code forbidden,
   * no_channel, rate_limited, invalid, failed, timeout or not_connected).
   */
  notify(userId: string, text: string, options?: { timeout_ms?: number }): Promise<{ channel: string }>;
  close(options?: CloseOptions): Promise<void>;
}
