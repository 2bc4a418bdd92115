// The one map from plugin type to the adapter that reaches plugins of that type. The dispatcher (to
// invoke), the attachments (to connect and poll) and the API (to ask a plugin's health) all read the
// same map, so an adapter added once is seen everywhere.
import type { PluginAdapter } from './adapter.js';

export type AdapterMap = Map<string, PluginAdapter>;

export function adapterMap(adapters: Iterable<PluginAdapter> = []): AdapterMap {
  const map: AdapterMap = new Map();
  for (const adapter of adapters) map.set(adapter.type, adapter);
  return map;
}
