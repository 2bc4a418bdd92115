// The one place a PluginRequest is built: every transport (MQTT, HTTP, subprocess, MCP single-tool,
// inline) sends what this returns. Fields the caller does not know are omitted, never invented, and
// empty values are left out so a small device gets the smallest message that carries everything.
import type { JsonObject, PluginRequest } from '../protocol/types.js';
import type { InvocationContext } from './dispatcher-api.js';

export interface PluginRequestInput {
  request_id: string;
  plugin_id: string;
  capability_id: string;
  /** Parameters after defaults were applied and validation passed. */
  parameters: JsonObject;
  deadline: number;
  context: InvocationContext;
  /** The Core's app id (config app_id), used when the context names none. */
  app_id?: string | undefined;
}

const OPTIONAL_TEXT_FIELDS = ['user_id', 'user_name', 'channel_name', 'channel_type', 'session_id', 'chat_context'] as const;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

// Runs for every call: fields are assigned one by one, without temporary objects.
export function buildPluginRequest(input: PluginRequestInput): PluginRequest {
  const { context, parameters } = input;
  const request: PluginRequest = {
    request_id: input.request_id,
    plugin_id: input.plugin_id,
    capability_id: input.capability_id,
    parameters,
    deadline: input.deadline,
  };
  // What the user said: the message on conversation paths; on direct calls, the user_input parameter of
  // single-entry-point plugins (their `run` capability), which HomeClaw plugins read at the top level.
  const userInput = text(context.user_input) ?? text(parameters['user_input']);
  if (userInput !== undefined) request.user_input = userInput;
  for (const field of OPTIONAL_TEXT_FIELDS) {
    const value = text(context[field]);
    if (value !== undefined) request[field] = value;
  }
  const appId = text(context.app_id) ?? text(input.app_id);
  if (appId !== undefined) request.app_id = appId;
  if (context.metadata && Object.keys(context.metadata).length > 0) request.metadata = context.metadata;
  return request;
}
