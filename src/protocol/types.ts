// Payload types of the wire contract. The JSON Schemas in topics/schemas are the source of truth for
// validation; these types mirror them so the compiler checks the code that builds and reads payloads.

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export const PARAMETER_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array'] as const;
export type ParameterType = (typeof PARAMETER_TYPES)[number];

export const PLUGIN_TYPES = ['inline', 'mqtt', 'http', 'subprocess', 'mcp', 'homeassistant', 'zigbee2mqtt', 'python'] as const;
export type PluginType = (typeof PLUGIN_TYPES)[number];

export type PluginSource = 'built-in' | 'external';

/** System values the resolver can fill from the request context. */
export const SYSTEM_KEYS = ['datetime', 'date', 'time', 'timezone', 'location', 'user_id', 'channel'] as const;
export type SystemKey = (typeof SYSTEM_KEYS)[number];

export interface ParameterSpec {
  name: string;
  type: ParameterType;
  /** Default true, as in the HomeClaw seed. */
  required: boolean;
  default?: JsonValue;
  description?: string;
  enum?: JsonValue[];
  /** Items schema for arrays, properties for objects: passed through to the compiled JSON Schema. */
  items?: JsonObject;
  properties?: JsonObject;
  profile_key?: string;
  config_key?: string;
  system_key?: SystemKey;
  confirm_if_uncertain?: boolean;
}

export interface CapabilitySpec {
  id: string;
  name: string;
  description: string;
  parameters: ParameterSpec[];
  /**
   * Set when the source dialect gave a full JSON Schema (ForgeSyte input_schema, MCP inputSchema) that
   * the parameter list cannot express losslessly; validation uses it instead of the compiled one.
   */
  input_schema?: JsonObject;
  output_description?: string;
  output_schema?: JsonObject;
  post_process: boolean;
  post_process_prompt?: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path?: string;
  timeout_sec?: number;
  /** The action has effects worth a second thought (unlocking, buying, deleting): always confirmed first. */
  requires_confirmation?: boolean;
  /**
   * The capability needs the long optional context of a request (user_input, chat_context, metadata...).
   * MQTT plugins get it only then, so a short request fits a small device; other transports always do.
   */
  wants_context?: boolean;
}

/** Plugin config: type-specific settings plus the parameter defaults of the seed. Never sent to the LLM. */
export interface PluginConfig {
  [key: string]: JsonValue | undefined;
  default_parameters?: JsonObject;
  use_defaults_directly?: boolean;
  use_default_directly_for?: string[];
  /** Per-capability defaults: { <capability_id>: { default_parameters: {...} } } */
  capabilities?: { [capabilityId: string]: JsonObject };
  max_concurrency?: number;
  queue_limit?: number;
  timeout_sec?: number;
}

/** The canonical descriptor (plan §4). Every dialect is normalised to this. */
export interface PluginDescriptor {
  id: string;
  name: string;
  description: string;
  description_long?: string;
  examples?: string[];
  version?: string;
  keywords?: string[];
  capabilities: CapabilitySpec[];
  source: PluginSource;
  type: PluginType;
  health_check_url?: string;
  config: PluginConfig;
}

/** What a plugin publishes on homeclaw/plugins/register: a descriptor in any dialect plus liveness. */
export interface RegisterMessage {
  epoch: number;
  heartbeat_interval_sec?: number;
  [key: string]: unknown;
}

export interface RegistrationAck {
  plugin_id: string | null;
  ok: boolean;
  errors?: ValidationIssue[];
  /** Set on the _invalid topic so a client can recognise its own rejection. */
  client_id?: string;
}

export interface UnregisterMessage {
  plugin_id: string;
}

export interface PluginStatusMessage {
  state: 'online' | 'offline';
  epoch: number;
  ts?: number;
}

export interface HeartbeatMessage {
  epoch: number;
  seq: number;
  ts: number;
}

export interface CoreStatusMessage {
  online: boolean;
  ts: number;
}

export interface ControlMessage {
  cmd: 'reregister';
  reason?: string;
}

/** Request context carried to the plugin (seed PluginRequest). */
export interface PluginRequest {
  request_id: string;
  plugin_id: string;
  capability_id: string;
  parameters: JsonObject;
  /** Absolute deadline, milliseconds since the Unix epoch. */
  deadline: number;
  user_input?: string;
  user_id?: string;
  user_name?: string;
  channel_name?: string;
  /** The kind of channel the request came through (mqtt, http, wyoming, mcp, schedule, or what the channel said). */
  channel_type?: string;
  /** The assistant instance (HomeClaw's app_id); config app_id, default "homeclaw". */
  app_id?: string;
  session_id?: string;
  /** Recent messages of the conversation, oldest first, one "role: text" per line. */
  chat_context?: string;
  metadata?: JsonObject;
}

