// Reading Zigbee2MQTT payloads: JSON of any shape (the device list is an array) under a size limit, and
// the online/offline payloads in both of Zigbee2MQTT's forms.
import { validateWithSchema } from '../../protocol/validate.js';
import type { Z2mOnlineState } from '../../protocol/zigbee2mqtt.js';

export type ParsedJson = { ok: true; value: unknown } | { ok: false; error: string };

export function parseJsonText(payload: Buffer, maxBytes: number): ParsedJson {
  if (payload.length > maxBytes) return { ok: false, error: `payload is ${payload.length} bytes; the limit is ${maxBytes}` };
  try {
    return { ok: true, value: JSON.parse(payload.toString('utf8')) as unknown };
  } catch (err) {
    return { ok: false, error: `payload is not valid JSON: ${(err as Error).message}` };
  }
}

/**
 * `{"state":"online"}`, or the bare text `online` that Zigbee2MQTT publishes with
 * legacy_availability_payload; undefined for anything else.
 */
export function parseOnlineState(payload: Buffer): 'online' | 'offline' | undefined {
  const text = payload.toString('utf8').trim();
  if (text === 'online' || text === 'offline') return text;
  const parsed = parseJsonText(payload, 4096);
  if (!parsed.ok) return undefined;
  const valid = validateWithSchema<Z2mOnlineState>('zigbee2mqtt-online-state', parsed.value);
  if (!valid.ok) return undefined;
  return typeof valid.value === 'string' ? valid.value : valid.value.state;
}
