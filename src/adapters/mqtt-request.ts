// The invoke message as it goes over MQTT. Small devices (PubSubClient's default buffer is 256 bytes,
// umqtt.simple reads whole messages into RAM) need a short request, so the MQTT transport sends no empty
// field, and the long optional context (user_input, chat_context, metadata, session and display names,
// and any other field beyond the short set) only to capabilities that ask for it with
// `wants_context: true`. HTTP, subprocess and MCP plugins always get the full request.
import type { CapabilitySpec, PluginRequest } from '../protocol/types.js';

/** Always sent (when not empty): what a device needs to answer, and who it answers for. */
const SHORT_FIELDS: ReadonlySet<string> = new Set(['request_id', 'plugin_id', 'capability_id', 'parameters', 'deadline', 'user_id', 'channel_name']);

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.length === 0;
  for (const _key in value) return false;
  return true;
}

function sent(key: string, value: unknown, wantsContext: boolean): boolean {
  // parameters is required by the request schema, even when empty.
  if (key === 'parameters') return true;
  return (wantsContext || SHORT_FIELDS.has(key)) && !isEmpty(value);
}

/** The JSON payload of homeclaw/plugins/invoke/<id> for this capability. */
export function mqttRequestPayload(request: PluginRequest, capability: Pick<CapabilitySpec, 'wants_context'>): string {
  const wantsContext = capability.wants_context === true;
  const fields = request as unknown as Record<string, unknown>;
  // Most requests carry nothing to drop: they are sent as built, without a copy.
  let trimmed: Record<string, unknown> | undefined;
  for (const key in fields) {
    if (sent(key, fields[key], wantsContext)) continue;
    trimmed = {};
    for (const kept in fields) if (sent(kept, fields[kept], wantsContext)) trimmed[kept] = fields[kept];
    break;
  }
  return JSON.stringify(trimmed ?? request);
}