export type ErrorCode =
  | 'not_found'
  | 'invalid_params'
  | 'offline'
  | 'stale'
  | 'busy'
  | 'timeout'
  | 'plugin_error'
  | 'adapter_error'
  | 'cancelled'
  /** The caller's policy does not allow this capability; the plugin was sent nothing. */
  | 'forbidden'
  /** The capability requires confirmation and the call did not carry "confirmed": true. */
  | 'confirmation_required';

export interface PluginResult {
  request_id: string;
  plugin_id: string;
  success: boolean;
  text?: string;
  /** Structured output, when the capability declares an output schema or returns JSON. */
  data?: JsonValue;
  error?: string;
  /** Set by the Core when the failure did not come from the plugin itself. */
  error_code?: ErrorCode;
  metadata?: JsonObject;
  /** A plugin asking for more input (seed PluginParameterCollection §3.6). */
  ask_user?: boolean;
  missing_parameters?: string[];
  /** true marks an intermediate progress event; the call is still running. */
  progress?: boolean;
}

/** A plugin's message for a user outside any request (homeclaw/plugins/notify/<plugin_id>). */
export interface PluginNotifyMessage {
  user_id: string;
  text: string;
  /** Chosen by the plugin to match the acknowledgement. */
  notify_id?: string;
}

export type NotifyErrorCode = 'invalid' | 'forbidden' | 'no_channel' | 'failed';

/** The Core's answer on homeclaw/plugins/notified/<plugin_id>. */
export interface PluginNotifyAck {
  ok: boolean;
  notify_id?: string;
  user_id?: string;
  /** The channel the message went to. */
  channel?: string;
  error?: string;
  error_code?: NotifyErrorCode;
}

export interface ChannelMessageIn {
  request_id?: string;
  user_id: string;
  session_id?: string;
  text: string;
  user_name?: string;
  timezone?: string;
  location?: string;
  /** The kind of channel, when a bridge knows it better than "mqtt" (e.g. HomeClaw's IM, EMAIL, SMS, PHONE). */
  channel_type?: string;
  app_id?: string;
  metadata?: JsonObject;
}

export interface ChannelMessageOut {
  request_id: string;
  user_id: string;
  session_id?: string;
  text: string;
  /** answer | question | error, or notification: a message nobody asked for (a reminder, a plugin's news). */
  kind: 'answer' | 'question' | 'error' | 'notification';
  plugin_id?: string;
  capability_id?: string;
  metadata?: JsonObject;
}

export interface ValidationIssue {
  /** JSON Pointer-like path to the offending value, '' for the root. */
  path: string;
  message: string;
}

/** What a caller publishes on the front door topic homeclaw/call/<plugin_id>/<capability_id>. */
export interface CallRequest {
  /** Chosen by the caller; the result comes back on homeclaw/call_result/<request_id>. */
  request_id: string;
  parameters?: JsonObject;
  /** The user the call asks to be made for; the caller's binding decides whether it may (access/caller-bindings). */
  user_id?: string;
}

/** The answer on homeclaw/call_result/_invalid to a call whose request_id could not be read. */
export interface CallRejection {
  /** The topic the call arrived on. */
  topic: string;
  success: false;
  error: string;
  error_code: ErrorCode;
}

/** State of the Core's device in Home Assistant (homeclaw/ha/core/state, retained). */
export interface HaCoreState {
  plugins_online: number;
  plugins_total: number;
  /** Invocations that ended in the last 60 seconds. */
  calls_per_minute: number;
  retrieval: 'ok' | 'degraded' | 'disabled';
  /** Why retrieval is degraded; null otherwise. */
  retrieval_reason: string | null;
  ts: number;
}

/** State of one plugin's device in Home Assistant (homeclaw/ha/plugins/<id>/state, retained). */
export interface HaPluginState {
  state: 'online' | 'stale' | 'offline' | 'error';
  reason: string | null;
  /** "success" or the error code of the last invocation; null before the first. */
  last_outcome: string | null;
  last_latency_ms: number | null;
  ts: number;
}
