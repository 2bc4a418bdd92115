// A device state as one readable line for the answer's text ("state ON, brightness 200, temperature
// 21.5 °C"); the full state travels in the result's data.
import type { JsonObject, JsonValue } from '../../protocol/types.js';

const MAX_KEYS = 30;
/** Zigbee2MQTT's OTA bookkeeping: in the data, not worth reading out. */
const QUIET_KEYS = new Set(['update', 'update_available']);

function formatValue(value: JsonValue, unit: string | undefined): string {
  if (value === null) return 'unknown';
  if (typeof value === 'object') return JSON.stringify(value);
  const text = String(value);
  return unit ? `${text} ${unit}` : text;
}

export function stateText(state: JsonObject, units: Record<string, string>): string {
  const keys = Object.keys(state).filter((key) => !QUIET_KEYS.has(key));
  const shown = keys.slice(0, MAX_KEYS).map((key) => `${key.replace(/_/g, ' ')} ${formatValue(state[key] as JsonValue, units[key])}`);
  if (keys.length > MAX_KEYS) shown.push(`and ${keys.length - MAX_KEYS} more`);
  return shown.length > 0 ? shown.join(', ') : 'no values';
}

/** "12 s ago", "3 min ago", "2 h ago": how old a cached state is. */
export function age(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 90) return `${seconds} s ago`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min ago`;
  return `${Math.round(seconds / 3600)} h ago`;
}
