// The contract between the Core and a built-in plugin module (plugins/<id>/index.ts|js). Plugin
// authors import these types; the loader (builtin-loader.ts) recognises three module forms:
//   1. exported functions named after capability ids (named exports or a default-exported object);
//   2. an exported class whose methods are named after capability ids (instantiated once per load);
//   3. a RAGFlow-style class with (static or instance) getMetadata() and invoke(params).
import type { Logger } from '../log.js';
import type { JsonObject, JsonValue, PluginConfig, PluginRequest } from '../protocol/types.js';

/** A message for a user outside any request, as the Core's notifier answers it. */
export interface BuiltinNotification {
  user_id: string;
  text: string;
  /** Used when the user has no last channel and no default channel is configured. */
  fallback_channel?: string;
}

export type BuiltinNotifyOutcome = { ok: true; channel: string } | { ok: false; error: string; error_code?: string };

/** Sends a user a message now, on their last channel (the same as homeclaw/plugins/notify/<id>). Never rejects. */
export type BuiltinNotify = (notification: BuiltinNotification) => Promise<BuiltinNotifyOutcome>;

/** What every handler call receives besides its parameters. */
export interface BuiltinContext {
  /** A directory of this plugin's own (<data_dir>/plugins/<id>/), created before the first call. */
  data_dir: string;
  log: Logger;
  /** The whole request (user, channel, deadline...). */
  request: PluginRequest;
  /** descriptor.config: the manifest's config merged with the plugin's config.yml. */
  config: PluginConfig;
  /** Fires at the deadline (or when the call is cancelled): stop work, abort fetches. */
  signal: AbortSignal;
  /** Sends a user a message outside this request (a reminder, an alert). */
  notify: BuiltinNotify;
}

/** What a class-form plugin's constructor receives (there is no request yet). */
export interface BuiltinInitContext {
  plugin_id: string;
  data_dir: string;
  log: Logger;
  config: PluginConfig;
  /** Sends a user a message at any time, e.g. from a timer the plugin keeps. */
  notify: BuiltinNotify;
}

/** A handler may answer with plain text or with a partial PluginResult. */
export type BuiltinReturn =
  | string
  | {
      text?: string;
      data?: JsonValue;
      /** Defaults to true unless `error` is set. */
      success?: boolean;
      error?: string;
      ask_user?: boolean;
      missing_parameters?: string[];
      metadata?: JsonObject;
    };

export type BuiltinHandler = (params: JsonObject, ctx: BuiltinContext) => Promise<BuiltinReturn> | BuiltinReturn;

/** RAGFlow dialect metadata (a RAGFlow plugin class's): a tool name, a description and a parameter map. */
export interface RagflowToolMetadata {
  name: string;
  description: string;
  displayName?: string;
  displayDescription?: string;
  version?: string;
  parameters?: Record<string, { type: string; description?: string; required?: boolean; [key: string]: unknown }>;
  [key: string]: unknown;
}

/** The shape of a RAGFlow-style plugin instance. */
export interface RagflowToolPlugin {
  getMetadata(): RagflowToolMetadata;
  invoke(params: JsonObject, ctx: BuiltinContext): Promise<BuiltinReturn> | BuiltinReturn;
}
